"""React to judging's signals: rescore the runs a judgment change affects."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from judging.signals import documents_added, judgments_changed, judgments_changing
from metrics import services
from metrics.live import tasks
from metrics.pool.tasks import pool_replan_soon, ranking_snapshot


def rescore_in_transaction(*, collection_id: int, query_ids: frozenset[int], **_: Any) -> None:
    """Rescore every run for the changed queries inside the judgment's own transaction.

    The judgment and the scores derived from it commit together (or not at all), and the
    request that recorded the judgment returns with every run's scores current.
    """
    services.runs_rescore_after_change(collection_id=collection_id, query_ids=query_ids)


def rescore_bulk_after_commit(
    *, collection_id: int, query_ids: frozenset[int], bulk: bool, **_: Any
) -> None:
    """Rescore the queries of a bulk change in the background once it has committed.

    Changes that are not bulk were already rescored by :func:`rescore_in_transaction`.
    """
    if bulk:
        tasks.rescore_queries.delay(collection_id, sorted(query_ids))


def snapshot_after_commit(*, collection_id: int, bulk: bool, **_: Any) -> None:
    """Take a ranking snapshot for the stop rule once a judgment's rescoring committed.

    A bulk change is rescored in the background; that task takes the snapshot when done.
    """
    if not bulk:
        ranking_snapshot.delay(collection_id)


def replan_after_commit(*, collection_id: int, **_: Any) -> None:
    """Replan the judging queue of a collection whose pooling strategy plans, in the background."""
    pool_replan_soon(collection_id=collection_id)


def index_documents_after_import(*, collection_id: int, count: int, **_: Any) -> None:
    """Build the docno index of a collection that received many documents, in the background.

    The first run submitted to a large collection then finds the index ready instead of
    reading every document (about 5 s for 2.5 million). Smaller imports leave it to the
    first submission, which takes well under a second to build it.
    """
    if count >= getattr(settings, "GRADED_DOCNO_INDEX_PREBUILD_MIN", 100_000):
        tasks.build_docno_index.delay(collection_id)


def connect() -> None:
    """Connect the receivers (called once from the app config)."""
    judgments_changing.connect(
        rescore_in_transaction, dispatch_uid="metrics.rescore_in_transaction"
    )
    judgments_changed.connect(
        rescore_bulk_after_commit, dispatch_uid="metrics.rescore_on_judgments_changed"
    )
    judgments_changed.connect(replan_after_commit, dispatch_uid="metrics.pool_replan")
    judgments_changed.connect(snapshot_after_commit, dispatch_uid="metrics.ranking_snapshot")
    documents_added.connect(index_documents_after_import, dispatch_uid="metrics.docno_index")
