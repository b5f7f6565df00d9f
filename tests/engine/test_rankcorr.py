"""Kendall's τ-b against scipy and by hand; τ_AP against its published definition."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from metrics.engine.rankcorr import RankCorrelationUndefinedWarning, kendall_tau_b, tau_ap


def tau_ap_by_definition(estimated, reference) -> float:
    """Return τ_AP as Yilmaz et al. (2008) define it, literally (untied data only).

    Walk the estimated ranking top-down; for the item at rank i (i = 2..N) count the
    items above it that the reference ranks above it too: C(i). Then
    τ_AP = 2/(N-1) * sum C(i)/(i-1) - 1.
    """
    ranked = sorted(range(len(estimated)), key=lambda item: -estimated[item])
    total = 0.0
    for i in range(1, len(ranked)):
        item = ranked[i]
        correct = sum(1 for other in ranked[:i] if reference[other] > reference[item])
        total += correct / i
    return 2.0 / (len(ranked) - 1) * total - 1.0


# --- Kendall's tau-b ---------------------------------------------------------------------


def test_tau_b_by_hand_without_ties():
    # Pairs of [1,2,3,4] vs [1,3,2,4]: 5 concordant, 1 discordant -> (5 - 1) / 6.
    assert kendall_tau_b([1, 2, 3, 4], [1, 3, 2, 4]) == pytest.approx(4 / 6)


def test_tau_b_by_hand_with_ties():
    # x ties items 0 and 1, y ties items 1 and 2: C = 4, D = 0, one tie each side:
    # tau-b = 4 / sqrt((4 + 1) * (4 + 1)) = 0.8 (tau-a would be 4/6).
    assert kendall_tau_b([1, 1, 2, 3], [1, 2, 2, 3]) == pytest.approx(0.8)


@pytest.mark.parametrize("seed", range(5))
def test_tau_b_matches_scipy_with_and_without_ties(seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, size=25).astype(float)  # many ties
    y = x + rng.normal(0, 2, size=25)
    expected = stats.kendalltau(x, y, variant="b").statistic
    assert kendall_tau_b(x, y) == pytest.approx(expected, abs=1e-12)
    assert kendall_tau_b(y, x) == pytest.approx(expected, abs=1e-12)  # symmetric


def test_tau_b_extremes():
    assert kendall_tau_b([0.1, 0.5, 0.9], [1, 2, 3]) == pytest.approx(1.0)
    assert kendall_tau_b([0.1, 0.5, 0.9], [3, 2, 1]) == pytest.approx(-1.0)


@pytest.mark.parametrize(
    ("x", "y", "reason"),
    [
        ([], [], "fewer than two"),
        ([0.3], [0.2], "fewer than two"),
        ([0.5, 0.5, 0.5], [1, 2, 3], "same score in x"),
        ([1, 2, 3], [0, 0, 0], "same score in y"),
    ],
)
def test_tau_b_undefined_is_nan_with_a_reason(x, y, reason):
    with pytest.warns(RankCorrelationUndefinedWarning, match=reason):
        assert math.isnan(kendall_tau_b(x, y))


@pytest.mark.parametrize(
    ("x", "y"),
    [([1, 2], [1, 2, 3]), ([1, np.nan], [1, 2]), ([[1, 2]], [[1, 2]]), ([1, np.inf], [1, 2])],
)
def test_bad_input_raises(x, y):
    with pytest.raises(ValueError):
        kendall_tau_b(x, y)
    with pytest.raises(ValueError):
        tau_ap(x, y)


# --- tau_AP -----------------------------------------------------------------------------

REFERENCE = [4.0, 3.0, 2.0, 1.0]  # A > B > C > D


def test_tau_ap_hand_example_swap_at_the_top():
    # Estimated B > A > C > D. i=2 (A): B above, reference has B below A -> C=0;
    # i=3 (C): B, A both above in the reference -> 2/2; i=4 (D): 3/3.
    # tau_AP = 2/3 * (0 + 1 + 1) - 1 = 1/3; Kendall's tau is 4/6 for one swap anywhere.
    estimated = [3.0, 4.0, 2.0, 1.0]
    assert tau_ap(estimated, REFERENCE) == pytest.approx(1 / 3)
    assert kendall_tau_b(estimated, REFERENCE) == pytest.approx(4 / 6)


def test_tau_ap_hand_example_swap_at_the_bottom():
    # Estimated A > B > D > C: C(2)=1/1, C(3)=2/2, C(4)=2/3 -> 2/3 * 8/3 - 1 = 7/9.
    estimated = [4.0, 3.0, 1.0, 2.0]
    assert tau_ap(estimated, REFERENCE) == pytest.approx(7 / 9)
    assert kendall_tau_b(estimated, REFERENCE) == pytest.approx(4 / 6)


def test_tau_ap_is_asymmetric_hand_example():
    # Reference A > B > C, estimated B > C > A: C(2) = 1 (B above C), C(3) = 0 -> 0.
    # Roles swapped: reference B > C > A, estimated A > B > C: C(2)=0, C(3)=1/2 -> -1/2.
    a, b = [1.0, 3.0, 2.0], [3.0, 2.0, 1.0]
    assert tau_ap(a, b) == pytest.approx(0.0)
    assert tau_ap(b, a) == pytest.approx(-0.5)
    assert kendall_tau_b(a, b) == pytest.approx(kendall_tau_b(b, a))


@pytest.mark.parametrize("n", [2, 3, 7, 20])
def test_tau_ap_identical_is_one_and_reversed_is_minus_one(n):
    scores = np.linspace(0.1, 0.9, n)
    assert tau_ap(scores, scores) == pytest.approx(1.0)
    assert tau_ap(scores[::-1].copy(), scores) == pytest.approx(-1.0)


@pytest.mark.parametrize("n", [3, 5, 10])
def test_tau_ap_top_heavy_closed_forms(n):
    # One adjacent swap costs 2/(N-1) at the top but only 2/(N-1)^2 at the bottom
    # (Yilmaz et al. 2008, section 3); Kendall's tau is the same for both.
    reference = np.arange(n, 0, -1, dtype=float)
    top = reference.copy()
    top[[0, 1]] = top[[1, 0]]
    bottom = reference.copy()
    bottom[[-1, -2]] = bottom[[-2, -1]]
    assert tau_ap(top, reference) == pytest.approx(1 - 2 / (n - 1))
    assert tau_ap(bottom, reference) == pytest.approx(1 - 2 / (n - 1) ** 2)
    assert kendall_tau_b(top, reference) == pytest.approx(kendall_tau_b(bottom, reference))


@pytest.mark.parametrize("seed", range(8))
def test_tau_ap_matches_the_literal_definition(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 15))
    reference = rng.permutation(n).astype(float)
    estimated = rng.permutation(n).astype(float)
    assert tau_ap(estimated, reference) == pytest.approx(
        tau_ap_by_definition(estimated, reference), abs=1e-12
    )


def test_tau_ap_every_permutation_of_four_within_bounds_and_mean_zero():
    # Averaged over all orderings of the estimate, tau_AP (like tau) is 0.
    values = [tau_ap(p, REFERENCE) for p in itertools.permutations(REFERENCE)]
    assert all(-1 - 1e-12 <= v <= 1 + 1e-12 for v in values)
    assert np.mean(values) == pytest.approx(0.0, abs=1e-12)


def test_tau_ap_ties_count_one_half():
    # Estimated ties A and B (placed in input order): C(2) = 1/2, C(3) = 2/2.
    # tau_AP = 2/2 * (1/2 + 1) - 1 = 1/2.
    assert tau_ap([2.0, 2.0, 1.0], [3.0, 2.0, 1.0]) == pytest.approx(0.5)
    # Reference ties B and C: C(2) = 1, C(3) = (1 + 1/2)/2 -> 2/2 * (1 + 3/4) - 1 = 3/4.
    assert tau_ap([3.0, 2.0, 1.0], [3.0, 1.0, 1.0]) == pytest.approx(0.75)


def test_tau_ap_fewer_than_two_items_is_undefined():
    with pytest.warns(RankCorrelationUndefinedWarning, match="fewer than two"):
        assert math.isnan(tau_ap([0.4], [0.2]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tau_ap([0.4, 0.1], [0.2, 0.1]) == pytest.approx(1.0)
