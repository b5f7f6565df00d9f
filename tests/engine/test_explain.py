"""The NDCG explanation adds up to the engine's NDCG for every flavour (differential test)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.engine import evaluate, parse_measure
from metrics.engine.explain import explain_ndcg

FLAVOURS = [
    "nDCG@10",
    "nDCG(gain=exp)@10",
    "nDCG(discount=jk)@5",
    "nDCG(discount=rank,ideal=local)@10",
    "nDCG(ideal=recall)@3",
    "nDCG(ideal=max)@10",
    "nDCG(judged_only=true)@10",
    "nDCG(gain={0:0,1:1,2:5,3:6,4:10})@10",
    "nDCG(empty=one)@10",
    "nDCG",
]


def world(seed: int) -> tuple[list[float], list[float], bytes, bytes]:
    """Return ranked labels (NaN unjudged), judged labels, and the same as qrels and run text."""
    rng = np.random.default_rng(seed)
    n_docs = int(rng.integers(1, 25))
    labels = {f"d{i}": float(rng.integers(0, 5)) for i in range(n_docs) if rng.random() < 0.6}
    if seed % 5 == 0:
        labels = dict.fromkeys(labels, 0.0)  # an ideal DCG of zero
    ranked_docs = [f"d{i}" for i in rng.permutation(n_docs)[: int(rng.integers(1, n_docs + 1))]]
    qrels = "".join(f"q1 0 {d} {int(g)}\n" for d, g in labels.items()) or "q2 0 x 1\n"
    run = "".join(f"q1 Q0 {d} {r + 1} {100 - r} t\n" for r, d in enumerate(ranked_docs))
    ranked = [labels.get(d, math.nan) for d in ranked_docs]
    return ranked, list(labels.values()), qrels.encode(), run.encode()


@pytest.mark.parametrize("name", FLAVOURS)
@pytest.mark.parametrize("seed", range(12))
def test_explanation_matches_the_engine(name, seed):
    ranked, judged, qrels, run = world(seed)
    if not judged:
        pytest.skip("query without judgments is not scored")
    expected = evaluate(qrels, run, [name]).value(name, "q1")
    got = explain_ndcg(parse_measure(name)[0], ranked, judged)
    if math.isnan(expected):
        assert math.isnan(got.ndcg)
    else:
        assert got.ndcg == pytest.approx(expected, abs=1e-12)
    assert got.dcg == pytest.approx(sum(t.contribution for t in got.ranked), abs=1e-12)
    assert got.ideal_dcg == pytest.approx(sum(t.contribution for t in got.ideal), abs=1e-12)
    assert [t.rank for t in got.ranked] == list(range(1, len(got.ranked) + 1))


def test_hand_computed_example():
    # Ranking: grade 3, unjudged, grade 0, grade 2; judged: 3, 0, 2, 4 (4 not retrieved).
    got = explain_ndcg(parse_measure("nDCG@3")[0], [3, math.nan, 0, 2], [3, 0, 2, 4])
    assert [t.gain for t in got.ranked] == [3, 0, 0]
    assert [round(t.discount, 6) for t in got.ranked] == [1.0, 0.63093, 0.5]
    assert got.dcg == pytest.approx(3.0)
    assert [t.label for t in got.ideal] == [4, 3, 2]
    assert [t.index for t in got.ideal] == [3, 0, 2]
    assert got.ideal_dcg == pytest.approx(4 + 3 / math.log2(3) + 2 / 2)
    assert got.ndcg == pytest.approx(3.0 / (4 + 3 / math.log2(3) + 1))


def test_refuses_other_measures():
    with pytest.raises(ValueError):
        explain_ndcg(parse_measure("P@10")[0], [1.0], [1.0])
