"""Adding pairs to the pool counts the graded judgments of the new entries only."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging import services
from judging.models import Judgment, PoolEntry
from tests import factories

pytestmark = pytest.mark.django_db


def test_new_entries_get_their_graded_counts_and_old_ones_are_not_touched(coll):
    q1, q2 = factories.query(coll, "q1"), factories.query(coll, "q2")
    d1, d2, d3 = (factories.document(coll, f"d{i}") for i in (1, 2, 3))
    a, b = (factories.human_judge(factories.user()) for _ in range(2))
    services.judgment_record(judge=a, query=q1, document=d1, grade=2)
    services.judgment_record(judge=b, query=q1, document=d1, grade=3)
    services.judgment_record(judge=a, query=q2, document=d2, status=Judgment.Status.LATER)
    services.judgment_record(judge=a, query=q2, document=d1, grade=0)
    old = PoolEntry.objects.create(collection=coll, query=q2, document=d3, graded_count=7)
    with CaptureQueriesContext(connection) as captured:
        added = services.pool_add_ids(
            collection=coll,
            pairs=[(q1.pk, d1.pk), (q2.pk, d2.pk), (q2.pk, d3.pk), (q1.pk, d3.pk)],
            source=PoolEntry.Source.MANUAL,
        )
    assert added == 3
    counts = {(e.query_id, e.document_id): e.graded_count for e in PoolEntry.objects.all()}
    assert counts == {(q1.pk, d1.pk): 2, (q2.pk, d2.pk): 0, (q2.pk, d3.pk): 7, (q1.pk, d3.pk): 0}
    old.refresh_from_db()
    assert old.graded_count == 7  # an existing entry is neither rewritten nor recounted
    writes = [
        q["sql"]
        for q in captured.captured_queries
        if q["sql"].startswith('UPDATE "judging_poolentry"')
    ]
    assert writes == []
    again = services.pool_add_ids(
        collection=coll, pairs=[(q1.pk, d1.pk)], source=PoolEntry.Source.MANUAL
    )
    assert again == 0
