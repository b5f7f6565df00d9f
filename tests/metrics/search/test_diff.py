"""One query's ranking change between two snapshots (pure: no database)."""

from __future__ import annotations

import pytest

from metrics.search.diff import Placed, ranking_diff


def test_entered_left_and_moved_by_hand():
    before = ["d1", "d2", "d3", "d4"]
    after = ["d3", "d1", "d5", "d2", "d9"]
    got = ranking_diff(before, after, k=4)
    assert got.entered == (Placed("d5", None, 3),)  # d9 is at rank 5, outside the top 4
    assert got.left == (Placed("d4", 4, None),)
    # d3 rose 2 (3 → 1), d2 fell 2 (2 → 4), d1 fell 1 (1 → 2): largest moves first
    assert got.moved == (Placed("d3", 3, 1), Placed("d2", 2, 4), Placed("d1", 1, 2))
    assert [p.shift for p in got.moved] == [2, -2, -1]
    assert got.unchanged == 0 and got.overlap == pytest.approx(3 / 4) and got.changed


def test_the_same_ranking_a_repeat_and_short_or_empty_lists():
    same = ranking_diff(["a", "b"], ["a", "b"], k=10)
    assert not same.changed and same.unchanged == 2 and same.overlap == 1.0
    repeated = ranking_diff(["a", "a", "b"], ["b", "a"], k=2)  # "a" counts at rank 1
    assert repeated.moved == (Placed("b", 2, 1), Placed("a", 1, 2))
    assert ranking_diff([], [], k=5).overlap == 1.0 and not ranking_diff([], [], k=5).changed
    gone = ranking_diff(["a", "b"], [], k=5)  # a query that failed in the second snapshot
    assert [p.docno for p in gone.left] == ["a", "b"] and gone.overlap == 0.0
    deeper = ranking_diff(["a"], ["b", "a"], k=1)  # only the first rank is compared
    assert deeper.entered == (Placed("b", None, 1),) and deeper.left == (Placed("a", 1, None),)
    with pytest.raises(ValueError, match="k must be"):
        ranking_diff(["a"], ["a"], k=0)


def test_every_document_is_accounted_for_once():
    """Entered + unchanged + moved = the new top k; left + unchanged + moved = the old."""
    import random

    rng = random.Random(7)
    for _ in range(200):
        pool = [f"d{i}" for i in range(rng.randint(0, 15))]
        before = rng.sample(pool, rng.randint(0, len(pool)))
        after = rng.sample(pool, rng.randint(0, len(pool)))
        k = rng.randint(1, 12)
        got = ranking_diff(before, after, k)
        both = got.unchanged + len(got.moved)
        assert len(got.entered) + both == min(k, len(after))
        assert len(got.left) + both == min(k, len(before))
        assert all(p.after <= k for p in got.entered) and all(p.before <= k for p in got.left)
