"""How sure a leaderboard is of each rank: rank intervals and letter groups (pure numpy).

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
* **Groups (letters).** Two runs *cannot be told apart* when the paired t-test of their
  per-query scores (the leaderboard's own test, two-sided) has a Holm-adjusted p-value
  above ``alpha``; Holm's family is every pair of the board's runs (n(n-1)/2 tests), the
  same decisions as a table of all pairwise significant differences
  (:mod:`metrics.engine.pairs`). The runs get a compact letter display
  (:func:`metrics.engine.letters.letters`): two runs share a letter exactly when they
  cannot be told apart, and a run may hold several letters (``a, ab, bc, c`` when #1–#3
  differ but #1–#2, #2–#3 and #3–#4 do not). Letters are numbered from 0 ("a", the group
  holding #1) down the board. A run's *tier* is the number of its first letter, 1-based
  (tier 1 holds "a"); runs with the same tier share that letter, so they cannot be told
  apart, but runs with different tiers may still share another letter.

Edge cases:

* No runs: empty results. One run: rank interval (1, 1), letter "a" (tier 1).
* Ties in mean: in each resample a run's best rank is 1 + the number of runs strictly
  ahead and its worst is the number of runs ahead or level (itself included); means
  within a relative 1e-12 of each other count as level. Two runs with identical
  per-query scores have p = 1 and share every letter. Runs whose means are level but whose
  per-query scores differ get their paired test like any other pair.
* Fewer than two queries: no paired test is possible, so no pair differs and every run
  gets "a" alone. With one query every resample is that query, so each rank interval is
  the range of ranks the run's ties allow; with none, every run could hold any rank:
  (1, n).
* NaN or infinite scores, a matrix that is not 2-D, or ``order`` that is not a
  permutation of the rows raise ValueError (score the queries a run leaves out, or drop
  them, before calling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from metrics.engine.letters import differ_from_p, holm_matrix, letters
from metrics.engine.pairs import paired_t_matrix
from metrics.engine.uncertainty import _resample_counts

__all__ = [
    "RunRank",
    "adjusted_p_values",
    "leaderboard_ranks",
    "letter_groups",
    "pairwise_p_values",
]

#: Means closer than this (relative to the largest absolute mean) count as level.
_TIE_RTOL = 1e-12


@dataclass(frozen=True)
class RunRank:
    """A run's observed rank and rank interval (1-based) and its letters (0 = "a")."""

    rank: int
    low: int
    high: int
    groups: tuple[int, ...]

    @property
    def tier(self) -> int:
        """Return the number of the run's first letter, 1-based (1 = "a")."""
        return self.groups[0] + 1


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
    runs' per-query scores, computed for all pairs at once
    (:func:`metrics.engine.pairs.paired_t_matrix`): identical rows give p = 1, constant
    non-zero differences p = 0. The diagonal is 1. Fewer than two queries give NaN off
    the diagonal (no test is possible).
    """
    matrix = np.asarray(scores, dtype=np.float64)
    n_runs, n_queries = matrix.shape
    if n_runs < 2:
        return np.ones((n_runs, n_runs))
    if n_queries < 2:
        out = np.full((n_runs, n_runs), np.nan)
        np.fill_diagonal(out, 1.0)
        return out
    return paired_t_matrix(matrix).p


def adjusted_p_values(scores: npt.ArrayLike) -> np.ndarray:
    """Return the symmetric matrix of Holm-adjusted paired t-test p-values (all pairs).

    :func:`pairwise_p_values` corrected by :func:`metrics.engine.letters.holm_matrix`
    over every pair of rows. With fewer than two queries no test is possible: NaN off the
    diagonal.
    """
    raw = pairwise_p_values(scores)
    if raw.shape[0] > 1 and np.isnan(raw[0, 1]):
        return raw
    return holm_matrix(np.clip(raw, 0.0, 1.0))


def letter_groups(
    scores: npt.ArrayLike, order: npt.ArrayLike, *, alpha: float = 0.05
) -> list[tuple[int, ...]]:
    """Return each run's letters (0 = "a"), listed in ``order`` (best first).

    ``scores`` is ``(n_runs, n_queries)``; ``order`` lists the row indices best first.
    Two runs differ when their Holm-adjusted paired t-test p-value (family: all pairs)
    is at most ``alpha``; the letters are the compact letter display of those decisions
    (:func:`metrics.engine.letters.letters`). See the module docstring for the edge cases.
    """
    matrix, ranked = _validated(scores, order)
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha}")
    return letters(differ_from_p(adjusted_p_values(matrix), alpha), ranked)


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
    """Return every run's observed rank, rank interval and letters, listed in ``order``.

    The observed rank is the position in ``order`` (1 for ``order[0]``). The interval is
    the ``confidence`` percentile interval of the run's rank over the paired bootstrap
    resamples of the queries (``resamples``, ``seed``: the draws of
    :func:`metrics.engine.uncertainty.leaderboard_uncertainty`), stretched to hold the
    observed rank; the letters use ``alpha = 1 - confidence`` (:func:`letter_groups`). The
    same seed
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
    grouped = letter_groups(matrix, ranked, alpha=1.0 - confidence)
    if n_queries == 0:  # nothing is known: any run could hold any rank
        return [
            RunRank(rank=i, low=1, high=n_runs, groups=g) for i, g in enumerate(grouped, start=1)
        ]
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
    for position, (row, groups) in enumerate(zip(ranked.tolist(), grouped, strict=True), start=1):
        out.append(
            RunRank(
                rank=position,
                low=int(min(low[row], position)),
                high=int(max(high[row], position)),
                groups=groups,
            )
        )
    return out
