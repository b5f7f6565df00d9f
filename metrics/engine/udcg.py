"""UDCG: utility and distraction-aware cumulative gain.

Implements the measure of Trappolini et al., "Redefining Retrieval Evaluation
in the Era of LLMs" (2025)::

    UDCG@k = sigmoid( (1/n) * sum_{i <= n} w_i * (1 - p0_i) ),   n = min(k, n_ret)

where ``w_i`` is ``w_rel`` (+1) for a relevant document and ``w_irr`` (-1/3 by
default) otherwise, and ``p0_i`` is the judge-supplied probability that the
document, given alone as context, makes an LLM abstain.

Conventions (they are part of the measure's definition in Graded):

* **Denominator.** The mean runs over the passages actually in the context,
  ``n = min(k, n_ret)``; with ``k=None`` every retrieved document is in the
  context.  This is what the reference implementation (GiovanniTRA/UDCG,
  ``compute_udcg_score``) does: it divides by the number of passages it is
  given.  A ranking shorter than ``k`` is therefore *not* padded with
  zero-utility slots: UDCG models the context an LLM actually reads, and a
  shorter context containing the same passages is neither rewarded nor
  punished for its length alone.
* **Unjudged documents** are irrelevant (weight ``w_irr``).
* **Missing abstention probabilities** (NaN) count as ``p0 = 0``: the document
  contributes its full weight.  (The reference code instead skips such a
  passage in the sum while still counting it in the denominator; Graded
  follows the measure's definition, "0 when absent".)
* **Empty ranking** (``n_ret == 0``) scores ``0.0``, as in the reference code;
  note that this is below the score of any non-empty context (the sigmoid is
  strictly positive).
* The sum is order-independent: the ranking only matters through which
  documents fall into the top ``k``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["DEFAULT_W_IRR", "udcg", "udcg_single"]

#: Weight of an irrelevant document in the paper and the reference code.
DEFAULT_W_IRR: float = -1.0 / 3.0


def udcg(
    relevant: ArrayLike,
    abstain: ArrayLike | None,
    n_ret: ArrayLike,
    k: int | None = None,
    *,
    w_irr: float = DEFAULT_W_IRR,
    w_rel: float = 1.0,
) -> NDArray[np.float64]:
    """Return UDCG@k for every query of a padded ranking matrix.

    Args:
        relevant: Boolean array ``(Q, depth)``; ``relevant[q, i]`` says whether the
            document at rank ``i + 1`` of query ``q`` is relevant (grade at or above
            the relevance level; derive it as ``ranked_labels >= level``, which is
            False for NaN, i.e. unjudged).  Entries at ``i >= n_ret[q]`` are ignored.
        abstain: Float array ``(Q, depth)`` of abstention probabilities in
            ``[0, 1]``; NaN (not supplied) counts as 0.  ``None`` means 0 everywhere.
        n_ret: Integer array ``(Q,)``: number of retrieved documents per query
            (``0 <= n_ret <= depth``).
        k: Cutoff; ``None`` uses every retrieved document.
        w_irr: Weight of an irrelevant (or unjudged) document.
        w_rel: Weight of a relevant document.

    Returns:
        Float array ``(Q,)`` in ``(0, 1)``; exactly ``0.0`` for an empty ranking.

    Raises:
        ValueError: On mismatched shapes, ``k < 1``, ``n_ret`` outside
            ``[0, depth]`` or an abstention probability outside ``[0, 1]``.
    """
    rel = np.asarray(relevant, dtype=bool)
    if rel.ndim != 2:
        raise ValueError(f"relevant must be 2-D (Q, depth), got shape {rel.shape}")
    n_q, depth = rel.shape
    if abstain is None:
        p0 = np.zeros(rel.shape, dtype=np.float64)
    else:
        p0 = np.asarray(abstain, dtype=np.float64)
        if p0.shape != rel.shape:
            raise ValueError(f"abstain has shape {p0.shape}, relevant has {rel.shape}")
        finite = p0[~np.isnan(p0)]
        if finite.size and (finite.min() < 0.0 or finite.max() > 1.0):
            raise ValueError("abstention probabilities must lie in [0, 1]")
        p0 = np.nan_to_num(p0, nan=0.0)
    n = np.asarray(n_ret, dtype=np.int64).reshape(-1)
    if n.shape != (n_q,):
        raise ValueError(f"n_ret has shape {n.shape}, expected ({n_q},)")
    if n.size and (n.min() < 0 or n.max() > depth):
        raise ValueError(f"n_ret must lie in [0, {depth}]")
    if k is not None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        n = np.minimum(n, k)

    in_context = np.arange(depth)[None, :] < n[:, None]
    weights = np.where(rel, w_rel, w_irr)
    contrib = np.where(in_context, weights * (1.0 - p0), 0.0)
    total = contrib.sum(axis=1)
    out = np.zeros(n_q, dtype=np.float64)
    nonempty = n > 0
    mean = total[nonempty] / n[nonempty]
    out[nonempty] = 1.0 / (1.0 + np.exp(-mean))
    return out


def udcg_single(
    relevant: ArrayLike,
    abstain: ArrayLike | None = None,
    k: int | None = None,
    *,
    w_irr: float = DEFAULT_W_IRR,
    w_rel: float = 1.0,
) -> float:
    """Return UDCG@k of one ranking given as 1-D arrays (convenience wrapper).

    ``relevant`` and ``abstain`` list the retrieved documents in rank order; all
    of them count as retrieved.  See :func:`udcg` for the conventions.
    """
    rel = np.asarray(relevant, dtype=bool).reshape(1, -1)
    p0 = None if abstain is None else np.asarray(abstain, dtype=np.float64).reshape(1, -1)
    return float(udcg(rel, p0, [rel.shape[1]], k, w_irr=w_irr, w_rel=w_rel)[0])
