"""When more judging stops paying: how stable a system ranking is (pure; no Django).

Two figures, both Kendall's τ-b between system rankings (:mod:`metrics.engine.rankcorr`):

* **Looking back** — :func:`tau_between` compares the runs' ranking now with their
  ranking ``N`` judgments ago (a stored snapshot). Only runs scored in both count.
* **Looking ahead** — :func:`expected_tau` estimates the τ between the ranking now and
  the ranking after the next ``N`` judgments. The next pairs are the queue's (the
  pooling plan's order, or a random draw of the open pairs under depth-k); each draw
  gives them grades from a predictive distribution (:func:`grade_prior`), rescores every
  run and ranks them again. The mean over the draws is the expected τ; the 10th
  percentile says how far a bad draw moves it.

A collection *stops paying* for more judging at target τ* when both are at least τ*:
the last ``N`` judgments did not reorder the runs, and the next ``N`` are not expected to
(:func:`verdict`). Voorhees (SIGIR 1998) takes τ ≥ 0.9 as "the same ranking"; we
default to the stricter 0.95 because a step's τ compares neighbouring states, not the
final one.

Edge cases: with fewer than two runs in common, or all runs tied in either ranking, τ
is undefined and returned as NaN (no warning). With no open pair left the expected τ
is 1 (nothing can change).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from metrics.engine.rankcorr import RankCorrelationUndefinedWarning, kendall_tau_b

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
Pair = tuple[int, int]

GRADES = 5  # 0–4
#: Best-rank bands (0-based, upper bounds exclusive) for the rank-conditioned prior.
RANK_BANDS = (1, 3, 10, 20, 50, 100)
DEFAULT_TARGET = 0.95
DEFAULT_STEP = 100


def _tau(x: F64, y: F64) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankCorrelationUndefinedWarning)
        return kendall_tau_b(x, y)


def tau_between(now: Mapping[str, float], then: Mapping[str, float]) -> tuple[float, int]:
    """Return (τ-b, runs compared) between two ``{run: score}`` rankings.

    Runs missing from either side, or scored None/NaN in either, are left out.
    """
    common = [
        r
        for r in now
        if r in then
        and now[r] is not None
        and then[r] is not None
        and np.isfinite(now[r])
        and np.isfinite(then[r])
    ]
    if len(common) < 2:
        return float("nan"), len(common)
    a = np.array([now[r] for r in common], dtype=np.float64)
    b = np.array([then[r] for r in common], dtype=np.float64)
    return _tau(a, b), len(common)


def _band(ranks: I64) -> I64:
    return np.searchsorted(np.asarray(RANK_BANDS), ranks, side="right")


def grade_prior(
    best_ranks: Sequence[I64], known: Sequence[F64], *, smoothing: float = 1.0
) -> list[NDArray[np.float64]]:
    """Return, per query, a probability over grades 0–4 for each document (rows sum to 1).

    The grade of a document nobody judged is predicted from the grades judged at the same
    best rank band (rank 1, 2–3, 4–10, 11–20, 21–50, 51–100, deeper) over all queries,
    with add-``smoothing`` (Laplace) counts; a judged document gets its own grade
    (fractional grades, e.g. means, split between the two integers around them).
    """
    n_bands = len(RANK_BANDS) + 1
    counts = np.full((n_bands, GRADES), smoothing, dtype=np.float64)
    for ranks, grades in zip(best_ranks, known, strict=True):
        seen = ~np.isnan(grades)
        if seen.any():
            for band, g in zip(_band(ranks[seen]).tolist(), grades[seen].tolist(), strict=True):
                counts[band] += _one_hot(g)
    table = counts / counts.sum(axis=1, keepdims=True)
    out = []
    for ranks, grades in zip(best_ranks, known, strict=True):
        probs = table[_band(ranks)].copy()
        for i in np.flatnonzero(~np.isnan(grades)).tolist():
            probs[i] = _one_hot(float(grades[i]))
        out.append(probs)
    return out


def _one_hot(grade: float) -> F64:
    grade = min(max(grade, 0.0), GRADES - 1.0)
    low = int(np.floor(grade))
    vec = np.zeros(GRADES, dtype=np.float64)
    vec[low] = 1.0 - (grade - low)
    if grade > low:
        vec[low + 1] = grade - low
    return vec


@dataclass(frozen=True)
class ExpectedTau:
    """The τ-b expected between the ranking now and after the next ``pairs`` judgments."""

    mean: float
    low: float  # 10th percentile over the draws
    pairs: int  # pairs judged in each draw (at most the step; fewer if fewer are open)
    draws: int

    @property
    def defined(self) -> bool:
        """Return whether the expected τ is a number."""
        return bool(np.isfinite(self.mean))


def expected_tau(
    scorer: Callable[[list[F64]], F64],
    known: Sequence[F64],
    prior: Sequence[NDArray[np.float64]],
    *,
    planned: Sequence[Pair],
    open_pairs: Sequence[Pair],
    step: int,
    draws: int = 50,
    seed: int = 0,
) -> ExpectedTau:
    """Return the expected τ-b between the runs' ranking now and after ``step`` judgments.

    ``scorer`` maps per-query labels (NaN: unjudged) to a (runs × queries) score matrix;
    runs are ranked by their mean over queries. The next pairs are ``planned`` in order,
    then, if the plan is shorter than ``step``, a random draw (per draw) of the other
    ``open_pairs``. Each pair's grade is drawn from ``prior[q][d]``.
    """
    rng = np.random.default_rng(seed)
    now = scorer(list(known)).mean(axis=1)
    head = list(dict.fromkeys(planned))[:step]
    taken = set(head)
    rest = [p for p in dict.fromkeys(open_pairs) if p not in taken]
    extra = max(0, min(step - len(head), len(rest)))
    pairs = len(head) + extra
    if pairs == 0:
        return ExpectedTau(mean=1.0, low=1.0, pairs=0, draws=0)
    taus = np.empty(draws, dtype=np.float64)
    for i in range(draws):
        chosen = head
        if extra:
            pick = rng.choice(len(rest), size=extra, replace=False)
            chosen = head + [rest[j] for j in pick.tolist()]
        labels = [k.copy() for k in known]
        for q, d in chosen:
            labels[q][d] = float(rng.choice(GRADES, p=prior[q][d]))
        taus[i] = _tau(scorer(labels).mean(axis=1), now)
    finite = taus[np.isfinite(taus)]
    if finite.size == 0:
        return ExpectedTau(mean=float("nan"), low=float("nan"), pairs=pairs, draws=draws)
    return ExpectedTau(
        mean=float(finite.mean()),
        low=float(np.percentile(finite, 10)),
        pairs=pairs,
        draws=draws,
    )


def verdict(
    *, looking_back: float | None, ahead: ExpectedTau | None, open_pairs: int, target: float
) -> tuple[str, str]:
    """Return (state, sentence) for the collection page: whether more judging pays.

    States: ``done`` (no open pair), ``unknown`` (too little history or too few runs),
    ``moving`` (a τ under the target), ``stops-paying`` (both at or over the target).
    """
    if open_pairs == 0:
        return "done", "Every pooled pair is judged."
    back_ok = looking_back is not None and np.isfinite(looking_back)
    ahead_ok = ahead is not None and np.isfinite(ahead.mean)
    if not back_ok or not ahead_ok:
        return "unknown", "Not enough history or runs yet to say how stable the ranking is."
    if looking_back >= target and ahead.mean >= target:
        return (
            "stops-paying",
            f"The ranking held (τ ≥ {target:g}) over the last judgments and is expected to "
            "hold over the next ones: more judging stops paying for this ranking.",
        )
    return "moving", f"The ranking is still moving (τ under {target:g}): judging pays."
