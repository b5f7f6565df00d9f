"""Per-judge and per-query agreement figures that say whom and what to act on (numpy only).

Ratings are an items × judges matrix with NaN where a judge gave no grade, as in
:mod:`judging.agreement.coefficients`. No Django here; the selectors build the matrices.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judging.agreement.coefficients import (
    DEFAULT_CATEGORIES,
    AgreementUndefinedWarning,
    cohen_kappa,
    gwet_ac,
    krippendorff_alpha,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

__all__ = [
    "GroupCoefficients",
    "JudgeFigures",
    "group_agreement",
    "group_coefficients",
    "judge_figures",
]


@dataclass(frozen=True)
class JudgeFigures:
    """Each judge's agreement with the other judges and with adjudicated grades.

    Arrays have one entry per judge (column). ``compared`` counts the judge's graded items
    that at least one other judge graded; ``agreement`` is the share of equal grades over
    every (this judge, other judge) comparison on those items; ``bias`` the mean of the
    judge's grade minus the mean of the others' grades on them (positive: more lenient).
    ``adjudicated``, ``agreement_adjudicated`` and ``bias_adjudicated`` are the same
    against adjudicated grades. NaN where there is nothing to compare.
    """

    compared: IntArray
    agreement: FloatArray
    bias: FloatArray
    adjudicated: IntArray
    agreement_adjudicated: FloatArray
    bias_adjudicated: FloatArray


def _ratio(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """Return numerator / denominator, NaN where the denominator is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / np.maximum(denominator, 1), np.nan)


def judge_figures(ratings: npt.ArrayLike, adjudicated: npt.ArrayLike) -> JudgeFigures:
    """Return every judge's figures against the others and against adjudicated grades.

    ``ratings`` is items × judges (NaN: no grade); ``adjudicated`` one grade per item
    (NaN: not adjudicated). Raise ValueError for shapes that do not fit.

    Example: items × judges [[1, 1, 3], [2, 2, NaN]]: judge 0 compares on both items,
    equal to judge 1 twice and to judge 2 never, so agreement 2/3; its bias is
    ((1 - 2) + (2 - 2)) / 2 = -0.5.
    """
    x = np.asarray(ratings, dtype=np.float64)
    truth = np.asarray(adjudicated, dtype=np.float64)
    if x.ndim != 2 or truth.shape != (x.shape[0],):
        raise ValueError("ratings must be items × judges and adjudicated one value per item.")
    rated = ~np.isnan(x)
    filled = np.where(rated, x, 0.0)
    n_rated = rated.sum(axis=1, keepdims=True)
    others = n_rated - rated  # other judges per item, for each judge's column
    compared_mask = rated & (others > 0)
    # Equal grades with others: for each grade g, judges giving g on the item minus self.
    equal = np.zeros_like(filled)
    for grade in np.unique(x[rated]):
        same = rated & (x == grade)
        equal += np.where(same, same.sum(axis=1, keepdims=True) - 1, 0)
    comparisons = np.where(compared_mask, others, 0).sum(axis=0)
    agreement = _ratio(np.where(compared_mask, equal, 0).sum(axis=0), comparisons)
    others_mean = _ratio(filled.sum(axis=1, keepdims=True) - filled, others.astype(float))
    diff = np.where(compared_mask, filled - np.nan_to_num(others_mean), 0.0)
    compared = compared_mask.sum(axis=0)
    bias = _ratio(diff.sum(axis=0), compared.astype(float))
    against = rated & ~np.isnan(truth)[:, np.newaxis]
    truth_filled = np.nan_to_num(truth)[:, np.newaxis]
    n_adjudicated = against.sum(axis=0)
    agreement_adj = _ratio((against & (filled == truth_filled)).sum(axis=0), n_adjudicated)
    bias_adj = _ratio(np.where(against, filled - truth_filled, 0.0).sum(axis=0), n_adjudicated)
    return JudgeFigures(
        compared=compared.astype(np.int64),
        agreement=agreement,
        bias=bias,
        adjudicated=n_adjudicated.astype(np.int64),
        agreement_adjudicated=agreement_adj,
        bias_adjudicated=bias_adj,
    )


def group_agreement(
    ratings: npt.ArrayLike, groups: npt.ArrayLike, n_groups: int
) -> tuple[FloatArray, IntArray]:
    """Return each group's raw agreement and its number of items with two or more grades.

    ``groups`` gives each item's group (0 … n_groups - 1), e.g. its query. A group's
    agreement is the share of equal grades over every pair of grades given to one item,
    summed over the group's items (NaN without any such pair).

    Example: one group with items [[1, 1, 3], [2, 2, NaN]] has 3 + 1 pairs of grades of
    which 1 + 1 agree: 0.5.
    """
    x = np.asarray(ratings, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    if x.ndim != 2 or g.shape != (x.shape[0],):
        raise ValueError("ratings must be items × judges and groups one value per item.")
    rated = ~np.isnan(x)
    n = rated.sum(axis=1)
    pairs = n * (n - 1) / 2
    same = np.zeros(x.shape[0])
    for grade in np.unique(x[rated]):
        k = (rated & (x == grade)).sum(axis=1)
        same += k * (k - 1) / 2
    agree = np.bincount(g, weights=same, minlength=n_groups)
    total = np.bincount(g, weights=pairs, minlength=n_groups)
    items = np.bincount(g, weights=(n >= 2), minlength=n_groups).astype(np.int64)
    return _ratio(agree, total), items


@dataclass(frozen=True)
class GroupCoefficients:
    """Chance-corrected agreement of each group (e.g. query); NaN where undefined.

    ``kappa``: Cohen's κ with quadratic weights, averaged over every two judges who share
    two or more of the group's items (Light's κ; with two judges, their κ). ``alpha``:
    Krippendorff's α, ordinal. ``ac2``: Gwet's AC2 with quadratic weights over the 0–4
    scale, which stays meaningful when nearly every grade is 0.
    """

    kappa: FloatArray
    alpha: FloatArray
    ac2: FloatArray


def group_coefficients(
    ratings: npt.ArrayLike, groups: npt.ArrayLike, n_groups: int
) -> GroupCoefficients:
    """Return κ, α and AC2 of each group's items (those with two or more grades).

    A coefficient is NaN for a group where it is undefined: no items graded twice, or (κ,
    α) every grade one and the same, so no disagreement is expected by chance.
    """
    x = np.asarray(ratings, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    if x.ndim != 2 or g.shape != (x.shape[0],):
        raise ValueError("ratings must be items × judges and groups one value per item.")
    kappa, alpha, ac2 = (np.full(n_groups, np.nan) for _ in range(3))
    twice = np.flatnonzero((~np.isnan(x)).sum(axis=1) >= 2)
    order = twice[np.argsort(g[twice], kind="stable")]  # items graded twice, by group
    groups, starts = np.unique(g[order], return_index=True)
    blocks = np.split(order, starts[1:]) if order.size else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementUndefinedWarning)
        for group, items in zip(groups.tolist(), blocks, strict=True):
            sub = x[items]
            sub = sub[:, (~np.isnan(sub)).any(axis=0)]
            alpha[group] = krippendorff_alpha(sub.T, level="ordinal", categories=DEFAULT_CATEGORIES)
            ac2[group] = gwet_ac(sub, weights="quadratic")
            kappas = [
                cohen_kappa(sub[:, a], sub[:, b], weights="quadratic")
                for a in range(sub.shape[1])
                for b in range(a + 1, sub.shape[1])
                if (~np.isnan(sub[:, a]) & ~np.isnan(sub[:, b])).sum() >= 2
            ]
            defined = [k for k in kappas if not np.isnan(k)]
            kappa[group] = float(np.mean(defined)) if defined else np.nan
    return GroupCoefficients(kappa=kappa, alpha=alpha, ac2=ac2)
