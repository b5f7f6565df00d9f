"""Significance tests for comparing two runs on the same queries.

Every function takes two paired per-query score arrays ``a`` and ``b`` (run A's and run
B's score on query *i* at position *i*) and looks at the differences ``d = a - b``; a
positive statistic means that run A scored higher.

Conventions shared by all tests (pure numpy/scipy, no Django):

* Inputs are converted to 1-D ``float64`` arrays. Unequal lengths, arrays that are not
  1-D, and NaN or infinite scores raise :class:`ValueError` (a NaN usually means that a
  metric was undefined for a query; decide what it should be before testing).
* A significance test needs at least two paired queries; fewer raise :class:`ValueError`.
  (:func:`wins_losses_ties` accepts any length.)
* When every difference is exactly zero the runs are indistinguishable: every test
  returns statistic 0 and p = 1.0 (never NaN), and the bootstrap interval is (0, 0).
* Randomised procedures take a ``seed`` and are reproducible for a given seed; pass
  ``seed=None`` for fresh entropy.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

__all__ = [
    "BootstrapInterval",
    "Comparison",
    "RandomizationResult",
    "TestResult",
    "WinsLossesTies",
    "bootstrap_ci",
    "compare",
    "holm",
    "paired_t_test",
    "randomization_test",
    "wilcoxon_signed_rank",
    "wins_losses_ties",
]

FloatArray = npt.NDArray[np.float64]

#: Sign matrices of the randomization test are drawn at most this many cells at a time.
_CHUNK_CELLS = 500_000
#: Bootstrap resamples are evaluated at most this many cells at a time.
_BOOTSTRAP_CELLS = 4_000_000
_U64_MAX = np.iinfo(np.uint64).max
#: Relative tolerance (times sum |d|) below which two permutation sums count as equal.
_SUM_RTOL = 1e-10


@dataclass(frozen=True, slots=True)
class TestResult:
    """A test statistic and its two-sided p-value."""

    __test__ = False  # Not a pytest test class, despite the name.

    statistic: float
    p_value: float


@dataclass(frozen=True, slots=True)
class RandomizationResult:
    """Result of :func:`randomization_test`.

    ``statistic`` is the observed mean difference; ``exact`` tells whether all
    ``permutations`` sign assignments were enumerated (then ``permutations`` is 2**n)
    or that many were sampled at random.
    """

    statistic: float
    p_value: float
    permutations: int
    exact: bool


@dataclass(frozen=True, slots=True)
class BootstrapInterval:
    """A bootstrap confidence interval for the mean difference ``mean(a - b)``."""

    low: float
    high: float
    confidence: float
    method: str


@dataclass(frozen=True, slots=True)
class WinsLossesTies:
    """How many queries run A won, lost and tied against run B."""

    wins: int
    losses: int
    ties: int


@dataclass(frozen=True, slots=True)
class Comparison:
    """Everything :func:`compare` reports about run A against run B.

    Differences are ``a - b``: a positive ``mean_diff`` or ``t_statistic`` favours A.
    """

    n: int
    mean_a: float
    mean_b: float
    mean_diff: float
    t_statistic: float
    t_p_value: float
    wilcoxon_statistic: float
    wilcoxon_p_value: float
    randomization_p_value: float
    randomization_permutations: int
    randomization_exact: bool
    ci_low: float
    ci_high: float
    confidence: float
    wins: int
    losses: int
    ties: int


def _as_pair(
    a: npt.ArrayLike, b: npt.ArrayLike, *, min_n: int = 2
) -> tuple[FloatArray, FloatArray]:
    """Validate two paired score arrays and return them as 1-D float64 arrays.

    Raise ValueError if either is not 1-D, their lengths differ, they hold NaN or
    infinite values, or they have fewer than ``min_n`` entries.
    """
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"Scores must be 1-D arrays; got shapes {x.shape} and {y.shape}.")
    if x.shape != y.shape:
        raise ValueError(f"Paired scores need equal lengths; got {x.size} and {y.size} queries.")
    for name, arr in (("a", x), ("b", y)):
        bad = ~np.isfinite(arr)
        if bad.any():
            where = np.flatnonzero(bad)[:5].tolist()
            raise ValueError(
                f"Scores in {name!r} must be finite numbers; found NaN or infinity at "
                f"positions {where}{' …' if bad.sum() > 5 else ''}."
            )
    if x.size < min_n:
        raise ValueError(
            f"A paired significance test needs at least {min_n} queries; got {x.size}."
        )
    return x, y


def paired_t_test(a: npt.ArrayLike, b: npt.ArrayLike) -> TestResult:
    """Run a two-sided paired t-test of mean(a - b) = 0 (``scipy.stats.ttest_rel``).

    Edge cases: if every difference is zero, return t = 0 and p = 1.0 (scipy would
    give NaN). If the differences are constant but non-zero their variance is zero:
    t is ±inf and p = 0 (scipy's result). Raise ValueError for fewer than two
    queries, unequal lengths or non-finite scores.
    """
    x, y = _as_pair(a, b)
    if np.all(x == y):
        return TestResult(0.0, 1.0)
    with warnings.catch_warnings():
        # Zero-variance differences: scipy warns about precision loss and returns ±inf.
        warnings.simplefilter("ignore", RuntimeWarning)
        res = stats.ttest_rel(x, y)
    return TestResult(float(res.statistic), float(res.pvalue))


def wilcoxon_signed_rank(a: npt.ArrayLike, b: npt.ArrayLike) -> TestResult:
    """Run a two-sided Wilcoxon signed-rank test on a - b (``scipy.stats.wilcoxon``).

    Use scipy's defaults throughout: ``zero_method="wilcox"`` discards zero
    differences (tied queries carry no information about the direction), no
    continuity correction, and ``method="auto"`` (exact null distribution for up to
    50 non-zero differences without ties, otherwise exact permutations up to 13
    values and the normal approximation beyond). The statistic is scipy's two-sided
    one: the smaller of the positive-rank and negative-rank sums.

    Edge cases: if every difference is zero (nothing left after discarding zeros)
    return statistic 0 and p = 1.0. Raise ValueError for fewer than two queries,
    unequal lengths or non-finite scores.
    """
    x, y = _as_pair(a, b)
    if np.all(x == y):
        return TestResult(0.0, 1.0)
    res = stats.wilcoxon(x, y)
    return TestResult(float(res.statistic), float(res.pvalue))


def _count_extreme(flips: FloatArray, d: FloatArray, total: float, threshold: float) -> int:
    """Count rows of the 0/1 ``flips`` matrix whose sign-flipped sum is as extreme.

    Flipping the signs of the differences selected by a row turns ``sum(d)`` into
    ``total - 2 * (flips @ d)``.
    """
    sums = total - 2.0 * (flips @ d)
    return int(np.count_nonzero(np.abs(sums) >= threshold))


def randomization_test(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    permutations: int = 10_000,
    seed: int | None = 0,
) -> RandomizationResult:
    """Run Fisher's paired randomization (sign-flip) test, two-sided.

    Under the null hypothesis each query's pair of scores is exchangeable, so each
    difference is equally likely to carry either sign. The statistic is the mean
    difference; the p-value is the share of sign assignments whose mean difference
    is at least as far from zero as the observed one (ties within a relative
    tolerance of 1e-10 count as extreme, so floating-point noise cannot hide the
    observed assignment).

    * **Exact**: if 2**n <= ``permutations``, all 2**n sign assignments are
      enumerated (the observed one among them) and p = count / 2**n.
    * **Monte Carlo** otherwise: ``permutations`` random assignments are drawn with
      ``numpy.random.default_rng(seed)``, in chunks, vectorised; the observed
      assignment is counted once more, p = (count + 1) / (permutations + 1), which
      never reaches 0 and keeps the test valid (Phipson & Smyth 2010).

    This is what ``scipy.stats.permutation_test(..., permutation_type="samples")``
    computes with the same counting rules, but about 50 times faster for 1,000
    queries and 10,000 permutations (about 15 ms against 1 s, measured).

    Edge cases: if every difference is zero return statistic 0 and p = 1.0. Raise
    ValueError for fewer than two queries, unequal lengths, non-finite scores or
    ``permutations`` < 1.
    """
    x, y = _as_pair(a, b)
    if permutations < 1:
        raise ValueError(f"permutations must be at least 1; got {permutations}.")
    d = x - y
    n = d.size
    exact = n < 63 and (1 << n) <= permutations
    total_assignments = (1 << n) if exact else permutations
    if not np.any(d):
        return RandomizationResult(0.0, 1.0, total_assignments, exact)
    total = float(d.sum())
    threshold = abs(total) - _SUM_RTOL * float(np.abs(d).sum())
    statistic = total / n
    chunk = max(1, _CHUNK_CELLS // n)

    count = 0
    if exact:
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total_assignments, chunk):
            codes = np.arange(start, min(start + chunk, total_assignments), dtype=np.int64)
            flips = ((codes[:, np.newaxis] >> bits) & 1).astype(np.float64)
            count += _count_extreme(flips, d, total, threshold)
        return RandomizationResult(statistic, count / total_assignments, total_assignments, True)

    rng = np.random.default_rng(seed)
    n_words = (n + 63) // 64
    done = 0
    while done < permutations:
        rows = min(chunk, permutations - done)
        # Whole 64-bit draws per row: the stream, hence the result, ignores the chunking.
        raw = rng.integers(0, _U64_MAX, size=(rows, n_words), dtype=np.uint64, endpoint=True)
        flips = np.unpackbits(raw.view(np.uint8), axis=1, count=n).astype(np.float64)
        count += _count_extreme(flips, d, total, threshold)
        done += rows
    return RandomizationResult(statistic, (count + 1) / (permutations + 1), permutations, False)


def _mean_along(sample: FloatArray, axis: int = -1) -> FloatArray:
    """Return the mean along ``axis`` (the vectorised bootstrap statistic)."""
    return np.mean(sample, axis=axis)


def bootstrap_ci(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int | None = 0,
) -> BootstrapInterval:
    """Return a paired bootstrap confidence interval for the mean difference mean(a - b).

    Queries are resampled with replacement, keeping each query's two scores together
    (equivalently, the per-query differences are resampled), with
    ``scipy.stats.bootstrap`` and its default BCa (bias-corrected and accelerated)
    method, ``resamples`` resamples and ``rng=seed``. The result equals
    ``scipy.stats.bootstrap((a - b,), np.mean, method="BCa", ...)`` for the same seed.

    Edge cases: if all differences are equal (for example all zero) the bootstrap
    distribution is degenerate and BCa is undefined; return the point interval
    (c, c) for the common difference c, with ``method="degenerate"``. Should BCa
    still fail (NaN bounds, which scipy reports with a warning on pathological
    data), fall back to the percentile method and report ``method="percentile"``.
    Raise ValueError for fewer than two queries, unequal lengths, non-finite scores,
    ``confidence`` outside (0, 1) or ``resamples`` < 1.
    """
    x, y = _as_pair(a, b)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence}.")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1; got {resamples}.")
    d = x - y
    if np.all(d == d[0]):
        c = float(d[0])
        return BootstrapInterval(c, c, confidence, "degenerate")
    batch = max(1, _BOOTSTRAP_CELLS // d.size)
    for method in ("BCa", "percentile"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = stats.bootstrap(
                (d,),
                _mean_along,
                n_resamples=resamples,
                batch=batch,
                vectorized=True,
                confidence_level=confidence,
                method=method,
                rng=seed,
            )
        low, high = float(res.confidence_interval.low), float(res.confidence_interval.high)
        if np.isfinite(low) and np.isfinite(high):
            return BootstrapInterval(low, high, confidence, method)
    return BootstrapInterval(low, high, confidence, method)  # pragma: no cover - defensive


def wins_losses_ties(
    a: npt.ArrayLike, b: npt.ArrayLike, *, tolerance: float = 1e-12
) -> WinsLossesTies:
    """Count queries where run A beats, loses to, or ties with run B.

    A query is a tie when ``|a - b| <= tolerance`` (absolute), so floating-point
    noise in equal scores is not counted as a win. Any length, including zero, is
    accepted. Raise ValueError for unequal lengths, non-finite scores or a negative
    tolerance.
    """
    x, y = _as_pair(a, b, min_n=0)
    if tolerance < 0:
        raise ValueError(f"tolerance must be non-negative; got {tolerance}.")
    d = x - y
    wins = int(np.count_nonzero(d > tolerance))
    losses = int(np.count_nonzero(d < -tolerance))
    return WinsLossesTies(wins, losses, d.size - wins - losses)


def holm(p_values: Sequence[float] | npt.ArrayLike) -> FloatArray:
    """Return Holm–Bonferroni adjusted p-values, in the order given.

    With the m p-values sorted ascending, p_(1) <= … <= p_(m), the adjusted value is
    ``max over j <= i of min(1, (m - j + 1) * p_(j))``: monotone in the raw p-values
    and capped at 1. Rejecting the hypotheses whose adjusted value is <= alpha
    controls the family-wise error rate at alpha. An empty input gives an empty
    array. Raise ValueError for input that is not 1-D or holds values outside
    [0, 1] (including NaN).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1:
        raise ValueError(f"p_values must be a 1-D sequence; got shape {p.shape}.")
    if not np.all((p >= 0.0) & (p <= 1.0)):
        raise ValueError("p_values must all lie in [0, 1] (NaN is not a p-value).")
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m, dtype=np.float64)
    adjusted[order] = np.maximum.accumulate(scaled)
    return adjusted


def compare(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    permutations: int = 10_000,
    resamples: int = 10_000,
    confidence: float = 0.95,
    seed: int | None = 0,
    tolerance: float = 1e-12,
) -> Comparison:
    """Compare run A with run B on paired per-query scores, with every test above.

    Report the means, the mean difference (a - b), the paired t-test, the Wilcoxon
    signed-rank test, the randomization test (``permutations``, ``seed``), the BCa
    bootstrap interval of the mean difference (``confidence``, ``resamples``,
    ``seed``) and wins/losses/ties (``tolerance``). The edge cases are those of the
    individual functions: all-zero differences give p = 1.0 everywhere and the
    interval (0, 0); fewer than two queries, unequal lengths or non-finite scores
    raise ValueError.
    """
    x, y = _as_pair(a, b)
    t = paired_t_test(x, y)
    w = wilcoxon_signed_rank(x, y)
    r = randomization_test(x, y, permutations=permutations, seed=seed)
    ci = bootstrap_ci(x, y, confidence=confidence, resamples=resamples, seed=seed)
    wlt = wins_losses_ties(x, y, tolerance=tolerance)
    return Comparison(
        n=int(x.size),
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        mean_diff=float((x - y).mean()),
        t_statistic=t.statistic,
        t_p_value=t.p_value,
        wilcoxon_statistic=w.statistic,
        wilcoxon_p_value=w.p_value,
        randomization_p_value=r.p_value,
        randomization_permutations=r.permutations,
        randomization_exact=r.exact,
        ci_low=ci.low,
        ci_high=ci.high,
        confidence=confidence,
        wins=wlt.wins,
        losses=wlt.losses,
        ties=wlt.ties,
    )
