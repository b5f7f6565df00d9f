"""The staged judgment import (issue 17 item 6): a stream in, set-based SQL writes out.

``services.judgments_import`` stages its rows in a temporary table and writes with
``INSERT ... SELECT``; these tests pin what that must keep from the row-by-row version —
the history events' before/after labels, the counts, all-or-nothing refusal with every
problem by line (capped, with the total) — and what it adds: rows consumed once as a
stream, and several imports in one transaction.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.db import connection, transaction

from graded import textpolicy
from judging import services
from judging.models import Judgment, JudgmentEvent, LiveGrade, Membership
from judging.services import JudgmentRow, RowsRefused
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def coll():
    coll = factories.collection()
    for q in ("q1", "q2"):
        factories.query(coll, external_id=q)
    for d in ("d1", "d2", "d3"):
        factories.document(coll, external_id=d)
    return coll


def _stream(rows: list[JudgmentRow], seen: list[int]) -> Iterator[JudgmentRow]:
    """Yield ``rows`` once, noting each (a generator cannot be read twice)."""
    for row in rows:
        seen.append(row.line)
        yield row


def test_a_stream_is_read_once_and_history_matches_the_labels(coll):
    judge = factories.human_judge(factories.user("ann"))
    seen: list[int] = []
    first = [
        JudgmentRow(1, "q1", "d1", 2, note="ok"),
        JudgmentRow(2, "q1", "d2", None, status="cannot_judge", note="broken link"),
        JudgmentRow(3, "q2", "d3", 4, seconds=12.5, abstain_probability=0.25),
    ]
    summary = services.judgments_import(collection=coll, judge=judge, rows=_stream(first, seen))
    assert seen == [1, 2, 3]
    assert (summary.created, summary.changed, summary.unchanged) == (3, 0, 0)
    created = JudgmentEvent.objects.get(query__external_id="q2", document__external_id="d3")
    assert created.action == "create" and created.before is None
    assert created.after == {
        "grade": 4,
        "status": "graded",
        "note": "",
        "seconds": 12.5,
        "abstain_probability": 0.25,
        "guidelines_version": 1,
    }
    assert created.judgment.judge == judge and created.judge == judge

    second = [
        JudgmentRow(1, "q1", "d1", 2, note="ok"),  # unchanged: no event
        JudgmentRow(2, "q1", "d2", 1),  # cannot judge -> graded 1
        JudgmentRow(3, "q2", "d1", 0),  # new
    ]
    summary = services.judgments_import(collection=coll, judge=judge, rows=iter(second))
    assert (summary.created, summary.changed, summary.unchanged) == (1, 1, 1)
    changed = JudgmentEvent.objects.filter(action="change").get()
    assert changed.before == {
        "grade": None,
        "status": "cannot_judge",
        "note": "broken link",
        "seconds": None,
        "abstain_probability": None,
    }
    assert changed.after["grade"] == 1 and changed.after["status"] == "graded"
    assert JudgmentEvent.objects.count() == 5
    assert dict(
        Judgment.objects.values_list("document__external_id", "grade").filter(
            query__external_id="q1"
        )
    ) == {"d1": 2, "d2": 1}
    # The live list follows (one judge: the live grade is theirs).
    assert LiveGrade.objects.get(query__external_id="q1", document__external_id="d2").grade == 1


def test_every_problem_is_named_once_capped_with_the_total(coll):
    judge = factories.human_judge(factories.user("ann"))
    rows = [JudgmentRow(1, "q1", "d1", 2), JudgmentRow(2, "q1", "d1", 3)]  # repeated
    rows += [JudgmentRow(2 + i, "q1", f"nope{i}", 1) for i in range(1, 151)]  # unknown
    rows += [JudgmentRow(153, "q9", "d1", 1), JudgmentRow(154, "q2", "d2", 7)]
    with pytest.raises(RowsRefused) as refused:
        services.judgments_import(collection=coll, judge=judge, rows=iter(rows))
    messages = refused.value.messages
    assert refused.value.total == 153
    assert len(messages) == textpolicy.MAX_ERRORS
    assert messages[0].startswith("line 2: ") and "repeated (first on line 1)" in messages[0]
    assert messages[1] == "line 3: unknown document id 'nope1'"
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()


def test_a_bad_grade_and_an_unknown_query_are_reported_together(coll):
    judge = factories.human_judge(factories.user("ann"))
    rows = [JudgmentRow(1, "q9", "d1", 1), JudgmentRow(2, "q1", "d1", 9)]
    with pytest.raises(RowsRefused) as refused:
        services.judgments_import(collection=coll, judge=judge, rows=rows)
    assert refused.value.messages == [
        "line 1: unknown query id 'q9'",
        "line 2: grade: Grade must be between 0 and 4, not 9.",
    ]


def test_imports_share_a_transaction_and_a_refused_one_leaves_nothing(coll):
    ann, bob = (
        factories.human_judge(factories.user("ann")),
        factories.human_judge(factories.user("bob")),
    )
    with transaction.atomic():
        services.judgments_import(collection=coll, judge=ann, rows=[JudgmentRow(1, "q1", "d1", 1)])
        with pytest.raises(RowsRefused):
            services.judgments_import(
                collection=coll, judge=bob, rows=[JudgmentRow(1, "q1", "zz", 1)]
            )
        services.judgments_import(collection=coll, judge=bob, rows=[JudgmentRow(1, "q1", "d1", 3)])
        tables = connection.introspection.table_names(include_views=False)
    assert sorted(Judgment.objects.values_list("judge__user__username", "grade")) == [
        ("ann", 1),
        ("bob", 3),
    ]
    assert not [t for t in tables if t.startswith("graded_stage_")]


def test_the_quota_counts_only_new_final_labels(coll):
    judge = factories.human_judge(factories.user("ann"))
    services.judgments_import(collection=coll, judge=judge, rows=[JudgmentRow(1, "q1", "d1", 1)])
    factories.member(coll, judge.user)
    Membership.objects.filter(collection=coll, user=judge.user).update(quota=2)
    rows = [
        JudgmentRow(1, "q1", "d1", 3),  # a change: free
        JudgmentRow(2, "q1", "d2", None, status="later"),  # not final: free
        JudgmentRow(3, "q1", "d3", 2),  # the second final label: allowed
    ]
    summary = services.judgments_import(collection=coll, judge=judge, rows=rows)
    assert (summary.created, summary.changed) == (2, 1)
    with pytest.raises(services.QuotaReached):
        services.judgments_import(
            collection=coll, judge=judge, rows=[JudgmentRow(1, "q2", "d1", 0)]
        )


# --- an import recomputes its own pairs only (issue 32, item 8) --------------------------


def _live(coll) -> dict[tuple[str, str], tuple]:
    return {
        (g.query.external_id, g.document.external_id): (
            g.grade,
            g.human_count,
            g.llm_count,
            g.adjudicated,
            list(g.judge_ids),
        )
        for g in LiveGrade.objects.filter(collection=coll).select_related("query", "document")
    }


@pytest.mark.parametrize("ranges", ["one", "many"])
def test_an_import_recomputes_only_its_pairs_and_every_count_stays_right(ranges, monkeypatch):
    from judging import staging
    from judging.adjudication.services import adjudication_record
    from judging.models import PoolEntry
    from judging.progress.selectors import progress_problems

    if ranges == "many":  # a range per query and pair: the chunking is exercised too
        monkeypatch.setattr(staging, "SCOPE_QUERIES", 1)
        monkeypatch.setattr(staging, "SCOPE_PAIRS", 1)
    coll = factories.collection(judges_per_pair=2)
    queries = {q: factories.query(coll, external_id=q) for q in ("q1", "q2", "q3")}
    docs = {d: factories.document(coll, external_id=d) for d in ("d1", "d2", "d3", "d4")}
    for q in queries.values():
        for d in docs.values():
            factories.pool_entry(coll, q, d)
    ann = factories.human_judge(factories.user("ann"))
    bob = factories.human_judge(factories.user("bob"))
    llm = factories.llm_judge()
    earlier = [
        JudgmentRow(1, "q1", "d1", 3),
        JudgmentRow(2, "q1", "d2", 1),
        JudgmentRow(3, "q2", "d3", 0),
        JudgmentRow(4, "q3", "d4", 2),
    ]
    services.judgments_import(collection=coll, judge=ann, rows=earlier)
    services.judgments_import(collection=coll, judge=llm, rows=[JudgmentRow(1, "q1", "d3", 4)])
    adjudication_record(
        query=queries["q2"], document=docs["d3"], grade=4, reason="checked", actor=ann.user
    )
    untouched = LiveGrade.objects.get(query=queries["q3"], document=docs["d4"])
    bobs = [
        JudgmentRow(1, "q1", "d1", 1),  # beside ann's label
        JudgmentRow(2, "q1", "d3", 2),  # beside the LLM's
        JudgmentRow(3, "q2", "d3", 1),  # an adjudicated pair
        JudgmentRow(4, "q2", "d4", None, status="cannot_judge"),
        JudgmentRow(5, "q3", "d1", 0),  # q3's other pair stays as it was
    ]
    services.judgments_import(collection=coll, judge=bob, rows=bobs)
    services.judgments_import(  # bob changes one label and keeps the others
        collection=coll, judge=bob, rows=[JudgmentRow(1, "q1", "d1", 4), *bobs[1:]]
    )
    imported = _live(coll)
    assert imported[("q2", "d3")][3] is True and imported[("q2", "d3")][0] == 4
    assert imported[("q1", "d1")][1] == 2
    # Nothing outside the written pairs was rewritten ...
    assert LiveGrade.objects.get(pk=untouched.pk).updated_at == untouched.updated_at
    # ... and everything agrees with a recomputation from scratch.
    services.live_grades_rebuild(collection=coll)
    assert _live(coll) == imported
    for entry in PoolEntry.objects.filter(collection=coll):
        graded = Judgment.objects.filter(
            query=entry.query_id, document=entry.document_id, status="graded"
        ).count()
        assert entry.graded_count == graded, entry
    assert progress_problems(collection=coll) == []
