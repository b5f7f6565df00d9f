"""How right a judge is against gold pairs (numpy only).

A judge's grades and the gold grades are aligned arrays, one entry per gold pair the
judge graded, in the order the judge graded them. :func:`gold_accuracy` gives:

- ``exact``: the share of grades equal to gold; ``within_one``: the share at most one
  grade away;
- ``kappa_quadratic``: Cohen's κ with quadratic weights over grades 0–4
  (:func:`judging.agreement.coefficients.cohen_kappa`); NaN (with the reason) when it is
  undefined, e.g. every grade and every gold grade the same value;
- ``mean_signed_deviation``: mean of judge − gold (positive: the judge grades higher);
- ``confusion``: a 5 × 5 count matrix, rows the gold grade, columns the judge's grade;
- the same exact share over the judge's last ``last`` gold pairs (the trend).

NaN everywhere (and ``n`` 0) for a judge without graded gold pairs.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judging.agreement.coefficients import AgreementUndefinedWarning, cohen_kappa

GRADES = 5

__all__ = ["GoldAccuracy", "gold_accuracy"]


@dataclass(frozen=True)
class GoldAccuracy:
    """One judge's accuracy against gold (see the module docstring)."""

    n: int
    exact: float
    within_one: float
    kappa_quadratic: float
    kappa_reason: str | None
    mean_signed_deviation: float
    confusion: tuple[tuple[int, ...], ...]
    last_n: int
    last_exact: float


def gold_accuracy(grades: npt.ArrayLike, gold: npt.ArrayLike, *, last: int = 20) -> GoldAccuracy:
    """Return the accuracy of ``grades`` against ``gold`` (aligned, oldest first).

    Raise ValueError for arrays of different lengths, not 1-D, grades outside 0–4, or
    ``last`` below 1.
    """
    judge = np.asarray(grades, dtype=np.float64)
    truth = np.asarray(gold, dtype=np.float64)
    if judge.ndim != 1 or judge.shape != truth.shape:
        raise ValueError("grades and gold must be 1-d arrays of one length")
    if last < 1:
        raise ValueError("last must be at least 1")
    for name, values in (("grades", judge), ("gold", truth)):
        if values.size and not (np.isin(values, np.arange(GRADES))).all():
            raise ValueError(f"{name} must be whole grades from 0 to {GRADES - 1}")
    confusion = np.zeros((GRADES, GRADES), dtype=np.int64)
    np.add.at(confusion, (truth.astype(np.int64), judge.astype(np.int64)), 1)
    if judge.size == 0:
        return GoldAccuracy(
            0, math.nan, math.nan, math.nan, "No gold pair graded.", math.nan,
            tuple(map(tuple, confusion.tolist())), 0, math.nan,
        )  # fmt: skip
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AgreementUndefinedWarning)
        kappa = cohen_kappa(judge, truth, weights="quadratic")
    reason = None
    if math.isnan(kappa):
        messages = [str(w.message) for w in caught if w.category is AgreementUndefinedWarning]
        reason = messages[-1] if messages else "Undefined for these grades."
    recent = slice(max(judge.size - last, 0), None)
    return GoldAccuracy(
        n=int(judge.size),
        exact=float((judge == truth).mean()),
        within_one=float((np.abs(judge - truth) <= 1).mean()),
        kappa_quadratic=float(kappa),
        kappa_reason=reason,
        mean_signed_deviation=float((judge - truth).mean()),
        confusion=tuple(map(tuple, confusion.tolist())),
        last_n=int(judge[recent].size),
        last_exact=float((judge[recent] == truth[recent]).mean()),
    )
