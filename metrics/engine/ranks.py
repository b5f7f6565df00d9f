"""How sure a leaderboard is of each rank: rank intervals and tiers (pure numpy).

A leaderboard ranks runs by their mean over a sample of queries. Two figures say how far
that order can be trusted (MTEB found 176 of its 180 adjacent ranks not separable,
embeddings-benchmark/mteb#5208):

* **Rank interval.** The queries are resampled with replacement exactly as
  :func:`metrics.engine.uncertainty.leaderboard_uncertainty` does (same seed, same
  multinomial draws, so the two agree). In each resample every run gets a rank by its
  resampled mean; the run's interval is the ``confidence`` percentile interval of those
  ranks (the lower end from the best rank it could have in each resample, the upper end
  from the worst, so ties widen it). A rank's bootstrap distribution can be so skewed
  (a run just ahead of many runs, each of which wins most resamples) that the percentile
  interval misses the rank shown; the interval is then stretched to hold the observed
  rank, so no run is shown with an interval that excludes its own rank.
* **Tiers.** Walking the leaderboard best first, a run opens a new tier only when it is
  significantly below *every* run of the current tier: the mean of each of them is
  higher and the paired t-test of the pair (the leaderboard's own test, two-sided) has a
  Holm-adjusted p-value at most ``alpha``. Holm's family is every pair of runs
  (n(n-1)/2 tests), so the tiers rest on the same decisions as a table of all pairwise
  significant differences. Otherwise the run joins the current tier. Tiers are numbered
  1, 2, … in leaderboard order, and each tier is a run of consecutive ranks.

  The rule is greedy and one-sided on purpose: a run is never put above a run it cannot
  be told apart from, and the first run of a new tier is distinguishable from everything
  in the tier above it. Runs two tiers apart are therefore usually, but not necessarily,
  significantly different (significance is not transitive).

Edge cases:

* No runs: empty results. One run: rank interval (1, 1), tier 1.
* Ties in mean: in each resample a run's best rank is 1 + the number of runs strictly
  ahead and its worst is the number of runs ahead or level (itself included); means
  within a relative 1e-12 of each other count as level. Two runs with identical
  per-query scores have p = 1 and share a tier.
* Fewer than two queries: no paired test is possible, so every run is in tier 1. With
  one query every resample is that query, so each rank interval is the range of ranks
  the run's ties allow; with none, every run could hold any rank: (1, n).
* NaN or infinite scores, a matrix that is not 2-D, or ``order`` that is not a
  permutation of the rows raise ValueError (score the queries a run leaves out, or drop
  them, before calling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from metrics.engine.stats import holm
from metrics.engine.uncertainty import _resample_counts

__all__ = ["RunRank", "leaderboard_ranks", "pairwise_p_values", "tiers"]

#: Means closer than this (relative to the largest absolute mean) count as level.
_TIE_RTOL = 1e-12


@dataclass(frozen=True)
class RunRank:
    """A run's observed rank, its rank interval and its tier (all 1-based)."""

    rank: int
    low: int
    high: int
    tier: int


def _validated(scores: npt.ArrayLike, order: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Return the score matrix and the order as arrays, or raise ValueError."""
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("scores must be a (runs × queries) matrix")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("every score must be finite (runs scored on the same queries)")
    ranked = np.asarray(order, dtype=np.int64).reshape(-1)
    if sorted(ranked.tolist()) != list(range(matrix.shape[0])):
        raise ValueError("order must list every run's row exactly once")
    return matrix, ranked


def pairwise_p_values(scores: npt.ArrayLike) -> np.ndarray:
    """Return the symmetric (runs × runs) matrix of paired two-sided t-test p-values.

    Row ``i`` against row ``j`` is :func:`metrics.engine.stats.paired_t_test` of the two
    runs' per-query scores, computed for all pairs at once: identical rows give p = 1,
    constant non-zero differences p = 0. The diagonal is 1. Fewer than two queries give
    NaN off the diagonal (no test is possible).
    """
    matrix = np.asarray(scores, dtype=np.float64)
    n_runs, n_queries = matrix.shape
    out = np.ones((n_runs, n_runs))
    if n_runs < 2:
        return out
    if n_queries < 2:
        out[~np.eye(n_runs, dtype=bool)] = np.nan
        return out
    for i in range(n_runs - 1):
        diff = matrix[i] - matrix[i + 1 :]  # (n_runs - i - 1, n_queries)
        mean = diff.mean(axis=1)
        sd = diff.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean / (sd / np.sqrt(n_queries))
        p = 2.0 * sps.t.sf(np.abs(t), n_queries - 1)
        p = np.where(np.all(diff == 0.0, axis=1), 1.0, p)
        out[i, i + 1 :] = p
        out[i + 1 :, i] = p
    return out


def tiers(scores: npt.ArrayLike, order: npt.ArrayLike, *, alpha: float = 0.05) -> list[int]:
    """Return each run's tier (1-based), listed in ``order`` (best first).

    ``scores`` is ``(n_runs, n_queries)``; ``order`` lists the row indices best first. A
    run opens a new tier when, against every run of the current tier, its mean is lower
    and the Holm-adjusted paired t-test p-value (family: all pairs) is at most ``alpha``.
    See the module docstring for the edge cases.
    """
    matrix, ranked = _validated(scores, order)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha}")
    n_runs, n_queries = matrix.shape
    if n_runs == 0:
        return []
    if n_queries < 2:
        return [1] * n_runs
    raw = pairwise_p_values(matrix)
    upper = np.triu_indices(n_runs, k=1)
    adjusted = np.ones((n_runs, n_runs))
    if n_runs > 1:
        adjusted[upper] = holm(np.clip(raw[upper], 0.0, 1.0))
        adjusted.T[upper] = adjusted[upper]
    means = matrix.mean(axis=1)
    separated = (adjusted <= alpha) & (means[:, None] > means[None, :])  # row above column
    out = [1]
    members = [int(ranked[0])]
    for run in ranked[1:].tolist():
        if all(separated[m, run] for m in members):
            out.append(out[-1] + 1)
            members = [run]
        else:
            out.append(out[-1])
            members.append(run)
    return out


def _level(boot: np.ndarray) -> np.ndarray:
    """Return ``boot`` rounded so that means within the tie tolerance compare equal."""
    scale = float(np.max(np.abs(boot))) if boot.size else 0.0
    if scale == 0.0:
        return boot
    return np.round(boot / (scale * _TIE_RTOL)) * (scale * _TIE_RTOL)


def leaderboard_ranks(
    scores: npt.ArrayLike,
    order: npt.ArrayLike,
    *,
    confidence: float = 0.95,
    resamples: int = 1000,
    seed: int = 0,
) -> list[RunRank]:
    """Return every run's observed rank, rank interval and tier, listed in ``order``.

    The observed rank is the position in ``order`` (1 for ``order[0]``). The interval is
    the ``confidence`` percentile interval of the run's rank over the paired bootstrap
    resamples of the queries (``resamples``, ``seed``: the draws of
    :func:`metrics.engine.uncertainty.leaderboard_uncertainty`), stretched to hold the
    observed rank; tiers use ``alpha = 1 - confidence`` (:func:`tiers`). The same seed
    gives the same figures.
    """
    matrix, ranked = _validated(scores, order)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1; got {confidence}")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1; got {resamples}")
    n_runs, n_queries = matrix.shape
    if n_runs == 0:
        return []
    grouped = tiers(matrix, ranked, alpha=1.0 - confidence)
    if n_queries == 0:  # nothing is known: any run could hold any rank
        return [RunRank(rank=i, low=1, high=n_runs, tier=t) for i, t in enumerate(grouped, start=1)]
    counts = _resample_counts(n_queries, resamples, seed).astype(np.float64)
    boot = _level(matrix @ counts.T / n_queries)  # (runs, resamples)
    # Per resample: best rank = 1 + runs strictly ahead; worst = runs ahead or level.
    ordered = -boot
    best = sps.rankdata(ordered, method="min", axis=0)
    worst = sps.rankdata(ordered, method="max", axis=0)
    tail = (1.0 - confidence) / 2.0
    low = np.quantile(best, tail, axis=1, method="lower")
    high = np.quantile(worst, 1.0 - tail, axis=1, method="higher")
    out = []
    for position, (row, tier) in enumerate(zip(ranked.tolist(), grouped, strict=True), start=1):
        out.append(
            RunRank(
                rank=position,
                low=int(min(low[row], position)),
                high=int(max(high[row], position)),
                tier=tier,
            )
        )
    return out
