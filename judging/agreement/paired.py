"""Agreement of one judge with one reference on the pairs both graded (numpy only, no Django).

The companions of :mod:`judging.agreement.coefficients` for the LLM-vs-human comparison:
every function
takes two 1-D arrays aligned by item, ``judge`` (the judge under test, e.g. an LLM) and
``reference`` (e.g. a human judge or the human consensus), with NaN where one of them gave
no grade. Only items graded by both count ("shared pairs"). Cohen's κ and Krippendorff's α
are those of :mod:`judging.agreement.coefficients`; they are not repeated here.

Conventions:

* Grades are numbers on the 0–4 scale; a reference may be fractional (a mean consensus).
  :func:`confusion_matrix` needs whole grades in ``categories``.
* Differences are always ``judge - reference``: a positive mean signed difference means
  the judge grades more generously than the reference, a negative one more strictly.
* With no shared pair every statistic is undefined: the functions return NaN and emit an
  :class:`~judging.agreement.coefficients.AgreementUndefinedWarning` (the confusion matrix is
  then all
  zeros, which is not undefined). Arrays of different shapes, arrays that are not 1-D and
  infinities raise :class:`ValueError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from judging.agreement.coefficients import (
    DEFAULT_CATEGORIES,
    AgreementUndefinedWarning,
    cohen_kappa,
)

#: The relevance cuts the TREC LLMJudge challenge reports κ at: 0 | 1–4, 0–1 | 2–4, 0–2 | 3–4.
BINARY_CUTS = (1, 2, 3)

__all__ = [
    "BINARY_CUTS",
    "binary_kappa",
    "confusion_matrix",
    "exact_agreement",
    "mean_signed_difference",
    "shared",
    "within_one_agreement",
]

FloatArray = npt.NDArray[np.float64]


def _as_1d(name: str, values: npt.ArrayLike) -> FloatArray:
    """Return ``values`` as a 1-D float64 array (NaN missing); raise ValueError otherwise."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric (NaN for missing): {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got shape {arr.shape}.")
    if np.isinf(arr).any():
        raise ValueError(f"{name} must not contain infinities (use NaN for missing).")
    return arr


def shared(judge: npt.ArrayLike, reference: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Return the grades of the items both graded, as two aligned arrays.

    Raise ValueError for arrays of different lengths, not 1-D, or holding infinities.
    """
    x = _as_1d("judge", judge)
    y = _as_1d("reference", reference)
    if x.shape != y.shape:
        raise ValueError(f"judge and reference must have equal lengths; got {x.size} and {y.size}.")
    both = ~np.isnan(x) & ~np.isnan(y)
    return x[both], y[both]


def _none_shared(statistic: str) -> float:
    """Warn that ``statistic`` is undefined without shared pairs; return NaN."""
    warnings.warn(
        f"{statistic} is undefined: no pair was graded by both.",
        AgreementUndefinedWarning,
        stacklevel=3,
    )
    return float("nan")


def exact_agreement(judge: npt.ArrayLike, reference: npt.ArrayLike) -> float:
    """Return the share of shared pairs on which the two grades are equal.

    NaN (with a warning) when no pair is shared.
    """
    x, y = shared(judge, reference)
    if not x.size:
        return _none_shared("Exact agreement")
    return float(np.mean(x == y))


def binary_kappa(judge: npt.ArrayLike, reference: npt.ArrayLike, cut: float) -> float:
    """Return Cohen's κ of the two gradings made binary at ``cut`` (relevant: grade >= cut).

    The LLMJudge challenge's figure (Rahmani et al., 2024): it asks whether two graders
    agree on *relevant or not* at a given strictness, which is what binary measures (P@k,
    MAP) read. NaN (with a warning) when no pair is shared or when both sides put every
    shared pair on one side of the cut.
    """
    x, y = shared(judge, reference)
    if not x.size:
        return _none_shared(f"Binary κ at {cut}")
    return cohen_kappa(
        (x >= cut).astype(np.float64), (y >= cut).astype(np.float64), categories=(0, 1)
    )


def within_one_agreement(judge: npt.ArrayLike, reference: npt.ArrayLike) -> float:
    """Return the share of shared pairs whose grades differ by at most one grade.

    ``|judge - reference| <= 1``; NaN (with a warning) when no pair is shared.
    """
    x, y = shared(judge, reference)
    if not x.size:
        return _none_shared("Within-one agreement")
    return float(np.mean(np.abs(x - y) <= 1.0))


def mean_signed_difference(judge: npt.ArrayLike, reference: npt.ArrayLike) -> float:
    """Return the mean of ``judge - reference`` over the shared pairs.

    Positive: the judge grades higher (more leniently) than the reference on average;
    negative: lower (more strictly). NaN (with a warning) when no pair is shared.
    """
    x, y = shared(judge, reference)
    if not x.size:
        return _none_shared("The mean signed difference")
    return float(np.mean(x - y))


def confusion_matrix(
    judge: npt.ArrayLike,
    reference: npt.ArrayLike,
    *,
    categories: Iterable[int] = DEFAULT_CATEGORIES,
) -> npt.NDArray[np.int64]:
    """Return the categories × categories counts of (reference grade, judge grade).

    Entry ``[i, j]`` counts the shared pairs the reference put in the i-th and the judge
    in the j-th of the sorted ``categories`` (rows: reference, columns: judge), so the
    diagonal holds exact agreement and cells right of it the pairs the judge graded
    higher. All zeros when no pair is shared. Raise ValueError for a grade that is not one
    of ``categories`` (round a fractional consensus first).
    """
    cats = np.sort(np.asarray(list(categories), dtype=np.float64))
    if cats.ndim != 1 or cats.size < 2 or np.unique(cats).size != cats.size:
        raise ValueError("categories must be at least two distinct values.")
    x, y = shared(judge, reference)
    k = cats.size
    positions = []
    for name, values in (("judge", x), ("reference", y)):
        pos = np.clip(np.searchsorted(cats, values), 0, k - 1)
        bad = cats[pos] != values
        if bad.any():
            raise ValueError(
                f"{name} holds grades outside the categories {cats.tolist()}: "
                f"{np.unique(values[bad])[:5].tolist()}."
            )
        positions.append(pos.astype(np.int64))
    col, row = positions
    return np.bincount(row * k + col, minlength=k * k).reshape(k, k).astype(np.int64)
