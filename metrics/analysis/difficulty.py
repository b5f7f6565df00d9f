"""Topic difficulty from stored runs and the live judgment list (Gienapp et al., CIKM 2020).

For every live query (one with at least one live grade) the pool is its judged documents;
each run's top-k ranking is turned into the grades of its documents (NaN when unjudged,
which the engine scores as gain 0, the paper's convention) and scored with standardized
NDCG. A topic's difficulty is the share of runs that beat the random reranker there
(sNDCG > 0); RNDCG is the plain NDCG a random reranking of the pool would expect. A run
that retrieved nothing for a live query scores sNDCG 0 there, as the engine asks.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from django.db.models import BinaryField
from django.db.models.functions import Substr

from judging.models import Collection, LiveGrade, Query
from metrics.engine.standardized import difficulty, difficulty_class, rndcg, sndcg
from metrics.models import RANKING_DTYPE, Run, RunQuery

DEFAULT_K = 10
#: A query is too thin to standardize against when its judged pool has fewer documents
#: than this (a pool smaller than k cannot even fill an ideal top k) ...
THIN_POOL_SIZE = 10
#: ... or when, on average over the runs, less than this share of their top k is judged
#: (unjudged documents count as not relevant, so sNDCG then mostly measures the pooling).
THIN_JUDGED_SHARE = 0.5


@dataclass(frozen=True)
class TopicDifficulty:
    """One live query: its runs' sNDCG@k, difficulty ratio and expected random NDCG@k."""

    query: Query
    sndcg: np.ndarray
    difficulty: float
    difficulty_class: str | None
    rndcg: float
    pool_size: int
    judged: float = float("nan")

    @property
    def thin_reason(self) -> str | None:
        """Return why this query is too thin to standardize against, or None."""
        reasons = []
        if self.pool_size < THIN_POOL_SIZE:
            reasons.append(f"only {self.pool_size} judged documents (fewer than {THIN_POOL_SIZE})")
        if not np.isnan(self.judged) and self.judged < THIN_JUDGED_SHARE:
            reasons.append(
                f"the runs' top documents are {round(100 * self.judged)}% judged "
                f"(under {round(100 * THIN_JUDGED_SHARE)}%)"
            )
        return "; ".join(reasons) or None

    @property
    def defined(self) -> np.ndarray:
        """Return the runs' finite sNDCG values (undefined ones are left out)."""
        return self.sndcg[np.isfinite(self.sndcg)]

    @property
    def beating_random(self) -> int:
        """Return how many runs scored sNDCG > 0 on this topic."""
        return int(np.count_nonzero(self.defined > 0))

    @property
    def median(self) -> float:
        """Return the median sNDCG over the runs (NaN when none is defined)."""
        values = self.defined
        return float(np.median(values)) if values.size else float("nan")


@dataclass(frozen=True)
class DifficultyReport:
    """Topic difficulty of a collection's live queries over a set of runs."""

    k: int
    runs: list[Run]
    topics: list[TopicDifficulty]
    matrix: np.ndarray  # (runs, queries) sNDCG@k, in the order of ``runs`` and ``topics``


def empty_report(*, k: int = DEFAULT_K) -> DifficultyReport:
    """Return a report of no run and no topic (for viewers who may not see scores)."""
    return DifficultyReport(k=k, runs=[], topics=[], matrix=np.empty((0, 0)))


def _live_pools(collection: Collection) -> tuple[np.ndarray, list[np.ndarray], np.ndarray]:
    """Return live query ids (sorted), each query's pool grades and a (query, doc) key table.

    The key table is sorted rows ``(query index, document id, grade)`` for vectorised look-up.
    """
    rows = np.array(
        list(
            LiveGrade.objects.filter(collection=collection)
            .order_by("query_id", "document_id")
            .values_list("query_id", "document_id", "grade")
        ),
        dtype=np.float64,
    ).reshape(-1, 3)
    query_ids = np.unique(rows[:, 0].astype(np.int64))
    q_index = np.searchsorted(query_ids, rows[:, 0].astype(np.int64))
    starts = np.searchsorted(q_index, np.arange(query_ids.size), side="left")
    ends = np.searchsorted(q_index, np.arange(query_ids.size), side="right")
    pools = [rows[s:e, 2].copy() for s, e in zip(starts, ends, strict=True)]
    table = np.column_stack([q_index.astype(np.float64), rows[:, 1], rows[:, 2]])
    return query_ids, pools, table


def _rankings(run_ids: list[int], query_ids: Iterable[int], k: int) -> list[tuple]:
    """Return ``(run_id, query_id, top-k ranking bytes)`` for the runs and queries given."""
    width = k * RANKING_DTYPE.itemsize
    return list(
        RunQuery.objects.filter(run_id__in=run_ids, query_id__in=list(query_ids))
        .annotate(top=Substr("ranking", 1, width, output_field=BinaryField()))
        .values_list("run_id", "query_id", "top")
    )


def topic_difficulty(
    *, collection: Collection, runs: Iterable[Run], k: int = DEFAULT_K
) -> DifficultyReport:
    """Return sNDCG@k per run and live query, each query's difficulty ratio and RNDCG@k.

    Three SQL queries (live grades, top-k rankings, query texts), whatever the numbers of
    runs and queries; the scoring is vectorised over queries, one engine call per run.
    """
    runs = list(runs)
    query_ids, pools, table = _live_pools(collection)
    n_q = int(query_ids.size)
    if not n_q:
        return DifficultyReport(k=k, runs=runs, topics=[], matrix=np.empty((len(runs), 0)))
    run_index = {run.pk: i for i, run in enumerate(runs)}
    labels = np.full((len(runs), n_q, k), np.nan)
    n_ret = np.zeros((len(runs), n_q), dtype=np.int64)

    # Vectorised look-up of (query, document) -> grade: encode both as one sorted int64 key.
    doc_span = int(table[:, 1].max()) + 1 if table.size else 1
    keys = table[:, 0].astype(np.int64) * doc_span + table[:, 1].astype(np.int64)
    for run_id, query_id, top in _rankings(list(run_index), query_ids.tolist(), k):
        docs = np.frombuffer(bytes(top or b""), dtype=RANKING_DTYPE)[:k]
        qi = int(np.searchsorted(query_ids, query_id))
        ri = run_index[run_id]
        n_ret[ri, qi] = docs.size
        if not docs.size:
            continue
        wanted = qi * doc_span + np.minimum(docs, doc_span - 1)
        pos = np.clip(np.searchsorted(keys, wanted), 0, keys.size - 1)
        hit = (keys[pos] == wanted) & (docs < doc_span)
        labels[ri, qi, : docs.size] = np.where(hit, table[pos, 2], np.nan)

    # Judged@k of each run on each query, averaged over the runs.
    judged = (
        np.count_nonzero(~np.isnan(labels), axis=2).mean(axis=0) / k
        if runs
        else np.full(n_q, np.nan)
    )
    matrix = np.empty((len(runs), n_q))
    for i in range(len(runs)):
        matrix[i] = sndcg(labels[i], n_ret[i], pools, k)
    ratios = difficulty(matrix)
    expected = rndcg(pools, k)
    classes = difficulty_class(ratios)
    queries = Query.objects.in_bulk(query_ids.tolist())
    topics = [
        TopicDifficulty(
            query=queries[int(qid)],
            sndcg=matrix[:, j],
            difficulty=float(ratios[j]),
            difficulty_class=classes[j],
            rndcg=float(expected[j]),
            pool_size=int(pools[j].size),
            judged=float(judged[j]),
        )
        for j, qid in enumerate(query_ids)
    ]
    return DifficultyReport(k=k, runs=runs, topics=topics, matrix=matrix)


def _sort_key(sort: str) -> Callable[[TopicDifficulty], tuple]:
    """Return the sort key of a difficulty sort name (NaN always last)."""

    def nan_last(value: float) -> tuple[bool, float]:
        return (math.isnan(value), value)

    keys: dict[str, Callable[[TopicDifficulty], tuple]] = {
        "difficulty": lambda t: (*nan_last(t.difficulty), nan_last(t.median), t.query.external_id),
        "-difficulty": lambda t: (
            math.isnan(t.difficulty),
            -t.difficulty if not math.isnan(t.difficulty) else 0.0,
            t.query.external_id,
        ),
        "rndcg": lambda t: (*nan_last(t.rndcg), t.query.external_id),
        "median": lambda t: (*nan_last(t.median), t.query.external_id),
        "query": lambda t: (t.query.external_id,),
    }
    return keys[sort]


#: Orders of the topics, by name, with their labels.
SORTS = {
    "difficulty": "Hardest first",
    "-difficulty": "Easiest first",
    "rndcg": "Lowest RNDCG first",
    "median": "Lowest median sNDCG first",
    "query": "Query id",
}


def sort_topics(topics: Iterable[TopicDifficulty], sort: str) -> list[TopicDifficulty]:
    """Return ``topics`` in the order ``sort`` names (one of :data:`SORTS`)."""
    return sorted(topics, key=_sort_key(sort))
