"""Reference values every NDCG flavour must reproduce."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.engine import evaluate_ranked

JUDGED = [np.array([1.0, 0.9, 0.7, 0.1, 0.1])]
RANKED = np.array([[0.1, 1.0, 0.7]])


@pytest.mark.parametrize(
    ("ideal", "expected"),
    [("local", 4 / 7), ("recall", 4 / 9), ("global", 0.6 / 1.45), ("max,top=1", 0.4)],
)
def test_rank_discount_ideals(ideal, expected):
    name = f"nDCG(discount=rank,ideal={ideal})@2"
    (values,) = evaluate_ranked(RANKED, [3], JUDGED, [name]).values()
    assert values[0] == pytest.approx(expected, abs=1e-12)


def test_rank_discount_ideals_spelled_out():
    out = evaluate_ranked(
        RANKED,
        [3],
        JUDGED,
        [
            "nDCG(discount=rank,ideal=local)@2",
            "nDCG(discount=rank,ideal=recall)@2",
            "nDCG(discount=rank,ideal=global)@2",
        ],
    )
    assert [round(float(v[0]), 6) for v in out.values()] == [0.571429, 0.444444, 0.413793]
    max_flavour = evaluate_ranked(
        RANKED, [3], JUDGED, ["nDCG(discount=rank,ideal=max)@2"], scale_top=1.0
    )
    assert list(max_flavour) == ["nDCG(gain=linear,discount=rank,ideal=max,top=1,empty=zero)@2"]
    assert next(iter(max_flavour.values()))[0] == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("flavour", "expected"),
    [
        ("gain=linear,discount=log2", 0.9508326649),
        ("gain=exp,discount=log2", 0.9517613985),
        ("gain=linear,discount=jk", 0.9077859522),
    ],
)
def test_recall_ideal_grades_4203(flavour, expected):
    ranked = np.array([[4.0, 2.0, 0.0, 3.0]])
    out = evaluate_ranked(ranked, [4], [ranked[0]], [f"nDCG({flavour},ideal=recall)@10"])
    assert next(iter(out.values()))[0] == pytest.approx(expected, abs=1e-10)


@pytest.mark.parametrize(("empty", "expected"), [("one", 1.0), ("zero", 0.0)])
@pytest.mark.parametrize("ideal", ["local", "recall", "global", "max"])
def test_no_relevant_document_empty_policy(empty, expected, ideal):
    ranked = np.array([[0.0, np.nan, 0.0]])
    judged = [np.array([0.0, 0.0, -1.0])]
    name = f"nDCG(ideal={ideal},empty={empty})@10"
    if ideal == "max":  # the max ideal is empty only when the scale's top grade has no gain
        name = f"nDCG(ideal=max,top=0,empty={empty})@10"
    out = evaluate_ranked(ranked, [3], judged, [name])
    assert next(iter(out.values()))[0] == expected


def test_no_relevant_document_skip_is_left_out_of_the_mean():
    from metrics.engine import Qrels, Run, evaluate

    qrels = Qrels.from_arrays(["a", "a", "b"], ["d1", "d2", "d1"], [2, 0, 0])
    run = Run.from_arrays(["a", "a", "b"], ["d1", "d2", "d1"], [2.0, 1.0, 1.0])
    res = evaluate(qrels, run, ["nDCG(empty=skip)@10", "nDCG(empty=one)@10", "nDCG@10"])
    skip, one, zero = (res.per_query[m.canonical] for m in res.measures)
    assert res.qids == ["a", "b"]
    assert skip[0] == 1.0 and np.isnan(skip[1])
    assert list(one) == [1.0, 1.0] and list(zero) == [1.0, 0.0]
    assert res.aggregates[res.measures[0].canonical] == 1.0  # b left out
    assert res.aggregates[res.measures[2].canonical] == 0.5


def test_default_flavour_is_trec_ndcg_cut():
    from metrics.engine import measure_info

    m = measure_info("nDCG@10")
    assert m.canonical == "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"
    assert m.trec_name == "ndcg_cut.10"
    assert measure_info("ndcg_cut.10").canonical == m.canonical
    assert measure_info("nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10") == m
