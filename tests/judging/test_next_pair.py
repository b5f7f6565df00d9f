"""next_pair (one SQL query over index ranges) picks exactly what the plain ordering picks.

The reference is the straightforward ORM ordering over every open pair (the previous
implementation): deferred last, the pooling plan's pairs first by wave (priority; none
planned under depth-k), current query first, fewest grades, per-judge shuffle, pk.
"""

from __future__ import annotations

import random

import pytest
from django.db.models import (
    BigIntegerField,
    Case,
    Exists,
    ExpressionWrapper,
    F,
    IntegerField,
    OuterRef,
    Value,
    When,
)

from judging import selectors
from judging.models import Document, Judgment, PoolEntry
from judging.progress import services as services_progress
from tests import factories

pytestmark = pytest.mark.django_db
Status = Judgment.Status


def reference_next(judge, collection, current_query_id, *, plan=True):
    mine = Judgment.objects.filter(
        judge_id=judge.pk,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        status__in=selectors.FINAL_STATUSES,
    )
    deferred = Judgment.objects.filter(
        judge=judge,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
        status=Status.LATER,
    )
    mix = ExpressionWrapper(
        (F("shuffle_key") + Value(judge.pk * selectors._MIX_MULTIPLIER))
        % Value(selectors._MIX_MODULUS),
        output_field=BigIntegerField(),
    )
    return (
        PoolEntry.objects.filter(
            collection=collection,
            graded_count__lt=F("collection__judges_per_pair"),
            document__has_content=True,
        )
        .exclude(Exists(mine))
        .annotate(
            deferred=Exists(deferred),
            other_query=Case(
                When(query_id=current_query_id, then=Value(0)),
                default=Value(1),
                output_field=IntegerField(),
            ),
            mix=mix,
        )
        .order_by(
            "deferred",
            F("priority").asc(nulls_last=True) if plan else "deferred",
            "other_query",
            "graded_count",
            "mix",
            "pk",
        )
        .first()
    )


@pytest.mark.parametrize("planned", [False, True], ids=["depth-k", "planned"])
@pytest.mark.parametrize("judges_per_pair", [1, 2, 3])
def test_next_pair_equals_the_reference_ordering_as_judging_goes_on(judges_per_pair, planned):
    rng = random.Random(judges_per_pair)
    coll = factories.collection(
        f"np{judges_per_pair}{'p' if planned else ''}", judges_per_pair=judges_per_pair
    )
    queries = [factories.query(coll) for _ in range(4)]
    docs = [factories.document(coll) for _ in range(12)]
    Document.objects.filter(pk__in=[d.pk for d in docs[:2]]).update(has_content=False)
    entries = []
    for q in queries:
        for d in rng.sample(docs, 8):
            key = rng.choice([5, 17, 2**31 - 3, rng.randrange(2**31 - 1)])  # ties on purpose
            entries.append(
                PoolEntry(
                    collection=coll,
                    query=q,
                    document=d,
                    shuffle_key=key,
                    graded_count=rng.randrange(judges_per_pair + 1),
                    priority=rng.choice([None, None, 0, 1, 2]) if planned else None,
                )
            )
    PoolEntry.objects.bulk_create(entries)
    services_progress.progress_rebuild(collection=coll)  # rows written around the services
    judges = [factories.human_judge(factories.user()) for _ in range(3)]
    steps = reordered = 0
    for judge in judges * 8:
        for current in [None, *(q.pk for q in queries)]:
            expected = reference_next(judge, coll, current)
            got = selectors.next_pair(judge=judge, collection=coll, current_query_id=current)
            assert (got and got.pk) == (expected and expected.pk), (judge.pk, current)
            unplanned = reference_next(judge, coll, current, plan=False)
            reordered += (got and got.pk) != (unplanned and unplanned.pk)
        entry = reference_next(judge, coll, rng.choice([None, queries[0].pk]))
        if entry is None:
            continue
        status = rng.choice([Status.GRADED, Status.GRADED, Status.CANNOT_JUDGE, Status.LATER])
        Judgment.objects.update_or_create(
            judge=judge,
            query_id=entry.query_id,
            document_id=entry.document_id,
            defaults={
                "collection": coll,
                "status": status,
                "grade": rng.randrange(5) if status == Status.GRADED else None,
            },
        )
        if status == Status.GRADED:
            PoolEntry.objects.filter(pk=entry.pk).update(graded_count=F("graded_count") + 1)
        services_progress.progress_rebuild(collection=coll)
        steps += 1
    assert steps > 10  # the loop really judged, deferred and moved on
    # the plan decides picks when there is one, and only then
    assert (reordered > 0) == planned
