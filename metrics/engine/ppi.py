"""Bias-corrected means from LLM grades and a human audit: prediction-powered inference.

When most relevance grades come from an LLM, a run's mean score computed on them (the
*LLM-filled* mean) carries the LLM's systematic errors, and a bootstrap over queries does
not see them. Prediction-powered inference (PPI; Angelopoulos, Bates, Fannjiang, Jordan
and Zrnic, *Science* 2023) corrects the mean with a small random sample that humans
graded too, and PPI++ (Angelopoulos, Duchi and Zrnic, 2023) tunes how much it leans on
the LLM so the interval is never wider than the human-only one (asymptotically). ARES
(Saad-Falcon et al., 2024) applies it to judging RAG systems.

Notation: ``f`` is a unit's score under the LLM-filled grades (the *prediction*), ``h``
its score under human grades (the *label*), ``λ`` in [0, 1] the power-tuning weight.

Two estimators:

* :func:`ppi_mean` is the textbook one (and the ``ppi_python`` package's
  ``ppi_mean_ci``): ``n`` labelled units and ``N`` *other* unlabelled units, both i.i.d.
  from one population; the estimate is ``λ·mean(f_unlabelled) + mean(h − λ·f)`` over the
  labelled units, with a CLT (z) interval of variance ``λ²·var(f_U)/N + var(h − λf)/n``.
  ``λ = 0`` gives the classical human-only mean, ``λ = 1`` plain PPI, ``lam=None``
  PPI++'s estimated optimum, ``cov(h, f) / ((1 + n/N)·var(f))`` clipped to [0, 1].

* :func:`audited_mean` is the one the leaderboard needs: the audited units are a uniform
  random *subset* of all ``N`` units of the collection (every unit has an LLM-filled
  score, the audited ones a human score too). The estimate is
  ``λ·mean_N(f) + mean_n(h − λ·f)``, survey sampling's difference estimator (the
  regression estimator when λ is fitted). Two targets:

  - ``target="collection"``: the mean of ``h`` over the collection's ``N`` units, the
    score the run would have if humans graded everything. The audit is the only source
    of error: ``var = (1/n − 1/N)·S²(h − λf)`` (sampling without replacement, with its
    finite-population correction; Cochran, *Sampling Techniques*, §7.2).
  - ``target="topics"``: the mean of ``h`` over the population the queries are drawn
    from, which the leaderboard's bootstrap over queries also aims at. The variance adds
    the sampling of the queries: ``(1/n − 1/N)·S²(h − λf) + S²(h)/N``.

  Both variances are minimised by ``λ* = S(h, f) / S²(f)``, estimated on the audited
  units and clipped to [0, 1]. The interval is Student's t (``interval="t"``, the
  default: audits of a few queries are common, and the z quantile then under-covers) or
  the normal one (``interval="z"``). With a fixed λ, ``S²(h − λf)`` has ``n − 1``
  degrees of freedom; a tuned λ is a fitted slope, so, as for survey sampling's
  regression estimator, the residual variance divides by ``n − 2`` and t has ``n − 2``
  degrees of freedom (the benchmark showed the ``n − 1`` version under-covering with
  ten audited queries). A tuned λ also moves with the audit, and extreme LLM scores pull
  the fitted slope: with λ tuned the variance is the larger of that linearised one and
  the delete-one jackknife's (Quenouille–Tukey; each replicate tunes λ again), times the
  same finite-population correction. With five audited queries of 25 the linearised
  variance alone covered 92.3% of the time; with the jackknife, see docs/benchmarks.md.

What :func:`audited_mean` assumes: the audited units are a simple random sample of the
``N`` units (or a Bernoulli sample, analysed given its size), chosen independently of
every grade; ``h`` of an audited unit is exactly the human score, so a unit is a query
only if every pooled pair of an audited query has a human grade; and the LLM-filled
``f`` of every unit, audited or not, is computed the same way. Nothing is assumed about
the LLM: a biased or useless LLM makes the interval wider (λ → 0), never wrong.

The same functions estimate a *difference* of two runs' means: pass the per-query
differences ``h_a − h_b`` and ``f_a − f_b``.

Edge cases (see the tests): no audited unit gives a NaN estimate and interval (nothing
can correct the LLM); every unit audited gives the human mean itself, with a point
interval for ``"collection"`` and the classical interval for ``"topics"``; one audited
unit of several gives the plain-PPI estimate and an infinite interval (λ is tuned from
three audited units or more; with fewer, ``lam=None`` uses 1, plain PPI); one unit in
all, audited, is exact for ``"collection"``. An LLM score that is constant on the
audited units gives λ* = 0. Non-finite scores and mismatched lengths raise ValueError.

A zero-width or infinite interval says why in ``degenerate``: :data:`EXACT` (everything
audited: the point is the truth), :data:`NO_SPREAD` (the audited units' ``h − λf`` are
all equal, e.g. every audited query scores 1 by humans and the LLM alike: the variance
estimate is 0, which measures nothing — a few audited queries that happen to agree are
no proof that the LLM never errs — so callers show no interval rather than a point),
:data:`ONE_AUDITED` (infinite), :data:`CLIPPED` (the interval lay wholly beyond the
measure's range and was clipped to one end).

A bounded measure (``bounds``, e.g. (0, 1) for nDCG, AP or P@k: see
:func:`metrics.engine.measures.score_bounds`): the CLT interval is symmetric around the
estimate and knows nothing of the range, so near 0 or 1 it can reach past it (and the
difference estimator itself can, when the LLM-filled mean is near the edge and the audit
corrects it outwards). :func:`audited_mean` then clips the point estimate and both ends
of the interval to the range. Clipping the interval changes no coverage (the true mean
lies in the range, so it lies in the interval exactly when it lies in the clipped one;
an interval wholly outside the range becomes a point at the nearer end, which covers no
less than before). Clipping the estimate is a projection onto the range: it is never
farther from the true mean than the unclipped estimate (slightly biased towards the
inside, never less accurate), and the estimate stays within its own interval. The
standard error and λ are those of the unclipped estimator; ``clipped`` says whether
anything was clipped. An infinite interval (one audited unit of several) stays
infinite: nothing is known, and the pages show no interval rather than the whole range.
Differences of runs have the range (low − high, high − low): pass it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

__all__ = [
    "CLIPPED",
    "EXACT",
    "NO_SPREAD",
    "ONE_AUDITED",
    "PPIEstimate",
    "audited_mean",
    "ppi_mean",
]

#: ``PPIEstimate.degenerate``: every unit audited (target ``collection``): the estimate is
#: the human mean itself, and the interval is a point because nothing is estimated.
EXACT = "exact"
#: The audited units' ``h − λf`` do not vary: the variance estimate is 0, which says the
#: audit cannot measure its own error, not that there is none.
NO_SPREAD = "no-spread"
#: One audited unit of several: no variance can be estimated (an infinite interval).
ONE_AUDITED = "one-audited"
#: The whole interval lay beyond the measure's range and was clipped to one end.
CLIPPED = "clipped"

Target = Literal["collection", "topics"]
Interval = Literal["t", "z"]


@dataclass(frozen=True)
class PPIEstimate:
    """A bias-corrected mean, its interval and what went into it."""

    estimate: float
    low: float
    high: float
    lam: float  # the weight given to the LLM-filled scores (0: human only, 1: plain PPI)
    std_error: float
    labelled: int  # units with a human score (the audit)
    units: int  # all units (for ppi_mean: labelled + unlabelled)
    clipped: bool = False  # the estimate or an end of the interval was clipped to ``bounds``
    #: Why the interval has zero or infinite width ("" when it is a real interval):
    #: :data:`EXACT`, :data:`NO_SPREAD`, :data:`ONE_AUDITED` or :data:`CLIPPED`.
    degenerate: str = ""

    @property
    def half_width(self) -> float:
        """Return half the interval's width."""
        return (self.high - self.low) / 2.0


def _vector(values: npt.ArrayLike, name: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name}: every score must be finite")
    return array


def _check_level(alpha: float) -> None:
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha: must lie strictly between 0 and 1")


def ppi_mean(
    labels: npt.ArrayLike,
    predictions: npt.ArrayLike,
    unlabelled_predictions: npt.ArrayLike,
    *,
    lam: float | None = None,
    alpha: float = 0.05,
) -> PPIEstimate:
    """Return the PPI / PPI++ mean of i.i.d. labelled and separate unlabelled units.

    ``labels`` and ``predictions`` are aligned (the labelled units);
    ``unlabelled_predictions`` are the other units' predictions. ``lam=None`` tunes λ
    as PPI++ does (clipped to [0, 1]); ``lam=0`` gives the classical mean of the labels
    and its CLT interval, ``lam=1`` plain PPI. The interval is the normal (z) one, with
    standard deviations over ``n`` and ``N`` (no degrees-of-freedom correction), as in
    the ``ppi_python`` package.
    """
    _check_level(alpha)
    y = _vector(labels, "labels")
    yhat = _vector(predictions, "predictions")
    unl = _vector(unlabelled_predictions, "unlabelled_predictions")
    if y.size != yhat.size:
        raise ValueError("labels and predictions: lengths differ")
    n, big_n = int(y.size), int(unl.size)
    if n == 0 or big_n == 0:
        nan = float("nan")
        return PPIEstimate(nan, nan, nan, nan, nan, n, n + big_n)
    if lam is None:
        centred_y = y - y.mean()
        centred_f = yhat - yhat.mean()
        covariance = float(centred_y @ centred_f) / n
        everything = np.concatenate([yhat, unl])
        variance = float(np.var(everything, ddof=1)) if everything.size > 1 else 0.0
        tuned = covariance / ((1.0 + n / big_n) * variance) if variance > 0 else 0.0
        lam = float(np.clip(tuned, 0.0, 1.0))
    estimate = lam * float(unl.mean()) + float((y - lam * yhat).mean())
    std_error = math.sqrt(float(np.var(lam * unl)) / big_n + float(np.var(y - lam * yhat)) / n)
    z = float(stats.norm.ppf(1.0 - alpha / 2.0))
    return PPIEstimate(
        estimate=estimate,
        low=estimate - z * std_error,
        high=estimate + z * std_error,
        lam=float(lam),
        std_error=std_error,
        labelled=n,
        units=n + big_n,
    )


def _jackknife_variance(f: np.ndarray, h: np.ndarray, f_mean: float) -> float:
    """Return the delete-one jackknife variance of the tuned-λ estimate (no fpc).

    Replicate ``i`` leaves audited unit ``i`` out, tunes λ again on the others (clipped
    to [0, 1]; 0 when their ``f`` is constant) and recomputes ``λ·f_mean +
    mean(h − λ·f)``; the variance is ``(n − 1)/n · Σ (θ_i − θ̄)²``. Computed from
    leave-one-out sums of the centred scores, so it is O(n). Needs n ≥ 3.
    """
    n = f.size
    m = n - 1
    fc = f - f.mean()
    hc = h - h.mean()
    # leave-one-out means, and sums of squares and products about them
    mf = -fc / m
    mh = -hc / m
    sff = float(fc @ fc) - fc * fc - m * mf * mf
    shf = float(hc @ fc) - hc * fc - m * mh * mf
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = np.where(sff > 1e-15 * max(float(fc @ fc), 1e-300), shf / sff, 0.0)
    lam = np.clip(slope, 0.0, 1.0)
    # θ_i = λ_i·f_mean + mean_i(h) − λ_i·mean_i(f), with means of the uncentred scores
    theta = lam * f_mean + (h.mean() + mh) - lam * (f.mean() + mf)
    return float((m / n) * np.sum((theta - theta.mean()) ** 2))


def audited_mean(
    llm: npt.ArrayLike,
    human: npt.ArrayLike,
    audited: npt.ArrayLike,
    *,
    lam: float | None = None,
    alpha: float = 0.05,
    target: Target = "collection",
    interval: Interval = "t",
    bounds: tuple[float, float] | None = None,
) -> PPIEstimate:
    """Return the bias-corrected mean of ``human`` over all units, from an audited subset.

    ``llm`` holds every unit's LLM-filled score; ``audited`` is a boolean mask of the
    units with a human score; ``human`` is aligned with ``llm`` and read only where
    ``audited`` is true (anything, NaN included, elsewhere). ``lam=None`` tunes λ (the
    variance-minimising ``S(h, f)/S²(f)`` on the audited units, clipped to [0, 1]; plain
    PPI, λ = 1, below three audited units);
    ``lam=0`` is the human-only mean of the audited units, ``lam=1`` plain PPI.
    ``bounds`` ``(low, high)``: the range every score lies in; the estimate and the
    interval are clipped to it (module docstring). See the module docstring for the two
    targets, the assumptions and the edge cases.
    """
    _check_level(alpha)
    if bounds is not None and not (
        len(bounds) == 2 and math.isfinite(bounds[0]) and math.isfinite(bounds[1])
        and bounds[0] < bounds[1]
    ):  # fmt: skip
        raise ValueError("bounds: give (low, high), finite, with low < high")
    return _clip(
        _audited_mean(llm, human, audited, lam=lam, alpha=alpha, target=target, interval=interval),
        bounds,
    )


def _clip(result: PPIEstimate, bounds: tuple[float, float] | None) -> PPIEstimate:
    """Return ``result`` with its estimate and interval clipped to ``bounds`` (NaN stays)."""
    if bounds is None or math.isnan(result.estimate):
        return result
    low, high = float(bounds[0]), float(bounds[1])

    def clip(value: float) -> float:
        return value if math.isinf(value) else min(max(value, low), high)

    clipped = PPIEstimate(
        estimate=clip(result.estimate),
        low=clip(result.low),
        high=clip(result.high),
        lam=result.lam,
        std_error=result.std_error,
        labelled=result.labelled,
        units=result.units,
        degenerate=result.degenerate,
    )
    moved = (clipped.estimate, clipped.low, clipped.high) != (
        result.estimate,
        result.low,
        result.high,
    )
    degenerate = clipped.degenerate
    if moved and not degenerate and clipped.low == clipped.high:
        degenerate = CLIPPED
    return replace(clipped, clipped=moved, degenerate=degenerate)


def _audited_mean(
    llm: npt.ArrayLike,
    human: npt.ArrayLike,
    audited: npt.ArrayLike,
    *,
    lam: float | None,
    alpha: float,
    target: Target,
    interval: Interval,
) -> PPIEstimate:
    """Compute :func:`audited_mean` without ``bounds``."""
    _check_level(alpha)
    if target not in ("collection", "topics"):
        raise ValueError("target: must be 'collection' or 'topics'")
    if interval not in ("t", "z"):
        raise ValueError("interval: must be 't' or 'z'")
    f_all = _vector(llm, "llm")
    mask = np.asarray(audited, dtype=bool).reshape(-1)
    raw_human = np.asarray(human, dtype=np.float64).reshape(-1)
    if mask.size != f_all.size or raw_human.size != f_all.size:
        raise ValueError("llm, human and audited: lengths differ")
    h = _vector(raw_human[mask], "human (audited units)")
    f = f_all[mask]
    n, big_n = int(h.size), int(f_all.size)
    nan = float("nan")
    if n == 0:
        return PPIEstimate(nan, nan, nan, nan, nan, 0, big_n)
    fitted = 0  # parameters estimated from the audit besides the mean (λ when tuned)
    if lam is None:
        if n < 3:
            lam = 1.0
        else:
            fitted = 1
            variance = float(np.var(f, ddof=1))
            covariance = float(np.cov(h, f, ddof=1)[0, 1]) if variance > 0 else 0.0
            lam = float(np.clip(covariance / variance, 0.0, 1.0)) if variance > 0 else 0.0
    elif not 0.0 <= lam <= 1.0:
        raise ValueError("lam: must lie in [0, 1]")
    rectifier = h - lam * f
    estimate = lam * float(f_all.mean()) + float(rectifier.mean())
    if n == big_n:
        # Everything audited: the estimate is the human mean whatever λ is.
        estimate = float(h.mean())
        if target == "collection":
            return PPIEstimate(
                estimate, estimate, estimate, float(lam), 0.0, n, big_n, degenerate=EXACT
            )
    if n < 2:
        return PPIEstimate(
            estimate, -math.inf, math.inf, float(lam), math.inf, n, big_n, degenerate=ONE_AUDITED
        )
    variance = (1.0 / n - 1.0 / big_n) * float(np.var(rectifier, ddof=1 + fitted))
    if fitted:
        # λ estimated from the audit varies with it: the delete-one jackknife sees that
        # (and the leverage of extreme LLM scores) where the linearised variance does not.
        jackknife = (1.0 - n / big_n) * _jackknife_variance(f, h, float(f_all.mean()))
        variance = max(variance, jackknife)
    if target == "topics":
        variance += float(np.var(h, ddof=1)) / big_n
    std_error = math.sqrt(max(variance, 0.0))
    if interval == "t":
        quantile = float(stats.t.ppf(1.0 - alpha / 2.0, df=n - 1 - fitted))
    else:
        quantile = float(stats.norm.ppf(1.0 - alpha / 2.0))
    # Equal scores give a variance of rounding noise (1e-33), not 0: the same thing.
    flat = std_error <= _FLAT * max(1.0, abs(estimate), float(np.abs(h).max()))
    return PPIEstimate(
        estimate=estimate,
        low=estimate - quantile * std_error,
        high=estimate + quantile * std_error,
        lam=float(lam),
        std_error=std_error,
        labelled=n,
        units=big_n,
        degenerate=NO_SPREAD if flat else "",
    )


#: A standard error at most this, relative to the scores' size, is no spread at all.
_FLAT = 1e-12
