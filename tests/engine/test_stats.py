"""Significance tests for comparing runs, checked against scipy and worked examples."""

from __future__ import annotations

import dataclasses
import itertools

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats as sps

from metrics.engine import stats

# Fixed per-query scores of two runs (nDCG-like values in [0, 1]); 20 queries.
A20 = np.array(
    [0.61, 0.42, 0.77, 0.35, 0.90, 0.18, 0.55, 0.66, 0.71, 0.29,
     0.48, 0.83, 0.37, 0.52, 0.64, 0.21, 0.58, 0.74, 0.46, 0.69]
)  # fmt: skip
B20 = np.array(
    [0.55, 0.40, 0.70, 0.41, 0.82, 0.18, 0.49, 0.60, 0.73, 0.22,
     0.50, 0.75, 0.30, 0.52, 0.57, 0.25, 0.51, 0.70, 0.40, 0.61]
)  # fmt: skip


def _runs(n: int, effect: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    b = rng.random(n)
    a = np.clip(b + effect + rng.normal(0.0, 0.1, n), 0.0, 1.0)
    return a, b


def _mean_diff(x, y, axis=-1):
    return np.mean(x - y, axis=axis)


def _scipy_permutation_p(a, b, permutations: int, seed: int = 0) -> float:
    res = sps.permutation_test(
        (a, b),
        _mean_diff,
        permutation_type="samples",
        vectorized=True,
        n_resamples=permutations,
        rng=seed,
    )
    return float(res.pvalue)


# --- paired t-test and Wilcoxon: equal to scipy ---------------------------------------


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_t_test_equals_scipy(seed):
    a, b = _runs(40, 0.02, seed)
    ours = stats.paired_t_test(a, b)
    ref = sps.ttest_rel(a, b)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_t_test_fixed_data_sign_convention():
    ours = stats.paired_t_test(A20, B20)
    ref = sps.ttest_rel(A20, B20)
    assert (ours.statistic, ours.p_value) == pytest.approx((ref.statistic, ref.pvalue))
    assert ours.statistic > 0  # run A is better on average
    flipped = stats.paired_t_test(B20, A20)
    assert flipped.statistic == pytest.approx(-ours.statistic)
    assert flipped.p_value == pytest.approx(ours.p_value)


def test_t_test_constant_nonzero_difference_is_infinitely_significant():
    res = stats.paired_t_test([1.0, 2.0, 3.0], [0.0, 1.0, 2.0])
    assert res.statistic == np.inf
    assert res.p_value == 0.0


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (A20, B20),  # has zero differences and tied |differences|
        _runs(30, 0.03, 5),  # exact method, no ties
        _runs(300, 0.01, 6),  # asymptotic method
    ],
)
def test_wilcoxon_equals_scipy_default(a, b):
    ours = stats.wilcoxon_signed_rank(a, b)
    ref = sps.wilcoxon(a, b)  # scipy's defaults: zero_method="wilcox", method="auto"
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-12)


def test_wilcoxon_discards_zero_differences():
    a = np.array([0.5, 0.6, 0.7, 0.8, 0.9, 0.3])
    b = np.array([0.5, 0.6, 0.6, 0.6, 0.6, 0.4])  # two zero differences
    full = stats.wilcoxon_signed_rank(a, b)
    nonzero = a != b
    dropped = stats.wilcoxon_signed_rank(a[nonzero], b[nonzero])
    assert full == dropped


# --- randomization test ----------------------------------------------------------------


def _brute_force_p(a, b) -> float:
    d = np.asarray(a, float) - np.asarray(b, float)
    observed = abs(d.sum())
    extreme = 0
    signs = list(itertools.product([1.0, -1.0], repeat=d.size))
    for s in signs:
        if abs(np.dot(s, d)) >= observed - 1e-12:
            extreme += 1
    return extreme / len(signs)


@pytest.mark.parametrize("n", [2, 3, 6, 9, 12])
def test_randomization_exact_equals_brute_force(n):
    a, b = _runs(n, 0.05, n)
    res = stats.randomization_test(a, b)
    assert res.exact and res.permutations == 2**n
    assert res.p_value == pytest.approx(_brute_force_p(a, b), abs=1e-15)


def test_randomization_exact_on_hand_example():
    # d = (1, 2, 3): of the 8 sign assignments only (+,+,+) and (-,-,-) reach |sum| >= 6.
    res = stats.randomization_test([1.0, 2.0, 3.0], [0.0, 0.0, 0.0])
    assert res.p_value == pytest.approx(2 / 8)
    assert res.statistic == pytest.approx(2.0)
    # d = (1, 1, 2): |sum| = 4 is reached by (+,+,+), (-,-,-); |sum| = 2 by others.
    assert stats.randomization_test([1, 1, 2], [0, 0, 0]).p_value == pytest.approx(2 / 8)


def test_randomization_exact_threshold():
    a, b = _runs(14, 0.05, 3)
    assert stats.randomization_test(a[:13], b[:13], permutations=10_000).exact  # 8192
    assert not stats.randomization_test(a, b, permutations=10_000).exact  # 16384
    assert stats.randomization_test(a, b, permutations=2**14).exact


@pytest.mark.parametrize("n", [5, 10, 13])
def test_randomization_exact_equals_scipy_exact(n):
    a, b = _runs(n, 0.03, 100 + n)
    # scipy also enumerates all 2**n assignments when 2**n <= n_resamples.
    assert stats.randomization_test(a, b).p_value == pytest.approx(
        _scipy_permutation_p(a, b, 10_000), rel=1e-12
    )


@pytest.mark.parametrize(("n", "effect", "seed"), [(50, 0.02, 1), (200, 0.01, 2), (1000, 0.004, 3)])
def test_randomization_monte_carlo_close_to_scipy(n, effect, seed):
    a, b = _runs(n, effect, seed)
    ours = stats.randomization_test(a, b, permutations=10_000, seed=0)
    assert not ours.exact
    ref = _scipy_permutation_p(a, b, 10_000, seed=0)
    # Two independent Monte Carlo estimates of the same p: allow 5 standard errors.
    se = np.sqrt(ref * (1 - ref) / 10_000 * 2)
    assert abs(ours.p_value - ref) <= 5 * se + 1e-4
    assert 0.005 < ref < 0.9  # the case is informative


def test_randomization_monte_carlo_close_to_exact():
    a, b = _runs(16, 0.03, 11)
    exact = stats.randomization_test(a, b, permutations=2**16)
    assert exact.exact
    mc = stats.randomization_test(a, b, permutations=20_000, seed=4)
    assert not mc.exact
    se = np.sqrt(exact.p_value * (1 - exact.p_value) / 20_000)
    assert abs(mc.p_value - exact.p_value) <= 5 * se
    assert 0.01 < exact.p_value < 0.9


def test_randomization_monte_carlo_never_zero_and_counts_observed():
    a, b = _runs(500, 0.2, 0)  # an overwhelming effect: no random flip is as extreme
    res = stats.randomization_test(a, b, permutations=999)
    assert res.p_value == pytest.approx(1 / 1000)


def test_randomization_reproducible_with_seed():
    a, b = _runs(300, 0.01, 9)
    first = stats.randomization_test(a, b, permutations=5_000, seed=123)
    again = stats.randomization_test(a, b, permutations=5_000, seed=123)
    other = stats.randomization_test(a, b, permutations=5_000, seed=124)
    assert first == again
    assert first.p_value != other.p_value


def test_randomization_chunking_does_not_change_result(monkeypatch):
    a, b = _runs(100, 0.02, 8)
    whole = stats.randomization_test(a, b, permutations=3_000, seed=5)
    monkeypatch.setattr(stats, "_CHUNK_CELLS", 100 * 7)  # 7 rows per chunk
    chunked = stats.randomization_test(a, b, permutations=3_000, seed=5)
    assert chunked == whole


def test_randomization_rejects_bad_permutations():
    with pytest.raises(ValueError, match="permutations"):
        stats.randomization_test(A20, B20, permutations=0)


# --- bootstrap CI ----------------------------------------------------------------------


def test_bootstrap_matches_scipy_for_same_seed():
    a, b = _runs(80, 0.03, 21)
    ours = stats.bootstrap_ci(a, b, confidence=0.9, resamples=5_000, seed=7)
    ref = sps.bootstrap((a - b,), np.mean, confidence_level=0.9, n_resamples=5_000, rng=7)
    assert ours.method == "BCa"
    assert ours.low == pytest.approx(ref.confidence_interval.low, rel=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, rel=1e-12)
    # The same as scipy's own paired resampling of (a, b).
    paired = sps.bootstrap(
        (a, b), _mean_diff, paired=True, confidence_level=0.9, n_resamples=5_000, rng=7
    )
    assert (ours.low, ours.high) == pytest.approx(
        (paired.confidence_interval.low, paired.confidence_interval.high)
    )


def test_bootstrap_contains_true_difference():
    a, b = _runs(400, 0.05, 31)  # clipping barely moves the true mean difference
    ci = stats.bootstrap_ci(a, b)
    assert ci.low < 0.05 < ci.high
    assert ci.low < float(np.mean(a - b)) < ci.high
    assert ci.confidence == 0.95


def test_bootstrap_coverage_on_simulation():
    rng = np.random.default_rng(2024)
    true_diff, covered, trials = 0.03, 0, 60
    for trial in range(trials):
        d = true_diff + rng.normal(0.0, 0.1, 60)
        ci = stats.bootstrap_ci(d, np.zeros_like(d), resamples=2_000, seed=trial)
        covered += ci.low <= true_diff <= ci.high
    assert 0.85 <= covered / trials <= 1.0


def test_bootstrap_reproducible_with_seed():
    a, b = _runs(50, 0.01, 1)
    assert stats.bootstrap_ci(a, b, seed=3) == stats.bootstrap_ci(a, b, seed=3)
    assert stats.bootstrap_ci(a, b, seed=3) != stats.bootstrap_ci(a, b, seed=4)


def test_bootstrap_constant_difference_is_a_point():
    ci = stats.bootstrap_ci([0.5, 0.7, 0.9], [0.4, 0.6, 0.8])
    assert ci.low == ci.high == pytest.approx(0.1)
    assert ci.method == "degenerate"


@pytest.mark.parametrize("confidence", [0.0, 1.0, 1.5, -0.1])
def test_bootstrap_rejects_bad_confidence(confidence):
    with pytest.raises(ValueError, match="confidence"):
        stats.bootstrap_ci(A20, B20, confidence=confidence)


def test_bootstrap_rejects_bad_resamples():
    with pytest.raises(ValueError, match="resamples"):
        stats.bootstrap_ci(A20, B20, resamples=0)


# --- wins / losses / ties --------------------------------------------------------------


def test_wins_losses_ties():
    res = stats.wins_losses_ties([0.5, 0.3, 0.2, 0.1 + 0.2, 0.0], [0.4, 0.3, 0.6, 0.3, 0.0])
    # 0.1 + 0.2 != 0.3 in binary floating point, but within the tolerance: a tie.
    assert res == stats.WinsLossesTies(wins=1, losses=1, ties=3)


def test_wins_losses_ties_on_fixed_data():
    res = stats.wins_losses_ties(A20, B20)
    d = A20 - B20
    assert (res.wins, res.losses, res.ties) == (
        int((d > 1e-12).sum()),
        int((d < -1e-12).sum()),
        int((np.abs(d) <= 1e-12).sum()),
    )
    assert res.wins + res.losses + res.ties == 20
    assert stats.wins_losses_ties(A20, B20, tolerance=0.05).ties > res.ties


def test_wins_losses_ties_accepts_empty_and_rejects_negative_tolerance():
    assert stats.wins_losses_ties([], []) == stats.WinsLossesTies(0, 0, 0)
    with pytest.raises(ValueError, match="tolerance"):
        stats.wins_losses_ties([1.0], [0.0], tolerance=-1.0)


# --- Holm ------------------------------------------------------------------------------


def test_holm_worked_example():
    # Sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04,
    # raised to the running maximum 0.06); back in the input order:
    adjusted = stats.holm([0.01, 0.04, 0.03, 0.005])
    np.testing.assert_allclose(adjusted, [0.03, 0.06, 0.06, 0.02])


def test_holm_caps_at_one_and_handles_ties():
    # Sorted 0.2, 0.2, 0.5 -> 0.6, 0.4, 0.5 -> running maximum 0.6, 0.6, 0.6.
    np.testing.assert_allclose(stats.holm([0.5, 0.2, 0.2]), [0.6, 0.6, 0.6])
    np.testing.assert_allclose(stats.holm([0.01, 0.02, 0.2]), [0.03, 0.04, 0.2])
    np.testing.assert_allclose(stats.holm([0.9, 0.8]), [1.0, 1.0])
    np.testing.assert_allclose(stats.holm([0.3]), [0.3])
    assert stats.holm([]).shape == (0,)


def test_holm_matches_statsmodels_if_installed():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.random.default_rng(0).random(25) ** 3
    expected = multitest.multipletests(p, method="holm")[1]
    np.testing.assert_allclose(stats.holm(p), expected)


@given(st.lists(st.floats(min_value=0.0, max_value=1.0), max_size=30))
def test_holm_properties(p_values):
    p = np.array(p_values, dtype=float)
    adjusted = stats.holm(p)
    assert adjusted.shape == p.shape
    assert np.all(adjusted >= p - 1e-15)
    assert np.all(adjusted <= 1.0)
    order = np.argsort(p, kind="stable")
    assert np.all(np.diff(adjusted[order]) >= 0)  # monotone in the raw p-values
    assert np.all(adjusted <= np.minimum(1.0, p * max(len(p), 1)) + 1e-15)  # <= Bonferroni


@pytest.mark.parametrize("bad", [[0.1, np.nan], [1.2], [-0.1], [[0.1, 0.2]]])
def test_holm_rejects_invalid(bad):
    with pytest.raises(ValueError, match="p_values"):
        stats.holm(bad)


# --- compare and the shared edge cases -------------------------------------------------


def test_compare_collects_everything():
    res = stats.compare(A20, B20, permutations=5_000, resamples=3_000, seed=1)
    assert res.n == 20
    assert res.mean_a == pytest.approx(A20.mean())
    assert res.mean_b == pytest.approx(B20.mean())
    assert res.mean_diff == pytest.approx(A20.mean() - B20.mean())
    t = stats.paired_t_test(A20, B20)
    w = stats.wilcoxon_signed_rank(A20, B20)
    r = stats.randomization_test(A20, B20, permutations=5_000, seed=1)
    ci = stats.bootstrap_ci(A20, B20, resamples=3_000, seed=1)
    wlt = stats.wins_losses_ties(A20, B20)
    assert (res.t_statistic, res.t_p_value) == (t.statistic, t.p_value)
    assert (res.wilcoxon_statistic, res.wilcoxon_p_value) == (w.statistic, w.p_value)
    assert res.randomization_p_value == r.p_value
    assert (res.randomization_permutations, res.randomization_exact) == (5_000, False)
    assert (res.ci_low, res.ci_high, res.confidence) == (ci.low, ci.high, 0.95)
    assert (res.wins, res.losses, res.ties) == (wlt.wins, wlt.losses, wlt.ties)
    assert res.ci_low < res.mean_diff < res.ci_high
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.n = 3  # type: ignore[misc]
    assert dataclasses.asdict(res)["n"] == 20


def test_compare_is_reproducible():
    a, b = _runs(100, 0.01, 77)
    assert stats.compare(a, b, seed=5) == stats.compare(a, b, seed=5)


def test_all_differences_zero_give_p_one_not_nan():
    a = [0.2, 0.5, 0.5, 0.9]
    assert stats.paired_t_test(a, a) == stats.TestResult(0.0, 1.0)
    assert stats.wilcoxon_signed_rank(a, a) == stats.TestResult(0.0, 1.0)
    r = stats.randomization_test(a, a)
    assert (r.statistic, r.p_value, r.exact) == (0.0, 1.0, True)
    big = np.linspace(0, 1, 100)
    assert stats.randomization_test(big, big).p_value == 1.0
    ci = stats.bootstrap_ci(a, a)
    assert (ci.low, ci.high) == (0.0, 0.0)
    res = stats.compare(a, a)
    assert (res.t_p_value, res.wilcoxon_p_value, res.randomization_p_value) == (1.0, 1.0, 1.0)
    assert (res.ties, res.mean_diff) == (4, 0.0)


def test_differences_summing_to_zero_are_not_significant():
    r = stats.randomization_test([1.0, 0.0], [0.0, 1.0])
    assert r.p_value == 1.0


FUNCTIONS = [
    stats.paired_t_test,
    stats.wilcoxon_signed_rank,
    stats.randomization_test,
    stats.bootstrap_ci,
    stats.compare,
]


@pytest.mark.parametrize("fn", FUNCTIONS)
@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_queries_rejected(fn, n):
    with pytest.raises(ValueError, match="at least 2 queries"):
        fn([0.5] * n, [0.4] * n)


@pytest.mark.parametrize("fn", [*FUNCTIONS, stats.wins_losses_ties])
def test_nan_rejected(fn):
    with pytest.raises(ValueError, match="finite"):
        fn([0.5, np.nan, 0.2], [0.4, 0.3, 0.1])
    with pytest.raises(ValueError, match="finite"):
        fn([0.5, 0.3, 0.2], [0.4, 0.3, np.inf])


@pytest.mark.parametrize("fn", [*FUNCTIONS, stats.wins_losses_ties])
def test_unequal_lengths_rejected(fn):
    with pytest.raises(ValueError, match="equal lengths"):
        fn([0.5, 0.3, 0.2], [0.4, 0.3])


@pytest.mark.parametrize("fn", FUNCTIONS)
def test_non_1d_rejected(fn):
    with pytest.raises(ValueError, match="1-D"):
        fn([[0.5, 0.3], [0.2, 0.1]], [[0.4, 0.3], [0.2, 0.1]])
