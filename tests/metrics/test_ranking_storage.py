"""Rankings are stored as int32 document ids (migration 0012 rewrote the int64 ones).

A document id that does not fit is refused with a clear error, never wrapped around.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from judging.models import Document
from metrics import services
from metrics.models import RANKING_MAX_PK, RunQuery, ranking_bytes
from tests.metrics import factories

BEFORE = [("metrics", "0011_live_score_store")]
AFTER = [("metrics", "0012_rankings_int32")]


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.mark.django_db(transaction=True)
def test_rankings_are_rewritten_as_int32_and_back_and_a_too_large_id_stops_the_migration():
    old = _migrate(BEFORE)
    coll = old.get_model("judging", "Collection").objects.create(slug="r32", name="R32")
    query = old.get_model("judging", "Query").objects.create(collection=coll, external_id="q")
    team = old.get_model("metrics", "Team").objects.create(collection=coll, name="t")
    run = old.get_model("metrics", "Run").objects.create(collection=coll, team=team, tag="a")
    RunQuery = old.get_model("metrics", "RunQuery")
    ids = [5, 2**31 - 1, 0, 70_000]
    stored = RunQuery.objects.create(
        run=run, query=query, ranking=np.array(ids, "<i8").tobytes(), retrieved=4
    )
    empty = RunQuery.objects.create(
        run=old.get_model("metrics", "Run").objects.create(collection=coll, team=team, tag="b"),
        query=query,
        ranking=b"",
        retrieved=0,
    )
    try:
        new = _migrate(AFTER)
        rows = new.get_model("metrics", "RunQuery").objects
        assert bytes(rows.get(pk=stored.pk).ranking) == np.array(ids, "<i4").tobytes()
        assert bytes(rows.get(pk=empty.pk).ranking) == b""
        old = _migrate(BEFORE)
        rows = old.get_model("metrics", "RunQuery").objects
        assert bytes(rows.get(pk=stored.pk).ranking) == np.array(ids, "<i8").tobytes()
        rows.filter(pk=stored.pk).update(ranking=np.array([1, 2**31], "<i8").tobytes())
        with pytest.raises(RuntimeError, match="above 2147483647"):
            _migrate(AFTER)
        # nothing half-written: the ranking is as it was, the migration not applied
        assert bytes(rows.get(pk=stored.pk).ranking) == np.array([1, 2**31], "<i8").tobytes()
        assert MigrationExecutor(connection).loader.applied_migrations.keys() >= set(BEFORE)
        assert ("metrics", "0012_rankings_int32") not in (
            MigrationExecutor(connection).loader.applied_migrations
        )
    finally:  # back to the latest state for the rest of the suite
        connection.cursor().execute(
            "DELETE FROM metrics_runquery WHERE id IN (%s, %s)", [stored.pk, empty.pk]
        )
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())


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
