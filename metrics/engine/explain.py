"""Explain one query's NDCG@k: each rank's gain and discounted contribution, and the ideal.

Pure numpy (no Django). Mirrors :func:`metrics.engine.core._ndcg` for one query so a page
can show *why* a run scored what it did; the tests check it against the engine on the same
input for every flavour.

Edge cases:
- unjudged documents (label NaN) have gain 0; with ``judged_only`` they are removed before
  the cut-off, so later documents move up (as the engine does);
- negative labels gain 0;
- an ideal DCG of 0 gives the flavour's ``empty`` value (0, 1 or NaN for ``skip``);
- ``ideal=recall`` sorts the gains of every retrieved document, ``local`` those of the
  top k, ``global`` every judged label of the query, ``max`` fills the k ranks with the
  scale's top grade.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from metrics.engine.core import discounts, gain_function
from metrics.engine.measures import Measure


@dataclass(frozen=True)
class RankedGain:
    """One rank of a ranking: its label (NaN = unjudged), gain, discount and contribution."""

    rank: int
    index: int
    label: float
    gain: float
    discount: float
    contribution: float


@dataclass(frozen=True)
class NdcgExplanation:
    """A ranking's DCG@k terms, the ideal ranking's terms and the resulting NDCG@k."""

    cutoff: int
    ranked: list[RankedGain]
    ideal: list[RankedGain]
    dcg: float
    ideal_dcg: float
    ndcg: float


def _terms(labels: np.ndarray, gains: np.ndarray, disc: np.ndarray, index: np.ndarray) -> list:
    return [
        RankedGain(
            rank=i + 1,
            index=int(index[i]),
            label=float(labels[i]),
            gain=float(gains[i]),
            discount=float(disc[i]),
            contribution=float(gains[i] * disc[i]),
        )
        for i in range(len(labels))
    ]


def explain_ndcg(
    measure: Measure, ranked_labels: ArrayLike, judged_labels: ArrayLike
) -> NdcgExplanation:
    """Return the NDCG terms of one query.

    ``ranked_labels`` are the live labels of the run's documents in rank order (NaN for
    unjudged), the whole ranking; ``judged_labels`` every live label of the query. Ideal
    entries' ``index`` points into ``judged_labels`` (global) or ``ranked_labels`` (others;
    -1 for ``max``). ``measure.cutoff`` None means the whole ranking.
    """
    if measure.family != "nDCG":
        raise ValueError(f"not an nDCG measure: {measure.canonical}")
    ranked = np.asarray(ranked_labels, dtype=np.float64)
    judged = np.asarray(judged_labels, dtype=np.float64)
    positions = np.arange(len(ranked))
    if measure.judged_only:
        keep = ~np.isnan(ranked)
        ranked, positions = ranked[keep], positions[keep]
    k = measure.cutoff if measure.cutoff is not None else len(ranked)
    gain_fn, _monotone = gain_function(measure)
    top, top_pos = ranked[:k], positions[:k]
    disc = discounts(measure.discount, max(k, len(top), 1))
    gains = gain_fn(top)
    ranked_terms = _terms(top, gains, disc, top_pos)
    dcg = float(np.sum(gains * disc[: len(top)]))

    if measure.ideal == "max":
        top_gain = float(gain_fn(np.array([measure.top]))[0])
        n = k if measure.cutoff is not None else len(ranked)
        labels = np.full(n, measure.top)
        ideal_gains = np.full(n, max(top_gain, 0.0))
        ideal_index = np.full(n, -1)
    else:
        if measure.ideal == "global":
            source = judged
        elif measure.ideal == "recall":
            source = ranked
        else:  # local
            source = top
        source_gains = gain_fn(source)
        order = np.argsort(-source_gains, kind="stable")
        order = order[source_gains[order] > 0]
        if measure.cutoff is not None:
            order = order[:k]
        labels = source[order]
        ideal_gains = source_gains[order]
        ideal_index = order if measure.ideal == "global" else positions[order]
    ideal_disc = discounts(measure.discount, max(len(labels), 1))
    ideal_terms = _terms(labels, ideal_gains, ideal_disc, ideal_index)
    ideal_dcg = float(np.sum(ideal_gains * ideal_disc[: len(labels)]))
    if ideal_dcg > 0:
        ndcg = dcg / ideal_dcg
    else:
        ndcg = {"zero": 0.0, "one": 1.0, "skip": float("nan")}[measure.empty]
    return NdcgExplanation(
        cutoff=k,
        ranked=ranked_terms,
        ideal=ideal_terms,
        dcg=dcg,
        ideal_dcg=ideal_dcg,
        ndcg=ndcg,
    )
