"""Rescore a few queries of every run: the path one judgment takes.

A judgment changes the live grades of one query, and every run's scores for that query
must follow before the request returns. :func:`rescore` does that with a fixed, small
number of statements whatever the number of runs, and no model instances:

1. lock the collection row (reading its version and measures), then read its
   scoreboard in a statement of its own (a statement that waited for the lock would see
   the board as it was before the wait: :mod:`metrics.live.store`, "Locks"); the
   judgment's own transaction already holds that lock, so there it never waits;
2. read the queries' score columns (:mod:`metrics.live.store`: one row each) and their
   live grades;
3. score every run for the queries and write the columns and the scoreboard back (one
   statement on PostgreSQL; the scoreboard moves by exactly the difference).

Rankings never change after submission, so each process keeps recently rescored queries
prepared for scoring (:class:`Prepared`: the document ids of every run's ranking as one
padded matrix). Labelling that matrix with the query's live grades is one pass of the C
extension's hash lookup (``_creader.label``, well under a millisecond for 100 x 1,000
cells); without the extension the matrix is factorised once into its distinct
documents, and a judgment costs a ``searchsorted`` of those and a gather. A prepared
query is valid for one epoch of the scoreboard, which is drawn afresh whenever a write
changes the board's runs (a submission, a deletion) and on every rescoring from nothing,
so a deleted and re-submitted run -- SQLite may reuse its ids -- is never scored with a
stale ranking; and only while it covers every run of the board (a second guard: a board
whose runs it never read is read again). A run of the scoreboard without a stored ranking for
the query scores it as an empty ranking (trec_eval ``-c``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
from django.db import connection

from judging.db import fetch
from judging.models import LiveGrade
from metrics import engine
from metrics.engine import _creader
from metrics.engine.measures import Measure
from metrics.live import scoring, store
from metrics.models import RANKING_DTYPE, RunQuery

MAX_QUERIES = 4  # more queries at once take the general path (runs_score)
CACHE_BYTES = 64 * 1024 * 1024  # prepared rankings a process keeps


@dataclass(slots=True)
class Prepared:
    """One query's stored rankings of every run, ready to be labelled.

    ``key`` is the collection and the scoreboard epoch they were read at; ``run_ids`` and
    ``retrieved`` describe the rows; ``docs`` is the padded ranking matrix (int64
    document ids, -1 marks padding). Without the C extension, ``uniq`` holds its distinct
    ids (sorted) and ``inverse`` the matrix as indices into ``uniq``; with it both are None.
    """

    key: tuple[int, int]
    run_ids: np.ndarray
    retrieved: np.ndarray
    docs: np.ndarray
    uniq: np.ndarray | None
    inverse: np.ndarray | None
    nbytes: int
    complete: bool  # every row's ranking holds exactly its ``retrieved`` documents
    #: Sorted ids of every run the preparation knows the ranking of (stored rows, and
    #: the runs it gave an empty one); a board with any other run needs a new read.
    covered: np.ndarray | None = None

    def covers(self, run_ids: np.ndarray) -> bool:
        """Return whether the rankings of all of ``run_ids`` were read with this preparation."""
        known = self.run_ids if self.covered is None else self.covered
        return bool(np.isin(run_ids, known, assume_unique=True).all())

    def labels(self, width: int, ids: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Return ``values`` of each ranked document in the first ``width`` ranks (NaN if absent).

        ``ids`` are the sorted, distinct document ids of the query's live list and
        ``values`` one float per id (grades or abstention probabilities).
        """
        if self.inverse is None:
            docs = self.docs if width >= self.docs.shape[1] else self.docs[:, :width]
            return _creader.label(docs, ids, values)
        return _lookup(self.uniq, ids, values)[self.inverse[:, :width]]


_cache: OrderedDict[int, Prepared] = OrderedDict()
_cache_bytes = 0
_lock = threading.Lock()


def handles(query_ids: Sequence[int]) -> bool:
    """Return whether :func:`rescore` takes these distinct queries (one change's few)."""
    return 0 < len(query_ids) <= MAX_QUERIES


def cache_clear() -> None:
    """Forget every prepared query (tests; a process never needs it)."""
    global _cache_bytes
    with _lock:
        _cache.clear()
        _cache_bytes = 0


def _cached(query_id: int, key: tuple, run_ids: np.ndarray) -> Prepared | None:
    """Return the query's preparation if it is of ``key`` and covers ``run_ids``."""
    with _lock:
        prepared = _cache.get(query_id)
        if prepared is None or prepared.key != key or not prepared.covers(run_ids):
            return None
        _cache.move_to_end(query_id)
        return prepared


def _remember(query_id: int, prepared: Prepared) -> None:
    global _cache_bytes
    with _lock:
        old = _cache.pop(query_id, None)
        if old is not None:
            _cache_bytes -= old.nbytes
        _cache[query_id] = prepared
        _cache_bytes += prepared.nbytes
        while _cache and _cache_bytes > CACHE_BYTES:
            _, evicted = _cache.popitem(last=False)
            _cache_bytes -= evicted.nbytes


def prepare(
    key: tuple[int, int],
    run_ids: Sequence[int],
    rankings: Sequence[bytes],
    retrieved: Sequence[int],
) -> Prepared:
    """Build the prepared form of ``rankings`` (int64 document-id bytes, one per run)."""
    arrays = [np.frombuffer(r, dtype=RANKING_DTYPE) for r in rankings]
    complete = all(len(a) == n for a, n in zip(arrays, retrieved, strict=True))
    width = max((len(a) for a in arrays), default=0)
    docs = np.full((len(arrays), max(width, 1)), -1, dtype=np.int64)
    for i, a in enumerate(arrays):
        docs[i, : len(a)] = a
    ids = np.asarray(run_ids, dtype=np.int64)
    n_ret = np.asarray(retrieved, dtype=np.int64)
    if _creader.AVAILABLE:
        return Prepared(key, ids, n_ret, docs, None, None, docs.nbytes, complete)
    uniq, inverse = np.unique(docs, return_inverse=True)
    inverse = inverse.reshape(docs.shape).astype(np.int32 if len(uniq) < 2**31 else np.int64)
    nbytes = docs.nbytes + uniq.nbytes + inverse.nbytes
    return Prepared(key, ids, n_ret, docs, uniq, inverse, nbytes, complete)


@lru_cache(maxsize=64)
def _measures(measures: tuple[str, ...]) -> tuple[list[str], list[Measure], int | None, bool]:
    """Return canonical names, parsed measures, required depth and whether UDCG is asked."""
    parsed = scoring.resolved(measures)
    names = list(dict.fromkeys(m.canonical for m in parsed))
    return names, parsed, engine.required_depth(parsed), any(m.family == "UDCG" for m in parsed)


def _lookup(uniq: np.ndarray, ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Return ``values`` of ``uniq`` looked up in the sorted ``ids`` (NaN where absent)."""
    if not len(ids):
        return np.full(len(uniq), np.nan)
    at = np.minimum(np.searchsorted(ids, uniq), len(ids) - 1)
    return np.where(ids[at] == uniq, values[at], np.nan)


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def _live(collection_id: int, query_ids: Sequence[int]) -> dict[int, scoring.QueryGrades]:
    table = _quote(LiveGrade._meta.db_table)
    marks = ", ".join(["%s"] * len(query_ids))
    sql = (
        f"SELECT query_id, document_id, grade, abstain_probability FROM {table} "
        f"WHERE collection_id = %s AND query_id IN ({marks}) ORDER BY query_id, document_id"
    )
    return scoring.live_grades_by_query(fetch(sql, [collection_id, *query_ids]))


def rescore(
    *, collection_id: int, query_ids: Sequence[int], run_ids: Sequence[int] | None = None
) -> int | None:
    """Rescore ``query_ids`` (at most :data:`MAX_QUERIES`) of every run; return the version.

    ``run_ids`` limits the runs rescored (the others keep their values). Returns None,
    writing nothing, when the scoreboard was written for other measures than the
    collection's: then every value must be recomputed (``runs_score`` in full). Must run
    inside a transaction (``runs_score`` and the judgment services provide it).
    """
    query_ids = sorted(set(query_ids))
    version, measures, board = store.locked_board(collection_id)
    names, parsed, needed, wants_udcg = _measures(tuple(measures))
    if not len(board.run_ids):
        return version  # no run to score
    if board.names != names:  # the measures changed: the caller rescores in full
        return None
    targets = board.run_ids if run_ids is None else np.unique(np.asarray(run_ids, np.int64))
    grades = _live(collection_id, query_ids)
    columns = store.columns_read(collection_id, query_ids)
    written = []
    for query_id in query_ids:
        column = columns.get(query_id) or store.Column.empty(query_id, names)
        g = grades.get(query_id)
        if g is None:  # no live grades: the query leaves every mean
            written.append(store.apply(board, column, targets, None))
            continue
        prepared = _prepared(collection_id, query_id, board)
        values = _score(prepared, targets, g, parsed, names, needed, wants_udcg)
        written.append(store.apply(board, column, targets, values))
    store.write(board, written, version=version)
    return version


def _score(
    prepared: Prepared,
    targets: np.ndarray,
    g: scoring.QueryGrades,
    parsed: list[Measure],
    names: list[str],
    needed: int | None,
    wants_udcg: bool,
) -> np.ndarray:
    """Return ``targets`` × ``names`` values of one query (a run without a ranking: empty)."""
    width = prepared.docs.shape[1]
    width = max(width if needed is None else min(needed, width), 1)
    labels = prepared.labels(width, g.document_ids, g.grades)
    abstain = None
    if wants_udcg and g.abstain is not None:
        abstain = prepared.labels(width, g.document_ids, g.abstain)
    n = len(prepared.run_ids)
    # One extra row: the empty ranking, for runs that did not rank the query.
    labels = np.vstack([labels, np.full((1, width), np.nan)])
    if abstain is not None:
        abstain = np.vstack([abstain, np.full((1, width), np.nan)])
    n_ret = np.append(prepared.retrieved, 0)
    pool = engine.JudgedPool.from_sequences([g.grades]).shared(np.zeros(n + 1, np.int64))
    # Padding (-1) is never a live document, so every cell past a row's ranking is NaN
    # already when the stored rankings hold all ``retrieved`` documents.
    values = engine.evaluate_ranked(
        labels, n_ret, pool, parsed, abstain=abstain, padded=prepared.complete
    )
    engine.zero_omitted(parsed, values, n_ret == 0)  # runs that left the query out
    matrix = np.column_stack([values[name] for name in names])
    at = store.positions(prepared.run_ids, targets)
    return matrix[np.where(at >= 0, at, n)]


def _prepared(collection_id: int, query_id: int, board: store.Board) -> Prepared:
    """Return the prepared rankings of the query (cached for the epoch, or read now)."""
    key = (collection_id, board.epoch)
    prepared = _cached(query_id, key, board.run_ids)
    if prepared is None:
        table = _quote(RunQuery._meta.db_table)
        rows = fetch(
            f"SELECT run_id, ranking, retrieved FROM {table} WHERE query_id = %s ORDER BY run_id",
            [query_id],
        )
        present = {run_id for run_id, _, _ in rows}
        missing = missing_rows(
            [], [r for r in board.run_ids.tolist() if r not in present], [query_id]
        )
        if missing:  # a run that left out a query of the live list scores it as empty
            RunQuery.objects.bulk_create(missing)
        prepared = prepare(
            key,
            [r[0] for r in rows],
            [bytes(r[1]) for r in rows],
            [r[2] for r in rows],
        )
        prepared.covered = np.union1d(prepared.run_ids, [m.run_id for m in missing])
        _remember(query_id, prepared)
    return prepared


def missing_rows(
    rows: Sequence[Any], run_ids: Iterable[int], query_ids: Iterable[int]
) -> list[RunQuery]:
    """Return unsaved empty rankings for each (run, live query) pair that ``rows`` lacks.

    A run that left out a query of the live list scores it as an empty ranking
    (trec_eval ``-c``), so the pair gets a row with no documents.
    """
    present = {(r.run_id, r.query_id) for r in rows}
    query_ids = list(query_ids)
    return [
        RunQuery(run_id=run_id, query_id=q, ranking=b"", retrieved=0)
        for run_id in run_ids
        for q in query_ids
        if (run_id, q) not in present
    ]
