"""UDCG (Trappolini et al. 2025) against the reference oracles and edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine.udcg import DEFAULT_W_IRR, udcg, udcg_single

# Examples 1-3 of data/dataset_with_udcg.json in GiovanniTRA/UDCG (Llama-3.2-3B-Instruct),
# computed there with irrelevant_weight = -0.333 and k = the number of passages.
ORACLES = [
    (
        [2.086162567138672e-06, 1.341104507446289e-05],
        [0.1318359375, 0.1812744140625, 0.02081298828125],
        0.5553808928170055,
    ),
    (
        [5.960464477539063e-08, 6.616115570068359e-06],
        [0.00018215179443359375, 0.006114959716796875, 0.0093536376953125],
        0.5501411475208001,
    ),
    (
        [3.0100345611572266e-05],
        [
            0.00010311603546142578,
            0.007602691650390625,
            0.01299285888671875,
            0.00013053417205810547,
        ],
        0.4837510250741193,
    ),
]
W_REF = -0.333


def _reference(rel: list[bool], p0: list[float], w_irr: float) -> float:
    """Straight transcription of the formula (sequential sum, mean, sigmoid)."""
    if not rel:
        return 0.0
    s = 0.0
    for r, p in zip(rel, p0, strict=True):
        s += (1.0 - p) * (1.0 if r else w_irr)
    return 1.0 / (1.0 + math.exp(-s / len(rel)))


@pytest.mark.parametrize(("p_rel", "p_irr", "expected"), ORACLES)
@pytest.mark.parametrize("order", ["relevant_first", "irrelevant_first", "interleaved"])
def test_reference_oracles(p_rel, p_irr, expected, order):
    docs = [(True, p) for p in p_rel] + [(False, p) for p in p_irr]
    if order == "irrelevant_first":
        docs = docs[len(p_rel) :] + docs[: len(p_rel)]
    elif order == "interleaved":
        docs = docs[::2] + docs[1::2]
    rel = [r for r, _ in docs]
    p0 = [p for _, p in docs]
    assert udcg_single(rel, p0, w_irr=W_REF) == pytest.approx(expected, abs=1e-12)
    # k equal to (or above) the number of passages changes nothing.
    assert udcg_single(rel, p0, k=len(rel), w_irr=W_REF) == pytest.approx(expected, abs=1e-12)
    assert udcg_single(rel, p0, k=100, w_irr=W_REF) == pytest.approx(expected, abs=1e-12)


def test_oracles_vectorised_in_one_call():
    depth = 5
    rel = np.zeros((3, depth), dtype=bool)
    p0 = np.full((3, depth), np.nan)
    n_ret = []
    for q, (p_rel, p_irr, _) in enumerate(ORACLES):
        ps = p_rel + p_irr
        rel[q, : len(p_rel)] = True
        p0[q, : len(ps)] = ps
        n_ret.append(len(ps))
    got = udcg(rel, p0, np.array(n_ret), w_irr=W_REF)
    assert got == pytest.approx([o[2] for o in ORACLES], abs=1e-12)


def test_default_weight_is_minus_one_third():
    assert DEFAULT_W_IRR == -1 / 3
    p_rel, p_irr, expected = ORACLES[0]
    rel = [True] * len(p_rel) + [False] * len(p_irr)
    got = udcg_single(rel, p_rel + p_irr)
    assert got == pytest.approx(_reference(rel, p_rel + p_irr, -1 / 3), abs=1e-15)
    assert abs(got - expected) > 1e-5  # the oracle really depends on -0.333


def test_cutoff_takes_top_k_and_averages_over_them():
    rel = [True, False, True, False]
    p0 = [0.1, 0.2, 0.3, 0.4]
    assert udcg_single(rel, p0, k=2) == pytest.approx(
        1 / (1 + math.exp(-((0.9 - 0.8 / 3) / 2))), abs=1e-15
    )
    assert udcg_single(rel, p0, k=1) == pytest.approx(1 / (1 + math.exp(-0.9)), abs=1e-15)


def test_shorter_ranking_than_k_averages_over_retrieved():
    # n = min(k, n_ret): a 2-document ranking at k = 10 is the 2-passage context.
    assert udcg_single([True, False], [0.0, 0.0], k=10) == udcg_single([True, False], [0, 0])
    assert udcg_single([True], [0.0], k=10) == pytest.approx(1 / (1 + math.exp(-1)))


def test_padding_beyond_n_ret_is_ignored():
    rel = np.array([[True, False, True, True]])
    p0 = np.array([[0.5, 0.5, 0.0, 0.0]])
    assert udcg(rel, p0, [2])[0] == udcg_single([True, False], [0.5, 0.5])


def test_missing_abstention_probability_counts_as_zero():
    rel = [True, False, False]
    assert udcg_single(rel, [np.nan, 0.0, np.nan]) == udcg_single(rel, [0.0, 0.0, 0.0])
    assert udcg_single(rel, None) == udcg_single(rel, [0.0, 0.0, 0.0])


def test_unjudged_counts_as_irrelevant():
    # relevant = ranked_labels >= level is False for NaN (unjudged).
    labels = np.array([[2.0, np.nan, 0.0]])
    got = udcg(labels >= 1, None, [3])[0]
    assert got == pytest.approx(_reference([True, False, False], [0, 0, 0], -1 / 3))


def test_empty_ranking_scores_zero():
    assert udcg_single([], []) == 0.0
    got = udcg(np.zeros((2, 3), dtype=bool), None, [0, 3], k=5)
    assert got[0] == 0.0
    assert got[1] == pytest.approx(1 / (1 + math.exp(1 / 3)))


def test_zero_queries():
    assert udcg(np.zeros((0, 4), dtype=bool), None, np.zeros(0, dtype=int)).shape == (0,)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 0}, "k must be"),
        ({"abstain": [[1.5, 0.0]]}, r"\[0, 1\]"),
        ({"abstain": [[-0.1, 0.0]]}, r"\[0, 1\]"),
        ({"abstain": [[0.0]]}, "shape"),
        ({"n_ret": [3]}, "n_ret"),
        ({"n_ret": [1, 1]}, "n_ret"),
    ],
)
def test_invalid_input(kwargs, message):
    args = {"relevant": [[True, False]], "abstain": None, "n_ret": [2]} | kwargs
    with pytest.raises(ValueError, match=message):
        udcg(**args)


@settings(max_examples=200, deadline=None)
@given(
    docs=st.lists(
        st.tuples(st.booleans(), st.floats(0.0, 1.0)),
        min_size=0,
        max_size=12,
    ),
    k=st.one_of(st.none(), st.integers(1, 15)),
    w_irr=st.floats(-2.0, 0.0),
)
def test_matches_reference_formula(docs, k, w_irr):
    rel = [r for r, _ in docs]
    p0 = [p for _, p in docs]
    top = len(docs) if k is None else min(k, len(docs))
    expected = _reference(rel[:top], p0[:top], w_irr)
    assert udcg_single(rel, p0, k=k, w_irr=w_irr) == pytest.approx(expected, abs=1e-12)
    # Order within the top k does not matter.
    assert udcg_single(rel[:top][::-1], p0[:top][::-1], w_irr=w_irr) == pytest.approx(
        expected, abs=1e-12
    )
