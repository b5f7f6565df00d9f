"""How sure a leaderboard is of its order: bootstrap intervals over queries (pure numpy).

A leaderboard ranks runs by their mean score over the queries. The queries are a sample,
so each mean, and each gap between two runs, has sampling error. Resampling the queries
with replacement (the bootstrap; Sakai, SIGIR 2006, for IR evaluation) gives

* per run, a percentile interval of its mean;
* per pair of runs next to each other, a percentile interval of the difference of their
  means, computed on the *same* resampled queries (paired), and the share of resamples in
  which the lower run scores higher; a pair whose interval holds 0 may be swapped;
* per pair, a two-sided paired t-test of the difference (``scipy.stats.ttest_rel``).

All runs share the same resamples: resample ``b`` draws each query ``counts[b, q]``
times (multinomial), so every run's resampled mean is one matrix product,
``scores @ counts.T / n_queries``, without materialising the resampled matrices.

Edge cases: with fewer than two queries there is nothing to resample; intervals are the
point (mean, mean) and p-values NaN. Runs must be scored on the same queries and every
score finite (ValueError otherwise). No runs give empty results.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

__all__ = ["PairUncertainty", "RunUncertainty", "leaderboard_uncertainty"]


@dataclass(frozen=True)
class RunUncertainty:
    """A run's mean score and the bootstrap percentile interval of it."""

    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class PairUncertainty:
    """A run against the run ranked just above it (``upper``, ``lower``: row indices)."""

    upper: int
    lower: int
    difference: float  # mean(upper) - mean(lower)
    low: float
    high: float
    swap_share: float  # share of resamples in which the lower run scores higher
    p_value: float  # paired t-test, two-sided

    @property
    def uncertain(self) -> bool:
        """Return whether the interval of the difference holds 0 (the order may swap)."""
        return self.low <= 0.0 <= self.high


def _resample_counts(n_queries: int, resamples: int, seed: int) -> np.ndarray:
    """Return ``(resamples, n_queries)`` draw counts, each row summing to ``n_queries``."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_queries, np.full(n_queries, 1.0 / n_queries), size=resamples)


def _t_test(a: np.ndarray, b: np.ndarray) -> float:
    """Return the two-sided paired t-test p-value (1 for identical, 0 for constant shifts)."""
    if np.array_equal(a, b):
        return 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_rel(a, b).pvalue)


def leaderboard_uncertainty(
    scores: npt.ArrayLike,
    order: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> tuple[list[RunUncertainty], list[PairUncertainty]]:
    """Return per-run intervals and per-adjacent-pair figures for a ranked leaderboard.

    ``scores`` is ``(n_runs, n_queries)``; ``order`` lists the row indices best first (the
    leaderboard's order). The run intervals are in row order; the pairs follow ``order``
    (``order[i]`` above ``order[i + 1]``). The same ``seed`` gives the same figures.
    """
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("scores must be a (runs × queries) matrix")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("every score must be finite (runs scored on the same queries)")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1; got {resamples}")
    ranked = np.asarray(order, dtype=np.int64)
    if sorted(ranked.tolist()) != list(range(matrix.shape[0])):
        raise ValueError("order must list every run's row exactly once")
    n_runs, n_queries = matrix.shape
    means = matrix.mean(axis=1) if n_queries else np.zeros(n_runs)
    if n_queries < 2:  # nothing to resample: point intervals, no test
        runs = [RunUncertainty(float(m), float(m), float(m)) for m in means]
        pairs = []
        for u, v in zip(ranked[:-1].tolist(), ranked[1:].tolist(), strict=True):
            gap = float(means[u] - means[v])
            pairs.append(PairUncertainty(u, v, gap, gap, gap, float(gap < 0), float("nan")))
        return runs, pairs
    counts = _resample_counts(n_queries, resamples, seed).astype(np.float64)
    boot = matrix @ counts.T / n_queries  # (runs, resamples)
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(boot, [tail, 100.0 - tail], axis=1)
    runs = [
        RunUncertainty(float(m), float(lo), float(hi))
        for m, lo, hi in zip(means, low, high, strict=True)
    ]
    pairs = []
    for u, v in zip(ranked[:-1].tolist(), ranked[1:].tolist(), strict=True):
        diff = boot[u] - boot[v]
        lo, hi = np.percentile(diff, [tail, 100.0 - tail])
        pairs.append(
            PairUncertainty(
                upper=u,
                lower=v,
                difference=float(means[u] - means[v]),
                low=float(lo),
                high=float(hi),
                swap_share=float(np.mean(diff < 0.0)),
                p_value=_t_test(matrix[u], matrix[v]),
            )
        )
    return runs, pairs
