"""Human checks of LLM grades: agreement by provenance and as checks accumulate (pure).

A *check* is a human grade of a pair an LLM judge graded. Each check is compared with
the LLM grade the card would show (the lower median of the pair's LLM grades). Checks
split by what the human saw: *assisted* (the card showed the LLM grade), *blind* (it did
not) and *not recorded* (labels from the API or imports). If assisted checks agree with
the LLM much more than blind ones, judges anchor on the LLM grade.

Figures: checks, exact agreement, and Cohen's κ with quadratic weights
(:mod:`judging.agreement.coefficients`). The accumulation curve gives the same figures
over the first ``n`` checks in the order they were made, at up to ``points`` evenly
spaced ``n``. Edge cases: no checks give NaN figures; κ is NaN when both sides put every
check in one grade.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judging.agreement.coefficients import AgreementUndefinedWarning, cohen_kappa


@dataclass(frozen=True)
class CheckFigures:
    """Agreement of ``checks`` human checks with the LLM grade."""

    label: str
    checks: int
    exact: float
    kappa: float


def check_figures(human: npt.ArrayLike, llm: npt.ArrayLike, *, label: str) -> CheckFigures:
    """Return exact agreement and quadratic κ between aligned human and LLM grades."""
    h = np.asarray(human, dtype=np.float64)
    m = np.asarray(llm, dtype=np.float64)
    if h.size == 0:
        return CheckFigures(label=label, checks=0, exact=float("nan"), kappa=float("nan"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AgreementUndefinedWarning)
        kappa = cohen_kappa(h, m, weights="quadratic")
    return CheckFigures(
        label=label, checks=int(h.size), exact=float(np.mean(h == m)), kappa=float(kappa)
    )


def accumulation(
    human: npt.ArrayLike, llm: npt.ArrayLike, *, points: int = 10
) -> list[CheckFigures]:
    """Return the figures over the first n checks, at up to ``points`` n (the last: all)."""
    h = np.asarray(human, dtype=np.float64)
    m = np.asarray(llm, dtype=np.float64)
    if h.size == 0:
        return []
    ns = sorted({int(np.ceil(h.size * (i + 1) / points)) for i in range(points)})
    return [check_figures(h[:n], m[:n], label=f"first {n}") for n in ns]
