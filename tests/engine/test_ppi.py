"""Prediction-powered means (metrics.engine.ppi): hand-worked cases, the paper's formulas,
the ppi_python package's values, edge cases and coverage (no database)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from metrics.engine.ppi import audited_mean, ppi_mean

Z95 = 1.959963984540054

# A small data set and the values ppi_python 0.2.3 (`ppi_py.ppi_mean_ci`,
# `ppi_mean_pointestimate`, alpha=0.05) gives for it. The package is not a dependency
# (it pulls in numba and gdown); these figures were computed with it once.
Y = np.array([0.5, 0.2, 0.9, 0.4, 0.7, 0.1])
YHAT = np.array([0.6, 0.4, 0.8, 0.6, 0.7, 0.3])
UNLABELLED = np.array([0.3, 0.9, 0.5, 0.55, 0.2, 0.8, 0.65, 0.4, 0.1, 0.75])
PPI_PYTHON = {
    None: (0.4397107166337937, 0.2676151602394516, 0.6118062730281357),
    0.0: (0.46666666666666673, 0.24672593399028792, 0.6866073993430455),
    1.0: (0.4149999999999999, 0.23350773483270004, 0.5964922651672998),
    0.5: (0.4408333333333333, 0.26782469452249164, 0.613841972144175),
}


@pytest.mark.parametrize("lam", list(PPI_PYTHON))
def test_ppi_mean_gives_ppi_pythons_values(lam):
    got = ppi_mean(Y, YHAT, UNLABELLED, lam=lam)
    estimate, low, high = PPI_PYTHON[lam]
    assert got.estimate == pytest.approx(estimate, abs=1e-12)
    assert got.low == pytest.approx(low, abs=1e-12)
    assert got.high == pytest.approx(high, abs=1e-12)


def test_ppi_mean_follows_the_papers_formulas():
    # Angelopoulos et al. 2023: θ = λ·mean(f_U) + mean(Y − λ f), variance
    # λ² var(f_U)/N + var(Y − λ f)/n; PPI++ λ* = cov(Y, f) / ((1 + n/N) var(f)).
    n, big_n = Y.size, UNLABELLED.size
    cov = np.mean((Y - Y.mean()) * (YHAT - YHAT.mean()))
    var_f = np.var(np.concatenate([YHAT, UNLABELLED]), ddof=1)
    lam = float(np.clip(cov / ((1 + n / big_n) * var_f), 0, 1))
    got = ppi_mean(Y, YHAT, UNLABELLED)
    assert got.lam == pytest.approx(lam, abs=1e-15)
    theta = lam * UNLABELLED.mean() + np.mean(Y - lam * YHAT)
    se = math.sqrt(lam**2 * np.var(UNLABELLED) / big_n + np.var(Y - lam * YHAT) / n)
    assert got.estimate == pytest.approx(theta, abs=1e-15)
    assert got.std_error == pytest.approx(se, abs=1e-15)
    assert (got.low, got.high) == pytest.approx((theta - Z95 * se, theta + Z95 * se))


def test_lambda_zero_is_the_classical_mean_and_one_is_plain_ppi():
    classical = ppi_mean(Y, YHAT, UNLABELLED, lam=0.0)
    assert classical.estimate == pytest.approx(Y.mean())
    assert classical.half_width == pytest.approx(Z95 * Y.std() / math.sqrt(Y.size))
    plain = ppi_mean(Y, YHAT, UNLABELLED, lam=1.0)
    assert plain.estimate == pytest.approx(UNLABELLED.mean() + (Y - YHAT).mean())


def test_ppi_mean_without_labelled_or_unlabelled_units_is_nan():
    for got in (ppi_mean([], [], UNLABELLED), ppi_mean(Y, YHAT, [])):
        assert math.isnan(got.estimate) and math.isnan(got.low) and math.isnan(got.high)


# --- audited_mean: the audited units are a subset of all units --------------------------

F4 = np.array([0.2, 0.4, 0.6, 0.8])
H4 = np.array([0.4, 0.4, np.nan, np.nan])
A4 = np.array([True, True, False, False])


def test_audited_mean_hand_worked_plain_ppi():
    # λ = 1: mean f over all = 0.5; rectifiers h − f on the audit = [0.2, 0.0], mean 0.1
    # → 0.6. S² of the rectifiers = 0.02; collection variance (1/2 − 1/4)·0.02 = 0.005.
    got = audited_mean(F4, H4, A4, lam=1.0, interval="z")
    assert got.estimate == pytest.approx(0.6)
    assert got.std_error == pytest.approx(math.sqrt(0.005))
    assert got.half_width == pytest.approx(Z95 * math.sqrt(0.005))
    assert (got.labelled, got.units) == (2, 4)
    # Student's t with 1 degree of freedom: 12.706...
    wide = audited_mean(F4, H4, A4, lam=1.0)
    assert wide.half_width == pytest.approx(12.706204736174698 * math.sqrt(0.005))
    # the topics target adds S²(h)/N = 0 here (both human scores are 0.4)
    assert audited_mean(F4, H4, A4, lam=1.0, target="topics").std_error == pytest.approx(
        math.sqrt(0.005)
    )


def test_audited_mean_hand_worked_tuning():
    # h = 0.4 on three audited units: cov(h, f) = 0 → λ* = 0, the human-only mean 0.4 with
    # no spread (the human scores are equal).
    got = audited_mean(F4, [0.4, 0.4, 0.4, np.nan], [True, True, True, False])
    assert got.lam == pytest.approx(0.0, abs=1e-15)
    assert got.estimate == pytest.approx(0.4)
    assert got.low == pytest.approx(0.4) and got.high == pytest.approx(0.4)
    # f_a = [0.2, 0.4, 0.8], h_a = [0.1, 0.5, 0.9]: S(h, f) = 0.12, S²(f) = 0.09333 →
    # λ* = 1.2857, clipped to 1.
    f = np.array([0.2, 0.4, 0.8, 0.6, 0.0])
    h = np.array([0.1, 0.5, 0.9, 0.0, 0.0])
    audit = np.array([True, True, True, False, False])
    assert audited_mean(f, h, audit).lam == 1.0
    # h_a = [0.3, 0.3, 0.5], mean 11/30: the products of deviations sum to
    # (−1/15)(−4/15) + (−1/15)(−1/15) + (2/15)(5/15) = 15/225 = 1/15, so S(h, f) = 1/30
    # and λ* = (1/30) / (0.28/3) = 5/14.
    h2 = np.array([0.3, 0.3, 0.5, 0.0, 0.0])
    got = audited_mean(f, h2, audit)
    assert got.lam == pytest.approx(5 / 14)
    # A tuned λ is a fitted slope: the residuals' variance divides by n − 2 = 1 and t has
    # 1 degree of freedom.
    residuals = h2[:3] - 5 / 14 * f[:3]
    linear = (1 / 3 - 1 / 5) * np.sum((residuals - residuals.mean()) ** 2) / 1
    assert linear == pytest.approx(2 / 15 / 350)
    # The jackknife refits λ on each pair of audited units (mean f over all five: 0.4):
    # without 0.2 the slope is 0.5 and θ = 0.2 + 0.4 − 0.3 = 0.3; without 0.4 it is 1/3 and
    # θ = 0.4/3 + 0.4 − 0.5/3 = 11/30; without 0.8 it is 0, θ = 0.3. Around their mean
    # 29/90 the squares sum to 2/675, so v = (2/3)(2/675) and, with (1 − 3/5), 1.6/2025:
    # larger than the linearised 1/2625, so it is the one used.
    se = math.sqrt(0.4 * (2 / 3) * (2 / 675))
    assert se**2 > linear
    assert got.std_error == pytest.approx(se)
    assert got.half_width == pytest.approx(12.706204736174698 * se)
    assert got.estimate == pytest.approx(5 / 14 * f.mean() + residuals.mean())


def test_audited_mean_lambda_zero_is_the_human_only_survey_mean():
    rng = np.random.default_rng(2)
    f = rng.random(30)
    h = np.clip(f + rng.normal(0.1, 0.1, 30), 0, 1)
    audit = np.zeros(30, dtype=bool)
    audit[rng.choice(30, 8, replace=False)] = True
    got = audited_mean(f, h, audit, lam=0.0)
    s2 = np.var(h[audit], ddof=1)
    se = math.sqrt((1 / 8 - 1 / 30) * s2)
    assert got.estimate == pytest.approx(h[audit].mean())
    assert got.std_error == pytest.approx(se)
    assert got.half_width == pytest.approx(stats.t.ppf(0.975, 7) * se)
    topics = audited_mean(f, h, audit, lam=0.0, target="topics")
    # (1/n − 1/N) S² + S²/N = S²/n: the classical mean of an i.i.d. sample
    assert topics.std_error == pytest.approx(math.sqrt(s2 / 8))


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_units=st.integers(3, 60),
    share=st.floats(0.05, 0.95),
)
def test_tuned_lambda_is_never_wider_than_human_only_or_plain_ppi(seed, n_units, share):
    rng = np.random.default_rng(seed)
    f = rng.random(n_units)
    h = np.clip(f * rng.uniform(-1, 2) + rng.normal(0, 0.2, n_units), 0, 1)
    audit = rng.random(n_units) < share
    if audit.sum() < 3 or audit.all():
        return
    tuned = audited_mean(f, h, audit)
    # at the tuned λ (held fixed, so the same degrees of freedom) the standard error is
    # the smallest of λ in [0, 1]
    best = audited_mean(f, h, audit, lam=tuned.lam)
    for lam in (0.0, 0.25, 0.5, 0.75, 1.0):
        other = audited_mean(f, h, audit, lam=lam)
        assert best.std_error <= other.std_error + 1e-12
    assert 0.0 <= tuned.lam <= 1.0
    assert tuned.low <= tuned.estimate <= tuned.high


def test_plain_ppi_ignores_a_constant_shift_of_the_llm_scores():
    rng = np.random.default_rng(4)
    f = rng.random(20)
    h = rng.random(20)
    audit = rng.random(20) < 0.4
    a = audited_mean(f, h, audit, lam=1.0)
    b = audited_mean(f + 0.3, h, audit, lam=1.0)
    assert b.estimate == pytest.approx(a.estimate)
    assert b.std_error == pytest.approx(a.std_error)


def test_a_difference_of_runs_is_the_difference_of_their_estimates_at_fixed_lambda():
    rng = np.random.default_rng(6)
    fa, fb, ha, hb = rng.random((4, 25))
    audit = rng.random(25) < 0.5
    for lam in (0.0, 0.4, 1.0):
        diff = audited_mean(fa - fb, ha - hb, audit, lam=lam)
        a = audited_mean(fa, ha, audit, lam=lam)
        b = audited_mean(fb, hb, audit, lam=lam)
        assert diff.estimate == pytest.approx(a.estimate - b.estimate)


def test_no_audit_gives_nan():
    got = audited_mean(F4, np.full(4, np.nan), np.zeros(4, dtype=bool))
    assert math.isnan(got.estimate) and math.isnan(got.low) and math.isnan(got.high)
    assert (got.labelled, got.units) == (0, 4)


def test_everything_audited_gives_the_human_mean():
    h = np.array([0.1, 0.7, 0.4, 0.4])
    for lam in (None, 0.0, 0.5, 1.0):
        got = audited_mean(F4, h, np.ones(4, dtype=bool), lam=lam)
        assert got.estimate == pytest.approx(0.4)
        assert got.low == got.high == pytest.approx(0.4)
    topics = audited_mean(F4, h, np.ones(4, dtype=bool), target="topics")
    assert topics.std_error == pytest.approx(math.sqrt(np.var(h, ddof=1) / 4))


def test_one_audited_unit():
    got = audited_mean(F4, np.array([0.5, 0, 0, 0]), np.array([True, False, False, False]))
    # λ is not tuned below three units: plain PPI, 0.5 + (0.5 − 0.2) = 0.8, no interval
    assert got.lam == 1.0
    assert got.estimate == pytest.approx(0.8)
    assert got.low == -math.inf and got.high == math.inf
    # one query in all, audited: exact for the collection, unknown for the topics
    one = audited_mean([0.3], [0.9], [True])
    assert one.estimate == one.low == one.high == pytest.approx(0.9)
    assert audited_mean([0.3], [0.9], [True], target="topics").high == math.inf


def test_two_audited_units_use_plain_ppi():
    # λ is not fitted to two points (it would fit them exactly)
    h = np.array([0.1, 0.7, np.nan, np.nan])
    two = audited_mean(F4, h, A4)
    assert two.lam == 1.0
    assert two.estimate == pytest.approx(0.5 + ((0.1 - 0.2) + (0.7 - 0.4)) / 2)


def test_constant_llm_scores_on_the_audit_give_lambda_zero():
    f = np.array([0.5, 0.5, 0.5, 0.1])
    h = np.array([0.2, 0.6, 0.4, 0.0])
    assert audited_mean(f, h, [True, True, True, False]).lam == 0.0


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="lengths differ"):
        audited_mean(F4, H4[:3], A4)
    with pytest.raises(ValueError, match="llm: every score must be finite"):
        audited_mean([0.1, np.nan], [0.1, 0.2], [True, True])
    with pytest.raises(ValueError, match="human"):
        audited_mean([0.1, 0.2], [np.nan, 0.2], [True, True])
    with pytest.raises(ValueError, match="lam"):
        audited_mean(F4, H4, A4, lam=1.5)
    with pytest.raises(ValueError, match="alpha"):
        audited_mean(F4, H4, A4, alpha=0.0)
    with pytest.raises(ValueError, match="target"):
        audited_mean(F4, H4, A4, target="pairs")  # type: ignore[arg-type]


def test_the_collection_interval_covers_the_human_mean_under_a_biased_llm():
    # 60 units; the LLM is too high by 0.15 on average, noisily; audits of 12 units drawn
    # without replacement. The interval should cover the collection's human mean about
    # 95% of the time, while the LLM mean is far off.
    rng = np.random.default_rng(11)
    h = rng.beta(2, 3, 60)
    f = np.clip(h + 0.15 + rng.normal(0, 0.1, 60), 0, 1)
    truth = h.mean()
    covered = 0
    draws = 1000
    for _ in range(draws):
        audit = np.zeros(60, dtype=bool)
        audit[rng.choice(60, 12, replace=False)] = True
        got = audited_mean(f, h, audit)
        covered += got.low <= truth <= got.high
    assert 0.92 <= covered / draws <= 0.98
    assert f.mean() - truth > 0.1


def _jackknife_by_deletion(f, h, f_mean):
    """Return the delete-one jackknife variance, each replicate refitted by np.cov."""
    reps = []
    for i in range(f.size):
        ff, hh = np.delete(f, i), np.delete(h, i)
        var = np.var(ff, ddof=1)
        lam = float(np.clip(np.cov(hh, ff, ddof=1)[0, 1] / var, 0, 1)) if var > 0 else 0.0
        reps.append(lam * f_mean + np.mean(hh - lam * ff))
    reps = np.array(reps)
    return (f.size - 1) / f.size * np.sum((reps - reps.mean()) ** 2)


def test_a_tuned_lambda_takes_the_larger_of_the_linearised_and_jackknife_variance():
    # One audited unit with an extreme LLM score pulls the fitted slope: leaving it out
    # moves λ from 0.39 to 1 (the slope of the other four is 1.17, clipped), which the
    # jackknife sees and the linearised variance does not.
    f = np.array([0.1, 0.2, 0.25, 0.3, 0.95, 0.4, 0.5, 0.2, 0.3, 0.6])
    h = np.array([0.15, 0.3, 0.3, 0.4, 0.55, 0.0, 0.0, 0.0, 0.0, 0.0])
    audit = np.array([True] * 5 + [False] * 5)
    got = audited_mean(f, h, audit)
    n, big_n = 5, 10
    residuals = h[:5] - got.lam * f[:5]
    linear = (1 / n - 1 / big_n) * np.var(residuals, ddof=2)
    jack = (1 - n / big_n) * _jackknife_by_deletion(f[:5], h[:5], f.mean())
    assert jack > 1.5 * linear  # the case the jackknife is there for
    assert got.std_error == pytest.approx(math.sqrt(jack), rel=1e-12)
    assert got.half_width == pytest.approx(stats.t.ppf(0.975, 3) * math.sqrt(jack), rel=1e-12)
    # where the points lie on a line, the linearised variance is the larger one
    rng = np.random.default_rng(4)
    f2 = rng.random(40)
    h2 = 0.8 * f2 + rng.normal(0, 0.05, 40)
    audit2 = np.zeros(40, dtype=bool)
    audit2[:20] = True
    got2 = audited_mean(f2, h2, audit2)
    r2 = h2[:20] - got2.lam * f2[:20]
    linear2 = (1 / 20 - 1 / 40) * np.var(r2, ddof=2)
    jack2 = (1 - 20 / 40) * _jackknife_by_deletion(f2[:20], h2[:20], f2.mean())
    assert got2.std_error**2 == pytest.approx(max(linear2, jack2), rel=1e-12)


# --- bounded measures: the estimate and the interval are clipped to the range -------------


def test_an_interval_reaching_below_zero_is_clipped_and_the_estimate_kept():
    # Plain PPI (λ = 1) on 10 units, 4 audited. f = 0.1 everywhere; h = 0, 0, 0, 0.4.
    # Rectifier h − f: −0.1, −0.1, −0.1, 0.3 (mean 0, S² = 0.12 / 3 = 0.04).
    # Estimate 0.1 + 0 = 0.1; variance (1/4 − 1/10) · 0.04 = 0.006; t with 3 df.
    llm = np.full(10, 0.1)
    human = np.array([0.0, 0.0, 0.0, 0.4, *[np.nan] * 6])
    audited = np.arange(10) < 4
    half = stats.t.ppf(0.975, df=3) * math.sqrt(0.006)
    raw = audited_mean(llm, human, audited, lam=1.0)
    assert raw.estimate == pytest.approx(0.1)
    assert raw.low == pytest.approx(0.1 - half) and raw.low < 0 and not raw.clipped
    got = audited_mean(llm, human, audited, lam=1.0, bounds=(0.0, 1.0))
    assert got.estimate == pytest.approx(0.1)  # inside the range: unchanged
    assert (got.low, got.high) == (0.0, pytest.approx(0.1 + half))
    assert got.clipped and got.std_error == raw.std_error and got.lam == raw.lam


def test_an_estimate_outside_the_range_is_clipped_into_it_with_its_interval():
    # f: 0.2 on the 4 audited units, 0 on the 6 others (mean 0.08); humans gave 0 to all 4.
    # Plain PPI: 0.08 + mean(0 − 0.2) = −0.12, a mean no [0, 1] measure can have; the
    # rectifier is constant, so the interval is the point −0.12. Clipped: 0, [0, 0].
    llm = np.array([0.2] * 4 + [0.0] * 6)
    human = np.array([0.0] * 4 + [np.nan] * 6)
    audited = np.arange(10) < 4
    raw = audited_mean(llm, human, audited, lam=1.0)
    assert raw.estimate == pytest.approx(-0.12) and raw.low == pytest.approx(-0.12)
    got = audited_mean(llm, human, audited, lam=1.0, bounds=(0.0, 1.0))
    assert (got.estimate, got.low, got.high, got.clipped) == (0.0, 0.0, 0.0, True)
    top = audited_mean(1.0 - llm, 1.0 - human, audited, lam=1.0, bounds=(0.0, 1.0))
    assert (top.estimate, top.low, top.high) == (1.0, 1.0, 1.0)  # the mirror case at 1


def test_clipping_never_loses_coverage_and_never_moves_the_estimate_away():
    # Scores piled at 0 (a strict measure on hard topics): intervals often reach below 0.
    rng = np.random.default_rng(11)
    n_units, n_audit, reached = 30, 6, 0
    for _ in range(400):
        truth = np.where(rng.random(n_units) < 0.15, rng.random(n_units), 0.0)
        llm = np.clip(truth + rng.normal(0.05, 0.1, n_units), 0.0, 1.0)
        audited = np.zeros(n_units, bool)
        audited[rng.choice(n_units, n_audit, replace=False)] = True
        theta = truth.mean()
        raw = audited_mean(llm, truth, audited)
        got = audited_mean(llm, truth, audited, bounds=(0.0, 1.0))
        reached += raw.low < 0
        assert (raw.low <= theta <= raw.high) == (got.low <= theta <= got.high)
        assert abs(got.estimate - theta) <= abs(raw.estimate - theta) + 1e-15
        assert 0.0 <= got.low <= got.estimate <= got.high <= 1.0
    assert reached > 100  # the case the clipping is for did occur


def test_clipping_leaves_infinite_and_empty_results_alone():
    one = audited_mean([0.2, 0.4, 0.9], [0.0, np.nan, np.nan], [True, False, False],
                       bounds=(0.0, 1.0))  # fmt: skip
    assert math.isinf(one.low) and math.isinf(one.high)  # nothing is known: no interval
    none = audited_mean([0.2, 0.4], [np.nan, np.nan], [False, False], bounds=(0.0, 1.0))
    assert math.isnan(none.estimate) and not none.clipped
    for bad in [(1.0, 0.0), (0.0, math.inf), (0.0,)]:
        with pytest.raises(ValueError, match="bounds"):
            audited_mean([0.2, 0.4], [0.1, 0.3], [True, True], bounds=bad)
