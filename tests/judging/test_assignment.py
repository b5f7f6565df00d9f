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
    coll, (_agreed, split, close), judges = setup
    third = judges[2]
    # 0 vs 4 spreads by 4 >= 2; 1 vs 2 has no majority; 2 vs 2 is settled.
    first = selectors.next_pair(judge=third, collection=coll)
    assert first is not None and first.pk in {split.pk, close.pk}
    services.judgment_record(judge=third, query=split.query, document=split.document, grade=4)
    services.judgment_record(judge=third, query=close.query, document=close.document, grade=1)
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
    # 0 vs 4 still spreads by 4; 1 vs 2 still has no majority (two judges, two grades).
    remaining = selectors.judge_progress(judge=judges[2], collection=coll).remaining
    assert remaining == 2


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
