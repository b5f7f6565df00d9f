"""Leaderboard uncertainty: bootstrap intervals over queries and paired tests (no database)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from metrics.engine.uncertainty import leaderboard_uncertainty


def test_run_intervals_agree_with_scipys_percentile_bootstrap():
    rng = np.random.default_rng(3)
    scores = rng.beta(2, 3, size=(3, 40))
    runs, _pairs = leaderboard_uncertainty(scores, [0, 1, 2], resamples=20_000, seed=1)
    for row, run in zip(scores, runs, strict=True):
        ref = stats.bootstrap(
            (row,), np.mean, n_resamples=20_000, method="percentile", rng=2
        ).confidence_interval
        assert run.mean == pytest.approx(row.mean(), abs=1e-12)
        # different random streams: the bounds agree to Monte Carlo error
        assert run.low == pytest.approx(ref.low, abs=4e-3)
        assert run.high == pytest.approx(ref.high, abs=4e-3)


def test_pair_figures_are_paired_and_the_p_value_is_scipys_t_test():
    rng = np.random.default_rng(5)
    base = rng.random(30)
    scores = np.vstack([base + 0.02 + rng.normal(0, 0.01, 30), base])
    _runs, (pair,) = leaderboard_uncertainty(scores, [0, 1], resamples=5000)
    assert pair.p_value == pytest.approx(stats.ttest_rel(scores[0], scores[1]).pvalue, rel=1e-12)
    # paired: the gap's interval is narrow although each run's own interval is wide
    assert 0 < pair.low < pair.difference < pair.high < 0.04
    assert not pair.uncertain and pair.swap_share == 0.0


def test_a_gap_from_one_query_is_marked_as_a_possible_swap():
    scores = np.array([[0.5] * 9 + [0.9], [0.5] * 10])
    _runs, (pair,) = leaderboard_uncertainty(scores, [0, 1], resamples=4000)
    assert pair.difference == pytest.approx(0.04)
    assert pair.low == 0.0  # a resample without the one query: no gap
    assert pair.uncertain
    assert pair.swap_share == 0.0  # never reversed, only tied
    same = leaderboard_uncertainty(np.ones((2, 5)), [1, 0])[1][0]
    assert (same.p_value, same.uncertain, same.difference) == (1.0, True, 0.0)


def test_pairs_follow_the_leaderboard_order_and_seed_fixes_the_figures():
    rng = np.random.default_rng(9)
    scores = rng.random((4, 12))
    order = np.argsort(-scores.mean(axis=1))
    first = leaderboard_uncertainty(scores, order, seed=4)
    assert [(p.upper, p.lower) for p in first[1]] == list(itertools.pairwise(order.tolist()))
    assert all(p.difference >= 0 for p in first[1])
    assert leaderboard_uncertainty(scores, order, seed=4) == first


def test_intervals_cover_the_true_mean_about_as_often_as_promised():
    rng = np.random.default_rng(11)
    covered = 0
    trials = 300
    for _ in range(trials):
        scores = rng.normal(0.4, 0.2, size=(1, 50))
        (run,), _ = leaderboard_uncertainty(scores, [0], resamples=500, seed=int(rng.integers(1e9)))
        covered += run.low <= 0.4 <= run.high
    assert 0.89 <= covered / trials <= 0.99  # 95% nominal; the percentile bootstrap runs a bit low


def test_edge_cases():
    runs, (pair,) = leaderboard_uncertainty([[0.3], [0.5]], [1, 0])
    assert [(r.low, r.high) for r in runs] == [(0.3, 0.3), (0.5, 0.5)]
    assert np.isnan(pair.p_value) and pair.difference == pytest.approx(0.2)
    assert leaderboard_uncertainty(np.empty((0, 5)), []) == ([], [])
    with pytest.raises(ValueError, match="finite"):
        leaderboard_uncertainty([[0.1, np.nan]], [0])
    with pytest.raises(ValueError, match="every run"):
        leaderboard_uncertainty([[0.1, 0.2], [0.3, 0.4]], [0, 0])
    with pytest.raises(ValueError, match="confidence"):
        leaderboard_uncertainty([[0.1, 0.2]], [0], confidence=1.0)
