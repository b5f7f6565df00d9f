"""trec_eval's -J, -M and parameterised keys, on hand-computed examples (no binary needed)."""

from __future__ import annotations

import math

import pytest

from metrics.engine import MeasureError, Qrels, Run, evaluate, parse_measures
from metrics.engine.measures import measure_info

# q1: a=2, b=1, c=0, d=-1 (judged but unusable); q2: x=3.
QRELS = Qrels.from_arrays(["1", "1", "1", "1", "2"], ["a", "b", "c", "d", "x"], [2, 1, 0, -1, 3])
# q1 ranked d (4.0), z (3.0, unjudged), b (2.0), a (1.0); q2: x.
RUN = Run.from_arrays(
    ["1", "1", "1", "1", "2"], ["a", "b", "z", "d", "x"], [1.0, 2.0, 3.0, 4.0, 1.0], tag="t"
)


def test_judged_only_drops_unjudged_and_negative_documents():
    """-J: q1 keeps b, a; P@2 = 1, num_ret = 2, NDCG = (1 + 2/log2 3) / (2 + 1/log2 3)."""
    res = evaluate(QRELS, RUN, ["P.2", "num_ret", "ndcg", "bpref"], judged_only=True)
    assert res.value("P.2", "1") == 1.0
    assert res.value("num_ret", "1") == 2
    expected = (1 + 2 / math.log2(3)) / (2 + 1 / math.log2(3))
    assert res.value("ndcg", "1") == pytest.approx(expected, abs=1e-12)
    plain = evaluate(QRELS, RUN, ["P.2", "num_ret", "bpref"])
    assert plain.value("P.2", "1") == 0.0
    assert plain.value("num_ret", "1") == 4
    assert res.value("bpref", "1") == plain.value("bpref", "1")  # bpref reads judged docs only


def test_max_ret_cuts_before_judged_only():
    """-M 2 keeps d, z; -J then removes both, so q1 retrieves nothing."""
    res = evaluate(QRELS, RUN, ["num_ret", "num_rel_ret", "num_rel"], max_ret=2, judged_only=True)
    assert res.value("num_ret", "1") == 0
    assert res.value("num_ret") == 1
    only_m = evaluate(QRELS, RUN, ["num_ret", "num_rel_ret", "num_rel"], max_ret=3)
    assert only_m.value("num_ret", "1") == 3
    assert only_m.value("num_rel_ret", "1") == 1  # b at rank 3; a (rank 4) is cut
    assert only_m.value("num_rel", "1") == 2  # the cut does not change the judgments
    with pytest.raises(ValueError, match="max_ret"):
        evaluate(QRELS, RUN, ["num_ret"], max_ret=-1)


def test_judged_only_names_and_errors():
    """-J shows in canonical names; measures without a judged-only variant are refused."""
    (m,) = parse_measures(["ndcg_cut.10"], judged_only=True)
    assert m.judged_only and m.display == "ndcg_cut_10" and "-J" in m.trec_flags
    (n,) = parse_measures(["num_ret"], judged_only=True)
    assert n.canonical == "NumRet(judged_only=true)"
    (b,) = parse_measures(["bpref"], judged_only=True)
    assert not b.judged_only
    with pytest.raises(MeasureError, match="judged-only"):
        parse_measures(["ERR@10"], judged_only=True)


def test_parameterised_ndcg_keeps_trec_evals_key():
    """Gain maps print as trec_eval does (text as written); the plain ndcg stays."""
    ms = parse_measures(["ndcg", "ndcg.2=5,0=0,1=1", "ndcg.0=0,1=3"])
    assert [m.display for m in ms] == ["ndcg", "ndcg_2=5,0=0,1=1", "ndcg_0=0,1=3"]
    assert measure_info("nDCG(gain={0:0,1:3})").trec_output_name == "ndcg_0=0,1=3"
    res = evaluate(QRELS, RUN, ["ndcg", "ndcg.0=0,1=1,2=5"])
    assert set(res.means) >= {"ndcg", "ndcg_0=0,1=1,2=5"}
    assert res.means["ndcg"] != res.means["ndcg_0=0,1=1,2=5"]


def test_command_line_takes_j_and_m(tmp_path, capsys):
    """``-J -M 3`` on the command line: q1 keeps z, b of d, z, b; num_ret 1 + 1."""
    from metrics.engine import cli

    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 2\n1 0 b 1\n1 0 c 0\n1 0 d -1\n2 0 x 3\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 1.0 t\n1 Q0 b 2 2.0 t\n1 Q0 z 3 3.0 t\n1 Q0 d 4 4 t\n2 Q0 x 1 1 t\n")
    assert (
        cli.main(["-J", "-M", "3", "-q", "-m", "num_ret", "-m", "P.1", str(qrels), str(run)]) == 0
    )
    lines = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert ["num_ret", "1", "1"] in lines and ["P_1", "1", "1.0000"] in lines
    assert ["num_ret", "all", "2"] in lines
    with pytest.raises(SystemExit):
        cli.main(["-M", "-1", "-m", "P.1", str(qrels), str(run)])
