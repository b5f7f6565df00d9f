"""Reads of the judging pool: the coordinators' listing, the pooling policy and its plan."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.db.models import BinaryField, Q, QuerySet
from django.db.models.functions import Substr

from judging.models import Collection, LiveGrade, PoolEntry
from metrics.models import RANKING_DTYPE, Run, RunQuery
from metrics.pool.models import DEFAULTS, PARAMETERS, PoolingPolicy
from metrics.pool.strategies import Campaign

F64 = np.ndarray


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


def pooling_policy(*, collection: Collection) -> PoolingPolicy | None:
    """Return the collection's pooling policy in force (None: depth-k, the default)."""
    return (
        PoolingPolicy.objects.filter(collection=collection)
        .select_related("actor")
        .order_by("-version")
        .first()
    )


def pooling_values(*, collection: Collection) -> dict[str, object]:
    """Return the strategy and parameters in force (depth-k and the defaults if none)."""
    policy = pooling_policy(collection=collection)
    if policy is None:
        return {"strategy": "depth", **DEFAULTS}
    return {"strategy": policy.strategy, **{n: getattr(policy, n) for n in PARAMETERS}}


def pooling_history(*, collection: Collection) -> list[PoolingPolicy]:
    """Return every version of the collection's pooling policy, newest first."""
    return list(
        PoolingPolicy.objects.filter(collection=collection)
        .select_related("actor")
        .order_by("-version")
    )


def pool_plan(*, collection: Collection) -> QuerySet[PoolEntry]:
    """Return the planned pool entries in the order judges get them (wave, then pair)."""
    return (
        PoolEntry.objects.filter(collection=collection, priority__isnull=False)
        .select_related("query", "document")
        .only(
            "priority",
            "graded_count",
            "is_open",
            "query__external_id",
            "document__external_id",
        )
        .order_by("priority", "query__external_id", "document__external_id")
    )


@dataclass(frozen=True)
class LiveCampaign:
    """A collection's runs as a :class:`Campaign`, with what is known of its pairs.

    ``campaign.docnos[q]`` are document pks (as text); ``query_ids[q]`` is query ``q``'s
    pk; ``known[q]`` is each document's live grade (NaN: none yet); ``open[q]`` whether
    its pool entry still needs grades; ``extra[q]`` the live grades of the query's
    documents no run ranks in its top ``depth`` (they count in the ideal ranking).
    """

    campaign: Campaign
    query_ids: tuple[int, ...]
    document_ids: tuple[np.ndarray, ...]
    known: tuple[F64, ...]
    open: tuple[np.ndarray, ...]
    extra: tuple[F64, ...]


def live_campaign(*, collection: Collection, depth: int) -> LiveCampaign:
    """Return the collection's runs cut at ``depth``, with live grades and open pairs.

    Three SQL queries (rankings' first ``depth`` entries, live grades, open entries)
    whatever the numbers of runs and queries. Runs are in submission order (pk), which
    sets move-to-front's cyclic order; queries in pk order.
    """
    runs = list(
        Run.objects.filter(collection=collection).order_by("pk").values_list("pk", flat=True)
    )
    run_index = {pk: i for i, pk in enumerate(runs)}
    width = depth * RANKING_DTYPE.itemsize
    lists: dict[int, list[tuple[int, np.ndarray]]] = {}
    rows = (
        RunQuery.objects.filter(run_id__in=runs, retrieved__gt=0)
        .annotate(top=Substr("ranking", 1, width, output_field=BinaryField()))
        .values_list("run_id", "query_id", "top")
    )
    for run_id, query_id, top in rows:
        docs = np.frombuffer(bytes(top or b""), dtype=RANKING_DTYPE)[:depth]
        if docs.size:
            lists.setdefault(query_id, []).append((run_index[run_id], docs))
    grades: dict[int, dict[int, float]] = {}
    for q, d, grade in LiveGrade.objects.filter(collection=collection).values_list(
        "query_id", "document_id", "grade"
    ):
        grades.setdefault(q, {})[d] = grade
    open_pairs: dict[int, set[int]] = {}
    for q, d in PoolEntry.objects.filter(collection=collection, is_open=True).values_list(
        "query_id", "document_id"
    ):
        open_pairs.setdefault(q, set()).add(d)
    query_ids = tuple(sorted(lists))
    rankings, docnos, document_ids, known, opened, extra = [], [], [], [], [], []
    for q in query_ids:
        ids, inverse = np.unique(
            np.concatenate([docs for _, docs in lists[q]]), return_inverse=True
        )
        matrix = np.full((len(runs), max(docs.size for _, docs in lists[q])), -1, np.int64)
        start = 0
        for r, docs in lists[q]:
            matrix[r, : docs.size] = inverse[start : start + docs.size]
            start += docs.size
        graded = grades.get(q, {})
        rankings.append(matrix)
        docnos.append(tuple(str(d) for d in ids.tolist()))
        document_ids.append(ids)
        known.append(np.array([graded.get(d, np.nan) for d in ids.tolist()], dtype=np.float64))
        wanted = open_pairs.get(q, set())
        opened.append(np.array([d in wanted for d in ids.tolist()], dtype=bool))
        ranked = set(ids.tolist())
        extra.append(np.array([g for d, g in graded.items() if d not in ranked], np.float64))
    campaign = Campaign(
        queries=tuple(str(q) for q in query_ids),
        runs=tuple(str(r) for r in runs),
        rankings=tuple(rankings),
        docnos=tuple(docnos),
    )
    return LiveCampaign(
        campaign=campaign,
        query_ids=query_ids,
        document_ids=tuple(document_ids),
        known=tuple(known),
        open=tuple(opened),
        extra=tuple(extra),
    )
