"""How the judges' abstention probabilities of a pair become the live list's one value.

UDCG (``metrics/engine/udcg.py``) weighs every retrieved document by ``1 - p0``, where
``p0`` is the probability that the document, given alone as context, makes an LLM
abstain. Judges record it per judgment (``Judgment.abstain_probability``, 0–1 or
empty); the live judgment list keeps one value per (query, document) pair in
``LiveGrade.abstain_probability``, which the live scorer passes to the engine.

Rule (pure, vectorised, numpy only): among the pair's **graded** judgments that
recorded a probability, take those of human judges if there are any, else those of
LLM judges — the human-first preference of every aggregation policy in
:mod:`judging.aggregation` — and keep their arithmetic mean. A pair none of whose
graded judgments recorded a probability has none (NaN here, NULL in the database),
which UDCG counts as 0, exactly as the engine does for a qrels without probabilities.

Unlike the grade, the probability is chosen among the judgments that *recorded* one:
a human grade without a probability does not hide an LLM's recorded probability of
the same pair (the probability is an LLM-side observation that humans rarely give).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["aggregate_abstain"]


def aggregate_abstain(
    pair_index: npt.ArrayLike,
    probabilities: npt.ArrayLike,
    is_human: npt.ArrayLike,
    n_pairs: int,
) -> npt.NDArray[np.float64]:
    """Return one aggregated abstention probability per pair ``0 .. n_pairs - 1``.

    ``pair_index`` (int), ``probabilities`` (float, NaN where not recorded) and
    ``is_human`` (bool) describe one graded judgment each. The result is NaN for a
    pair without any recorded probability. Raises ValueError if the arrays differ in
    length, a pair index lies outside ``0 .. n_pairs - 1`` or a recorded probability
    lies outside 0–1.
    """
    pairs = np.asarray(pair_index, dtype=np.int64).ravel()
    p = np.asarray(probabilities, dtype=np.float64).ravel()
    human = np.asarray(is_human, dtype=bool).ravel()
    if not pairs.shape == p.shape == human.shape:
        raise ValueError("pair_index, probabilities and is_human must have one length.")
    if pairs.size and (pairs.min() < 0 or pairs.max() >= n_pairs):
        raise ValueError(f"pair_index must lie in 0..{n_pairs - 1}.")
    recorded = ~np.isnan(p)
    if recorded.any() and (p[recorded].min() < 0.0 or p[recorded].max() > 1.0):
        raise ValueError("abstention probabilities must lie in [0, 1].")
    out = np.full(n_pairs, np.nan)
    if not recorded.any():
        return out
    has_human = np.zeros(n_pairs, dtype=bool)
    has_human[pairs[recorded & human]] = True
    keep = recorded & (human | ~has_human[pairs])
    sums = np.bincount(pairs[keep], weights=p[keep], minlength=n_pairs)
    counts = np.bincount(pairs[keep], minlength=n_pairs)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = sums / counts
    out[counts > 0] = mean[counts > 0]
    return out
