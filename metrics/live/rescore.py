"""Rescore a few queries of every run: the path one judgment takes.

A judgment changes the live grades of one query, and every run's scores for that query
must follow before the request returns (issue 12: 100 stored W1 runs in about 10 ms).
:func:`rescore` does that with a fixed, small number of statements and no model
instances:

1. lock the collection row and read its version and measures (the judgment's own
   transaction already holds that lock, so this never waits);
2. one read of every run's status and sums with its stored row for the queries (row id,
   retrieved count, old scores) -- no ranking bytes;
3. one read of the queries' live grades;
4. one write: on PostgreSQL a single statement updates the ``RunQuery`` rows and the
   ``Run`` rows together (two data-modifying CTEs); elsewhere a few prepared statements.

Rankings never change after submission, so each process keeps recently rescored queries
prepared for scoring (:class:`Prepared`: the document ids of every row as one padded
matrix). Labelling that matrix with the query's live grades is one pass of the C
extension's hash lookup (``_creader.label``, well under a millisecond for 100 x 1,000
cells, cold or warm); without the extension the matrix is factorised once into its
distinct documents, and a judgment costs a ``searchsorted`` of those and a gather. A
prepared query is used only for exactly the same rows (row id, run and the run's
submission time), so a deleted and re-submitted run -- SQLite may reuse its ids -- is
never scored with a stale ranking; anything else is read again.

Unchanged rows are not rewritten (their ``version`` stays the one their scores were last
written at; whether they are current is their run's ``scored_version``) and their runs'
sums are not touched, so repeated rescoring never accumulates floating-point drift.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import numpy as np
from django.db import connection
from django.utils import timezone

from judging.models import Collection, LiveGrade
from metrics import engine
from metrics.engine import _creader
from metrics.engine.measures import Measure
from metrics.live import scoring
from metrics.live.sqlrows import as_dict, dumps, fetch, write_rows, write_scores
from metrics.models import RANKING_DTYPE, Run, RunQuery

MAX_QUERIES = 4  # more queries at once take the general path (runs_score)
CACHE_BYTES = 64 * 1024 * 1024  # prepared rankings a process keeps


@dataclass(slots=True)
class Prepared:
    """One query's stored rankings for a fixed set of rows, ready to be labelled.

    ``key`` identifies the rows (RunQuery id, run id, run submission time) in order;
    ``docs`` is the padded ranking matrix (int64 document ids, -1 marks padding). Without
    the C extension, ``uniq`` holds its distinct ids (sorted) and ``inverse`` the matrix as
    indices into ``uniq``; with it both are None.
    """

    key: tuple[tuple[int, int, datetime | None], ...]
    docs: np.ndarray
    uniq: np.ndarray | None
    inverse: np.ndarray | None
    nbytes: int
    complete: bool  # every row's ranking holds exactly its ``retrieved`` documents

    def labels(self, width: int, ids: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Return ``values`` of each ranked document in the first ``width`` ranks (NaN if absent).

        ``ids`` are the sorted, distinct document ids of the query's live list and
        ``values`` one float per id (grades or abstention probabilities).
        """
        if self.inverse is None:
            docs = self.docs if width >= self.docs.shape[1] else self.docs[:, :width]
            return _creader.label(docs, ids, values)
        return _lookup(self.uniq, ids, values)[self.inverse[:, :width]]


@dataclass(slots=True)
class _Row:
    """A ``RunQuery`` row as rescoring reads and writes it."""

    pk: int
    run_id: int
    query_id: int
    retrieved: int
    old: dict[str, Any]
    scores: dict[str, Any]


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


def _cached(query_id: int, key: tuple) -> Prepared | None:
    with _lock:
        prepared = _cache.get(query_id)
        if prepared is None or prepared.key != key:
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


def prepare(key: tuple, rankings: Sequence[bytes], retrieved: Sequence[int]) -> Prepared:
    """Build the prepared form of ``rankings`` (int64 document-id bytes, one per row)."""
    arrays = [np.frombuffer(r, dtype=RANKING_DTYPE) for r in rankings]
    complete = all(len(a) == n for a, n in zip(arrays, retrieved, strict=True))
    width = max((len(a) for a in arrays), default=0)
    docs = np.full((len(arrays), max(width, 1)), -1, dtype=np.int64)
    for i, a in enumerate(arrays):
        docs[i, : len(a)] = a
    if _creader.AVAILABLE:
        return Prepared(key, docs, None, None, docs.nbytes, complete)
    uniq, inverse = np.unique(docs, return_inverse=True)
    inverse = inverse.reshape(docs.shape).astype(np.int32 if len(uniq) < 2**31 else np.int64)
    return Prepared(key, docs, uniq, inverse, docs.nbytes + uniq.nbytes + inverse.nbytes, complete)


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


def _read_rows(
    collection_id: int, query_ids: Sequence[int], run_ids: Sequence[int] | None
) -> tuple[dict[int, tuple[datetime | None, str, str]], list[_Row], list[tuple]]:
    """Read runs (submission time, status, sums as text) and their rows for ``query_ids``.

    Returns the runs, the rows (ordered by query, then row id) and for each row its key
    entry; runs without a row for some query are found by the caller.
    """
    run, rq = _quote(Run._meta.db_table), _quote(RunQuery._meta.db_table)
    marks = ", ".join(["%s"] * len(query_ids))
    where = "r.collection_id = %s"
    params: list[Any] = [*query_ids, collection_id]
    if run_ids is not None:
        where += f" AND r.id IN ({', '.join(['%s'] * len(run_ids))})"
        params += list(run_ids)
    sql = (
        f"SELECT r.id, r.submitted_at, r.status, CAST(r.score_sums AS text), "
        f"q.id, q.query_id, q.retrieved, CAST(q.scores AS text) "
        f"FROM {run} r LEFT JOIN {rq} q ON q.run_id = r.id AND q.query_id IN ({marks}) "
        f"WHERE {where} ORDER BY q.query_id, q.id"
    )
    runs: dict[int, tuple[datetime | None, str, str]] = {}
    rows: list[_Row] = []
    keys: list[tuple] = []
    for run_id, submitted, status, sums, pk, query_id, retrieved, scores in fetch(sql, params):
        runs[run_id] = (submitted, status, sums)
        if pk is not None:
            rows.append(_Row(pk, run_id, query_id, retrieved, as_dict(scores), {}))
            keys.append((pk, run_id, submitted))
    return runs, rows, keys


def _live(collection_id: int, query_ids: Sequence[int]) -> dict[int, scoring.QueryGrades]:
    table = _quote(LiveGrade._meta.db_table)
    marks = ", ".join(["%s"] * len(query_ids))
    sql = (
        f"SELECT query_id, document_id, grade, abstain_probability FROM {table} "
        f"WHERE collection_id = %s AND query_id IN ({marks}) ORDER BY query_id, document_id"
    )
    return scoring.live_grades_by_query(fetch(sql, [collection_id, *query_ids]))


def _rankings(pks: Sequence[int]) -> dict[int, bytes]:
    table = _quote(RunQuery._meta.db_table)
    sql = f"SELECT id, ranking FROM {table} WHERE id IN ({', '.join(['%s'] * len(pks))})"
    return {pk: bytes(ranking) for pk, ranking in fetch(sql, list(pks))}


def _lock_collection(collection_id: int) -> tuple[int, tuple[str, ...]]:
    table = _quote(Collection._meta.db_table)
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    sql = f"SELECT judgments_version, CAST(measures AS text) FROM {table} WHERE id = %s{lock}"
    with connection.cursor() as cursor:
        cursor.execute(sql, [collection_id])
        version, measures = cursor.fetchone()
    return version, tuple(json.loads(measures))


def _finite(value: float) -> float | None:
    value = float(value)
    return None if value != value else value


def rescore(
    *, collection_id: int, query_ids: Sequence[int], run_ids: Sequence[int] | None = None
) -> int:
    """Rescore ``query_ids`` (at most :data:`MAX_QUERIES`) of every run; return the version.

    Must run inside a transaction (``runs_score`` and the judgment services provide it).
    """
    query_ids = sorted(set(query_ids))
    version, measures = _lock_collection(collection_id)
    names, parsed, needed, wants_udcg = _measures(measures)
    runs, rows, keys = _read_rows(collection_id, query_ids, run_ids)
    if not runs:
        return version
    grades = _live(collection_id, query_ids)
    missing = missing_rows(rows, runs, grades)
    if missing:  # a run that left out a query of the live list scores it as empty
        RunQuery.objects.bulk_create(missing)
        for m in missing:
            rows.append(_Row(m.pk, m.run_id, m.query_id, 0, {}, {}))
            keys.append((m.pk, m.run_id, runs[m.run_id][0]))
    changed = [False] * len(rows)
    by_query: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        by_query.setdefault(row.query_id, []).append(i)
    for query_id, idx in by_query.items():
        g = grades.get(query_id)
        if g is None:  # no live grades: the query leaves every mean
            for i in idx:
                rows[i].scores = {}
            continue
        prepared = _prepared(
            query_id, tuple(keys[i] for i in idx), [rows[i].retrieved for i in idx]
        )
        width = prepared.docs.shape[1]
        width = max(width if needed is None else min(needed, width), 1)
        labels = prepared.labels(width, g.document_ids, g.grades)
        abstain = None
        if wants_udcg and g.abstain is not None:
            abstain = prepared.labels(width, g.document_ids, g.abstain)
        n_ret = np.fromiter((rows[i].retrieved for i in idx), dtype=np.int64, count=len(idx))
        pools = engine.JudgedPool.from_sequences([g.grades]).shared(np.zeros(len(idx), np.int64))
        # Padding (-1) is never a live document, so every cell past a row's ranking is
        # NaN already; stored rankings hold all ``retrieved`` documents.
        values = engine.evaluate_ranked(
            labels, n_ret, pools, parsed, abstain=abstain, padded=prepared.complete
        )
        columns = {name: values[name].tolist() for name in names}
        for j, i in enumerate(idx):
            rows[i].scores = {name: _finite(columns[name][j]) for name in names}
    for i, row in enumerate(rows):
        changed[i] = row.scores != row.old
    _write(collection_id, version, names, runs, rows, changed)
    return version


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


def _prepared(query_id: int, key: tuple, retrieved: Sequence[int]) -> Prepared:
    """Return the prepared rankings of these rows (cached, or read and prepared now)."""
    prepared = _cached(query_id, key)
    if prepared is None:
        found = _rankings([k[0] for k in key])
        prepared = prepare(key, [found[k[0]] for k in key], retrieved)
        _remember(query_id, prepared)
    return prepared


def _write(
    collection_id: int,
    version: int,
    names: list[str],
    runs: dict[int, tuple[datetime | None, str, str]],
    rows: list[_Row],
    changed: list[bool],
) -> None:
    """Store the changed rows' scores and version, and every run's sums, means and version."""
    sums: dict[int, dict[str, list[float]]] = {}
    for row, c in zip(rows, changed, strict=True):
        if not c:
            continue
        if row.run_id not in sums:
            stored = as_dict(runs[row.run_id][2])
            sums[row.run_id] = {name: list(stored.get(name, [0.0, 0])) for name in names}
        run_sums = sums[row.run_id]
        for name in names:
            total = run_sums[name]
            if row.old.get(name) is not None:
                total[0] -= row.old[name]
                total[1] -= 1
            if row.scores.get(name) is not None:
                total[0] += row.scores[name]
                total[1] += 1
    for run_id, (_, status, stored_text) in runs.items():
        if run_id in sums or status == Run.Status.SCORED:
            continue
        stored = as_dict(stored_text)  # a pending run: write its sums and means as they are
        sums[run_id] = {name: list(stored.get(name, [0.0, 0])) for name in names}
    quoted = [json.dumps(name) for name in names]
    for run_id, (_, _, stored_text) in runs.items():
        if run_id in sums or all(q in stored_text for q in quoted):
            continue
        stored = as_dict(stored_text)
        if any(name not in stored for name in names):  # measures changed: write them all
            sums[run_id] = {name: list(stored.get(name, [0.0, 0])) for name in names}
    now = timezone.now()
    means = {
        run_id: {name: (t / n if n else None) for name, (t, n) in run_sums.items()}
        for run_id, run_sums in sums.items()
    }
    if connection.vendor == "postgresql":
        _write_postgresql(version, now, runs, rows, changed, sums, means)
        return
    write_scores(rows, changed, version)
    write_rows(
        Run,
        [_RunRow(run_id, sums[run_id], means[run_id], version, now) for run_id in sums],
        ["score_sums", "scores", "scored_version", "scored_at", "status"],
    )
    others = [run_id for run_id in runs if run_id not in sums]
    if others:
        Run.objects.filter(pk__in=others).update(scored_version=version, scored_at=now)


@dataclass(slots=True)
class _RunRow:
    pk: int
    score_sums: dict[str, list[float]]
    scores: dict[str, float | None]
    scored_version: int
    scored_at: datetime
    status: str = Run.Status.SCORED


def _write_postgresql(
    version: int,
    now: datetime,
    runs: dict[int, Any],
    rows: list[_Row],
    changed: list[bool],
    sums: dict[int, dict[str, list[float]]],
    means: dict[int, dict[str, float | None]],
) -> None:
    """Update the rows and the runs in one statement (two data-modifying CTEs)."""
    rq, run = _quote(RunQuery._meta.db_table), _quote(Run._meta.db_table)
    row_records = [{"pk": r.pk, "s": r.scores} for r, c in zip(rows, changed, strict=True) if c]
    run_records = [{"pk": run_id, "u": sums.get(run_id), "m": means.get(run_id)} for run_id in runs]
    sql = (
        f"WITH a AS (UPDATE {rq} AS t SET scores = v.s, version = %s "
        f"FROM jsonb_to_recordset(%s::jsonb) AS v(pk bigint, s jsonb) WHERE t.id = v.pk "
        f"RETURNING 1), "
        f"b AS (UPDATE {run} AS t SET score_sums = COALESCE(v.u, t.score_sums), "
        f"scores = COALESCE(v.m, t.scores), scored_version = %s, scored_at = %s, status = %s "
        f"FROM jsonb_to_recordset(%s::jsonb) AS v(pk bigint, u jsonb, m jsonb) "
        f"WHERE t.id = v.pk RETURNING 1) "
        f"SELECT (SELECT count(*) FROM a), (SELECT count(*) FROM b)"
    )
    params = [
        version,
        dumps(row_records),
        version,
        now,
        Run.Status.SCORED,
        dumps(run_records),
    ]
    fetch(sql, params)
