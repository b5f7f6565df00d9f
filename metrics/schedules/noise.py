"""Is a change between two snapshots beyond noise? Numbers in, a verdict out.

Quepid e-mails when a scheduled score drops; a mean over 50 topics moves every night by
chance (an index that took in new documents, ties broken another way, a shard that
answered late). An alert here fires only when the leaderboard's own test says the two
snapshots differ: the paired t-test of the per-query differences at the leaderboard's
level (``alpha``, 0.05) *and* the paired bootstrap interval of the mean difference
(BCa, ``1 - alpha``) excludes 0, in the direction watched (a drop, by default).

Edge cases: fewer than two shared, finite query scores give ``fired=False`` with the
reason; identical scores give p = 1 and the interval (0, 0); non-finite values are left
out pairwise (a query one snapshot could not score is not a change).

No Django here: tested without a database (tests/metrics/schedules/test_noise.py) and
run over hundreds of simulated schedules (benchmarks/alerts.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.engine import stats

#: The leaderboard's level (metrics.selectors.BOOTSTRAP_CONFIDENCE = 0.95).
ALPHA = 0.05
#: Bootstrap resamples of the interval (the compare page uses 10,000; an alert is
#: decided once per snapshot, so the same).
RESAMPLES = 10_000
#: What an alert watches: a drop (the default), a rise, or either.
DIRECTIONS = ("drop", "rise", "either")


@dataclass(frozen=True)
class Verdict:
    """What one check of a snapshot against its baseline found.

    ``mean_change`` is after − before (a drop is negative); ``low``/``high`` its interval;
    ``p_value`` the paired t-test's (two-sided). ``fired`` is True exactly when
    ``p_value <= alpha``, the interval excludes 0 and the change goes the watched way.
    ``reason`` says why in one sentence either way.
    """

    fired: bool
    queries: int
    mean_before: float | None
    mean_after: float | None
    mean_change: float | None
    low: float | None
    high: float | None
    p_value: float | None
    alpha: float
    reason: str


def judge_change(
    before: npt.ArrayLike,
    after: npt.ArrayLike,
    *,
    alpha: float = ALPHA,
    direction: str = "drop",
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> Verdict:
    """Decide whether ``after`` (per-query scores) differs from ``before`` beyond noise.

    ``before[i]`` and ``after[i]`` are one query's scores; pairs with a non-finite value
    are left out. ``direction`` is one of :data:`DIRECTIONS`. Raise ValueError for
    unequal lengths, an unknown direction or ``alpha`` outside (0, 1).
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {', '.join(DIRECTIONS)}; got {direction!r}")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha}")
    x = np.asarray(before, dtype=float).ravel()
    y = np.asarray(after, dtype=float).ravel()
    if x.shape != y.shape:
        raise ValueError(f"before and after differ in length ({x.size} and {y.size})")
    keep = np.isfinite(x) & np.isfinite(y)
    x, y = x[keep], y[keep]
    if x.size < 2:
        return Verdict(
            fired=False,
            queries=int(x.size),
            mean_before=float(x.mean()) if x.size else None,
            mean_after=float(y.mean()) if y.size else None,
            mean_change=float((y - x).mean()) if x.size else None,
            low=None,
            high=None,
            p_value=None,
            alpha=alpha,
            reason=f"Not tested: the snapshots share {x.size} scored "
            f"quer{'y' if x.size == 1 else 'ies'}; a paired test needs at least two.",
        )
    change = float((y - x).mean())
    t = stats.paired_t_test(y, x)
    ci = stats.bootstrap_ci(y, x, confidence=1.0 - alpha, resamples=resamples, seed=seed)
    p = float(t.p_value)
    excludes = ci.low > 0.0 or ci.high < 0.0
    way = "drop" if change < 0 else "rise"
    watched = direction == "either" or direction == way
    fired = bool(p <= alpha and excludes and watched and change != 0.0)
    shown = f"{change:+.4f} (interval {ci.low:+.4f} to {ci.high:+.4f}, p = {p:.3g})"
    if fired:
        reason = f"A {way} beyond noise: {shown} over {x.size} queries."
    elif change == 0.0:
        reason = f"No change over {x.size} queries."
    elif not watched:
        reason = f"A {way}, which this schedule does not watch: {shown}."
    elif p > alpha:
        reason = f"Within noise: {shown}; the paired t-test's p is above {alpha:g}."
    else:
        reason = f"Within noise: {shown}; the interval holds 0."
    return Verdict(
        fired=fired,
        queries=int(x.size),
        mean_before=float(x.mean()),
        mean_after=float(y.mean()),
        mean_change=change,
        low=float(ci.low),
        high=float(ci.high),
        p_value=p,
        alpha=alpha,
        reason=reason,
    )
