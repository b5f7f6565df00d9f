"""Measure names: the three spellings, canonical names, trec_eval names, depth, errors."""

from __future__ import annotations

import pytest

from metrics.engine import MeasureError, measure_info, parse_measure, parse_measures
from metrics.engine import required_depth as depth

DEFAULT = "gain=linear,discount=log2,ideal=global,empty=zero"


@pytest.mark.parametrize(
    ("name", "canonical", "trec"),
    [
        ("ndcg_cut.10", f"nDCG({DEFAULT})@10", "ndcg_cut.10"),
        ("ndcg_cut_10", f"nDCG({DEFAULT})@10", "ndcg_cut.10"),
        ("nDCG@10", f"nDCG({DEFAULT})@10", "ndcg_cut.10"),
        ("NDCG@10", f"nDCG({DEFAULT})@10", "ndcg_cut.10"),
        (f"nDCG({DEFAULT})@10", f"nDCG({DEFAULT})@10", "ndcg_cut.10"),
        ("nDCG(gain=linear)@10", f"nDCG({DEFAULT})@10", "ndcg_cut.10"),
        ("ndcg", f"nDCG({DEFAULT})", "ndcg"),
        ("nDCG", f"nDCG({DEFAULT})", "ndcg"),
        (
            "nDCG(dcg='exp-log2')@10",
            "nDCG(gain=exp,discount=log2,ideal=global,empty=zero)@10",
            None,
        ),
        (
            "nDCG(gain=exp,discount=jk,ideal=recall,empty=one,judged_only=true)@10",
            "nDCG(gain=exp,discount=jk,ideal=recall,empty=one,judged_only=true)@10",
            None,
        ),
        (
            "nDCG(judged_only=True)@10",
            f"nDCG({DEFAULT},judged_only=true)@10",
            "ndcg_cut.10",
        ),
        (
            "nDCG(ideal=max)@5",
            "nDCG(gain=linear,discount=log2,ideal=max,top=4,empty=zero)@5",
            None,
        ),
        (
            "ndcg.0=0,1=1,2=3",
            "nDCG(gain={0:0,1:1,2:3},discount=log2,ideal=global,empty=zero)",
            "ndcg.0=0,1=1,2=3",
        ),
        (
            "nDCG(gains={2:3,1:1})",
            "nDCG(gain={1:1,2:3},discount=log2,ideal=global,empty=zero)",
            "ndcg.1=1,2=3",
        ),
        ("map", "AP(rel=1)", "map"),
        ("AP", "AP(rel=1)", "map"),
        ("AP@10", "AP(rel=1)@10", "map_cut.10"),
        ("map_cut.10", "AP(rel=1)@10", "map_cut.10"),
        ("P.10", "P(rel=1)@10", "P.10"),
        ("P@10", "P(rel=1)@10", "P.10"),
        ("P(rel=2)@10", "P(rel=2)@10", "P.10"),
        ("R@100", "R(rel=1)@100", "recall.100"),
        ("recall.100", "R(rel=1)@100", "recall.100"),
        ("recip_rank", "RR(rel=1)", "recip_rank"),
        ("RR", "RR(rel=1)", "recip_rank"),
        ("MRR@10", "RR(rel=1)@10", None),
        ("Rprec", "Rprec(rel=1)", "Rprec"),
        ("bpref", "Bpref(rel=1)", "bpref"),
        ("Bpref", "Bpref(rel=1)", "bpref"),
        ("success.5", "Success(rel=1)@5", "success.5"),
        ("Success@5", "Success(rel=1)@5", "success.5"),
        ("Judged@10", "Judged@10", None),
        ("ERR@20", "ERR(top=4)@20", None),
        ("num_q", "NumQ", "num_q"),
        ("num_ret", "NumRet", "num_ret"),
        ("num_rel", "NumRel(rel=1)", "num_rel"),
        ("num_rel_ret", "NumRet(rel=1)", "num_rel_ret"),
        ("NumRet(rel=1)", "NumRet(rel=1)", "num_rel_ret"),
    ],
)
def test_names(name, canonical, trec):
    m = measure_info(name)
    assert m.canonical == canonical
    assert m.trec_name == trec
    assert measure_info(m.canonical) == m  # canonical names parse back to the same measure


def test_display_names():
    assert measure_info("ndcg_cut.10").display == "ndcg_cut_10"
    assert measure_info("P.5").display == "P_5"
    assert measure_info("map").display == "map"
    assert measure_info("nDCG@10").display == f"nDCG({DEFAULT})@10"
    assert measure_info("P(rel=2)@10").trec_flags == ("-l2",)
    assert measure_info("nDCG(judged_only=true)@10").trec_flags == ("-J",)


def test_trec_expansions_and_defaults():
    assert [m.canonical for m in parse_measure("P.5,10")] == ["P(rel=1)@5", "P(rel=1)@10"]
    assert [m.cutoff for m in parse_measure("ndcg_cut")] == [5, 10, 15, 20, 30, 100, 200, 500, 1000]
    assert [m.cutoff for m in parse_measure("success")] == [1, 5, 10]


def test_rel_level_and_scale_top_defaults():
    assert measure_info("P@10", rel_level=2).canonical == "P(rel=2)@10"
    assert measure_info("P(rel=3)@10", rel_level=2).canonical == "P(rel=3)@10"
    assert measure_info("nDCG@10", rel_level=2).canonical == f"nDCG({DEFAULT})@10"
    assert measure_info("ERR@10", scale_top=3).canonical == "ERR(top=3)@10"
    assert measure_info("P(rel=0.5)@10").trec_name is None  # trec_eval -l is an integer


def test_parse_measures_dedupes_by_display_and_shares_computation():
    ms = parse_measures(["ndcg_cut.10", "nDCG@10", "ndcg_cut.10", "P.10", "P@10"])
    assert [m.display for m in ms] == [
        "ndcg_cut_10",
        f"nDCG({DEFAULT})@10",
        "P_10",
        "P(rel=1)@10",
    ]
    assert ms[0] == ms[1] and hash(ms[0]) == hash(ms[1])


def test_required_depth():
    assert depth(["ndcg_cut.10", "P.20", "recall.5"]) == 20
    assert depth(["num_q", "num_ret", "num_rel"]) == 0
    assert depth(["nDCG@10", "map"]) is None
    for name in ["recip_rank", "Rprec", "bpref", "num_rel_ret", "ndcg"]:
        assert depth([name]) is None
    assert depth(["RR@5", "AP@7", "Judged@3", "ERR@4", "Success@2"]) == 7
    assert depth(["nDCG(ideal=recall)@10"]) is None
    assert depth(["nDCG(judged_only=true)@10"]) is None
    assert depth(["nDCG(ideal=local)@10", "nDCG(ideal=max)@12"]) == 12


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "nope",
        "ndcg_cut.x",
        "ndcg_cut.0",
        "P@0",
        "P",  # fine as trec (defaults) -> handled below
        "P()",
        "nDCG(gain=cubic)@10",
        "nDCG(discount=ln)@10",
        "nDCG(ideal=best)@10",
        "nDCG(empty=nan)@10",
        "nDCG(foo=1)@10",
        "nDCG(gain=exp,dcg=log2)@10",
        "nDCG(dcg='exp-log2',discount=jk)@10",
        "P(rel=x)@10",
        "Judged",
        "Bpref(judged_only=true)",
        "map.5",
        "ndcg_cut.5,5",
        "nDCG(gain=exp,gain=linear)@10",
        "nDCG(top=inf,ideal=max)@10",
        "nDCG(gain=exp)@10@5",
    ],
)
def test_bad_names(bad):
    if bad == "P":
        assert len(parse_measure(bad)) == 9
        return
    with pytest.raises(MeasureError):
        parse_measure(bad)


def test_measure_info_needs_one_measure():
    with pytest.raises(MeasureError, match="expands"):
        measure_info("P.5,10")


@pytest.mark.parametrize(
    ("name", "canonical", "printed"),
    [
        ("gm_map", "GMAP(rel=1)", "gm_map"),
        ("GMAP", "GMAP(rel=1)", "gm_map"),
        ("gm_bpref", "GMBpref(rel=1)", "gm_bpref"),
        ("iprec_at_recall.0.5", "IPrec(rel=1)@0.5", "iprec_at_recall_0.50"),
        ("IPrec@0.5", "IPrec(rel=1)@0.5", "iprec_at_recall_0.50"),
        ("11pt_avg", "IPrecAvg(rel=1)", "11pt_avg"),
        ("set_F", "SetF(rel=1,beta=1)", "set_F"),
        ("set_relative_P", "SetRelP(rel=1)", "set_relative_P"),
        ("num_nonrel_judged_ret", "NumNonRelJudgedRet(rel=1)", "num_nonrel_judged_ret"),
    ],
)
def test_trec_evals_other_measures(name, canonical, printed):
    m = measure_info(name)
    assert m.canonical == canonical
    assert m.trec_output_name == printed
    assert depth([name]) is None  # they read the whole ranking


def test_trec_evals_sets_and_order():
    from metrics.engine.measures import expand_nicknames, trec_order

    official = expand_nicknames(["official"])
    assert official.runid and not official.left_out
    assert len(parse_measures(list(official.names))) == 4 + 5 + 11 + 9
    everything = expand_nicknames(["all_trec", "nDCG@10"])
    assert not everything.left_out
    assert "infAP" in everything.names and "relstring" in everything.names
    assert everything.names[-1] == "nDCG@10"
    # trec_eval's table order, cutoffs ascending; other spellings after, as given
    ms = parse_measures(["nDCG@5", "P.10,5", "map", "iprec_at_recall.1,0", "num_q"])
    names = [m.display for m in trec_order(ms)]
    assert names[:6] == [
        "num_q",
        "map",
        "iprec_at_recall_0.00",
        "iprec_at_recall_1.00",
        "P_5",
        "P_10",
    ]
    assert names[6].startswith("nDCG(")


@pytest.mark.parametrize(
    "bad", ["IPrec", "IPrec@1.5", "IPrec@-0.1", "iprec_at_recall.x", "set_F.2"]
)
def test_bad_recall_levels(bad):
    with pytest.raises(MeasureError):
        parse_measure(bad)
