"""Write side of the progress counters: rebuilds, and deletions that move them.

Keyword-only, typed and atomic like :mod:`judging.services`, under the same
per-collection write lock; the day-to-day upkeep is in :mod:`judging.progress.counters`, called by
the judgment, pool, content and settings services.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import QuerySet

from judging.models import Collection, Document, LiveGrade, Query
from judging.progress import counters as progress
from judging.services import _bump_version, _lock_collection


@transaction.atomic
def progress_rebuild(*, collection: Collection) -> None:
    """Recompute the open pairs and every judge's progress counters of ``collection``.

    For data written around the services (bulk loaders, the admin) and as a repair;
    the services keep the counters without it.
    """
    _lock_collection(collection.pk)
    progress.rebuild(collection_id=collection.pk)


@transaction.atomic
def query_delete(*, query: Query) -> None:
    """Delete a query with its pool pairs and judgments (see :func:`rows_delete`)."""
    rows_delete(queryset=Query.objects.filter(pk=query.pk))


@transaction.atomic
def document_delete(*, document: Document) -> None:
    """Delete a document with its pool pairs and judgments (see :func:`rows_delete`)."""
    rows_delete(queryset=Document.objects.filter(pk=document.pk))


@transaction.atomic
def rows_delete(*, queryset: QuerySet[Query] | QuerySet[Document]) -> None:
    """Delete queries or documents with their pairs and judgments, keeping what depends on them.

    The progress counters lose what the rows held. When live grades go with them, the
    judgment list changed: its version moves and the change is announced as bulk (after
    commit), so every run is rescored -- without it, runs kept scores computed with
    grades that no longer exist, and showed them as current.
    """
    field = "query_id" if queryset.model is Query else "document_id"
    rows = list(queryset.values_list("pk", "collection_id"))
    ids = [pk for pk, _ in rows]
    collections = sorted({collection_id for _, collection_id in rows})
    for collection_id in collections:
        _lock_collection(collection_id)
        progress.rows_deleted(collection_id=collection_id, **{f"{field[:-3]}_ids": ids})
    changed: dict[int, set[int]] = {}
    live = LiveGrade.objects.filter(**{f"{field}__in": ids}).values_list(
        "collection_id", "query_id"
    )
    for collection_id, query_id in live.distinct():
        changed.setdefault(collection_id, set()).add(query_id)
    queryset.model.objects.filter(pk__in=ids).delete()
    for collection_id, query_ids in changed.items():
        _bump_version(collection_id, query_ids, bulk=True)
