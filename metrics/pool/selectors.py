"""The judging pool as coordinators browse it: filtered by query, judges, source run."""

from __future__ import annotations

import numpy as np
from django.db.models import Q, QuerySet

from judging.models import Collection, PoolEntry
from metrics.models import Run, RunQuery


def pool_entries(
    *,
    collection: Collection,
    query_external_id: str | None = None,
    graded_count: int | None = None,
    run: Run | None = None,
    unjudged_only: bool = False,
) -> QuerySet[PoolEntry]:
    """Return the collection's pool entries, filtered, with query and document, in order.

    ``run`` keeps the pairs of the run's top ``pool_depth`` (the pairs it pooled, unless
    another source pooled them first); ``unjudged_only`` keeps pairs no judge has graded.
    """
    entries = (
        PoolEntry.objects.filter(collection=collection)
        .select_related("query", "document")
        .only(
            "source",
            "graded_count",
            "added_at",
            "query__external_id",
            "query__text",
            "document__external_id",
            "document__title",
            "document__has_content",
        )
        .order_by("query__external_id", "document__external_id")
    )
    if query_external_id:
        entries = entries.filter(query__external_id=query_external_id)
    if graded_count is not None:
        entries = entries.filter(graded_count=graded_count)
    if unjudged_only:
        entries = entries.filter(graded_count=0)
    if run is not None:
        depth = collection.pool_depth
        pairs = Q(pk__in=[])
        for query_id, ranking in RunQuery.objects.filter(run=run, retrieved__gt=0).values_list(
            "query_id", "ranking"
        ):
            top = np.frombuffer(bytes(ranking), dtype="<i8")[:depth].tolist()
            pairs |= Q(query_id=query_id, document_id__in=top)
        entries = entries.filter(pairs)
    return entries
