"""Rank correlations between two orderings of the same items (numpy/scipy, no Django).

Both functions take two 1-D arrays of scores aligned by item (run *i*'s mean score under
two judgment lists, or query *i*'s NDCG@10 under two labellings); higher scores rank
higher. They answer "do the two scorings order the items alike?":

* :func:`kendall_tau_b` — Kendall's τ-b (ties corrected), symmetric, computed by
  :func:`scipy.stats.kendalltau`;
* :func:`tau_ap` — the AP rank correlation τ_AP of Yilmaz, Aslam & Robertson (SIGIR
  2008), which weighs disagreements near the top of the reference ranking more heavily
  and is therefore not symmetric: it asks how well ``estimated`` reproduces the order of
  ``reference``.

Edge cases: NaN or infinite scores and arrays of different lengths or not 1-D raise
:class:`ValueError` (decide what a missing score means before correlating). Fewer than
two items, or (for τ-b) one of the orderings tying every item, make the coefficient
undefined: the functions return NaN and emit a :class:`RankCorrelationUndefinedWarning`
saying why.
"""

from __future__ import annotations

import warnings

import numpy as np
import numpy.typing as npt
from scipy import stats

__all__ = ["RankCorrelationUndefinedWarning", "kendall_tau_b", "tau_ap"]

FloatArray = npt.NDArray[np.float64]


class RankCorrelationUndefinedWarning(RuntimeWarning):
    """A rank correlation is undefined for the data; NaN was returned."""


def _undefined(reason: str) -> float:
    """Warn that the coefficient is undefined because of ``reason``; return NaN."""
    warnings.warn(reason, RankCorrelationUndefinedWarning, stacklevel=3)
    return float("nan")


def _pair(x: npt.ArrayLike, y: npt.ArrayLike, names: tuple[str, str]) -> tuple[FloatArray, ...]:
    """Return ``x`` and ``y`` as finite 1-D float64 arrays of one length, or raise ValueError."""
    arrays = []
    for name, values in zip(names, (x, y), strict=True):
        try:
            arr = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{name} must be numeric: {exc}") from None
        if arr.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array; got shape {arr.shape}.")
        if not np.isfinite(arr).all():
            raise ValueError(f"{name} must hold finite scores (no NaN or infinity).")
        arrays.append(arr)
    if arrays[0].size != arrays[1].size:
        raise ValueError(
            f"{names[0]} and {names[1]} must have equal lengths; "
            f"got {arrays[0].size} and {arrays[1].size}."
        )
    return tuple(arrays)


def kendall_tau_b(x: npt.ArrayLike, y: npt.ArrayLike) -> float:
    """Return Kendall's τ-b between the orderings of the items by ``x`` and by ``y``.

    τ-b = (C - D) / sqrt((C + D + T_x) (C + D + T_y)) over all item pairs, with C
    concordant and D discordant pairs and T_x (T_y) the pairs tied in ``x`` only (``y``
    only); 1 for the same order, -1 for the reverse. Symmetric in ``x`` and ``y``.

    NaN with a :class:`RankCorrelationUndefinedWarning` for fewer than two items, or when
    ``x`` or ``y`` ties every item (the denominator is 0).
    """
    a, b = _pair(x, y, ("x", "y"))
    if a.size < 2:
        return _undefined(f"Kendall's tau-b is undefined for fewer than two items ({a.size}).")
    for name, values in (("x", a), ("y", b)):
        if np.all(values == values[0]):
            return _undefined(
                f"Kendall's tau-b is undefined: every item has the same score in {name}."
            )
    return float(stats.kendalltau(a, b, variant="b").statistic)


def tau_ap(estimated: npt.ArrayLike, reference: npt.ArrayLike) -> float:
    """Return the AP rank correlation τ_AP of ``estimated`` against ``reference``.

    Yilmaz, Aslam & Robertson, "A new rank correlation coefficient for information
    retrieval", SIGIR 2008, eq. (3): with the N items sorted by ``estimated`` (best
    first) and C(i) the number of items above position i that ``reference`` also ranks
    above the item at position i,

        τ_AP = 2 / (N - 1) · Σ_{i=2..N} C(i) / (i - 1)  −  1.

    1 when ``estimated`` orders the items as ``reference`` does, -1 for the reverse. A
    swap near the top costs more than one near the bottom, and τ_AP(x, y) ≠ τ_AP(y, x)
    in general: ``reference`` is the ordering taken as the truth (e.g. the leaderboard
    under human labels).

    Ties (the paper assumes none): items tied in ``estimated`` are placed in their input
    order, and an item pair tied in either array counts ½ towards C(i) (neither
    concordant nor discordant). Without ties this is exactly the published definition.

    NaN with a :class:`RankCorrelationUndefinedWarning` for fewer than two items.
    """
    est, ref = _pair(estimated, reference, ("estimated", "reference"))
    n = est.size
    if n < 2:
        return _undefined(f"tau_AP is undefined for fewer than two items ({n}).")
    order = np.argsort(-est, kind="stable")
    e, r = est[order], ref[order]
    # above[i, j]: item j is placed above item i (j < i in the estimated order).
    above = np.tril(np.ones((n, n), dtype=bool), k=-1)
    strictly_above = (e[None, :] > e[:, None]) & (r[None, :] > r[:, None])
    tied = (e[None, :] == e[:, None]) | (r[None, :] == r[:, None])
    credit = np.where(strictly_above, 1.0, np.where(tied, 0.5, 0.0))
    correct = (credit * above).sum(axis=1)[1:]
    return float(2.0 / (n - 1) * np.sum(correct / np.arange(1, n)) - 1.0)
