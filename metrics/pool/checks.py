"""LLM first, humans check what matters: the order of the human checks (pure; no Django).

An LLM judge labels the pool first; humans are then sent the pairs where a human grade
is worth most. A pair's *check score* is the sum of two parts, each in [0, 1]:

* **How unsure the LLM is** (:func:`llm_uncertainty`), the largest of
  - its abstention probability (the judge's own estimate that it cannot tell);
  - half the spread of the grades the collection's LLM judges gave the pair (two judges
    two grades apart, or more, count 1): disagreement between LLM judges, or between
    repeated samples registered as judges of one model;
  - closeness of the LLM grade to the relevance cut: 1 when the mean LLM grade sits half
    way between ``rel_level - 1`` and ``rel_level``, ½ for either grade next to the cut,
    0 from two grades away.
  A pair no LLM judge graded counts as fully unsure (1).
* **How much its grade can move the ranking**: the ``swap`` strategy's weight of the
  pair (:meth:`metrics.pool.strategies.Swap.impact`) under the current live grades,
  divided by the largest weight (0 everywhere when no pair can move any run).

:func:`check_order` returns the pairs still open for human grades, highest score first
(scores equal to :data:`~metrics.pool.strategies.TIE_DIGITS` decimals are ties, so the
order is the same on every CPU; ties: query, then document code). Edge cases: NaN
abstention counts 0; a NaN impact counts 0; an empty campaign gives no pairs.

**The random audit.** Chosen pairs are not a sample, so agreement on them does not
estimate the LLM's agreement elsewhere. With an audit share *s*, the pairs of the audit
sample (:func:`judging.agreement.checks.pair_audit_draws` below *s*: every pair of a
sampled query) are kept out of the scored order and take every slot where the audit has
had fewer than *s* of the slots so far, in the order of their draws (the pairs of one
query share its draw, so they come together, by document); when either list runs out
the other fills the rest.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from metrics.pool.strategies import TIE_DIGITS

F64 = NDArray[np.float64]
Pair = tuple[int, int]


def llm_uncertainty(mean: F64, spread: F64, abstain: F64, *, rel_level: float = 1.0) -> F64:
    """Return how unsure the LLM judges are of each pair, in [0, 1] (see module)."""
    mean = np.asarray(mean, dtype=np.float64)
    near = np.clip(1.0 - np.abs(mean - (rel_level - 0.5)), 0.0, 1.0)
    spread_part = np.clip(np.nan_to_num(np.asarray(spread, dtype=np.float64)) / 2.0, 0.0, 1.0)
    abstain_part = np.clip(np.nan_to_num(np.asarray(abstain, dtype=np.float64)), 0.0, 1.0)
    out = np.maximum(np.maximum(np.nan_to_num(near), spread_part), abstain_part)
    out[np.isnan(mean)] = 1.0
    return out


def check_scores(uncertainty: Sequence[F64], impact: Sequence[F64]) -> list[F64]:
    """Return each pair's check score: uncertainty plus impact over the largest impact."""
    top = max((float(np.nanmax(w)) for w in impact if w.size), default=0.0)
    out = []
    for u, w in zip(uncertainty, impact, strict=True):
        scaled = np.nan_to_num(w) / top if top > 0 else np.zeros_like(u)
        out.append(np.asarray(u, dtype=np.float64) + scaled)
    return out


def check_order(
    scores: Sequence[F64],
    eligible: Sequence[NDArray[np.bool_]],
    n: int,
    *,
    draws: Sequence[F64] | None = None,
    audit_share: float = 0.0,
) -> list[Pair]:
    """Return ``n`` eligible pairs: highest scores first, audit pairs in their share of slots.

    ``draws[q][d]`` is pair (q, d)'s audit draw; those below ``audit_share`` form the audit
    sample (see the module). Without draws, or with a share of 0, it is the scored order.
    """
    if n <= 0:
        return []
    if draws is None or audit_share <= 0:
        audit = [np.zeros(len(ok), dtype=bool) for ok in eligible]
    else:
        audit = [np.asarray(r, dtype=np.float64) < audit_share for r in draws]
    scored = sorted(
        (-round(float(s[d]), TIE_DIGITS), q, d)
        for q, (s, ok, a) in enumerate(zip(scores, eligible, audit, strict=True))
        for d in np.flatnonzero(ok & ~a).tolist()
    )
    sampled: list[tuple[float, int, int]] = []
    if draws is not None:
        sampled = sorted(
            (float(r[d]), q, d)
            for q, (r, ok, a) in enumerate(zip(draws, eligible, audit, strict=True))
            for d in np.flatnonzero(ok & a).tolist()
        )
    out: list[Pair] = []
    i = j = 0
    while len(out) < n and (i < len(scored) or j < len(sampled)):
        audit_turn = j < len(sampled) and (i >= len(scored) or j < audit_share * (len(out) + 1))
        if audit_turn:
            out.append(sampled[j][1:])
            j += 1
        else:
            out.append(scored[i][1:])
            i += 1
    return out
