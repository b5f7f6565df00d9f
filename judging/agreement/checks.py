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

**The random audit.** Checks that a strategy *chose* (the pairs the LLM is least sure
of, or whose grade moves the ranking) are not a sample of the LLM's work: agreement on
them says little about the LLM's labels elsewhere. The audit samples *queries*:
:func:`query_audit_draws` gives every query a fixed pseudo-random number in [0, 1) from
its id and a seed (SplitMix64 over the query id and document id 0, :func:`audit_draws`),
independent of any grade, and the queries whose draw is below a share form the *audit
sample*, a Bernoulli sample of the queries. Every pair of a sampled query is in the
sample: :func:`pair_audit_draws` gives each pair its query's draw, and both the judging
plan and the agreement report read the sample through it (:class:`Audit`), so they
cannot disagree. Humans check audit pairs in the order of their draws, a query's pairs
together, so the queries completed at any moment are a uniform random subset of the
sampled ones: the units the bias-corrected means need (docs/measures.md). Agreement on
the audit pairs estimates the LLM's agreement over all its pairs without bias (every
pair is in the sample with probability the share; the pairs of one query come together,
a cluster sample).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from judging.agreement.coefficients import AgreementUndefinedWarning, cohen_kappa

#: Label of the checks of the random audit sample.
AUDIT_LABEL = "random audit"

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(z: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """Return SplitMix64's finaliser of ``z`` (wrapping arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def audit_draws(
    query_ids: npt.ArrayLike, document_ids: npt.ArrayLike, *, seed: int
) -> npt.NDArray[np.float64]:
    """Return each pair's fixed draw in [0, 1): a hash of the seed and the two ids.

    The same pair and seed always give the same draw; draws of different pairs behave as
    independent uniforms. Ids must be non-negative integers below 2**63.
    """
    q = np.asarray(query_ids, dtype=np.int64).astype(np.uint64)
    d = np.asarray(document_ids, dtype=np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        z = _mix(np.uint64(seed) * _GOLDEN + q * np.uint64(2) + np.uint64(1))
        z = _mix(z + _GOLDEN + d)
    return (z >> np.uint64(11)).astype(np.float64) / float(2**53)


def query_audit_draws(query_ids: npt.ArrayLike, *, seed: int) -> npt.NDArray[np.float64]:
    """Return each query's fixed audit draw in [0, 1): :func:`audit_draws` of (query, 0)."""
    q = np.asarray(query_ids, dtype=np.int64).reshape(-1)
    return audit_draws(q, np.zeros(q.size, dtype=np.int64), seed=seed)


def pair_audit_draws(
    query_ids: npt.ArrayLike, document_ids: npt.ArrayLike, *, seed: int
) -> npt.NDArray[np.float64]:
    """Return each pair's audit draw: its query's draw, whatever the document.

    The one rule of the query-level audit: a pair is in the sample exactly when its query
    is. ``document_ids`` only fixes the shape (it must match ``query_ids``).
    """
    q = np.asarray(query_ids, dtype=np.int64).reshape(-1)
    d = np.asarray(document_ids, dtype=np.int64).reshape(-1)
    if q.shape != d.shape:
        raise ValueError("query_ids and document_ids: lengths differ")
    unique, index = np.unique(q, return_inverse=True)
    return query_audit_draws(unique, seed=seed)[index.reshape(-1)]


@dataclass(frozen=True)
class Audit:
    """The random audit sample: the queries whose draw under ``seed`` is below ``share``."""

    seed: int
    share: float

    def contains(self, query_ids: npt.ArrayLike, document_ids: npt.ArrayLike) -> npt.NDArray:
        """Return whether each pair is in the sample (its query is)."""
        return pair_audit_draws(query_ids, document_ids, seed=self.seed) < self.share

    def sampled(self, query_ids: npt.ArrayLike) -> npt.NDArray:
        """Return whether each query is in the sample."""
        return query_audit_draws(query_ids, seed=self.seed) < self.share


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
