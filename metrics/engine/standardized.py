"""Standardized NDCG, the random-reranker baseline and ratio-based topic difficulty.

Implements Gienapp, Stein, Hagen and Potthast, "The Impact of Negative Relevance
Judgments on NDCG" (CIKM 2020).  For each query the *pool* is its set of judged
documents, with gains ``g`` (the grade itself for the linear gain, or
``2**grade - 1``).  Over the pool the gains have mean ``mu`` and standard
deviation ``sigma``; each gain is standardized as ``z = (g - mu) / sigma``.

* ``sNDCG@k = DCG'@k / IDCG'@k`` where ``DCG'`` sums the standardized gains of
  the ranking with the discount ``1 / log2(rank + 1)`` and ``IDCG'`` is the DCG'
  of the best reranking of the pool: its ``min(k, |pool|)`` largest standardized
  gains in decreasing order -- negative ones included when fewer than ``k`` lie
  above the mean (the ideal ranking is a permutation of the whole pool).
  ``IDCG' > 0`` whenever ``sigma > 0``.  sNDCG is 1 for an ideal ranking, 0 in
  expectation for a uniformly random reranking of the pool (every rank has
  expected standardized gain 0) and negative when worse than random.  It is at
  most 1 for any ranking of ``min(k, |pool|)`` distinct pool documents, but it is
  not bounded below by -1 (in a pool skewed to low grades the worst ranking's
  ``|DCG'|`` exceeds ``IDCG'``), and a ranking that stops before ``k`` while the
  ideal has to fill those ranks with below-mean documents can exceed 1.
* ``RNDCG@k = mu * sum_{r <= min(k, |pool|)} 1/log2(r + 1) / IDCG@k`` is the
  expected *plain* NDCG@k of a random reranking of the pool, with ``IDCG@k`` over
  the raw pool gains (the paper's formula, whose sum runs over the ``n`` ranks of
  the reranked pool; with a cutoff that is ``min(k, |pool|)``).
* ``difficulty(t)`` is the share of runs with ``sNDCG(t) > 0``, i.e. that beat
  the random reranker on topic ``t``: 1 is the easiest topic, 0 the hardest.

Conventions:

* ``sigma`` is the population standard deviation (``ddof=0``): the paper
  standardizes the gain distribution ``G(mu, sigma)`` of the pool itself.  The
  choice cannot change sNDCG (a ratio, invariant under scaling the gains, the
  paper's Lemma 1) nor difficulty; it only matters for :func:`pool_stats`.
* ``sigma == 0`` (all pool gains equal, including a one-document pool) or an
  empty pool: sNDCG and RNDCG are undefined and returned as NaN; difficulty of
  such a topic is NaN too.
* Unjudged retrieved documents follow the pooling convention the paper states
  (documents outside the pool "are considered irrelevant by default"): they get
  the raw gain ``unjudged_gain`` (default 0, the gain of an irrelevant grade),
  standardized with the pool's ``mu`` and ``sigma``, so they count below the
  mean whenever the pool has relevant documents.  ``unjudged_gain=None`` drops
  them instead (a condensed list).  They never enter ``mu``, ``sigma`` or IDCG'.
* A pool smaller than ``k``: IDCG' (and RNDCG's sum) run over the whole pool.
* An empty ranking scores ``DCG' = 0``, hence sNDCG 0 (when defined).
* Negative grades are kept as they are (they are the point of the paper): with
  the linear gain a grade of -2 has gain -2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "DIFFICULTY_CLASSES",
    "difficulty",
    "difficulty_class",
    "pool_stats",
    "rndcg",
    "sndcg",
]

Gain = Literal["linear", "exp"]

#: Names of the paper's four equal-width difficulty classes, from hardest to easiest.
DIFFICULTY_CLASSES: tuple[str, ...] = ("hard", "moderately hard", "moderately easy", "easy")


def _gain(labels: NDArray[np.float64], gain: Gain) -> NDArray[np.float64]:
    """Map relevance grades to gains (NaN stays NaN)."""
    if gain == "linear":
        return labels
    if gain == "exp":
        return np.exp2(labels) - 1.0
    raise ValueError(f"unknown gain {gain!r}; expected 'linear' or 'exp'")


def _discounts(n: int) -> NDArray[np.float64]:
    """Return ``1 / log2(r + 1)`` for ranks ``r = 1..n``."""
    return 1.0 / np.log2(np.arange(2, n + 2, dtype=np.float64))


def _pool_matrix(
    judged_labels: Sequence[ArrayLike], gain: Gain
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Return pool gains sorted descending, padded with NaN, and the pool sizes."""
    pools = [np.asarray(p, dtype=np.float64).reshape(-1) for p in judged_labels]
    sizes = np.array([p.size for p in pools], dtype=np.int64)
    width = int(sizes.max()) if sizes.size else 0
    mat = np.full((len(pools), width), -np.inf)
    if width:
        flat = np.concatenate(pools) if pools else np.empty(0)
        if np.isnan(flat).any():
            raise ValueError("judged_labels must not contain NaN")
        rows = np.repeat(np.arange(len(pools)), sizes)
        cols = np.arange(flat.size) - np.repeat(np.cumsum(sizes) - sizes, sizes)
        mat[rows, cols] = _gain(flat, gain)
        mat = -np.sort(-mat, axis=1)  # descending; -inf padding moves to the end
    mat[np.isinf(mat) & (mat < 0)] = np.nan
    return mat, sizes


def pool_stats(
    judged_labels: Sequence[ArrayLike], gain: Gain = "linear"
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Return the pool mean and population standard deviation of the gains per query.

    An empty pool gives NaN for both.  ``sigma`` is exactly 0 when all pool gains
    are equal.
    """
    mat, sizes = _pool_matrix(judged_labels, gain)
    return _stats(mat, sizes)


def _stats(
    mat: NDArray[np.float64], sizes: NDArray[np.int64]
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Compute mean and population sigma from the padded pool matrix."""
    n_q = mat.shape[0]
    mu = np.full(n_q, np.nan)
    sigma = np.full(n_q, np.nan)
    ok = sizes > 0
    if ok.any():
        m = mat[ok]
        mu[ok] = np.nansum(m, axis=1) / sizes[ok]
        dev = m - mu[ok][:, None]
        sigma[ok] = np.sqrt(np.nansum(dev * dev, axis=1) / sizes[ok])
        # All gains equal (max == min after the descending sort): exactly 0,
        # not a rounding residue of the mean.
        first = m[:, 0]
        last = m[np.arange(m.shape[0]), sizes[ok] - 1]
        sigma[ok] = np.where(first == last, 0.0, sigma[ok])
    return mu, sigma


def _check_ranking(
    ranked_labels: ArrayLike, n_ret: ArrayLike, n_pools: int
) -> tuple[NDArray[np.float64], NDArray[np.int64]]:
    """Validate and convert a padded ranking matrix and its lengths."""
    lab = np.asarray(ranked_labels, dtype=np.float64)
    if lab.ndim != 2:
        raise ValueError(f"ranked_labels must be 2-D (Q, depth), got shape {lab.shape}")
    n = np.asarray(n_ret, dtype=np.int64).reshape(-1)
    if n.shape != (lab.shape[0],) or n_pools != lab.shape[0]:
        raise ValueError(
            f"ranked_labels has {lab.shape[0]} queries, n_ret {n.size}, judged_labels {n_pools}"
        )
    if n.size and (n.min() < 0 or n.max() > lab.shape[1]):
        raise ValueError(f"n_ret must lie in [0, {lab.shape[1]}]")
    return lab, n


def sndcg(
    ranked_labels: ArrayLike,
    n_ret: ArrayLike,
    judged_labels: Sequence[ArrayLike],
    k: int | None = None,
    *,
    gain: Gain = "linear",
    unjudged_gain: float | None = 0.0,
) -> NDArray[np.float64]:
    """Return standardized NDCG@k per query.

    Args:
        ranked_labels: Float array ``(Q, depth)``: the grade of the document at each
            rank, NaN for an unjudged document; entries at ``i >= n_ret[q]`` are ignored.
        n_ret: Integer array ``(Q,)``: number of retrieved documents per query.
        judged_labels: One 1-D array of grades per query: the query's pool (every
            judged document, retrieved or not).
        k: Cutoff; ``None`` scores the whole ranking against the whole pool.
        gain: ``"linear"`` (gain = grade) or ``"exp"`` (gain = 2**grade - 1).
        unjudged_gain: Raw gain of an unjudged retrieved document (standardized with
            the pool's statistics); ``None`` removes unjudged documents from the
            ranking before the cutoff.

    Returns:
        Float array ``(Q,)``; NaN where the pool is empty or all its gains are equal.
    """
    mat, sizes = _pool_matrix(judged_labels, gain)
    lab, n = _check_ranking(ranked_labels, n_ret, len(sizes))
    n_q, depth = lab.shape
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    mu, sigma = _stats(mat, sizes)
    defined = sigma > 0  # False for NaN (empty pool) too

    in_list = np.arange(depth)[None, :] < n[:, None]
    unjudged = np.isnan(lab)
    if unjudged_gain is None:
        keep = in_list & ~unjudged
        order = np.argsort(~keep, axis=1, kind="stable")  # kept docs first, in order
        lab = np.take_along_axis(lab, order, axis=1)
        n = keep.sum(axis=1)
        in_list = np.arange(depth)[None, :] < n[:, None]
        unjudged = np.zeros_like(in_list)
    gains = _gain(lab, gain)
    if unjudged_gain is not None:
        gains = np.where(unjudged, unjudged_gain, gains)

    cut = depth if k is None else min(k, depth)
    disc = _discounts(max(cut, mat.shape[1]))
    safe_sigma = np.where(defined, sigma, 1.0)
    safe_mu = np.where(defined, mu, 0.0)
    z = (gains[:, :cut] - safe_mu[:, None]) / safe_sigma[:, None]
    z = np.where(in_list[:, :cut], z, 0.0)
    dcg = z @ disc[:cut]

    ideal_cut = mat.shape[1] if k is None else min(k, mat.shape[1])
    zi = (mat[:, :ideal_cut] - safe_mu[:, None]) / safe_sigma[:, None]
    zi = np.nan_to_num(zi, nan=0.0)  # padding beyond the pool
    idcg = zi @ disc[:ideal_cut]

    out = np.full(n_q, np.nan)
    out[defined] = dcg[defined] / idcg[defined]
    return out


def rndcg(
    judged_labels: Sequence[ArrayLike],
    k: int | None = None,
    *,
    gain: Gain = "linear",
) -> NDArray[np.float64]:
    """Return the expected plain NDCG@k of a random reranking of each query's pool.

    ``RNDCG@k = mu * sum_{r <= min(k, |pool|)} 1/log2(r+1) / IDCG@k``, with ``IDCG@k``
    over the raw pool gains (the best ``min(k, |pool|)`` of them, in decreasing
    order).  It depends on the judgments only, not on a run.

    Returns:
        Float array ``(Q,)``; NaN where the pool is empty or ``IDCG@k <= 0`` (no
        positive gain in the pool).  A pool of equal positive gains gives 1: every
        reranking is ideal.
    """
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    mat, sizes = _pool_matrix(judged_labels, gain)
    mu, _sigma = _stats(mat, sizes)
    width = mat.shape[1] if k is None else min(k, mat.shape[1])
    disc = _discounts(width)
    idcg = np.nan_to_num(mat[:, :width], nan=0.0) @ disc
    n_ranks = sizes if k is None else np.minimum(sizes, k)
    cum = np.concatenate(([0.0], np.cumsum(disc)))
    expected = np.where(sizes > 0, mu, 0.0) * cum[n_ranks]
    out = np.full(mat.shape[0], np.nan)
    ok = idcg > 0
    out[ok] = expected[ok] / idcg[ok]
    return out


def difficulty(sndcg_scores: ArrayLike) -> NDArray[np.float64]:
    """Return each topic's ratio-based difficulty over a set of runs.

    Args:
        sndcg_scores: Array ``(n_runs, Q)`` of sNDCG scores, one row per run that
            contributed to the pools.  A run that retrieved nothing for a topic should
            be given sNDCG 0 (it does not beat the random reranker).

    Returns:
        Float array ``(Q,)``: the share of runs with ``sNDCG > 0`` (1 = easiest,
        0 = hardest).  NaN scores (undefined sNDCG) are left out of both counts; a
        topic with no defined score gets NaN.
    """
    s = np.asarray(sndcg_scores, dtype=np.float64)
    if s.ndim != 2:
        raise ValueError(f"expected a 2-D array (n_runs, Q), got shape {s.shape}")
    defined = ~np.isnan(s)
    n_def = defined.sum(axis=0)
    wins = (defined & (np.nan_to_num(s, nan=0.0) > 0)).sum(axis=0)
    out = np.full(s.shape[1], np.nan)
    ok = n_def > 0
    out[ok] = wins[ok] / n_def[ok]
    return out


def difficulty_class(difficulty_scores: ArrayLike) -> list[str | None]:
    """Return the paper's difficulty class of each score.

    The classes are the equal-width intervals ``[0, .25]`` hard, ``(.25, .5]``
    moderately hard, ``(.5, .75]`` moderately easy and ``(.75, 1]`` easy; NaN gives
    None.
    """
    d = np.asarray(difficulty_scores, dtype=np.float64).reshape(-1)
    idx = np.clip(np.ceil(d * 4) - 1, 0, 3)
    return [
        None if np.isnan(v) else DIFFICULTY_CLASSES[int(i)] for v, i in zip(d, idx, strict=True)
    ]
