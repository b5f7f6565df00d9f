"""Inter-annotator agreement on 0–4 relevance grades (numpy/krippendorff only, no Django).

Ratings are numpy arrays with NaN for a missing rating. The layouts follow each
statistic's usual convention and are named in every signature:

* :func:`cohen_kappa` — two 1-D arrays, one per rater, aligned by item;
* :func:`fleiss_kappa` — an items × categories table of counts, built from an
  items × raters matrix by :func:`fleiss_counts`;
* :func:`krippendorff_alpha` — a raters × items matrix (the ``krippendorff`` package's
  reliability-data layout);
* :func:`gwet_ac` — an items × raters matrix (Gwet's AC1, or AC2 with weights);
* :func:`pairwise_agreement` — an items × raters matrix.

Degenerate data: when a coefficient is mathematically undefined for the data (0/0:
no item rated by enough raters, or every rating in one single category so that no
disagreement is expected by chance) the function returns ``nan`` and emits an
:class:`AgreementUndefinedWarning` that says why. Malformed input (wrong shapes,
ratings outside the categories, unknown options) raises :class:`ValueError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import krippendorff
import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_CATEGORIES",
    "AgreementUndefinedWarning",
    "PairwiseAgreement",
    "cohen_kappa",
    "fleiss_counts",
    "fleiss_kappa",
    "gwet_ac",
    "krippendorff_alpha",
    "pairwise_agreement",
]

#: The grade scale: 0 not relevant, 1 marginal, 2 relevant, 3 highly relevant, 4 perfect.
DEFAULT_CATEGORIES: tuple[int, ...] = tuple(range(5))

FloatArray = npt.NDArray[np.float64]
Weights = Literal["linear", "quadratic"] | None
Level = Literal["nominal", "ordinal", "interval", "ratio"]
_LEVELS = ("nominal", "ordinal", "interval", "ratio")


class AgreementUndefinedWarning(RuntimeWarning):
    """An agreement coefficient is undefined for the data; ``nan`` was returned."""


def _undefined(reason: str) -> float:
    """Warn that the coefficient is undefined because of ``reason``; return NaN."""
    warnings.warn(reason, AgreementUndefinedWarning, stacklevel=3)
    return float("nan")


def _ratings(name: str, values: npt.ArrayLike, ndim: int) -> FloatArray:
    """Return ``values`` as a float64 array of ``ndim`` dimensions, NaN for missing.

    Raise ValueError for another shape, non-numeric values or infinities.
    """
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric (NaN for missing): {exc}") from None
    if arr.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array; got shape {arr.shape}.")
    if np.isinf(arr).any():
        raise ValueError(f"{name} must not contain infinities (use NaN for missing).")
    return arr


def _categories(categories: Iterable[float]) -> FloatArray:
    """Return the categories as a sorted float64 array of at least two distinct values."""
    cats = np.asarray(list(categories), dtype=np.float64)
    if cats.ndim != 1 or cats.size < 2 or not np.isfinite(cats).all():
        raise ValueError("categories must be at least two finite values.")
    if np.unique(cats).size != cats.size:
        raise ValueError(f"categories must be distinct; got {cats.tolist()}.")
    return np.sort(cats)


def _category_index(values: FloatArray, cats: FloatArray, name: str) -> npt.NDArray[np.int64]:
    """Map non-missing ``values`` to positions in the sorted ``cats``.

    Raise ValueError for a value that is not one of the categories.
    """
    pos = np.clip(np.searchsorted(cats, values), 0, cats.size - 1)
    bad = cats[pos] != values
    if bad.any():
        raise ValueError(
            f"{name} holds values outside the categories {cats.tolist()}: "
            f"{np.unique(values[bad])[:5].tolist()}."
        )
    return pos.astype(np.int64)


def cohen_kappa(
    a: npt.ArrayLike,
    b: npt.ArrayLike,
    *,
    weights: Weights = None,
    categories: Iterable[float] = DEFAULT_CATEGORIES,
) -> float:
    """Return Cohen's kappa between two raters over the items both rated.

    ``a`` and ``b`` are 1-D arrays aligned by item, NaN where a rater gave no rating;
    items missing from either are left out. ``weights`` chooses unweighted kappa
    (None), or weighted kappa with disagreement weights ``|i - j| / (k - 1)``
    ("linear") or ``((i - j) / (k - 1))**2`` ("quadratic"), where i and j are the
    positions of the two ratings among the sorted ``categories`` (for grades 0–4 the
    grades themselves). Unused categories do not change the value.

    kappa = 1 - sum(w * observed) / sum(w * expected), with the expected table the
    outer product of the two raters' marginals.

    Return NaN with an :class:`AgreementUndefinedWarning` when no item was rated by
    both, or when both raters put every shared item in one and the same category
    (chance agreement is then 1 and kappa is 0/0). Raise ValueError for arrays of
    different shapes or not 1-D, ratings outside ``categories``, or unknown weights.
    """
    x = _ratings("a", a, 1)
    y = _ratings("b", b, 1)
    if x.shape != y.shape:
        raise ValueError(f"a and b must have equal lengths; got {x.size} and {y.size}.")
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}.")
    cats = _categories(categories)
    both = ~np.isnan(x) & ~np.isnan(y)
    _category_index(x[~np.isnan(x)], cats, "a")
    _category_index(y[~np.isnan(y)], cats, "b")
    ia = _category_index(x[both], cats, "a")
    ib = _category_index(y[both], cats, "b")
    if ia.size == 0:
        return _undefined("Cohen's kappa is undefined: no item was rated by both raters.")
    k = cats.size
    observed = np.bincount(ia * k + ib, minlength=k * k).reshape(k, k).astype(np.float64)
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / ia.size
    w = _disagreement_weights(k, weights)
    expected_disagreement = float((w * expected).sum())
    if expected_disagreement == 0.0:
        return _undefined(
            "Cohen's kappa is undefined: both raters used one and the same category "
            "for every shared item, so chance agreement is 1."
        )
    return 1.0 - float((w * observed).sum()) / expected_disagreement


def _disagreement_weights(k: int, weights: Weights) -> FloatArray:
    """Return the k × k disagreement weights: ``i != j``, ``|i - j| / (k - 1)`` or squared."""
    i, j = np.indices((k, k))
    if weights is None:
        return (i != j).astype(np.float64)
    if weights == "linear":
        return np.abs(i - j) / (k - 1)
    return ((i - j) / (k - 1)) ** 2


def _category_counts(x: FloatArray, cats: FloatArray) -> npt.NDArray[np.int64]:
    """Return the items × categories table: raters who put item i in the j-th category."""
    rated = ~np.isnan(x)
    rows = np.broadcast_to(np.arange(x.shape[0])[:, np.newaxis], x.shape)[rated]
    cols = _category_index(x[rated], cats, "ratings")
    k = cats.size
    counts = np.bincount(rows * k + cols, minlength=x.shape[0] * k)
    return counts.reshape(x.shape[0], k).astype(np.int64)


def fleiss_counts(
    ratings: npt.ArrayLike, *, categories: Iterable[float] = DEFAULT_CATEGORIES
) -> npt.NDArray[np.int64]:
    """Build the items × categories count table of Fleiss' kappa from raw ratings.

    ``ratings`` is items × raters with NaN for a missing rating. Entry (i, j) of the
    result counts the raters who put item i in the j-th of the sorted ``categories``.
    Items with fewer than two ratings are dropped (no pair of raters can agree on
    them), so the rows are the kept items in their original order. Raise ValueError
    for a matrix that is not 2-D or ratings outside ``categories``.
    """
    x = _ratings("ratings", ratings, 2)
    keep = (~np.isnan(x)).sum(axis=1) >= 2
    return _category_counts(x[keep], _categories(categories))


def fleiss_kappa(counts: npt.ArrayLike) -> float:
    """Return Fleiss' kappa from an items × categories table of rating counts.

    ``counts[i, j]`` is the number of raters who put item i in category j (see
    :func:`fleiss_counts`). With n_i raters of item i, the item's agreement is
    P_i = (sum_j n_ij**2 - n_i) / (n_i (n_i - 1)); kappa = (P - P_e) / (1 - P_e), with
    P the mean of P_i and P_e = sum_j p_j**2 for the pooled category shares p_j.
    With the same number of raters per item this is exactly Fleiss (1971); different
    numbers per item are allowed (each item's P_i uses its own n_i, the shares pool
    all ratings). Items with fewer than two ratings are excluded.

    Return NaN with an :class:`AgreementUndefinedWarning` when no item has two
    ratings or all ratings fall in one category (P_e = 1). Raise ValueError for a
    table that is not 2-D or holds negative or non-integer counts.
    """
    table = _ratings("counts", counts, 2)
    if np.isnan(table).any() or (table < 0).any() or (table != np.round(table)).any():
        raise ValueError("counts must be non-negative integers (raters per item and category).")
    n_i = table.sum(axis=1)
    table, n_i = table[n_i >= 2], n_i[n_i >= 2]
    if n_i.size == 0:
        return _undefined("Fleiss' kappa is undefined: no item has at least two ratings.")
    p_i = ((table**2).sum(axis=1) - n_i) / (n_i * (n_i - 1))
    shares = table.sum(axis=0) / n_i.sum()
    p_e = float((shares**2).sum())
    if p_e >= 1.0 - 1e-12:
        return _undefined(
            "Fleiss' kappa is undefined: every rating is in one category, so chance agreement is 1."
        )
    return (float(p_i.mean()) - p_e) / (1.0 - p_e)


def krippendorff_alpha(
    ratings: npt.ArrayLike,
    *,
    level: Level = "ordinal",
    categories: Iterable[float] | None = None,
) -> float:
    """Return Krippendorff's alpha for raters × items ``ratings`` (NaN missing).

    Delegate to ``krippendorff.alpha`` with the given level of measurement
    ("nominal", "ordinal", "interval" or "ratio"). Any number of raters and missing
    ratings are allowed; only items with at least two ratings ("pairable" values)
    contribute. If ``categories`` is given, every rating must be one of them; unused
    categories do not change the value.

    Return NaN with an :class:`AgreementUndefinedWarning` when fewer than two
    pairable values exist (no item has two ratings), or when all pairable values are
    one and the same category (expected disagreement is 0, alpha is 0/0). Raise
    ValueError for a matrix that is not 2-D, an unknown level, or ratings outside
    ``categories``.
    """
    x = _ratings("ratings", ratings, 2)
    if level not in _LEVELS:
        raise ValueError(f"level must be one of {', '.join(_LEVELS)}; got {level!r}.")
    domain = None
    if categories is not None:
        domain = _categories(categories)
        present = x[~np.isnan(x)]
        _category_index(present, domain, "ratings")
    rated = ~np.isnan(x)
    pairable = rated.sum(axis=0) >= 2
    values = x[:, pairable][rated[:, pairable]]
    if values.size < 2:
        return _undefined(
            "Krippendorff's alpha is undefined: fewer than two pairable values (no item "
            "was rated by at least two raters)."
        )
    if np.unique(values).size < 2:
        return _undefined(
            "Krippendorff's alpha is undefined: all pairable values are the same "
            "category, so no disagreement is expected by chance."
        )
    with np.errstate(all="ignore"):
        result = float(
            krippendorff.alpha(reliability_data=x, value_domain=domain, level_of_measurement=level)
        )
    if np.isnan(result):  # pragma: no cover - e.g. ratio level with values v and -v only
        return _undefined("Krippendorff's alpha is undefined: expected disagreement is 0.")
    return result


def gwet_ac(
    ratings: npt.ArrayLike,
    *,
    weights: Weights = None,
    categories: Iterable[float] = DEFAULT_CATEGORIES,
) -> float:
    """Return Gwet's AC1 (``weights=None``) or AC2 of items × raters ``ratings`` (NaN missing).

    Gwet (2008; *Handbook of Inter-Rater Reliability*, 4th ed., 2014, ch. 2–3), for any
    number of raters and missing ratings. With r_i raters on item i, r_ik of them in
    category k, agreement weights w (identity for AC1; for AC2 ``1 - |k - l| / (q - 1)``
    or ``1 - ((k - l) / (q - 1))**2`` over the positions of the sorted ``categories``)
    and r*_ik = sum_l w_kl r_il:

    * observed agreement p_a: the mean, over items with r_i >= 2, of
      sum_k r_ik (r*_ik - 1) / (r_i (r_i - 1));
    * chance agreement p_e = sum(w) / (q (q - 1)) * sum_k pi_k (1 - pi_k), pi_k the mean
      over rated items of r_ik / r_i, q the number of categories;
    * AC = (p_a - p_e) / (1 - p_e).

    Unlike kappa, AC does not collapse when nearly every grade is one category (most
    pairs "not relevant"): chance agreement shrinks instead of growing. It depends on the
    number of categories, so pass the scale's categories, used or not.

    Return NaN with an :class:`AgreementUndefinedWarning` when no item has two ratings.
    Raise ValueError for a matrix that is not 2-D, fewer than two categories, ratings
    outside ``categories`` or unknown weights.
    """
    x = _ratings("ratings", ratings, 2)
    if weights not in (None, "linear", "quadratic"):
        raise ValueError(f"weights must be None, 'linear' or 'quadratic'; got {weights!r}.")
    cats = _categories(categories)
    q = cats.size
    counts = _category_counts(x, cats).astype(np.float64)
    r = counts.sum(axis=1)
    if not (r >= 2).any():
        return _undefined("Gwet's AC is undefined: no item was rated by at least two raters.")
    w = 1.0 - _disagreement_weights(q, weights)  # agreement weights
    weighted = counts @ w.T  # r*_ik
    two = r >= 2
    p_a = float(
        np.mean((counts[two] * (weighted[two] - 1.0)).sum(axis=1) / (r[two] * (r[two] - 1.0)))
    )
    seen = r >= 1
    pi = (counts[seen] / r[seen, None]).mean(axis=0)
    p_e = float(w.sum() / (q * (q - 1)) * (pi * (1.0 - pi)).sum())
    return (p_a - p_e) / (1.0 - p_e)


@dataclass(frozen=True)
class PairwiseAgreement:
    """Raw agreement between every two raters.

    ``agreement[r, s]`` is the share of items rated by both r and s on which they
    agree (NaN if they share no item); ``overlap[r, s]`` is the number of such items.
    Both are raters × raters and symmetric; the diagonal holds each rater's own
    count and agreement 1.0 (NaN for a rater with no ratings).
    """

    agreement: FloatArray
    overlap: npt.NDArray[np.int64]


def pairwise_agreement(ratings: npt.ArrayLike, *, tolerance: float = 0.0) -> PairwiseAgreement:
    """Return the raw (percentage) agreement of every pair of raters.

    ``ratings`` is items × raters with NaN for a missing rating. Two ratings agree
    when they differ by at most ``tolerance`` (0: identical grades; 1: within one
    grade). Only items rated by both raters of a pair count; pairs sharing no item
    get NaN. Raise ValueError for a matrix that is not 2-D or a negative tolerance.
    """
    x = _ratings("ratings", ratings, 2)
    if tolerance < 0:
        raise ValueError(f"tolerance must be non-negative; got {tolerance}.")
    rated = ~np.isnan(x)
    n_raters = x.shape[1]
    overlap = np.zeros((n_raters, n_raters), dtype=np.int64)
    agree = np.zeros((n_raters, n_raters), dtype=np.int64)
    for r in range(n_raters):
        both = rated[:, [r]] & rated
        close = np.abs(x[:, [r]] - x) <= tolerance
        overlap[r] = both.sum(axis=0)
        agree[r] = (both & close).sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        agreement = np.where(overlap > 0, agree / np.maximum(overlap, 1), np.nan)
    return PairwiseAgreement(agreement=agreement, overlap=overlap)
