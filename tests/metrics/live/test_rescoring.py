"""Per-judgment rescoring: cached rankings, unchanged rows keep their scores, still exact."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging import services as judging_services
from judging.models import Collection, Document
from metrics import services
from metrics.live import rescore as live_rescore
from metrics.live import store
from metrics.models import Run, Scoreboard
from tests import factories
from tests.metrics import factories as metrics_factories
from tests.metrics.live.test_scores import _assert_matches_reference, _run_content, world

pytestmark = pytest.mark.django_db
__all__ = ["world"]  # the fixture, shared with test_live_scores


@pytest.fixture(autouse=True)
def _empty_cache():
    live_rescore.cache_clear()
    yield
    live_rescore.cache_clear()


def _submit(coll, team, tag, seed):
    content = _run_content(seed, tag)
    run = services.run_submit(
        collection=coll, team=team, tag=tag, content=content, filename=f"{tag}.txt", user=None
    )
    return run, content


def test_a_second_judgment_of_a_query_does_not_read_its_rankings_again(
    world, django_capture_on_commit_callbacks, monkeypatch
):
    coll, queries, docs, team, judge = world
    runs = [_submit(coll, team, tag, seed) for seed, tag in [(1, "a"), (2, "b")]]
    reads: list[str] = []
    fetch = live_rescore.fetch

    def recording_fetch(sql, params):
        if sql.startswith("SELECT"):  # the PostgreSQL write goes through fetch too
            reads.append(sql)
        return fetch(sql, params)

    monkeypatch.setattr(live_rescore, "fetch", recording_fetch)

    def ranking_reads() -> int:
        return sum("ranking" in sql for sql in reads)

    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(judge=judge, query=queries[1], document=docs[0], grade=4)
    assert ranking_reads() == 1
    first = len(reads)
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(judge=judge, query=queries[1], document=docs[1], grade=1)
    # The second judgment reads the live grades (and, through the ORM, the scoreboard and
    # the query's column): no rankings, nothing per run.
    assert ranking_reads() == 1 and len(reads) == first + 1
    for run, content in runs:
        run.refresh_from_db()
        _assert_matches_reference(run, coll, content)


def test_a_resubmitted_run_is_never_scored_with_a_cached_ranking(
    world, django_capture_on_commit_callbacks
):
    coll, queries, docs, team, judge = world
    old, _ = _submit(coll, team, "x", 1)
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(judge=judge, query=queries[0], document=docs[2], grade=3)
    services.run_delete(run=old)
    new, content = _submit(coll, team, "x", 5)  # SQLite may give it the old ids
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(judge=judge, query=queries[0], document=docs[3], grade=2)
    new.refresh_from_db()
    _assert_matches_reference(new, coll, content)


def test_a_judgment_writes_no_run_row_and_unchanged_values_leave_the_sums_exact(
    world, django_capture_on_commit_callbacks
):
    coll, queries, _docs, team, judge = world
    run, content = _submit(coll, team, "u", 3)
    other, _ = _submit(coll, team, "v", 4)
    nobody = factories.document(coll, "retrieved-by-no-run")
    before = metrics_factories.stored_scores([run, other])
    board_before = store.board_read(coll.pk)
    with (
        CaptureQueriesContext(connection) as captured,
        django_capture_on_commit_callbacks(execute=True),
    ):
        # Grade 0 for a document no run retrieved: no measure of any run moves.
        judging_services.judgment_record(judge=judge, query=queries[0], document=nobody, grade=0)
    version = Collection.objects.get(pk=coll.pk).judgments_version
    assert metrics_factories.stored_scores([run, other]) == before
    board = store.board_read(coll.pk)
    # Unchanged values add exactly 0.0: the sums are the same bits (no drift).
    assert board.sums.tobytes() == board_before.sums.tobytes()
    assert board.counts.tobytes() == board_before.counts.tobytes()
    assert (board.version, board.epoch) == (version, board_before.epoch)
    assert metrics_factories.current(run).scored_version == version
    writes = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith(("UPDATE", "INSERT", "DELETE", "WITH"))
    ]
    # Two rows whatever the number of runs: the query's column and the scoreboard (one
    # statement on PostgreSQL).
    assert not any(re.search(r'"metrics_run(query)?"', w) for w in writes), writes
    assert sum("metrics_queryscores" in w for w in writes) == 1, writes
    assert sum("metrics_scoreboard" in w for w in writes) == 1, writes
    _assert_matches_reference(run, coll, content)
    assert Document.objects.filter(pk=nobody.pk).exists()


def test_a_judgment_leaves_no_query_of_a_current_run_marked_stale(
    world, client, django_capture_on_commit_callbacks
):
    """Per-query staleness follows the run: judging q1 does not mark q2's scores stale."""
    from django.urls import reverse

    from judging.models import Membership

    coll, queries, docs, team, judge = world
    run, _ = _submit(coll, team, "s", 4)
    coord = factories.user("coord-stale")
    factories.member(coll, coord, Membership.Role.COORDINATOR)
    client.force_login(coord)
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(judge=judge, query=queries[0], document=docs[5], grade=3)
    metrics_factories.current(run)
    coll.refresh_from_db()
    assert run.scored_version == coll.judgments_version
    detail = client.get(
        reverse("metrics:run_detail", args=[coll.slug, run.pk]) + "?tab=queries"
    ).content.decode()
    assert 'data-query="' in detail and "is-stale" not in detail
    for query in queries[:2]:
        page = client.get(reverse("metrics:run_query", args=[coll.slug, run.pk, query.pk]))
        assert page.status_code == 200 and "data-stale" not in page.content.decode()
    # A run whose scores lag behind the list is stale on every page, query by query.
    Run.objects.filter(pk=run.pk).update(scored_version=coll.judgments_version - 1)
    Scoreboard.objects.filter(collection=coll).update(version=coll.judgments_version - 1)
    detail = client.get(
        reverse("metrics:run_detail", args=[coll.slug, run.pk]) + "?tab=queries"
    ).content.decode()
    lines = re.findall(r'<tr class="([^"]*)" data-query="', detail)
    assert lines and all("is-stale" in line for line in lines)
    page = client.get(reverse("metrics:run_query", args=[coll.slug, run.pk, queries[1].pk]))
    assert "data-stale" in page.content.decode()
