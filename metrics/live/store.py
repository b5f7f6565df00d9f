"""Where live scores are kept: one column per query, one scoreboard per collection.

A judgment changes the live grades of one query, and with them that query's score of
every run (a relevant document changes every run's AP through its number of relevant
documents) and so every run's mean. Kept one row per (run, query) and one per run, that
is two row writes per stored run for every judgment, which grows with the runs. Here it
is two rows whatever the number of runs:

``QueryScores`` (one per query)
    every run's values of the collection's measures for the query, a runs × measures
    float64 matrix; a run the column does not list has no score for the query (the
    query has no live grades, or the run was added later and not yet scored); NaN
    inside a listed row is a measure that leaves the query out (``None`` to readers).
``Scoreboard`` (one per collection)
    per run and measure, the sum of its listed, finite per-query values and how many
    there are; the mean is their quotient.

Writers replace a column's entries for some runs and move the scoreboard by exactly the
difference (:func:`apply`): an unchanged value adds ``0.0`` exactly, so values that do
not change never make the sums drift. Readers take means from the scoreboard
(:meth:`Scoreboard.attach`) and per-query values from the columns (:func:`run_values`,
:func:`measure_matrix`). Rows of runs that were deleted may linger in columns until
their next write; every reader keeps to the runs it asks for.

Locks, in the one order every writer of scores takes them
-----------------------------------------------------------
Every path that writes scores -- one judgment (inside its transaction), a bulk change's
background rescoring, a submission, a run's deletion, a change of measures or of the
aggregation policy, ``rescore_runs`` -- holds **the collection's row lock** (:func:`lock`,
the same ``FOR UPDATE`` of the collection row that ``judging.services._lock_collection``
takes for the live list) before it reads anything it will write, and keeps it to commit.
Under it, in this order as needed: judgments and adjudications (``FOR UPDATE`` of their
rows), live grades, pool entries and progress counters, runs and their rankings, the
score columns, the scoreboard; none of these is written by anyone who does not hold the
collection lock. Locks a writer may hold *before* the collection lock, never after it:
a team's row (a submission's budget, ``metrics.visibility.services``), an LLM job's and
its chunks' rows (``judging.llm.services``) and the pooling policy row
(``metrics.pool.services.pool_replan``, which writes its plan under the collection lock;
a policy change locks the collection first and then only the policy row it creates);
new rows (a submission's run and id-only documents) are inserted before it and conflict
only on their own unique keys. An LLM provider's and its usage rows (budgets) are locked
in transactions of their own, never together with the collection's.

Under the lock a writer reads in **new statements**: in PostgreSQL's READ COMMITTED, a
statement that waited for a row lock returns every row it did not lock as its snapshot
saw it before the wait. The scoreboard read in the locking statement (a join) was the
board from before the submission it waited for, and writing it back dropped the new run
and restored the old epoch (issue 32). So :func:`lock` locks and reads only the
collection row, and :func:`board_read` then reads the board afresh. The epoch of a board
changes whenever a write changes its set of runs, and on every full rescoring, so
rankings cached for an older epoch (:mod:`metrics.live.rescore`) are never used again.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.db import connection
from django.utils import timezone

from judging.db import execute, fetch
from judging.models import Collection, Query
from metrics.live import matrices
from metrics.models import QueryScores, Scoreboard

F8, I8 = matrices.F8, matrices.I8


def positions(have: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Return the index of each of ``want`` in ``have`` (-1 where absent)."""
    if not len(have) or not len(want):
        return np.full(len(want), -1, dtype=np.int64)
    order = np.argsort(have, kind="stable")
    at = np.minimum(np.searchsorted(have[order], want), len(have) - 1)
    found = have[order][at] == want
    return np.where(found, order[at], -1)


@dataclass
class Column:
    """One query's scores: ``values[i, j]`` is run ``run_ids[i]``'s value of ``names[j]``."""

    query_id: int
    names: list[str]
    run_ids: np.ndarray
    values: np.ndarray
    version: int = 0

    @classmethod
    def empty(cls, query_id: int, names: list[str]) -> Column:
        """Return a column that lists no run."""
        return cls(query_id, list(names), np.zeros(0, np.int64), np.zeros((0, len(names))))

    def lookup(self, run_ids: Sequence[int] | np.ndarray, names: Sequence[str]) -> np.ndarray:
        """Return the values of ``run_ids`` × ``names`` (NaN where not listed or not kept)."""
        want = np.asarray(run_ids, dtype=np.int64)
        out = np.full((len(want), len(names)), np.nan)
        at = positions(self.run_ids, want)
        hit = at >= 0
        for j, name in enumerate(names):
            if name in self.names:
                out[hit, j] = self.values[at[hit], self.names.index(name)]
        return out

    def listed(self, run_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Return whether each of ``run_ids`` has a score for the query."""
        return positions(self.run_ids, np.asarray(run_ids, dtype=np.int64)) >= 0


@dataclass
class Board:
    """A collection's scoreboard in memory (see :class:`metrics.models.Scoreboard`)."""

    collection_id: int
    names: list[str]
    run_ids: np.ndarray
    sums: np.ndarray
    counts: np.ndarray
    version: int = 0
    epoch: int = 0
    scored_at: datetime | None = None
    stored: bool = False
    #: The run ids the board was read with (sorted): a write that changes them draws a
    #: new epoch.
    read_run_ids: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def __post_init__(self) -> None:
        """Remember the runs the board starts with."""
        self.read_run_ids = np.sort(self.run_ids)

    def runs_changed(self) -> bool:
        """Return whether the board's set of runs differs from the one it was read with."""
        return not np.array_equal(np.sort(self.run_ids), self.read_run_ids)

    def rows(self, run_ids: Sequence[int] | np.ndarray) -> np.ndarray:
        """Return the board rows of ``run_ids``, adding a zero row for each new run."""
        want = np.asarray(run_ids, dtype=np.int64)
        at = positions(self.run_ids, want)
        new = np.unique(want[at < 0])
        if len(new):
            self.run_ids = np.concatenate([self.run_ids, new])
            zeros = (len(new), len(self.names))
            self.sums = np.vstack([self.sums, np.zeros(zeros)])
            self.counts = np.vstack([self.counts, np.zeros(zeros, dtype=np.int64)])
            at = positions(self.run_ids, want)
        return at

    def drop(self, run_ids: Iterable[int]) -> None:
        """Forget the sums of ``run_ids`` (deleted runs)."""
        keep = ~np.isin(self.run_ids, np.fromiter(run_ids, dtype=np.int64))
        self.run_ids, self.sums, self.counts = (
            self.run_ids[keep],
            self.sums[keep],
            self.counts[keep],
        )

    def reset(self, names: list[str]) -> None:
        """Start from no sums at all, for measures ``names`` (a full rescoring)."""
        self.names = list(names)
        self.run_ids = np.zeros(0, np.int64)
        self.sums = np.zeros((0, len(names)))
        self.counts = np.zeros((0, len(names)), dtype=np.int64)

    def means(self) -> dict[int, dict[str, float | None]]:
        """Return each run's mean per measure (None where no query counts)."""
        return matrices.means(self.names, self.run_ids, self.sums, self.counts)


def _table(model: Any) -> str:
    return connection.ops.quote_name(model._meta.db_table)


_BOARD_COLUMNS = "CAST(b.measures AS text), b.run_ids, b.sums, b.counts, b.version, b.epoch"


def _board(collection_id: int, row: Sequence[Any] | None) -> Board:
    """Return the board of a row of :data:`_BOARD_COLUMNS` (all None: none stored)."""
    if row is None or row[0] is None:
        return Board(collection_id, [], np.zeros(0, np.int64), np.zeros((0, 0)), np.zeros((0, 0)))
    names_text, run_ids, sums, counts, version, epoch = row
    names = json.loads(names_text)
    ids = matrices.ids(run_ids)
    return Board(
        collection_id,
        list(names),
        ids,
        matrices.matrix(sums, len(ids), len(names), F8),
        matrices.matrix(counts, len(ids), len(names), I8).astype(np.int64),
        version,
        epoch,
        None,
        stored=True,
    )


def board_read(collection_id: int) -> Board:
    """Return the collection's scoreboard (an empty one if none is stored yet).

    One raw read; ``scored_at`` is not read (:meth:`Scoreboard.attach` reads it for the
    pages).
    """
    rows = fetch(
        f"SELECT {_BOARD_COLUMNS} FROM {_table(Scoreboard)} b WHERE b.collection_id = %s",
        [collection_id],
    )
    return _board(collection_id, rows[0] if rows else None)


def lock(collection_id: int) -> tuple[int, list[str]]:
    """Take the collection's row lock; return its judgment-list version and measures.

    The lock every writer of the live list and of scores takes first (see the module's
    "Locks"); a judgment's own transaction holds it already, so this never waits there.
    Read what the lock protects in later statements (:func:`board_read`): a statement
    that waited returns other tables' rows as they were before the wait.
    """
    suffix = " FOR UPDATE" if connection.features.has_select_for_update else ""
    rows = fetch(
        f"SELECT judgments_version, CAST(measures AS text) FROM {_table(Collection)} "
        f"WHERE id = %s{suffix}",
        [collection_id],
    )
    version, measures = rows[0]
    return version, json.loads(measures)


def locked_board(collection_id: int) -> tuple[int, list[str], Board]:
    """Lock the collection's row; return its judgment-list version, measures and board.

    Two statements: the board is read after the lock is granted (see :func:`lock`).
    """
    version, measures = lock(collection_id)
    return version, measures, board_read(collection_id)


def _stamp(board: Board, *, version: int, renew: bool) -> None:
    """Set the board's version and time; draw a new epoch if its runs changed or ``renew``.

    The epoch is random, not a counter: caches keyed by it can never mistake a new
    collection (or a test database that reuses ids) for an old one.
    """
    board.version = version
    board.scored_at = timezone.now()
    if renew or not board.stored or board.runs_changed():
        board.epoch = secrets.randbits(62)
    board.read_run_ids = np.sort(board.run_ids)


def board_write(board: Board, *, version: int, renew: bool = False) -> None:
    """Store ``board`` at ``version``: a new epoch when its runs changed, or with ``renew``.

    ``renew`` is for a rescoring from nothing: no ranking cached before it is used after.
    Must run under :func:`lock`, with ``board`` read after it.
    """
    _stamp(board, version=version, renew=renew)
    fields = {
        "measures": board.names,
        "run_ids": board.run_ids.astype(I8).tobytes(),
        "sums": board.sums.astype(F8).tobytes(),
        "counts": board.counts.astype(I8).tobytes(),
        "version": board.version,
        "epoch": board.epoch,
        "scored_at": board.scored_at,
    }
    if not board.stored:
        Scoreboard.objects.create(collection_id=board.collection_id, **fields)
        board.stored = True
    elif connection.vendor == "postgresql":
        execute(*_board_update(board))
    else:
        Scoreboard.objects.filter(collection_id=board.collection_id).update(**fields)


def _upsert(
    collection_id: int, columns: Sequence[Column], version: int, *, append: bool = False
) -> tuple[str, list]:
    """Return the PostgreSQL upsert of ``columns`` (all naming the same measures).

    A stored column is replaced, or with ``append`` extended by the given runs.
    """
    values = connection.ops.quote_name("values")
    if append:
        conflict = (
            f"run_ids = t.run_ids || EXCLUDED.run_ids, "
            f"{values} = t.{values} || EXCLUDED.{values}, version = EXCLUDED.version"
        )
    else:
        conflict = (
            f"version = EXCLUDED.version, measures = EXCLUDED.measures, "
            f"run_ids = EXCLUDED.run_ids, {values} = EXCLUDED.{values}"
        )
    sql = (
        f"INSERT INTO {_table(QueryScores)} AS t (query_id, collection_id, version, measures, "
        f"run_ids, {values}) SELECT v.q, %s, %s, %s::jsonb, v.ids, v.vals "
        f"FROM unnest(%s::bigint[], %s::bytea[], %s::bytea[]) AS v(q, ids, vals) "
        f"ON CONFLICT (query_id) DO UPDATE SET {conflict}"
    )
    params = [
        collection_id,
        version,
        json.dumps(columns[0].names),
        [c.query_id for c in columns],
        [c.run_ids.astype(I8).tobytes() for c in columns],
        [np.ascontiguousarray(c.values, dtype=F8).tobytes() for c in columns],
    ]
    return sql, params


def _board_update(board: Board) -> tuple[str, list]:
    """Return the PostgreSQL update of a stored board (binary parameters)."""
    sql = (
        f"UPDATE {_table(Scoreboard)} SET measures = %s::jsonb, run_ids = %s, sums = %s, "
        f"counts = %s, version = %s, epoch = %s, scored_at = %s WHERE collection_id = %s"
    )
    params = [
        json.dumps(board.names),
        board.run_ids.astype(I8).tobytes(),
        board.sums.astype(F8).tobytes(),
        board.counts.astype(I8).tobytes(),
        board.version,
        board.epoch,
        board.scored_at,
        board.collection_id,
    ]
    return sql, params


def write(board: Board, columns: Sequence[Column], *, version: int) -> None:
    """Store the live path's columns and its board at ``version``: one statement on PostgreSQL.

    The columns must all name the board's measures; elsewhere (or for a board not yet
    stored, or a column that lists no run) :func:`columns_write` and :func:`board_write`.
    """
    if (
        connection.vendor != "postgresql"
        or not board.stored
        or not columns
        or any(not len(c.run_ids) or c.names != board.names for c in columns)
    ):
        columns_write(board.collection_id, columns, version=version)
        board_write(board, version=version)
        return
    _stamp(board, version=version, renew=False)
    upsert, upsert_params = _upsert(board.collection_id, columns, version)
    update, update_params = _board_update(board)
    # PostgreSQL runs a data-modifying WITH whether or not the outer statement reads it.
    execute(f"WITH c AS ({upsert} RETURNING 1) {update}", upsert_params + update_params)


def columns_read(
    collection_id: int, query_ids: Iterable[int] | None = None, *, qids: bool = False
) -> dict[Any, Column]:
    """Return the stored columns of ``query_ids`` (every query's, if None).

    Keyed by query id, or with ``qids`` by the query's external id (read in the same SQL
    query). One raw read.
    """
    values = connection.ops.quote_name("values")
    key, join = "c.query_id", ""
    if qids:
        key, join = "q.external_id", f" JOIN {_table(Query)} q ON q.id = c.query_id"
    sql = (
        f"SELECT {key}, c.query_id, CAST(c.measures AS text), c.run_ids, c.{values}, c.version "
        f"FROM {_table(QueryScores)} c{join} WHERE c.collection_id = %s"
    )
    params: list[Any] = [collection_id]
    if query_ids is not None:
        wanted = list(query_ids)
        if not wanted:
            return {}
        sql += f" AND c.query_id IN ({', '.join(['%s'] * len(wanted))})"
        params += wanted
    out: dict[Any, Column] = {}
    parsed: dict[str, list[str]] = {}
    for name, query_id, names_text, run_ids, values, version in fetch(sql, params):
        names = parsed.setdefault(names_text, json.loads(names_text))
        ids = matrices.ids(run_ids)
        out[name] = Column(
            query_id, list(names), ids, matrices.matrix(values, len(ids), len(names), F8), version
        )
    return out


def columns_write(collection_id: int, columns: Iterable[Column], *, version: int) -> None:
    """Store ``columns`` at ``version``; a column that lists no run is deleted."""
    columns = list(columns)
    keep = [c for c in columns if len(c.run_ids)]
    gone = [c.query_id for c in columns if not len(c.run_ids)]
    if gone:
        QueryScores.objects.filter(query_id__in=gone).delete()
    if not keep:
        return
    if connection.vendor == "postgresql":
        groups: dict[str, list[Column]] = {}
        for column in keep:
            groups.setdefault(json.dumps(column.names), []).append(column)
        for group in groups.values():
            execute(*_upsert(collection_id, group, version))
        return
    QueryScores.objects.bulk_create(
        [
            QueryScores(
                query_id=c.query_id,
                collection_id=collection_id,
                version=version,
                measures=c.names,
                run_ids=c.run_ids.astype(I8).tobytes(),
                values=np.ascontiguousarray(c.values, dtype=F8).tobytes(),
            )
            for c in keep
        ],
        batch_size=500,
        update_conflicts=True,
        unique_fields=["query"],
        update_fields=["version", "measures", "run_ids", "values"],
    )


def appends() -> bool:
    """Return whether :func:`columns_append` works on this database (PostgreSQL)."""
    return connection.vendor == "postgresql"


def columns_append(collection_id: int, columns: Iterable[Column], *, version: int) -> None:
    """Append ``columns``' runs to the stored columns (created where missing); PostgreSQL.

    For runs no stored column lists (a new submission) with the stored columns' measures:
    the server concatenates the bytes, so a submission neither reads nor sends the other
    runs' scores. One statement.
    """
    columns = [c for c in columns if len(c.run_ids)]
    if not columns:
        return
    execute(*_upsert(collection_id, columns, version, append=True))


def apply(
    board: Board,
    column: Column,
    run_ids: np.ndarray,
    values: np.ndarray | None,
) -> Column:
    """Set ``run_ids``' scores for the column's query; move the board by the difference.

    ``values`` is ``len(run_ids)`` × ``len(board.names)`` (NaN: left out), or None when the
    query no longer counts for these runs (no live grades): they leave the column. The
    column and the board must name the same measures (a full rescoring rebuilds both when
    the measures change). Returns the new column.
    """
    names = board.names
    run_ids = np.asarray(run_ids, dtype=np.int64)
    old = column.lookup(run_ids, names)
    was = column.listed(run_ids)
    old_counted = np.isfinite(old) & was[:, None]
    if values is None:
        new = np.full_like(old, np.nan)
        new_counted = np.zeros_like(old_counted)
    else:
        new = np.asarray(values, dtype=np.float64).reshape(len(run_ids), len(names))
        new_counted = np.isfinite(new)
    rows = board.rows(run_ids)
    delta = np.where(new_counted, new, 0.0) - np.where(old_counted, old, 0.0)
    moved = delta != 0.0
    if moved.any():  # unchanged values leave the sums exactly as they are
        board.sums[rows] += delta  # run_ids are distinct, so are their rows
    counted = new_counted.astype(np.int64) - old_counted.astype(np.int64)
    if counted.any():
        board.counts[rows] += counted
    # The new column: the other runs' entries as they were, these runs' replaced.
    others = ~np.isin(column.run_ids, run_ids)
    kept_ids = column.run_ids[others]
    kept = column.lookup(kept_ids, names)
    if values is None:
        ids, mat = kept_ids, kept
    else:
        ids = np.concatenate([kept_ids, run_ids])
        mat = np.vstack([kept, new])
    return Column(column.query_id, list(names), ids, mat, column.version)


# -- readers ----------------------------------------------------------------------------


def run_values(
    *, collection_id: int, run_id: int, names: Sequence[str], qids: bool = False
) -> dict[Any, dict[str, float | None]]:
    """Return, per query that scores the run, its value of each of ``names`` (None: left out).

    Keyed by query id, or with ``qids`` by external id; one SQL query.
    """
    out: dict[Any, dict[str, float | None]] = {}
    for key, column in columns_read(collection_id, qids=qids).items():
        if not column.listed([run_id])[0]:
            continue
        row = column.lookup([run_id], names)[0].tolist()
        out[key] = {n: (v if v == v else None) for n, v in zip(names, row, strict=True)}
    return out


def measure_matrix(
    *, collection_id: int, run_ids: Sequence[int], name: str
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Return, per query, (which runs it scores, their values of ``name``) in ``run_ids`` order."""
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for query_id, column in columns_read(collection_id).items():
        listed = column.listed(run_ids)
        if listed.any():
            out[query_id] = (listed, column.lookup(run_ids, [name])[:, 0])
    return out
