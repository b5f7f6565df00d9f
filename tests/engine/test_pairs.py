"""Every pair of runs: paired t-tests, Holm and Tukey's HSD against scipy and statsmodels."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from statsmodels.regression.linear_model import OLS
from statsmodels.stats.multitest import multipletests

from metrics.engine import stats
from metrics.engine.letters import letter_strings
from metrics.engine.pairs import (
    all_pairs,
    paired_t_matrix,
    studentized_range_isf,
    studentized_range_sf,
    tukey_hsd,
)
from metrics.engine.ranks import letter_groups

#: Three runs on four topics, chosen so that the two-way ANOVA comes out round: run means
#: 0.6, 0.5, 0.3; topic means 13/30, 0.3, 19/30, 0.5; grand mean 0.4667.
WORKED = np.array(
    [
        [0.6, 0.4, 0.8, 0.6],
        [0.5, 0.3, 0.6, 0.6],
        [0.2, 0.2, 0.5, 0.3],
    ]
)


def holm(p: list[float]) -> np.ndarray:
    """Return statsmodels' Holm-adjusted p-values (its Holm branch's gc.collect() skipped)."""
    with mock.patch("gc.collect"):
        return multipletests(p, method="holm")[1]


def test_tukey_hsd_worked_by_hand():
    # Residuals x − run mean − topic mean + grand mean, in thirtieths:
    #   A:  1 −1  1 −1     B:  1 −1 −2  2     C: −2  2  1 −1
    # SS_E = (4 + 10 + 10) / 900 = 24/900; ν = (3 − 1)(4 − 1) = 6; V_E = SS_E / 6 = 1/225;
    # the standard error of a mean difference is √(V_E / 4) = 1/30. So q = 0.1·30 = 3 for
    # A–B, 0.3·30 = 9 for A–C and 0.2·30 = 6 for B–C, and p = P(Q(3, 6) > q).
    hsd = tukey_hsd(WORKED)
    assert hsd.df == 6
    assert hsd.residual_variance == pytest.approx(1 / 225, rel=1e-12)
    assert hsd.standard_error == pytest.approx(1 / 30, rel=1e-12)
    assert hsd.q[0, 1] == pytest.approx(3.0) and hsd.q[0, 2] == pytest.approx(9.0)
    assert hsd.q[1, 2] == pytest.approx(6.0)
    for (i, j), q in {(0, 1): 3.0, (0, 2): 9.0, (1, 2): 6.0}.items():
        expected = sps.studentized_range.sf(q, 3, 6)
        assert hsd.p[i, j] == hsd.p[j, i] == pytest.approx(expected, abs=1e-10)
    assert hsd.p[0, 1] > 0.05 > hsd.p[1, 2] > hsd.p[0, 2]
    # The same residual variance from an additive least-squares fit (statsmodels OLS).
    runs, topics = np.indices(WORKED.shape)
    design = np.column_stack(
        [np.ones(WORKED.size)]
        + [(runs.ravel() == r).astype(float) for r in (1, 2)]
        + [(topics.ravel() == t).astype(float) for t in (1, 2, 3)]
    )
    fit = OLS(WORKED.ravel(), design).fit()
    assert fit.df_resid == 6
    assert fit.ssr / fit.df_resid == pytest.approx(hsd.residual_variance, rel=1e-10)
    # All pairs under Tukey: simultaneous intervals d ± q(0.95; 3, 6) / 30.
    result = all_pairs(WORKED, correction="tukey")
    critical = sps.studentized_range.ppf(0.95, 3, 6)
    assert result.critical == pytest.approx(critical, rel=1e-9)
    ab, ac, bc = result.pairs
    assert (ab.upper, ab.lower, ac.lower, bc.upper) == (0, 1, 2, 1)
    assert ab.difference == pytest.approx(0.1) and ac.difference == pytest.approx(0.3)
    for pair in result.pairs:
        assert pair.high - pair.difference == pytest.approx(critical / 30, rel=1e-9)
        assert pair.difference - pair.low == pytest.approx(critical / 30, rel=1e-9)
        assert pair.significant == (pair.low > 0)  # the interval and the test agree
        assert pair.p_value == pytest.approx(
            sps.ttest_rel(WORKED[pair.upper], WORKED[pair.lower]).pvalue, rel=1e-12
        )
    assert [p.significant for p in result.pairs] == [False, True, True]
    assert letter_strings(list(result.groups)) == ["a", "a", "b"]


def test_holm_over_all_pairs_against_scipy_and_statsmodels():
    rng = np.random.default_rng(11)
    base = rng.uniform(0.2, 0.7, 15)
    scores = np.clip(
        np.array([base + shift + rng.normal(0, 0.08, 15) for shift in (0.2, 0.15, 0.1, 0.0, 0.0)]),
        0,
        1,
    )
    result = all_pairs(scores)
    order = list(result.order)
    assert order == np.argsort(-scores.mean(axis=1), kind="stable").tolist()
    assert [(p.upper, p.lower) for p in result.pairs] == list(itertools.combinations(order, 2))
    raw = [sps.ttest_rel(scores[p.upper], scores[p.lower]) for p in result.pairs]
    adjusted = holm([r.pvalue for r in raw])
    for pair, reference, corrected in zip(result.pairs, raw, adjusted, strict=True):
        assert pair.difference == pytest.approx(
            scores[pair.upper].mean() - scores[pair.lower].mean(), abs=1e-15
        )
        assert pair.difference >= 0  # upper is the higher mean
        assert pair.t_statistic == pytest.approx(reference.statistic, rel=1e-12)
        assert pair.p_value == pytest.approx(reference.pvalue, rel=1e-12)
        assert pair.corrected == pytest.approx(corrected, rel=1e-12)
        assert pair.significant == (corrected <= 0.05)
        interval = reference.confidence_interval(0.95)
        assert (pair.low, pair.high) == pytest.approx((interval.low, interval.high), rel=1e-12)
    assert result.df == 14 and result.critical == pytest.approx(sps.t.ppf(0.975, 14))
    # Holm here is the leaderboard's family: the letters are the leaderboard's.
    assert list(result.groups) == letter_groups(scores, order)
    assert any(p.significant for p in result.pairs) and not all(p.significant for p in result.pairs)


def test_two_runs_under_tukey_get_the_paired_t_test():
    # With k = 2 and topics as blocks, V_E = s_d² / 2, so q = √2 |t| and the studentized
    # range of two means is √2 times |t| with n − 1 degrees of freedom: the same p-value.
    rng = np.random.default_rng(5)
    for n in (2, 3, 5, 20, 200):
        a, b = rng.random(n), rng.random(n)
        tukey = all_pairs(np.array([a, b]), correction="tukey").pairs[0]
        t = sps.ttest_rel(a, b)
        assert tukey.q_statistic == pytest.approx(np.sqrt(2) * abs(t.statistic), rel=1e-12)
        assert tukey.corrected == pytest.approx(t.pvalue, abs=1e-10)
        holm_pair = all_pairs(np.array([a, b])).pairs[0]
        assert holm_pair.corrected == pytest.approx(t.pvalue, rel=1e-12)  # one pair: no change
        # And the simultaneous interval is the t interval (of upper − lower).
        interval = sps.ttest_rel(*(np.array([a, b])[[tukey.upper, tukey.lower]]))
        interval = interval.confidence_interval(0.95)
        assert (tukey.low, tukey.high) == pytest.approx((interval.low, interval.high), rel=1e-8)


def test_one_way_hsd_is_scipys_tukey_hsd():
    rng = np.random.default_rng(2)
    scores = rng.beta(2, 3, size=(5, 12)) + np.linspace(0, 0.3, 5)[:, None]
    one_way = tukey_hsd(scores, blocks=False)
    reference = sps.tukey_hsd(*scores)
    off = ~np.eye(5, dtype=bool)
    assert one_way.p[off] == pytest.approx(reference.pvalue[off], abs=1e-9)
    assert one_way.df == 5 * 11
    half = studentized_range_isf(0.05, 5, one_way.df) * one_way.standard_error
    interval = reference.confidence_interval(0.95)
    assert interval.high[0, 1] - reference.statistic[0, 1] == pytest.approx(half, rel=1e-8)
    # With topics as blocks the topics' spread leaves the variance: a smaller one here.
    assert tukey_hsd(scores).residual_variance < one_way.residual_variance


def test_one_way_hsd_is_what_ranx_computes():
    ranx = pytest.importorskip("ranx.statistical_tests.tukey_hsd_test")
    rng = np.random.default_rng(8)
    scores = rng.random((4, 10))
    found = ranx.tukey_hsd_test(["a", "b", "c", "d"], list(scores), 0.05)
    ours = tukey_hsd(scores, blocks=False).p
    names = "abcd"
    for row in found:
        i, j = names.index(row["control"]), names.index(row["treatment"])
        assert ours[i, j] == pytest.approx(row["p-value"], abs=1e-9)


@pytest.mark.parametrize("k", [2, 3, 5, 10, 30, 100])
def test_the_studentized_range_is_scipys(k):
    # scipy integrates adaptively for every value (about 15 ms each): a sparse grid.
    q = np.array([0.05, 0.5, 1, 2, 3, 4, 6, 10, 25, 200])
    for df in sorted({max(1, k - 1), 10 * k, 3000}):  # (k − 1)(n − 1) ≥ k − 1 on a board
        expected = sps.studentized_range.sf(q, k, df)
        assert studentized_range_sf(q, k, df) == pytest.approx(expected, abs=1e-10), df
    assert studentized_range_isf(0.05, k, 10 * k) == pytest.approx(
        sps.studentized_range.ppf(0.95, k, 10 * k), rel=1e-9
    )
    assert studentized_range_sf([0.0, np.inf], k, 10).tolist() == [1.0, 0.0]
    # df = inf: the range of k standard normals.
    assert studentized_range_sf(3.0, k, np.inf) == pytest.approx(
        sps.studentized_range.sf(3.0, k, np.inf), abs=1e-10
    )


def test_paired_t_matrix_is_the_paired_t_test():
    rng = np.random.default_rng(4)
    scores = rng.random((5, 9))
    scores[3] = scores[1]  # identical: t = 0, p = 1
    scores[4] = scores[0] - 0.1  # a constant shift: p = 0
    found = paired_t_matrix(scores)
    for i, j in itertools.combinations(range(5), 2):
        expected = stats.paired_t_test(scores[i], scores[j])
        assert found.p[i, j] == found.p[j, i]
        assert found.p[i, j] == pytest.approx(expected.p_value, rel=1e-12, abs=1e-300)
        if np.isfinite(expected.statistic):
            assert found.t[i, j] == pytest.approx(expected.statistic, rel=1e-12)
        else:
            assert found.t[i, j] == expected.statistic
        assert found.t[j, i] == -found.t[i, j]
    assert np.all(np.diag(found.p) == 1.0)


def test_edge_cases():
    one = all_pairs([[0.2, 0.4, 0.6]])
    assert one.pairs == () and one.groups == ((0,),)
    # Identical runs: difference 0, p = 1 under both corrections, one letter.
    same = np.tile([0.1, 0.5, 0.9], (3, 1))
    for correction in ("holm", "tukey"):
        result = all_pairs(same, correction=correction)
        assert all(p.difference == 0 and p.corrected == 1.0 for p in result.pairs)
        assert letter_strings(list(result.groups)) == ["a", "a", "a"]
    # Shifted copies: no spread of the differences, no residual variance: p = 0 for a gap.
    shifted = np.array([[0.5, 0.7, 0.6], [0.4, 0.6, 0.5], [0.4, 0.6, 0.5]])
    holm_result = all_pairs(shifted)
    tukey_result = all_pairs(shifted, correction="tukey")
    assert tukey_result.residual_variance == pytest.approx(0.0, abs=1e-30)
    for result in (holm_result, tukey_result):
        by_pair = {(p.upper, p.lower): p for p in result.pairs}
        assert by_pair[0, 1].corrected == 0.0 and by_pair[0, 1].significant
        assert by_pair[1, 2].corrected == 1.0 and not by_pair[1, 2].significant
        assert by_pair[0, 1].low == pytest.approx(by_pair[0, 1].high)
        assert letter_strings(list(result.groups)) == ["a", "b", "b"]
    with pytest.raises(ValueError, match="at least 2 queries"):
        all_pairs([[0.1], [0.2]])
    with pytest.raises(ValueError, match="finite"):
        all_pairs([[0.1, np.nan], [0.2, 0.3]])
    with pytest.raises(ValueError, match="correction"):
        all_pairs([[0.1, 0.2], [0.2, 0.3]], correction="bonferroni")
    with pytest.raises(ValueError, match="alpha"):
        all_pairs([[0.1, 0.2], [0.2, 0.3]], alpha=0.0)
    with pytest.raises(ValueError, match="order"):
        all_pairs([[0.1, 0.2], [0.2, 0.3]], order=[1, 1])
    with pytest.raises(ValueError, match="2 means"):
        studentized_range_sf(1.0, 1, 5)


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 6),
    st.integers(2, 12),
    st.integers(0, 2**16),
    st.sampled_from(["holm", "tukey"]),
)
def test_letters_follow_the_pairs_marked_significant(runs, queries, seed, correction):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.uniform(0, 1, (runs, queries)) + rng.uniform(0, 0.8, (runs, 1)), 2)
    result = all_pairs(scores, correction=correction)
    position = {row: i for i, row in enumerate(result.order)}
    assert len(result.pairs) == runs * (runs - 1) // 2
    for pair in result.pairs:
        assert position[pair.upper] < position[pair.lower]
        share = bool(
            set(result.groups[position[pair.upper]]) & set(result.groups[position[pair.lower]])
        )
        assert share == (not pair.significant)
        assert pair.low <= pair.difference <= pair.high
        if correction == "tukey":
            # The simultaneous interval excludes 0 exactly when the HSD p-value is below α.
            assert (pair.low > 0) == (pair.corrected < 0.05) or abs(pair.corrected - 0.05) < 1e-8
        else:
            assert pair.corrected >= pair.p_value
