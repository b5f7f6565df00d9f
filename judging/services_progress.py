"""Write side of the progress counters: rebuilds, and deletions that move them.

Keyword-only, typed and atomic like :mod:`judging.services`, under the same
per-collection write lock; the day-to-day upkeep is in :mod:`judging.progress`, called by
the judgment, pool, content and settings services.
"""

from __future__ import annotations

from django.db import transaction

from . import progress
from .models import Collection, Document, Query
from .services import _lock_collection


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
    """Delete a query with its pool pairs and judgments, keeping the counters right."""
    _lock_collection(query.collection_id)
    progress.rows_deleted(collection_id=query.collection_id, query_ids=[query.pk])
    query.delete()


@transaction.atomic
def document_delete(*, document: Document) -> None:
    """Delete a document with its pool pairs and judgments, keeping the counters right."""
    _lock_collection(document.collection_id)
    progress.rows_deleted(collection_id=document.collection_id, document_ids=[document.pk])
    document.delete()
