"""The score store: columns by query, a scoreboard of sums, moved by exact differences."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from metrics.live import store
from tests import factories

NAMES = ["AP", "nDCG@10"]


def _board(names=NAMES) -> store.Board:
    return store.Board(1, list(names), np.zeros(0, np.int64), np.zeros((0, 2)), np.zeros((0, 2)))


def _from_scratch(columns: dict[int, store.Column], run_ids) -> tuple[np.ndarray, np.ndarray]:
    """Return the sums and counts of ``run_ids`` recomputed from every column."""
    sums = np.zeros((len(run_ids), len(NAMES)))
    counts = np.zeros((len(run_ids), len(NAMES)), dtype=np.int64)
    for column in columns.values():
        values = column.lookup(run_ids, NAMES)
        listed = column.listed(run_ids)[:, None] & np.isfinite(values)
        sums += np.where(listed, values, 0.0)
        counts += listed
    return sums, counts


def test_positions_finds_each_id_or_minus_one():
    have = np.array([30, 10, 20])
    assert store.positions(have, np.array([20, 5, 30, 20])).tolist() == [2, -1, 0, 2]
    assert store.positions(np.zeros(0, np.int64), np.array([1])).tolist() == [-1]


def test_apply_replaces_entries_and_moves_the_sums_by_the_difference():
    board = _board()
    column = store.Column.empty(7, NAMES)
    column = store.apply(board, column, np.array([1, 2]), np.array([[0.5, np.nan], [0.25, 1.0]]))
    assert column.run_ids.tolist() == [1, 2]
    assert board.means() == {1: {"AP": 0.5, "nDCG@10": None}, 2: {"AP": 0.25, "nDCG@10": 1.0}}
    column = store.apply(board, column, np.array([2]), np.array([[0.75, 0.0]]))
    assert board.means()[2] == {"AP": 0.75, "nDCG@10": 0.0}
    assert column.lookup([1, 2, 3], NAMES)[:, 0].tolist()[:2] == [0.5, 0.75]
    assert not column.listed([3])[0]
    # None: the query no longer counts for run 1; the other run's entry stays.
    column = store.apply(board, column, np.array([1]), None)
    assert column.run_ids.tolist() == [2]
    assert board.means()[1] == {"AP": None, "nDCG@10": None}
    assert board.counts.tolist() == [[0, 0], [1, 1]]


def test_unchanged_values_leave_the_sums_bit_for_bit():
    rng = np.random.default_rng(3)
    board = _board()
    column = store.apply(board, store.Column.empty(1, NAMES), np.arange(50), rng.random((50, 2)))
    before = board.sums.tobytes()
    same = column.lookup(np.arange(50), NAMES)
    for _ in range(100):
        column = store.apply(board, column, np.arange(50), same)
    assert board.sums.tobytes() == before


def test_many_random_changes_equal_sums_recomputed_from_the_columns():
    rng = np.random.default_rng(11)
    board = _board()
    runs = np.arange(1, 41)
    columns = {q: store.Column.empty(q, NAMES) for q in range(25)}
    for _ in range(600):
        q = int(rng.integers(25))
        some = np.sort(rng.choice(runs, size=int(rng.integers(1, 40)), replace=False))
        if rng.random() < 0.1:
            columns[q] = store.apply(board, columns[q], some, None)
            continue
        values = rng.random((len(some), 2))
        values[rng.random(values.shape) < 0.1] = np.nan  # a measure that skips the query
        columns[q] = store.apply(board, columns[q], some, values)
    rows = store.positions(board.run_ids, runs)
    sums, counts = _from_scratch(columns, runs)
    np.testing.assert_allclose(board.sums[rows], sums, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(board.counts[rows], counts)
    board.drop([1, 2])
    assert 1 not in board.run_ids.tolist() and len(board.run_ids) == 38


def _stored_columns(coll, queries) -> tuple[store.Board, dict[int, store.Column]]:
    """Store two columns (runs 5 and 6) of the first two queries and the board; return both."""
    board = store.board_read(coll.pk)
    assert not board.stored and board.means() == {}
    board.reset(NAMES)
    first = {
        q.pk: store.apply(
            board, store.Column.empty(q.pk, NAMES), np.array([5, 6]), np.full((2, 2), q.pk / 10)
        )
        for q in queries[:2]
    }
    store.columns_write(coll.pk, first.values(), version=3)
    store.board_write(board, version=3)
    return board, first


@pytest.mark.django_db
def test_columns_and_the_board_round_trip():
    coll = factories.collection("store")
    queries = [factories.query(coll, f"q{i}") for i in range(3)]
    board, first = _stored_columns(coll, queries)
    again = store.board_read(coll.pk)
    assert (again.version, again.epoch, again.names) == (3, board.epoch, NAMES)
    assert again.means() == board.means()
    read = store.columns_read(coll.pk)
    assert set(read) == set(first)
    for q, column in first.items():
        np.testing.assert_array_equal(read[q].values, column.values)
        assert read[q].run_ids.tolist() == [5, 6] and read[q].version == 3
    by_qid = store.columns_read(coll.pk, qids=True)
    assert set(by_qid) == {"q0", "q1"}
    store.columns_write(coll.pk, [store.Column.empty(queries[0].pk, NAMES)], version=5)
    assert queries[0].pk not in store.columns_read(coll.pk)  # a column of no run is deleted


@pytest.mark.django_db
@pytest.mark.skipif(
    connection.vendor != "postgresql", reason="appending in SQL is PostgreSQL's (CI's PG leg)"
)
def test_appending_a_new_run_equals_rewriting_the_columns():
    coll = factories.collection("store")
    queries = [factories.query(coll, f"q{i}") for i in range(3)]
    board, first = _stored_columns(coll, queries)
    added = [
        store.apply(board, store.Column.empty(q.pk, NAMES), np.array([9]), np.array([[0.5, 0.5]]))
        for q in queries
    ]
    store.columns_append(coll.pk, added, version=4)
    appended = store.columns_read(coll.pk)
    for q in queries:
        runs = [5, 6, 9] if q.pk in first else [9]
        assert appended[q.pk].run_ids.tolist() == runs and appended[q.pk].version == 4
        expected = first[q.pk].lookup([5, 6], NAMES).tolist() if q.pk in first else []
        assert appended[q.pk].lookup(runs, NAMES).tolist() == [*expected, [0.5, 0.5]]
