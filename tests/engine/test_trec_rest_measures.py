"""trec_eval's remaining all_trec measures, worked by hand on small rankings.

(tests/engine/test_trec_eval_diff.py checks the same measures against the C trec_eval;
these cases spell out what each one computes.)

The main case: one query, ranking labels ``[2, unjudged, 0, 1, -1]`` (``-1``: in the
qrels but unusable, trec_eval's "pooled but unjudged"), judged labels
``[2, 0, 1, -1, 3]``: R = 3 at relevance level 1, positive gains 3, 2, 1.
"""

from __future__ import annotations

from math import log2

import numpy as np
import pytest

from metrics.engine import MeasureError, evaluate, evaluate_ranked, measure_info, parse_measure
from metrics.engine import required_depth as depth
from metrics.engine.measures import expand_nicknames, trec_order

NAN = np.nan
RANKED = np.array([[2, NAN, 0, 1, -1]])
JUDGED = [np.array([2, 0, 1, -1, 3])]


def one(name: str, ranked: np.ndarray = RANKED, judged: list | None = None, **kw) -> float:
    """Return the value of ``name`` for the single query."""
    judged = JUDGED if judged is None else judged
    out = evaluate_ranked(ranked, [ranked.shape[1]], judged, [name], **kw)
    (values,) = out.values()
    return float(values[0])


def test_infap_counts_pooled_unjudged_documents_above_but_skips_unpooled_ones():
    # ranking [-1, 1, unpooled, 0, 2]: relevant at 0-based ranks 1 and 4
    ranked = np.array([[-1, 1, NAN, 0, 2]])
    # rank 1: 1/2 + 1/2 * (1 pooled above / 1) * (e / 2e)            = 0.75
    # rank 4: 1/5 + 4/5 * (3 pooled above / 4) * ((1 + e) / (2 + 2e)) = 0.5
    assert one("infAP", ranked) == pytest.approx((0.75 + 0.5) / 3, abs=1e-12)
    assert one("map", ranked) == pytest.approx((1 / 2 + 2 / 5) / 3)  # AP is lower
    # the first rank, if relevant, counts 1; nothing relevant retrieved: 0
    assert one("infAP", np.array([[3.0]])) == pytest.approx(1 / 3)
    assert one("infAP", np.array([[0.0, NAN]])) == 0.0
    assert one("InfAP(rel=3)", ranked) == pytest.approx(0.0)


def test_rbp_rescales_gains_to_0_1_by_the_querys_top_level():
    # gains 2/3 (rank 0) and 1/3 (rank 3), p = 0.5: (1 - p) * (2/3 + 1/3 * p**3)
    assert one("rbp.p=0.5") == pytest.approx(0.5 * (2 / 3 + 1 / 24))
    assert one("RBP(p=0.5)") == one("rbp.p=0.5")
    # default p = 0.9; a binary query's gains are already in [0, 1]: not rescaled
    binary = [np.array([1, 0, 1])]
    assert one("rbp", np.array([[1.0, 0.0, 1.0]]), binary) == pytest.approx(0.1 * (1 + 0.81))
    # a gain map: level 2 -> 5, the top, so it becomes 1; level 1 -> 1 becomes 1/5
    assert one("rbp.p=0.5,2=5,3=0") == pytest.approx(0.5 * (1 + 1 / 5 / 8))
    # a negative gain moves the bottom: (g + 3) / 6 for judged documents only, so label 0
    # (gain -3) scores 0 and label 1 scores 4/6; unjudged ones stay at 0
    assert one("rbp.p=0.5,0=-3") == pytest.approx(0.5 * (5 / 6 + 4 / 6 / 8))


def test_rbp_resid_is_the_weight_of_unjudged_ranks_plus_the_tail():
    # unjudged at ranks 1 and 4: p + p**4, tail p**5
    assert one("rbp_resid.p=0.5") == pytest.approx(0.5**5 + 0.5 * (0.5 + 0.5**4))
    # no unjudged document: 0 (trec_eval's rule), although the tail p**n remains
    assert one("rbp_resid", np.array([[2.0, 0.0]])) == 0.0
    # -J drops unjudged documents: always 0
    assert one("RBPResid(p=0.5,judged_only=true)") == 0.0


def test_utility_weighs_the_contingency_table():
    # 5 retrieved, 2 relevant retrieved, R = 3
    assert one("utility") == 2 - 3
    assert one("utility.2,-1,-0.5,0") == 4 - 3 - 0.5
    # the fourth coefficient counts the non-relevant documents not retrieved: N + 2 - 5 - 3
    assert one("Utility(a=2,b=-1,c=-0.5,d=0.01,n_docs=100)") == pytest.approx(0.5 + 0.94)
    assert measure_info("utility.2,-1,-0.5,0.01", num_docs=100).trec_flags == ("-N100",)


def test_relative_p_divides_by_the_best_possible():
    assert one("relative_P.2") == 1 / 2  # 1 relevant in the top 2, best 2
    assert one("relative_P.5") == 2 / 3  # 2 in the top 5, best R = 3
    assert one("relative_P.1000") == 2 / 3
    assert one("relative_P.5", judged=[np.array([0, 0])]) == 0.0  # R = 0
    assert len(parse_measure("relative_P")) == 9
    assert depth(["relative_P.20"]) == 20


def test_rprec_mult_is_precision_at_a_multiple_of_r():
    # R = 3: floor(x * 3 + 0.9) documents
    assert one("Rprec_mult.0.1") == 1.0  # 1 document
    assert one("Rprec_mult.0.5") == 0.5  # 2 documents
    assert one("Rprec_mult.1") == pytest.approx(1 / 3)  # 3 documents (0 + 0.9 rounds down)
    assert one("Rprec_mult.2") == pytest.approx(2 / 6)  # 6 > 5 retrieved: missing count 0
    assert one("Rprec_mult.1", judged=[np.array([0])]) == 0.0  # R = 0: 0 documents
    assert [m.trec_output_name for m in parse_measure("Rprec_mult")][:2] == [
        "Rprec_mult_0.20",
        "Rprec_mult_0.40",
    ]


def test_bing_discounts_by_the_non_relevant_documents_above():
    # ranks 0 (none above: 1/log2 2) and 3 (two non-relevant above: 1/log2 4)
    assert one("binG") == pytest.approx((1 + 1 / 2) / 3)


def test_g_charges_the_gap_to_the_ideal_gain_so_far():
    # results gains [2, 0, 0, 1, 0]; ideal [3, 2, 1]; cost = running sum of max(ideal, 1)
    # = [3, 5, 6, 7, 8]; gained so far [2, 2, 2, 3, 3]
    expected = (2 / log2(2 + 3 - 2) + 1 / log2(2 + 7 - 3)) / 6
    assert one("G") == pytest.approx(expected)
    assert one("G", judged=[np.array([0, 0])]) == 0.0


def test_ndcg_rel_averages_ndcg_at_each_positive_gain_document():
    ideal = [3, 3 + 2 / log2(3), 3 + 2 / log2(3) + 1 / 2]
    at_first = 2 / ideal[0]
    final = (2 + 1 / log2(5)) / ideal[2]
    # two retrieved, one (of three) not: it scores the whole ranking's NDCG
    assert one("ndcg_rel") == pytest.approx((at_first + final + final) / 3)


def test_rndcg_averages_ndcg_where_the_ideal_gain_changes():
    idcg = [0, 3, 3 + 2 / log2(3), 3 + 2 / log2(3) + 1 / 2]
    rdcg = [0, 2, 2, 2, 2 + 1 / log2(5), 2 + 1 / log2(5)]
    # changes at 1, 2 and 3 (=P); 5 retrieved > P + 1: the whole ranking once more
    points = [rdcg[1] / idcg[1], rdcg[2] / idcg[2], rdcg[3] / idcg[3], rdcg[5] / idcg[3]]
    assert one("Rndcg") == pytest.approx(sum(points) / 4)
    # only the positions where the gain changes count: gains 3, 3 -> a change at 2 only,
    # where one retrieved document meets an ideal of two
    assert one("Rndcg", np.array([[3.0]]), [np.array([3, 3])]) == pytest.approx(
        3 / (3 + 3 / log2(3))
    )
    # R = 0 at the relevance level: 0; no positive gain (trec_eval: 0/0, nan): 0
    assert one("RLevelNDCG(rel=4)") == 0.0
    assert one("Rndcg", np.array([[0.0]]), [np.array([0, 0])], rel_level=0) == 0.0


def test_unj_is_the_share_of_unjudged_documents_in_the_top_k():
    assert one("unj.2") == 1 / 2  # the unpooled document
    assert one("unj.5") == 2 / 5  # and the negative label
    assert one("unj.10") == 2 / 10  # missing ranks count as judged
    assert one("Unj(judged_only=true)@5") == 0.0
    assert [m.cutoff for m in parse_measure("unj")] == [5, 10, 20]


def test_relstring_spells_the_top_labels(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("1 0 a 3\n1 0 b 0\n1 0 c 12\n1 0 d -1\n1 0 e 1.5\n2 0 a 1\n")
    # ranked a (3), x (not in the qrels), c (12), d (-1), b (0), e (1.5)
    run.write_text("".join(f"1 Q0 {d} {i} {9 - i} t\n" for i, d in enumerate("axcdbe")))
    res = evaluate(qrels, run, ["relstring", "relstring.3", "map"])
    assert res.texts["RelString@10"] == ["3->.01", ""]  # query 2: not in the run (-c)
    assert res.texts["RelString@3"] == ["3->", ""]
    assert res.to_dict()["relstring_3"] == {"1": "3->", "2": ""}  # no "all"
    assert "relstring" not in res.to_dict(per_query=False)
    rows = [(m.display, q, v) for m, q, v in res.rows() if m.is_text]
    assert rows[:2] == [("relstring", "1", "3->.01"), ("relstring_3", "1", "3->")]
    assert all(not m.is_text for m, _, _ in res.summary_rows())
    judged = evaluate(qrels, run, ["relstring"], judged_only=True)
    assert judged.texts["RelString(judged_only=true)@10"][0] == "3>01"
    m = measure_info("relstring")
    assert (m.aggregate, m.is_text, m.depth, m.trec_output_name) == ("none", True, 10, "relstring")
    assert evaluate_ranked(RANKED, [5], JUDGED, ["relstring"]) == {}  # text: files only


@pytest.mark.parametrize(
    ("name", "canonical", "printed"),
    [
        ("infAP", "InfAP(rel=1)", "infAP"),
        ("rbp", "RBP(p=0.9,gain=linear)", "rbp"),
        ("rbp.p=0.8,2=5", "RBP(p=0.8,gain={2:5})", "rbp_p=0.8,2=5"),
        ("rbp_resid.p=0.5", "RBPResid(p=0.5)", "rbp_resid_p=0.5"),
        ("utility", "Utility(a=1,b=-1,c=0,d=0,rel=1)", "utility"),
        ("utility.1,-2,0,0", "Utility(a=1,b=-2,c=0,d=0,rel=1)", "utility_1,-2,0,0"),
        ("relative_P.5", "RelP(rel=1)@5", "relative_P_5"),
        ("Rprec_mult.1.5", "RprecMult(rel=1)@1.5", "Rprec_mult_1.50"),
        ("binG", "BinG(rel=1)", "binG"),
        ("G.1=3", "G(gain={1:3})", "G_1=3"),
        ("ndcg_rel", "nDCGRel(gain=linear)", "ndcg_rel"),
        ("Rndcg", "RLevelNDCG(rel=1,gain=linear)", "Rndcg"),
        ("unj.5", "Unj@5", "unj_5"),
    ],
)
def test_names(name, canonical, printed):
    m = measure_info(name)
    assert m.canonical == canonical
    assert m.trec_output_name == printed
    assert m.aggregate == "mean"
    assert measure_info(canonical).canonical == canonical  # the canonical name parses back


@pytest.mark.parametrize(
    "bad",
    [
        "rbp.p=1",
        "rbp.q=0.5",
        "rbp_resid.1=2",
        "utility.1,2",
        "G.-1=3",
        "G.1.5=2",
        "RBP(gain=exp)",
        "Rprec_mult.0.5,0.5",
        "RprecMult",
        "Unj",
        "unj.0",
        "Utility(n_docs=-1,d=1)",
    ],
)
def test_bad_names(bad):
    with pytest.raises(MeasureError):
        parse_measure(bad)


def test_all_trec_computes_every_measure_in_trec_evals_order():
    expanded = expand_nicknames(["all_trec"])
    assert not expanded.left_out
    printed = [m.trec_output_name for m in trec_order(parse_measure_list(expanded.names))]
    heads = [p for p in printed if p in ("infAP", "utility", "binG", "G", "ndcg_rel", "Rndcg")]
    assert heads == ["infAP", "utility", "binG", "G", "ndcg_rel", "Rndcg"]
    assert printed.index("Rprec_mult_2.00") < printed.index("utility")
    assert printed.index("P_1000") + 1 == printed.index("relstring")
    assert printed[-6:] == [
        "num_nonrel_judged_ret",
        "rbp",
        "rbp_resid",
        "unj_5",
        "unj_10",
        "unj_20",
    ]


def parse_measure_list(names):
    return [m for name in names for m in parse_measure(name)]


def test_missing_queries_score_0_and_minus_j_applies(tmp_path):
    qrels = tmp_path / "q.txt"
    run = tmp_path / "r.txt"
    qrels.write_text("1 0 a 1\n1 0 b 0\n2 0 a 2\n")
    run.write_text("1 Q0 a 1 2 t\n1 Q0 x 2 1 t\n")
    names = ["utility.1,-1,-1,0", "rbp_resid", "unj.2", "infAP"]
    res = evaluate(qrels, run, names)
    assert [res.value(n, "2") for n in names] == [0.0, 0.0, 0.0, 0.0]
    assert res.value("unj.2", "1") == 0.5
    judged = evaluate(qrels, run, names, judged_only=True)
    assert judged.value("unj.2", "1") == 0.0
    assert judged.value("utility.1,-1,-1,0", "1") == 1.0  # x is not retrieved under -J
