"""``manage.py rescore_runs``: check stored scores against a rescoring, and repair them."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from judging import services
from metrics import services as metrics_services
from metrics.live import selectors as selectors_live
from metrics.live import store
from metrics.models import Run
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored():
    """Return a collection with two judged queries and three runs, scored live."""
    coll, (user,) = factories.judged_collection(
        "rescore", queries=["q1", "q2"], documents=["d1", "d2", "d3"], judges=["j"]
    )
    team = metrics_services.team_create(collection=coll, name="t", members=[user])
    for tag, lines in [
        ("a", "q1 Q0 d1 1 3 a\nq1 Q0 d2 2 2 a\nq2 Q0 d3 1 1 a\n"),
        ("b", "q1 Q0 d2 1 3 b\nq2 Q0 d1 1 2 b\n"),
        ("c", "q2 Q0 d3 1 3 c\n"),
    ]:
        metrics_services.run_submit(
            collection=coll, team=team, tag=tag, content=lines.encode(), filename="r.txt",
            user=user,
        )  # fmt: skip
    judge = factories.human_judge(user)
    for q, d, grade in [("q1", "d1", 3), ("q1", "d2", 1), ("q2", "d3", 2)]:
        services.judgment_record(
            judge=judge,
            query=coll.queries.get(external_id=q),
            document=coll.documents.get(external_id=d),
            grade=grade,
        )
    return coll


def test_live_scores_agree_with_a_rescoring(scored, capsys):
    assert selectors_live.scores_problems(collection=scored) == []
    call_command("rescore_runs", "--check")
    assert "rescore: scores agree with a rescoring" in capsys.readouterr().out


def test_a_run_left_off_the_scoreboard_is_found_and_repaired(scored, capsys):
    # What the bug fixed on 2026-11-26 left behind: a run missing from the scoreboard.
    c = Run.objects.get(collection=scored, tag="c")
    board = store.board_read(scored.pk)
    board.drop([c.pk])
    store.board_write(board, version=board.version)
    before = store.board_read(scored.pk)
    problems = selectors_live.scores_problems(collection=scored)
    assert "run 'c' is not on the scoreboard (never rescored by judgments)" in problems
    after = store.board_read(scored.pk)  # the check changed nothing
    assert (after.run_ids.tolist(), after.sums.tolist()) == (
        before.run_ids.tolist(),
        before.sums.tolist(),
    )
    with pytest.raises(CommandError, match="differ from a rescoring"):
        call_command("rescore_runs", "rescore", "--check")
    assert "rescore: run 'c' is not on the scoreboard" in capsys.readouterr().out
    call_command("rescore_runs", "rescore")
    assert "rescore: every run rescored" in capsys.readouterr().out
    assert selectors_live.scores_problems(collection=scored) == []
    assert c.pk in store.board_read(scored.pk).means()


def test_a_drifted_mean_and_a_missing_query_score_are_named(scored):
    a = Run.objects.get(collection=scored, tag="a")
    board = store.board_read(scored.pk)
    board.sums[list(board.run_ids).index(a.pk), 0] += 0.5
    store.board_write(board, version=board.version)
    q2 = scored.queries.get(external_id="q2")
    column = store.columns_read(scored.pk, [q2.pk])[q2.pk]
    b = Run.objects.get(collection=scored, tag="b")
    kept = column.run_ids != b.pk
    column = store.Column(q2.pk, column.names, column.run_ids[kept], column.values[kept])
    store.columns_write(scored.pk, [column], version=board.version)
    q1 = scored.queries.get(external_id="q1")
    column = store.columns_read(scored.pk, [q1.pk])[q1.pk]
    column.values[column.run_ids == a.pk, -1] += 1e-6  # a value off, the mean as stored
    store.columns_write(scored.pk, [column], version=board.version)
    problems = selectors_live.scores_problems(collection=scored)
    assert any(p.startswith(f"run 'a': mean {board.names[0]} is ") for p in problems), problems
    assert f"run 'b' has no score for query id {q2.pk}" in problems
    assert f"run 'a': scores for query id {q1.pk} differ" in problems
    assert not any("run 'c'" in p for p in problems), problems


def test_an_unknown_collection_is_named():
    with pytest.raises(CommandError, match="No collection nope"):
        call_command("rescore_runs", "nope")


def test_rankings_cached_before_a_stale_board_are_not_used_after_the_repair(scored):
    """The audit's sequence: a stale board write, a repair, then judgments in a warm process.

    A process had prepared q1 before run "d" came; a stale write (issue 32) then put the
    board back as it was before "d" -- its runs and its epoch. The repair puts "d" back on
    the board; the next judgment of q1 in that process must score "d"'s ranking, not read
    the preparation of the old epoch that never saw "d" (it scored "d" as an empty ranking
    until the web workers restarted).
    """
    from metrics.live import rescore as live_rescore
    from metrics.models import Scoreboard

    live_rescore.cache_clear()
    q1 = scored.queries.get(external_id="q1")
    d1, d2 = (scored.documents.get(external_id=d) for d in ("d1", "d2"))
    judge = factories.human_judge(scored.memberships.first().user)
    services.judgment_record(judge=judge, query=q1, document=d2, grade=2)  # q1 prepared
    stale = Scoreboard.objects.values().get(collection=scored)
    team = Run.objects.get(collection=scored, tag="a").team
    metrics_services.run_submit(
        collection=scored, team=team, tag="d", content=b"q1 Q0 d1 1 3 d\n", filename="d.txt",
        user=None,
    )  # fmt: skip
    d = Run.objects.get(collection=scored, tag="d")
    Scoreboard.objects.filter(collection=scored).update(
        **{k: v for k, v in stale.items() if k in {"run_ids", "sums", "counts", "epoch"}}
    )  # the stale write: the board before "d", with its epoch
    call_command("rescore_runs", "rescore")
    assert d.pk in store.board_read(scored.pk).means()
    services.judgment_record(judge=judge, query=q1, document=d1, grade=4)
    assert selectors_live.scores_problems(collection=scored) == []
    column = store.columns_read(scored.pk, [q1.pk])[q1.pk]
    assert column.lookup([d.pk], column.names)[0, 0] > 0  # d's one document, graded 4
