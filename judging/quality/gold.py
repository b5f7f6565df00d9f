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

:func:`qualification` is the rule that decides whether a judge's labels count in the
live list of a collection that asks for qualification (see its docstring).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judging.agreement.coefficients import AgreementUndefinedWarning, cohen_kappa

GRADES = 5

__all__ = [
    "NOT_ASSESSED",
    "QUALIFIED",
    "QUALIFYING",
    "UNQUALIFIED",
    "GoldAccuracy",
    "Qualification",
    "gold_accuracy",
    "qualification",
]


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


#: Fewer graded gold pairs than the collection asks for: the labels wait.
QUALIFYING = "qualifying"
#: Enough gold pairs, and the last of them at the bar: the labels count.
QUALIFIED = "qualified"
#: Enough gold pairs, but the last of them below the bar: the labels do not count.
UNQUALIFIED = "below"
#: Fewer gold pairs than asked, and no way to be served more (a judge whose labels were
#: imported): nothing to assess the judge by, so the labels count as they are.
NOT_ASSESSED = "not_assessed"


@dataclass(frozen=True)
class Qualification:
    """Where one judge stands against a collection's qualification bar.

    ``graded`` gold pairs graded in all; ``window`` the most recent of them the rule
    looks at (at most ``needed``), ``window_exact`` of them graded exactly as gold, and
    ``window_share`` their share (NaN without any). ``counted``: the labels count.
    """

    status: str
    graded: int
    needed: int
    window: int
    window_exact: int
    window_share: float

    @property
    def counted(self) -> bool:
        """Return whether the judge's labels count in the live list."""
        return self.status in (QUALIFIED, NOT_ASSESSED)


def qualification(
    grades: npt.ArrayLike,
    gold: npt.ArrayLike,
    *,
    needed: int,
    share: float,
    assessable: bool = True,
) -> Qualification:
    """Return whether a judge with these gold labels (aligned, oldest first) is qualified.

    The rule, a function of the judge's current gold labels only (no memory of the past):
    a judge is *qualified* when they have graded at least ``needed`` gold pairs and, of
    their most recent ``needed``, at least ``share`` (a fraction, 0–1) were graded exactly
    as gold. With fewer gold pairs they are *qualifying*; with enough but too few exact
    among the most recent, *below* the bar. So qualification is reached and lost on the
    same sliding window: a judge who was qualified loses it as soon as their last
    ``needed`` gold pairs fall below the bar, and regains it when they are back at it.

    A judge who cannot be served gold pairs (``assessable`` false: one whose labels were
    imported from elsewhere, such as a reference assessor's) and has fewer than ``needed``
    is *not assessed*: there is nothing to measure them by, so their labels count as they
    are, rather than waiting for gold answers that can never come. With ``needed`` gold
    pairs or more they are assessed like anyone else.

    The comparison allows for rounding: 8 exact of 10 meets a share of 0.8. ``share`` 0
    qualifies anyone with ``needed`` gold pairs. Raise ValueError for ``needed`` below 1,
    ``share`` outside 0–1 (or NaN), or grades as :func:`gold_accuracy` refuses them.
    """
    if isinstance(needed, bool) or not isinstance(needed, int | np.integer) or needed < 1:
        raise ValueError("needed must be a whole number of at least 1")
    if not isinstance(share, int | float) or not 0 <= share <= 1:
        raise ValueError("share must be a number from 0 to 1")
    judge = np.asarray(grades, dtype=np.float64)
    truth = np.asarray(gold, dtype=np.float64)
    if judge.ndim != 1 or judge.shape != truth.shape:
        raise ValueError("grades and gold must be 1-d arrays of one length")
    for name, values in (("grades", judge), ("gold", truth)):
        if values.size and not (np.isin(values, np.arange(GRADES))).all():
            raise ValueError(f"{name} must be whole grades from 0 to {GRADES - 1}")
    recent = slice(max(judge.size - needed, 0), None)
    window = int(judge[recent].size)
    exact = int((judge[recent] == truth[recent]).sum())
    window_share = exact / window if window else math.nan
    if judge.size < needed:
        status = QUALIFYING if assessable else NOT_ASSESSED
    elif exact >= share * needed - 1e-9:
        status = QUALIFIED
    else:
        status = UNQUALIFIED
    return Qualification(
        status=status,
        graded=int(judge.size),
        needed=int(needed),
        window=window,
        window_exact=exact,
        window_share=window_share,
    )
