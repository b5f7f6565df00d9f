"""How many runs put a (query, document) pair in their top 10: judging's impact hook."""

from __future__ import annotations

from collections.abc import Collection

import numpy as np

from judging.impact import IMPACT_DEPTH
from metrics.models import RANKING_DTYPE, RunQuery


def runs_with_pair_in_top(
    collection_id: int, pairs: Collection[tuple[int, int]]
) -> dict[tuple[int, int], int]:
    """Return, for each pair, how many runs of the collection rank it in the top 10.

    One SQL query: the rankings of the pairs' queries (each run's ranking of a query is
    one row; its first ``IMPACT_DEPTH`` document ids are read as int64).
    """
    wanted: dict[int, set[int]] = {}
    for query_id, document_id in pairs:
        wanted.setdefault(query_id, set()).add(document_id)
    counts: dict[tuple[int, int], int] = {}
    rows = RunQuery.objects.filter(
        run__collection_id=collection_id, query_id__in=list(wanted), retrieved__gt=0
    ).values_list("query_id", "ranking")
    for query_id, ranking in rows.iterator(chunk_size=500):
        top = np.frombuffer(bytes(ranking), dtype=RANKING_DTYPE)[:IMPACT_DEPTH]
        for document_id in set(top.tolist()) & wanted[query_id]:
            key = (query_id, document_id)
            counts[key] = counts.get(key, 0) + 1
    return counts
