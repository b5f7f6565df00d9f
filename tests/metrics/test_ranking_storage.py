"""Rankings are stored as int32 document ids (migration 0012 rewrote the int64 ones).

A document id that does not fit is refused with a clear error, never wrapped around. The
migration itself is tested in ``tests/test_data_migrations.py``.
"""

from __future__ import annotations

import numpy as np
import pytest

from judging.models import Document
from metrics import services
from metrics.models import RANKING_MAX_PK, RunQuery, ranking_bytes
from tests.metrics import factories


def test_ranking_bytes_refuses_ids_that_do_not_fit():
    assert ranking_bytes(np.array([0, RANKING_MAX_PK])) == np.array([0, 2**31 - 1], "<i4").tobytes()
    for bad in ([2**31], [-1], [3, 2**40]):
        with pytest.raises(ValueError, match="2147483647"):
            ranking_bytes(np.array(bad))


@pytest.mark.django_db
def test_a_run_ranking_a_document_past_the_int32_ids_is_refused_whole(coll):
    team = factories.team(coll)
    coll.queries.create(external_id="q1", text="q")
    Document.objects.create(collection=coll, external_id="far", pk=RANKING_MAX_PK + 1)
    Document.objects.create(collection=coll, external_id="near")
    content = b"q1 Q0 near 1 2.0 t\nq1 Q0 far 2 1.0 t\n"
    with pytest.raises(services.RunRejected) as refused:
        services.run_submit(
            collection=coll, team=team, tag="t", content=content, filename="t.txt", user=None
        )
    assert "document ids above 2,147,483,647" in str(refused.value)
    assert not RunQuery.objects.filter(run__collection=coll).exists()
    assert not coll.runs.exists()
