"""Assignment: disagreements go to one more judge up to a cap; per-judge quotas."""

from __future__ import annotations

import pytest

from judging import selectors, services
from judging.adjudication import services as adj
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def setup(coll):
    coll.judges_per_pair = 2
    coll.max_judges_per_pair = 3
    coll.save()
    (agreed, split, close) = factories.pool(coll, 1, 3)
    judges = [factories.human_judge(factories.user()) for _ in range(4)]
    for judge, grades in zip(judges[:2], [(2, 0, 1), (2, 4, 2)], strict=True):
        for entry, grade in zip((agreed, split, close), grades, strict=True):
            services.judgment_record(
                judge=judge, query=entry.query, document=entry.document, grade=grade
            )
    return coll, (agreed, split, close), judges


def test_split_pairs_get_one_more_judge_up_to_the_cap(setup):
    coll, (_agreed, split, _close), judges = setup
    third = judges[2]
    # 0 vs 4 spreads by 4 >= 2; 1 vs 2 is one apart (noise); 2 vs 2 is settled.
    first = selectors.next_pair(judge=third, collection=coll)
    assert first is not None and first.pk == split.pk
    services.judgment_record(judge=third, query=split.query, document=split.document, grade=4)
    assert selectors.next_pair(judge=third, collection=coll) is None
    # Three grades reach the cap: nobody else gets these pairs.
    assert selectors.next_pair(judge=judges[3], collection=coll) is None
    progress = selectors.judge_progress(judge=judges[3], collection=coll)
    assert progress.remaining == 0


def test_off_by_default_and_spread_is_configurable(setup):
    coll, (_agreed, _split, _close), judges = setup
    coll.max_judges_per_pair = 0
    coll.save()
    assert selectors.next_pair(judge=judges[2], collection=coll) is None
    coll.max_judges_per_pair = 3
    coll.disagreement_spread = 4
    coll.save()
    # 0 vs 4 still spreads by 4; 1 vs 2 does not.
    assert selectors.judge_progress(judge=judges[2], collection=coll).remaining == 1
    adj.aggregation_settings_update(collection=coll, actor=None, disagreement_spread=1)
    # With a spread of 1, the one-apart pair is a disagreement too.
    assert selectors.judge_progress(judge=judges[2], collection=coll).remaining == 2


@pytest.mark.parametrize("spread", [1, 2])
def test_routing_and_the_disagreement_queue_follow_one_rule(coll, spread):
    """A pair graded 0 and 1 goes to a third judge exactly when the queue lists it."""
    from judging.adjudication import selectors as queue
    from judging.progress import counters

    coll.judges_per_pair, coll.max_judges_per_pair = 2, 3
    coll.disagreement_spread = spread
    coll.save()
    (near, far, same) = factories.pool(coll, 1, 3)
    a, b, c = (factories.human_judge(factories.user()) for _ in range(3))
    for entry, grades in ((near, (0, 1)), (far, (0, 2)), (same, (3, 3))):
        for judge, grade in zip((a, b), grades, strict=True):
            services.judgment_record(
                judge=judge, query=entry.query, document=entry.document, grade=grade
            )
    listed = {(v.query.pk, v.document.pk) for v in queue.disagreements(collection=coll)}
    routed = set()
    while (entry := selectors.next_pair(judge=c, collection=coll)) is not None:
        routed.add((entry.query_id, entry.document_id))
        services.judgment_record(judge=c, query=entry.query, document=entry.document, grade=2)
    expected = {(far.query_id, far.document_id)}
    if spread == 1:
        expected.add((near.query_id, near.document_id))
    assert routed == listed == expected
    for entry, grades in ((near, {0: 1, 1: 1}), (far, {0: 1, 2: 1})):
        assert counters.pair_is_open(
            has_content=True,
            graded_count=2,
            grades=grades,
            judges_per_pair=2,
            max_judges_per_pair=3,
            disagreement_spread=spread,
        ) == ((entry.query_id, entry.document_id) in expected)


def test_quota_stops_the_queue(coll, judge_user):
    factories.pool(coll, 1, 3)
    judge = factories.human_judge(judge_user)
    adj.judge_quota_set(collection=coll, judge=judge, quota=1)
    entry = selectors.next_pair(judge=judge, collection=coll)
    services.judgment_record(judge=judge, query=entry.query, document=entry.document, grade=1)
    assert selectors.next_pair(judge=judge, collection=coll) is None
    adj.judge_quota_set(collection=coll, judge=judge, quota=None)
    assert selectors.next_pair(judge=judge, collection=coll) is not None


def test_quota_is_enforced_by_the_service_for_every_entry_point(coll, judge_user):
    from django.core.exceptions import PermissionDenied

    entries = factories.pool(coll, 1, 4)
    judge = factories.human_judge(judge_user)
    adj.judge_quota_set(collection=coll, judge=judge, quota=2)
    for entry in entries[:2]:
        services.judgment_record(judge=judge, query=entry.query, document=entry.document, grade=1)
    third = entries[2]
    with pytest.raises(PermissionDenied, match="Quota reached"):
        services.judgment_record(judge=judge, query=third.query, document=third.document, grade=2)
    # "Later" is not a final judgment, and changing a label already given is always allowed.
    services.judgment_record(
        judge=judge, query=third.query, document=third.document, status="later"
    )
    first = entries[0]
    services.judgment_record(judge=judge, query=first.query, document=first.document, grade=4)
    # A bulk import past the quota writes nothing.
    rows = [
        services.JudgmentRow(
            line=i + 1,
            query_external_id=e.query.external_id,
            document_external_id=e.document.external_id,
            grade=3,
        )
        for i, e in enumerate(entries)
    ]
    before = list(judge.judgments.values_list("pk", "grade", "status"))
    with pytest.raises(PermissionDenied, match="Quota reached"):
        services.judgments_import(collection=coll, judge=judge, rows=rows)
    assert list(judge.judgments.values_list("pk", "grade", "status")) == before
    # Raising the quota lets the same import through.
    adj.judge_quota_set(collection=coll, judge=judge, quota=4)
    services.judgments_import(collection=coll, judge=judge, rows=rows)
    assert judge.judgments.filter(status="graded").count() == 4
