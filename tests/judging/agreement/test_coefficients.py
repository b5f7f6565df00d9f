"""Annotator agreement, checked against published examples and independent references."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from judging.agreement import coefficients as agreement
from judging.agreement.coefficients import (
    AgreementUndefinedWarning,
    cohen_kappa,
    fleiss_counts,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_agreement,
)

NAN = np.nan

# Fleiss (1971) / Wikipedia "Fleiss' kappa" worked example: 10 subjects, 14 raters,
# 5 categories. Published: P-bar = 0.378, P_e = 0.213, kappa = 0.210.
FLEISS_TABLE = np.array(
    [
        [0, 0, 0, 0, 14],
        [0, 2, 6, 4, 2],
        [0, 0, 3, 5, 6],
        [0, 3, 9, 2, 0],
        [2, 2, 8, 1, 1],
        [7, 7, 0, 0, 0],
        [3, 2, 6, 3, 0],
        [2, 5, 3, 2, 2],
        [6, 5, 2, 1, 0],
        [0, 2, 2, 3, 7],
    ]
)

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability": 4 observers x 12
# units with missing values. Published: nominal .743, ordinal .815, interval .849,
# ratio .797 (nominal, ordinal and ratio are also in the krippendorff package's docs).
KRIPPENDORFF_DATA = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
        [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
    ]
)

# Wikipedia "Krippendorff's alpha" computational example: 3 coders x 15 units.
# Published (and in the krippendorff package's docs): nominal 0.691, interval 0.811.
WIKIPEDIA_ALPHA_DATA = np.array(
    [
        [NAN, NAN, NAN, NAN, NAN, 3, 4, 1, 2, 1, 1, 3, 3, NAN, 3],
        [1, NAN, 2, 1, 3, 3, 4, 3, NAN, NAN, NAN, NAN, NAN, NAN, NAN],
        [NAN, NAN, 2, 1, 3, 4, 4, NAN, 2, 1, 1, 3, 3, NAN, 4],
    ]
)


def _random_ratings(seed: int, items: int, raters: int, missing: float) -> np.ndarray:
    """Return items x raters grades 0-4 that agree more than chance, with NaNs."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, items)
    noise = rng.integers(-1, 2, (items, raters)) * (rng.random((items, raters)) < 0.5)
    ratings = np.clip(truth[:, None] + noise, 0, 4).astype(float)
    ratings[rng.random((items, raters)) < missing] = np.nan
    return ratings


# --- Cohen's kappa ---------------------------------------------------------------------


def test_cohen_kappa_wikipedia_two_by_two():
    # 50 applications, two readers: yes/yes 20, yes/no 5, no/yes 10, no/no 15.
    # p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.
    a = np.array([1] * 20 + [1] * 5 + [0] * 10 + [0] * 15)
    b = np.array([1] * 20 + [0] * 5 + [1] * 10 + [0] * 15)
    assert cohen_kappa(a, b, categories=[0, 1]) == pytest.approx(0.4)
    assert cohen_kappa(a, b) == pytest.approx(0.4)  # unused categories 2-4 change nothing


def test_cohen_kappa_three_categories_worked_by_hand():
    # Confusion matrix (rows rater, columns model), categories 1..3, N = 8:
    #   [[2, 0, 1], [1, 1, 0], [0, 1, 2]]; both marginals (3, 2, 3).
    # Unweighted: p_o = 5/8, p_e = 22/64, kappa = (40 - 22) / (64 - 22) = 3/7.
    # Linear weights |i-j|/2: observed 2/8, expected 30/64, kappa = 1 - 16/30 = 7/15.
    # Quadratic weights (i-j)^2/4: observed 1.5/8, expected 24/64, kappa = 1/2.
    rater = [1, 1, 2, 2, 3, 3, 1, 3]
    model = [1, 3, 2, 1, 3, 2, 1, 3]
    cats = [1, 2, 3]
    assert cohen_kappa(rater, model, categories=cats) == pytest.approx(3 / 7)
    assert cohen_kappa(rater, model, weights="linear", categories=cats) == pytest.approx(7 / 15)
    assert cohen_kappa(rater, model, weights="quadratic", categories=cats) == pytest.approx(0.5)


def _weighted_kappa_reference(a, b, weights, k=5):
    pairs = [(int(x), int(y)) for x, y in zip(a, b, strict=True) if x == x and y == y]
    n = len(pairs)

    def w(i, j):
        if weights is None:
            return float(i != j)
        if weights == "linear":
            return abs(i - j) / (k - 1)
        return (i - j) ** 2 / (k - 1) ** 2

    observed = sum(w(i, j) for i, j in pairs) / n
    rows = [sum(1 for i, _ in pairs if i == c) for c in range(k)]
    cols = [sum(1 for _, j in pairs if j == c) for c in range(k)]
    expected = sum(rows[i] * cols[j] * w(i, j) for i in range(k) for j in range(k)) / n**2
    return 1 - observed / expected


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(4))
def test_cohen_kappa_equals_loop_reference(weights, seed):
    r = _random_ratings(seed, 60, 2, missing=0.15)
    ours = cohen_kappa(r[:, 0], r[:, 1], weights=weights)
    assert ours == pytest.approx(_weighted_kappa_reference(r[:, 0], r[:, 1], weights))
    assert ours == pytest.approx(cohen_kappa(r[:, 1], r[:, 0], weights=weights))  # symmetric


@pytest.mark.parametrize("seed", range(4))
def test_quadratic_kappa_equals_concordance_correlation(seed):
    # With equally spaced categories, quadratic-weighted kappa equals Lin's concordance
    # correlation 2 cov / (var_a + var_b + (mean_a - mean_b)^2) (population moments).
    r = _random_ratings(seed, 80, 2, missing=0.0)
    a, b = r[:, 0], r[:, 1] + (r[:, 1] < 4) * (seed % 2)  # some systematic bias
    cov = np.mean((a - a.mean()) * (b - b.mean()))
    ccc = 2 * cov / (a.var() + b.var() + (a.mean() - b.mean()) ** 2)
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(ccc)


def test_cohen_kappa_matches_sklearn_if_installed():
    metrics = pytest.importorskip("sklearn.metrics")
    r = _random_ratings(7, 100, 2, missing=0.0)
    for weights in (None, "linear", "quadratic"):
        expected = metrics.cohen_kappa_score(r[:, 0], r[:, 1], weights=weights)
        assert cohen_kappa(r[:, 0], r[:, 1], weights=weights) == pytest.approx(expected)


def test_cohen_kappa_uses_only_items_both_rated():
    a = np.array([0, 1, 2, NAN, 4, 3, NAN])
    b = np.array([0, 1, 3, 2, NAN, 3, NAN])
    both = ~np.isnan(a) & ~np.isnan(b)
    assert cohen_kappa(a, b) == pytest.approx(cohen_kappa(a[both], b[both]))


def test_cohen_kappa_perfect_and_chance():
    assert cohen_kappa([0, 1, 2, 3, 4], [0, 1, 2, 3, 4]) == pytest.approx(1.0)
    # Independent raters: each combination equally often -> kappa 0.
    a, b = zip(*itertools.product(range(3), repeat=2), strict=True)
    assert cohen_kappa(a, b, weights="quadratic") == pytest.approx(0.0)


def test_cohen_kappa_undefined_cases_return_nan_with_reason():
    with pytest.warns(AgreementUndefinedWarning, match="same category"):
        assert np.isnan(cohen_kappa([4, 4, 4], [4, 4, 4]))
    with pytest.warns(AgreementUndefinedWarning, match="no item was rated by both"):
        assert np.isnan(cohen_kappa([1, NAN], [NAN, 2]))
    with pytest.warns(AgreementUndefinedWarning):
        assert np.isnan(cohen_kappa([], []))


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "match"),
    [
        ([0, 5], [0, 1], {}, "outside the categories"),
        ([7, NAN], [NAN, 1], {}, "outside the categories"),  # checked even if unshared
        ([0, 2.5], [0, 1], {}, "outside the categories"),
        ([0, 1, 2], [0, 1], {}, "equal lengths"),
        ([[0, 1]], [[0, 1]], {}, "1-D"),
        ([0, 1], [0, 1], {"weights": "cubic"}, "weights"),
        ([0, 1], [0, 1], {"categories": [1]}, "at least two"),
        ([0, 1], [0, 1], {"categories": [0, 1, 1]}, "distinct"),
        ([0, np.inf], [0, 1], {}, "infinities"),
        (["a", "b"], [0, 1], {}, "numeric"),
    ],
)
def test_cohen_kappa_rejects_invalid_input(a, b, kwargs, match):
    with pytest.raises(ValueError, match=match):
        cohen_kappa(a, b, **kwargs)


# --- Fleiss' kappa ---------------------------------------------------------------------


def test_fleiss_kappa_published_example():
    kappa = fleiss_kappa(FLEISS_TABLE)
    assert round(kappa, 3) == 0.210
    assert kappa == pytest.approx(0.20993, abs=1e-5)


def _ratings_from_counts(table: np.ndarray) -> np.ndarray:
    """Expand an items x categories count table into items x raters ratings."""
    return np.array([np.repeat(np.arange(table.shape[1]), row) for row in table], dtype=float)


def test_fleiss_counts_round_trip_on_published_example():
    ratings = _ratings_from_counts(FLEISS_TABLE)
    assert ratings.shape == (10, 14)
    np.testing.assert_array_equal(fleiss_counts(ratings), FLEISS_TABLE)
    assert fleiss_kappa(fleiss_counts(ratings)) == pytest.approx(fleiss_kappa(FLEISS_TABLE))


def test_fleiss_items_with_fewer_than_two_ratings_are_excluded():
    ratings = _ratings_from_counts(FLEISS_TABLE)
    lonely = np.full((3, 14), NAN)
    lonely[0, 0] = 4.0  # one rating only
    lonely[2, 5] = 0.0  # one rating only; row 1 has none
    padded = np.vstack([lonely[:2], ratings, lonely[2:]])
    counts = fleiss_counts(padded)
    np.testing.assert_array_equal(counts, FLEISS_TABLE)
    with_singletons = np.vstack([FLEISS_TABLE, [[0, 0, 0, 0, 1], [0, 0, 0, 0, 0]]])
    assert fleiss_kappa(with_singletons) == pytest.approx(fleiss_kappa(FLEISS_TABLE))


def test_fleiss_kappa_variable_number_of_raters():
    # Item 1: three raters all say 2 (P = 1); item 2: two raters say 1 and 3 (P = 0).
    # P-bar = 0.5; shares 1/5, 3/5, 1/5 -> P_e = 0.44; kappa = 0.06 / 0.56 = 3/28.
    ratings = np.array([[2, 2, 2], [1, 3, NAN]])
    assert fleiss_kappa(fleiss_counts(ratings)) == pytest.approx(3 / 28)


def test_fleiss_kappa_two_raters_is_scotts_pi():
    r = _random_ratings(3, 50, 2, missing=0.0)
    p_o = np.mean(r[:, 0] == r[:, 1])
    shares = np.bincount(r.astype(int).ravel(), minlength=5) / r.size
    p_e = np.sum(shares**2)
    assert fleiss_kappa(fleiss_counts(r)) == pytest.approx((p_o - p_e) / (1 - p_e))


def test_fleiss_kappa_undefined_cases_return_nan_with_reason():
    with pytest.warns(AgreementUndefinedWarning, match="one category"):
        assert np.isnan(fleiss_kappa([[3, 0], [3, 0]]))
    with pytest.warns(AgreementUndefinedWarning, match="at least two ratings"):
        assert np.isnan(fleiss_kappa([[1, 0], [0, 0]]))
    with pytest.warns(AgreementUndefinedWarning):
        assert np.isnan(fleiss_kappa(fleiss_counts([[1.0, NAN], [NAN, 2.0]])))


@pytest.mark.parametrize("bad", [[[1, -1]], [[1.5, 1]], [[NAN, 2]], [1, 2, 3]])
def test_fleiss_kappa_rejects_invalid_counts(bad):
    with pytest.raises(ValueError):
        fleiss_kappa(bad)


def test_fleiss_counts_rejects_values_outside_categories():
    with pytest.raises(ValueError, match="outside the categories"):
        fleiss_counts([[1, 7], [2, 2]])


# --- Krippendorff's alpha --------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "published"),
    [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)],
)
def test_krippendorff_alpha_published_example(level, published):
    assert round(krippendorff_alpha(KRIPPENDORFF_DATA, level=level), 3) == published


@pytest.mark.parametrize(("level", "published"), [("nominal", 0.691358), ("interval", 0.810845)])
def test_krippendorff_alpha_wikipedia_example(level, published):
    assert round(krippendorff_alpha(WIKIPEDIA_ALPHA_DATA, level=level), 6) == published


def _alpha_reference(ratings: np.ndarray, level: str) -> float:
    """Krippendorff's alpha from the coincidence matrix, written out with loops."""
    values = np.unique(ratings[~np.isnan(ratings)])
    index = {v: i for i, v in enumerate(values)}
    o = np.zeros((values.size, values.size))
    for unit in ratings.T:
        present = unit[~np.isnan(unit)]
        m = present.size
        if m < 2:
            continue
        for i, j in itertools.permutations(range(m), 2):
            o[index[present[i]], index[present[j]]] += 1 / (m - 1)
    n_c = o.sum(axis=1)
    n = n_c.sum()

    def delta(c, k):
        vc, vk = values[c], values[k]
        if level == "nominal":
            return float(c != k)
        if level == "interval":
            return (vc - vk) ** 2
        if level == "ratio":
            return ((vc - vk) / (vc + vk)) ** 2
        lo, hi = min(c, k), max(c, k)
        return (n_c[lo : hi + 1].sum() - (n_c[c] + n_c[k]) / 2) ** 2

    pairs = list(itertools.product(range(values.size), repeat=2))
    observed = sum(o[c, k] * delta(c, k) for c, k in pairs)
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c, k in pairs) / (n - 1)
    return 1 - observed / expected


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval", "ratio"])
@pytest.mark.parametrize("seed", range(3))
def test_krippendorff_alpha_equals_loop_reference(level, seed):
    ratings = _random_ratings(seed, 40, 4, missing=0.3).T + 1  # raters x items, 1..5
    assert krippendorff_alpha(ratings, level=level) == pytest.approx(
        _alpha_reference(ratings, level)
    )


def test_krippendorff_alpha_reference_reproduces_published_values():
    # The loop reference is independent of the krippendorff package.
    expected = {"nominal": 0.743, "ordinal": 0.815, "interval": 0.849, "ratio": 0.797}
    for level, published in expected.items():
        assert round(_alpha_reference(KRIPPENDORFF_DATA, level), 3) == published


def test_krippendorff_alpha_unused_categories_change_nothing():
    for level in ("nominal", "ordinal", "interval"):
        plain = krippendorff_alpha(KRIPPENDORFF_DATA, level=level)
        widened = krippendorff_alpha(KRIPPENDORFF_DATA, level=level, categories=range(9))
        assert widened == pytest.approx(plain)


def test_krippendorff_alpha_default_level_is_ordinal():
    assert krippendorff_alpha(KRIPPENDORFF_DATA) == krippendorff_alpha(
        KRIPPENDORFF_DATA, level="ordinal"
    )


def test_krippendorff_alpha_perfect_agreement():
    assert krippendorff_alpha([[0, 1, 2, 4], [0, 1, 2, 4], [0, NAN, 2, NAN]]) == 1.0


def test_krippendorff_alpha_undefined_cases_return_nan_with_reason():
    with pytest.warns(AgreementUndefinedWarning, match="fewer than two pairable"):
        assert np.isnan(krippendorff_alpha([[1, NAN], [NAN, 2]]))
    with pytest.warns(AgreementUndefinedWarning, match="same category"):
        # Unit 3's lone 2 is not pairable: every pairable value is a 1.
        assert np.isnan(krippendorff_alpha([[1, 1, 2], [1, 1, NAN]], level="nominal"))
    with pytest.warns(AgreementUndefinedWarning, match="same category"):
        assert np.isnan(krippendorff_alpha([[3, 3], [3, 3]]))


@pytest.mark.parametrize(
    ("ratings", "kwargs", "match"),
    [
        ([1, 2, 3], {}, "2-D"),
        ([[1, 2], [1, 2]], {"level": "circular"}, "level"),
        ([[1, 7], [1, 2]], {"categories": range(5)}, "outside the categories"),
        ([[1, np.inf], [1, 2]], {}, "infinities"),
    ],
)
def test_krippendorff_alpha_rejects_invalid_input(ratings, kwargs, match):
    with pytest.raises(ValueError, match=match):
        krippendorff_alpha(ratings, **kwargs)


# --- pairwise agreement ----------------------------------------------------------------


def test_pairwise_agreement_worked_example():
    # items x raters
    ratings = np.array(
        [
            [2, 2, 3],
            [0, 0, NAN],
            [4, 3, 4],
            [1, NAN, NAN],
            [NAN, 1, 1],
        ]
    )
    res = pairwise_agreement(ratings)
    # r0-r1 share items 0, 1, 2 and agree on 0, 1; r0-r2 share 0, 2 and agree on 2;
    # r1-r2 share 0, 2, 4 and agree on 4.
    np.testing.assert_array_equal(res.overlap, [[4, 3, 2], [3, 4, 3], [2, 3, 3]])
    np.testing.assert_allclose(
        res.agreement, [[1, 2 / 3, 1 / 2], [2 / 3, 1, 1 / 3], [1 / 2, 1 / 3, 1]]
    )
    within_one = pairwise_agreement(ratings, tolerance=1)
    np.testing.assert_allclose(within_one.agreement, np.ones((3, 3)))


def test_pairwise_agreement_no_overlap_is_nan():
    res = pairwise_agreement([[1, NAN, NAN], [NAN, 2, NAN]])
    assert np.isnan(res.agreement[0, 1]) and res.overlap[0, 1] == 0
    assert np.isnan(res.agreement[2, 2]) and res.overlap[2, 2] == 0
    assert res.agreement[0, 0] == 1.0


def test_pairwise_agreement_is_symmetric_on_random_data():
    res = pairwise_agreement(_random_ratings(1, 200, 6, missing=0.4))
    np.testing.assert_array_equal(res.overlap, res.overlap.T)
    np.testing.assert_allclose(res.agreement, res.agreement.T)


def test_pairwise_agreement_rejects_invalid_input():
    with pytest.raises(ValueError, match="2-D"):
        pairwise_agreement([1, 2])
    with pytest.raises(ValueError, match="tolerance"):
        pairwise_agreement([[1, 2]], tolerance=-1)


def test_public_names():
    assert agreement.DEFAULT_CATEGORIES == (0, 1, 2, 3, 4)
    assert issubclass(AgreementUndefinedWarning, RuntimeWarning)


# --- Gwet's AC1 / AC2 -----------------------------------------------------------------------

# Gwet (2014), Handbook of Inter-Rater Reliability, 4th ed., the 4 raters × 12 units
# example with missing ratings (categories 1–5), as irrCAC ships it (raw_4raters).
GWET_4RATERS = np.array(
    [
        [1, 1, np.nan, 1],
        [2, 2, 3, 2],
        [3, 3, 3, 3],
        [3, 3, 3, 3],
        [2, 2, 2, 2],
        [1, 2, 3, 4],
        [4, 4, 4, 4],
        [1, 1, 2, 1],
        [2, 2, 2, 2],
        [np.nan, 5, 5, 5],
        [np.nan, np.nan, 1, 1],
        [np.nan, np.nan, 3, np.nan],
    ]
)


def test_gwet_ac1_published_example():
    # Published: AC1 0.77544 (pa 0.81818, pe 0.19032); irrCAC gives 0.7754440681.
    ac1 = agreement.gwet_ac(GWET_4RATERS, categories=range(1, 6))
    assert ac1 == pytest.approx(0.77544, abs=5e-6)
    assert ac1 == pytest.approx(0.7754440681, abs=1e-9)


@pytest.mark.parametrize(
    ("weights", "expected"),
    # irrCAC 0.4.4 (Gwet's formulas ported by its authors), CAC(raw_4raters(), weights=w)
    [("quadratic", 0.9140007236), ("linear", 0.8587391364)],
)
def test_gwet_ac2_matches_irrcac(weights, expected):
    value = agreement.gwet_ac(GWET_4RATERS, weights=weights, categories=range(1, 6))
    assert value == pytest.approx(expected, abs=1e-9)


def _gwet_loop(ratings, weights, q):
    """Gwet's AC from the textbook sums, one item and category at a time."""
    w = [[1.0 if k == m else 0.0 for m in range(q)] for k in range(q)]
    if weights == "quadratic":
        w = [[1 - ((k - m) / (q - 1)) ** 2 for m in range(q)] for k in range(q)]
    items = [[int(v) for v in row if not np.isnan(v)] for row in ratings]
    pa_terms, pis = [], [0.0] * q
    for row in items:
        if not row:
            continue
        r = len(row)
        for k in range(q):
            pis[k] += row.count(k) / r
        if r >= 2:
            pa_terms.append(
                sum(
                    row.count(k) * (sum(w[k][m] * row.count(m) for m in range(q)) - 1)
                    for k in range(q)
                )
                / (r * (r - 1))
            )
    n = sum(1 for row in items if row)
    pis = [p / n for p in pis]
    pa = sum(pa_terms) / len(pa_terms)
    pe = sum(map(sum, w)) / (q * (q - 1)) * sum(p * (1 - p) for p in pis)
    return (pa - pe) / (1 - pe)


@pytest.mark.parametrize("weights", [None, "quadratic"])
@pytest.mark.parametrize("seed", range(5))
def test_gwet_ac_equals_loop_reference(weights, seed):
    rng = np.random.default_rng(seed)
    ratings = rng.integers(0, 5, size=(40, 4)).astype(float)
    ratings[rng.random(ratings.shape) < 0.3] = np.nan
    assert agreement.gwet_ac(ratings, weights=weights) == pytest.approx(
        _gwet_loop(ratings, weights, 5), abs=1e-12
    )


def test_gwet_ac_survives_where_kappa_collapses():
    # 48 of 50 pairs both say 0, two disagree: kappa is near 0 (the "paradox"), AC1 high.
    a = np.array([0.0] * 48 + [1.0, 0.0])
    b = np.array([0.0] * 48 + [0.0, 1.0])
    kappa = agreement.cohen_kappa(a, b)
    ac1 = agreement.gwet_ac(np.column_stack([a, b]))
    assert kappa < 0.0 and ac1 > 0.95


def test_gwet_ac_undefined_and_invalid():
    with pytest.warns(agreement.AgreementUndefinedWarning, match="at least two raters"):
        assert np.isnan(agreement.gwet_ac(np.array([[1.0, np.nan], [np.nan, 2.0]])))
    with pytest.raises(ValueError, match="weights"):
        agreement.gwet_ac(np.zeros((2, 2)), weights="cubic")
    with pytest.raises(ValueError):
        agreement.gwet_ac(np.array([[7.0, 1.0]]))
    with pytest.raises(ValueError):
        agreement.gwet_ac(np.zeros(3))
