"""Background work of live rescoring (Celery; runs inline when no broker is configured)."""

from __future__ import annotations

from celery import shared_task

from metrics import services
from metrics.live import docno_index
from metrics.pool.services import ranking_snapshot_take


@shared_task(name="metrics.rescore_queries")
def rescore_queries(collection_id: int, query_ids: list[int]) -> None:
    """Rescore every run of a collection for the given queries (all, if one was deleted)."""
    services.runs_rescore_bulk(collection_id=collection_id, query_ids=query_ids)
    ranking_snapshot_take(collection_id=collection_id)


@shared_task(name="metrics.build_docno_index")
def build_docno_index(collection_id: int) -> None:
    """Bring the collection's docno index up to date with its documents (see docno_index)."""
    docno_index.prebuild(collection_id)
