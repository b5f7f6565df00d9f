"""Differential tests: the engine against pytrec_eval (trec_eval) on generated data.

pytrec_eval evaluates only queries present in both the qrels and the run, and
compares scores as 32-bit floats; every generated score is exactly representable
in float32 so both tools rank identically.  trec_eval 10's double comparison is
tested on its own at the end.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.engine import Qrels, Run, evaluate, parse_measures

pytrec_eval = pytest.importorskip("pytrec_eval")

TREC_MEASURES = [
    "ndcg",
    "ndcg_cut.1,5,10,20",
    "map",
    "map_cut.5,10,100",
    "P.1,5,10,30",
    "recall.5,10,100",
    "recip_rank",
    "Rprec",
    "bpref",
    "success.1,5,10",
    "num_ret",
    "num_rel",
    "num_rel_ret",
]


def make_collection(seed: int, n_queries: int = 1200):
    """Return (qrels dict, run dict) with ties, unjudged and negative labels, short runs..."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n_queries):
        qid = f"{q:04d}" if q % 3 else f"q{q}"
        kind = q % 20
        n_docs = int(rng.integers(1, 70))
        # docnos of varying lengths sharing prefixes, so byte order matters for ties
        docs = [f"D{int(i)}" if i % 3 else f"d{int(i):03d}x" for i in rng.permutation(500)[:n_docs]]
        labels = rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4], size=n_docs)
        if kind == 3:  # no relevant document at all
            labels = rng.choice([-1, 0], size=n_docs)
        judged = rng.random(n_docs) < 0.7
        if kind != 5:  # kind 5: the query is only in the run
            qrels[qid] = {d: int(lab) for d, lab, j in zip(docs, labels, judged, strict=True) if j}
            if not qrels[qid]:
                qrels[qid] = {docs[0]: int(labels[0])}
        if kind == 7:  # the query is only in the qrels
            continue
        n_ret = int(rng.integers(1, 45)) if kind != 9 else int(rng.integers(1, 4))
        extra = [f"u{q}_{i}" for i in range(int(rng.integers(0, 10)))]  # never judged
        pool = docs + extra
        ret = [pool[i] for i in rng.permutation(len(pool))[:n_ret]]
        # float32-exact scores with many exact ties
        scores = rng.integers(0, 12, size=len(ret)) / 4.0 - 1.0
        run[qid] = {d: float(s) for d, s in zip(ret, scores, strict=True)}
    return qrels, run


def to_engine(qrels: dict, run: dict) -> tuple[Qrels, Run]:
    qq = [(q, d, lab) for q, docs in qrels.items() for d, lab in docs.items()]
    rr = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    order = np.random.default_rng(0).permutation(len(rr))  # file order must not matter
    rr = [rr[i] for i in order]
    return (
        Qrels.from_arrays([x[0] for x in qq], [x[1] for x in qq], [x[2] for x in qq]),
        Run.from_arrays([x[0] for x in rr], [x[1] for x in rr], [x[2] for x in rr], tag="gen"),
    )


@pytest.fixture(scope="module")
def collection():
    qrels, run = make_collection(20250601)
    return qrels, run, *to_engine(qrels, run)


def compare(expected: dict, result, measures, *, key=lambda m: m.trec_output_name) -> int:
    checked = 0
    assert sorted(expected) == sorted(result.qids)
    for m in measures:
        values = result.per_query[m.canonical]
        for i, qid in enumerate(result.qids):
            want = expected[qid][key(m)]
            assert values[i] == pytest.approx(want, abs=1e-9, rel=0), (m.display, qid)
            checked += 1
    return checked


def test_collection_has_the_hard_cases(collection):
    qrels, run, _, _ = collection
    assert len(set(qrels) & set(run)) >= 1000
    assert set(run) - set(qrels) and set(qrels) - set(run)
    ties = sum(len(set(s.values())) < len(s) for s in run.values())
    assert ties > 500
    assert any(min(v.values()) < 0 for v in qrels.values())
    assert any(max(v.values()) <= 0 for v in qrels.values())
    assert any(len(v) < 5 for v in run.values())


def test_trec_measures_match_pytrec_eval(collection):
    qrels, run, eq, er = collection
    measures = parse_measures(TREC_MEASURES)
    names = {m.trec_name for m in measures}
    expected = pytrec_eval.RelevanceEvaluator(qrels, names).evaluate(run)
    result = evaluate(eq, er, measures, missing="ignore")
    assert compare(expected, result, measures) > 20_000
    assert sorted(result.ignored_queries) == sorted(set(run) - set(qrels))


def test_ir_measures_names_match_pytrec_eval(collection):
    qrels, run, eq, er = collection
    names = ["nDCG@10", "nDCG", "P@5", "R@10", "AP", "AP@10", "RR", "Rprec", "Bpref", "Success@5"]
    measures = parse_measures(names)
    expected = pytrec_eval.RelevanceEvaluator(qrels, {m.trec_name for m in measures}).evaluate(run)
    result = evaluate(eq, er, measures, missing="ignore")
    compare(expected, result, measures)


def test_relevance_level_2_matches(collection):
    qrels, run, eq, er = collection
    names = [
        "map",
        "P.5,10",
        "recall.10",
        "recip_rank",
        "Rprec",
        "bpref",
        "success.5",
        "num_rel_ret",
    ]
    measures = parse_measures(names, rel_level=2)
    trec = {m.trec_name for m in measures}
    expected = pytrec_eval.RelevanceEvaluator(qrels, trec, relevance_level=2).evaluate(run)
    result = evaluate(eq, er, names, rel_level=2, missing="ignore")
    compare(expected, result, measures)
    # per-measure rel= gives the same numbers under the default level
    ir = parse_measures(["AP(rel=2)", "P(rel=2)@5", "Bpref(rel=2)"])
    result = evaluate(eq, er, ir, missing="ignore")
    compare(expected, result, ir)


def test_judged_only_matches_trec_eval_J(collection):
    qrels, run, eq, er = collection
    names = [
        "nDCG(judged_only=true)@10",
        "nDCG(judged_only=true)",
        "P(judged_only=true)@5",
        "AP(judged_only=true)",
        "RR(judged_only=true)",
        "Rprec(judged_only=true)",
        "R(judged_only=true)@10",
    ]
    measures = parse_measures(names)
    trec = {m.trec_name for m in measures}
    expected = pytrec_eval.RelevanceEvaluator(qrels, trec, judged_docs_only_flag=True).evaluate(run)
    result = evaluate(eq, er, measures, missing="ignore")
    compare(expected, result, measures)


def test_custom_gains_equal_ndcg_on_mapped_qrels(collection):
    qrels, run, eq, er = collection
    gains = {0: 0, 1: 1, 2: 3, 3: 7, 4: 15}
    mapped = {q: {d: gains.get(v, v) for d, v in docs.items()} for q, docs in qrels.items()}
    expected = pytrec_eval.RelevanceEvaluator(mapped, {"ndcg"}).evaluate(run)
    measures = parse_measures(["ndcg.0=0,1=1,2=3,3=7,4=15", "nDCG(gains={0:0,1:1,2:3,3:7,4:15})"])
    result = evaluate(eq, er, measures, missing="ignore")
    compare(expected, result, measures, key=lambda m: "ndcg")
    exp_gain = evaluate(eq, er, ["nDCG(gain=exp)"], missing="ignore")
    np.testing.assert_allclose(
        exp_gain.per_query[exp_gain.measures[0].canonical],
        result.per_query[measures[0].canonical],
        atol=1e-12,
    )


def test_complete_policy_averages_over_all_judged_queries(collection):
    qrels, run, eq, er = collection
    names = ["ndcg_cut.10", "map", "P.10", "num_q", "num_ret", "num_rel", "num_rel_ret"]
    measures = parse_measures(names)
    expected = pytrec_eval.RelevanceEvaluator(qrels, {m.trec_name for m in measures}).evaluate(run)
    complete = evaluate(eq, er, names)  # default: trec_eval -c
    assert complete.qids == sorted(qrels)
    assert sorted(complete.missing_queries) == sorted(set(qrels) - set(run))
    for m in measures:
        key = m.trec_output_name
        got = complete.aggregates[m.canonical]
        if key == "num_q":
            assert got == len(qrels)
        elif key == "num_rel":  # absent queries keep their relevant documents
            want = sum(sum(v >= 1 for v in d.values()) for d in qrels.values())
            assert got == want
        elif m.aggregate == "sum":
            assert got == sum(r[key] for r in expected.values())
        else:
            want = math.fsum(r[key] for r in expected.values()) / len(qrels)
            assert got == pytest.approx(want, abs=1e-12)
    for qid in set(qrels) - set(run):
        i = complete.qids.index(qid)
        assert complete.per_query[measures[0].canonical][i] == 0.0
    plain = evaluate(eq, er, names, missing="ignore")
    assert plain.aggregates["NumQ"] == len(expected)


def test_file_input_matches_arrays(collection, tmp_path):
    qrels, run, eq, er = collection
    qpath, rpath = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qpath.write_text("".join(f"{q} 0 {d} {v}\n" for q, ds in qrels.items() for d, v in ds.items()))
    lines = [f"{q} Q0 {d} 0 {s!r} gen\n" for q, ds in run.items() for d, s in ds.items()]
    rpath.write_text("".join(lines))
    a = evaluate(qpath, rpath, TREC_MEASURES)
    b = evaluate(eq, er, TREC_MEASURES)
    assert a.qids == b.qids
    for key, values in a.per_query.items():
        np.testing.assert_array_equal(values, b.per_query[key])


def test_scores_compared_as_doubles_like_trec_eval_10():
    # 1 + 2**-30 and 1.0 are the same float32 but different doubles.
    hi, lo = 1.0 + 2.0**-30, 1.0
    assert np.float32(hi) == np.float32(lo) and hi != lo
    qrels = {"1": {"A": 1, "B": 0}}
    run = {"1": {"A": hi, "B": lo}}
    eq, er = to_engine(qrels, run)
    result = evaluate(eq, er, ["recip_rank"])
    assert result.value("recip_rank") == 1.0  # doubles: A (higher score) first
    # pytrec_eval (float32) sees a tie and breaks it by docno descending: B first.
    assert pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(run)["1"][
        "recip_rank"
    ] == pytest.approx(0.5)
    # An exact tie is broken by docno in descending byte order by both.
    run_tie = {"1": {"A": 1.0, "B": 1.0}}
    eq, er = to_engine(qrels, run_tie)
    assert evaluate(eq, er, ["recip_rank"]).value("recip_rank") == 0.5
