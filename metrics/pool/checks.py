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
(ties: query, then document code). Edge cases: NaN abstention counts 0; a NaN impact
counts 0; an empty campaign gives no pairs.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

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


def check_order(scores: Sequence[F64], eligible: Sequence[NDArray[np.bool_]], n: int) -> list[Pair]:
    """Return the ``n`` eligible pairs with the highest scores, highest first."""
    if n <= 0:
        return []
    pairs = [
        (-float(s[d]), q, d)
        for q, (s, ok) in enumerate(zip(scores, eligible, strict=True))
        for d in np.flatnonzero(ok).tolist()
    ]
    pairs.sort()
    return [(q, d) for _, q, d in pairs[:n]]
