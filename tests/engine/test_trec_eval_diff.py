"""Differential tests: the ``evaluate`` command line against the real C trec_eval 10.0.

Both programs get the same files and the same flags (``-q``, ``-c``, ``-l``, ``-J``,
``-M``, ``-m ...``); trec_eval is a build that prints ``%.17g`` (see
``tests/engine/conftest.py``), the engine prints JSON at full precision.  Every
measure we name after trec_eval is compared, per query and ``all``, to 1e-9, and the
two must print the same set of keys.  trec_eval keeps only the first
parameterisation of a measure name (``-m ndcg -m ndcg.0=0,1=3`` prints one ndcg
line), so it is run once per ``-m`` and its outputs are merged; the engine is run
once with all of them, which checks that no two keys collapse.

The one documented difference in values (``num_rel`` of ``all`` under ``-c`` with a
relevance level other than 1, see docs/measures.md) is asserted on its own.
"""

from __future__ import annotations

import argparse
import json
import math
import subprocess
from pathlib import Path

import numpy as np
import pytest

from metrics.engine import cli

# Every trec_eval measure the engine implements, with cutoffs beyond any run length.
MEASURES = [
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "map_cut.1,5,10,1000",
    "Rprec",
    "bpref",
    "recip_rank",
    "P.1,2,5,10,30,1000",
    "recall.5,10,1000",
    "success.1,5,10",
    "ndcg",
    "ndcg_cut.1,3,5,10,20,1000",
    "gm_map",
    "gm_bpref",
    "iprec_at_recall",
    "iprec_at_recall.0.25,0.33,0.5,0.05",
    "11pt_avg",
    "set_P",
    "set_recall",
    "set_F",
    "set_map",
    "set_relative_P",
    "num_nonrel_judged_ret",
    # the rest of all_trec (issue 33), with parameters in trec_eval's own syntax
    "infAP",
    "rbp",
    "rbp.p=0.5",
    "rbp.p=0.8,1=1,2=5",
    "rbp_resid",
    "rbp_resid.p=0.7",
    "utility",
    "utility.2,-0.5,-1,0",
    "relative_P",
    "relative_P.1,2,3,1000",
    "Rprec_mult",
    "Rprec_mult.0.1,0.5,1.5,3,25",
    "binG",
    "G",
    "G.0=0,1=3,2=1",
    "ndcg_rel",
    "ndcg_rel.1=2,2=1,4=9",
    "Rndcg",
    "Rndcg.0=1,1=3",
    "unj",
    "unj.1,3,50",
    "relstring",
    "relstring.25",
]
# trec_eval's ndcg gain maps (integer gains: trec_eval sorts the ideal with an
# integer comparison, see docs/measures.md), including non-monotone ones.
GAIN_MAPS = ["ndcg.0=0,1=1,2=3,3=7,4=15", "ndcg.0=0,1=3,2=1", "ndcg.1=0,2=5,0=1"]

FLAG_SETS = [
    [],
    ["-c"],
    ["-c", "-l", "2"],
    ["-c", "-l", "0"],
    ["-J"],
    ["-c", "-J"],
    ["-c", "-M", "3"],
    ["-M", "1"],
    ["-c", "-J", "-M", "4"],
    ["-c", "-J", "-l", "2"],
    ["-c", "-l", "3", "-M", "7"],
]


def parse_trec_output(text: str) -> dict[tuple[str, str], float | str]:
    """Return ``{(measure, qid): value}`` from trec_eval's printed lines.

    ``relstring``'s quoted text stays a string (without the quotes).
    """
    out: dict[tuple[str, str], float | str] = {}
    for line in text.splitlines():
        name, qid, value = line.split("\t")
        key = (name.strip(), qid)
        assert key not in out, f"trec_eval printed {key} twice"
        out[key] = value[1:-1] if value.startswith("'") else float(value)
    return out


def run_trec_eval(
    binary: Path, flags: list[str], measures: list[str], qrels: Path, run: Path
) -> dict[tuple[str, str], float | str]:
    """Run trec_eval once per measure (it keeps one parameterisation per name); merge."""
    out: dict[tuple[str, str], float | str] = {}
    for m in measures:
        proc = subprocess.run(
            [str(binary), "-q", *flags, "-m", m, str(qrels), str(run)],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, f"trec_eval {flags} -m {m}: {proc.stderr}"
        for key, value in parse_trec_output(proc.stdout).items():
            same = key not in out or out[key] == value
            assert same or math.isnan(out[key] - value), key  # type: ignore[operator]
            out[key] = value
    return out


def run_engine(
    flags: list[str], measures: list[str], qrels: Path, run: Path
) -> dict[tuple[str, str], float]:
    """Run the engine's command line with the same flags (one call); return its values."""
    argv = ["-q", *flags, "--format", "json"]
    if "-c" not in flags:
        argv.append("--no-c")  # the engine's default is -c, trec_eval's is not
    for m in measures:
        argv += ["-m", m]
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    opts = vars(parser.parse_args([*argv, str(qrels), str(run)]))
    results = cli.evaluate_args(opts)
    (block,) = json.loads(cli.to_json(results, per_query=True)).values()
    return {
        (name, qid): (math.nan if v is None else v if isinstance(v, str) else float(v))
        for name, values in block.items()
        for qid, v in values.items()
    }


def omitted_queries(qrels: Path, run: Path) -> set[str]:
    """Return the judged queries that the run has no line for."""

    def qids(path: Path) -> set[str]:
        return {line.split()[0] for line in path.read_text().splitlines() if line.strip()}

    return qids(qrels) - qids(run)


def rel_level(flags: list[str]) -> float:
    """Return the ``-l`` of a flag list (1 by default)."""
    return float(flags[flags.index("-l") + 1]) if "-l" in flags else 1.0


def assert_same(
    binary: Path, flags: list[str], measures: list[str], qrels: Path, run: Path
) -> dict[tuple[str, str], float]:
    """Assert that both programs print the same keys and values (to 1e-9); return ours."""
    theirs = run_trec_eval(binary, flags, measures, qrels, run)
    ours = run_engine(flags, measures, qrels, run)
    if "-c" in flags and rel_level(flags) != 1:
        # documented difference: trec_eval's -c "all" counts every label > 0
        theirs.pop(("num_rel", "all"), None)
        ours.pop(("num_rel", "all"), None)
    # documented differences where trec_eval divides 0 by 0 (nan for the query and for
    # all), Graded scores the query 0: under -J a query whose every retrieved document is
    # unjudged has no ranking left (interpolated precision); Rndcg of a query with
    # relevant documents but none of positive gain (-l 0, or a gain map giving them 0).
    for key in [k for k, v in theirs.items() if isinstance(v, float) and math.isnan(v)]:
        if key[0].startswith("Rndcg"):
            if key[1] != "all":
                assert ours[key] == 0.0, key
        else:
            assert "-J" in flags and key[0].startswith(("iprec_at_recall_", "11pt_avg")), key
            if key[1] != "all":
                assert ours[key] == 0.0 and ours[("num_ret", key[1])] == 0.0, key
        assert math.isfinite(ours.pop(key)), key
        del theirs[key]
    if "-c" in flags:
        # documented difference: trec_eval -c scores a judged query the run lacks on a
        # stand-in ranking of one unjudged document, then resets utility, rbp_resid and
        # relstring only when they are named without parameters; with parameters it
        # keeps utility = b + c*R, rbp_resid = 1 and relstring '-' (c*R, 0 and '' under
        # -J, which drops the stand-in). Graded scores such a query 0 throughout ('').
        omitted = omitted_queries(qrels, run)
        quirky = ("utility_", "rbp_resid_", "relstring_")
        for key in [k for k in theirs if k[0].startswith(quirky)]:
            if key[1] in omitted:
                if key[0].startswith("relstring_"):
                    assert ours.pop(key) == "", key
                    assert theirs[key] == ("" if "-J" in flags else "-"), key
                else:
                    assert ours.pop(key) == 0.0, key
                if key[0].startswith("rbp_resid_"):
                    assert theirs[key] == (0.0 if "-J" in flags else 1.0), key
                del theirs[key]
            elif key[1] == "all" and omitted:
                ours.pop(key)
                del theirs[key]
    assert theirs, "trec_eval printed nothing"
    assert sorted(ours) == sorted(theirs)
    bad = [
        (key, ours[key], theirs[key])
        for key in sorted(theirs)
        if (
            ours[key] != theirs[key]
            if isinstance(theirs[key], str) or isinstance(ours[key], str)
            else not math.isclose(ours[key], theirs[key], rel_tol=0, abs_tol=1e-9)
        )
    ]
    assert not bad, f"{len(bad)} values differ, first: {bad[:5]}"
    return ours


# --------------------------------------------------------------------------- inputs
ADVERSARIAL_QRELS = """\
q1 0 Doc1 2
q1 0 doc1 1
q1\t0\tDOC1\t0
q1 0 10 3
q1 0 9 1
q1 0  010  -1
q1 0 a 4
Q1 0 a 1
Q1 0 b 0
10 0 x 2
10 0 y 0
9 0 x 1
9\t0\tz\t3
q2 0 n1 1
q2 0 n2 2
q2 0 n3 1
"""

# near-ties 1e-12 apart, scientific notation, exact ties broken by docno (mixed
# case, digits), tabs and runs of blanks, queries in the run but not in the qrels,
# a judged query (q2) whose run is shorter than every cutoff.
ADVERSARIAL_RUN = """\
q1 Q0 Doc1 1 0.5 t
q1 Q0 doc1 2 0.500000000001 t
q1\tQ0\tDOC1\t3\t0.499999999999\tt
q1 Q0 10 4 5e-1 t
q1 Q0 9 5 5.0E-01 t
q1  Q0  010  6  5.000000000000001e-1  t
q1 Q0 a 7 1e-300 t
q1 Q0 zz 8 -2.5E+02 t
q1 Q0 ZZ 9 -2.5e2 t
Q1 Q0 b 1 1000.000000000001 t
Q1 Q0 a 2 1000 t
Q1 Q0 B 3 1e3 t
10 Q0 y 1 3 t
10 Q0 x 2 3.000000000001 t
9 Q0 x 1 7 t
9 Q0 z 2 7.0 t
9 Q0 Z 3 7e0 t
q2 Q0 n2 1 -1e-12 t
q2 Q0 n9 2 -2e-12 t
extra Q0 x 1 1 t
"""


def random_collection(seed: int, complete: bool) -> tuple[str, str]:
    """Return (qrels text, run text) of a random collection with trec_eval's hard cases.

    ``complete=False`` leaves some judged queries out of the run (only valid with
    ``-c``: without it trec_eval stops on them).
    """
    rng = np.random.default_rng(seed)
    q_lines: list[str] = []
    r_lines: list[str] = []
    seps = [" ", "\t", "  ", " \t"]

    def line(*cols: object) -> str:
        return "".join(f"{c}{seps[int(rng.integers(len(seps)))]}" for c in cols[:-1]) + str(
            cols[-1]
        )

    n_queries = 40
    for q in range(n_queries):
        qid = ["q{}", "{}", "Q{}", "0{}"][q % 4].format(q)
        names = [f"d{i}" if i % 4 else f"D{i}" for i in range(60)] + [str(i) for i in range(30)]
        judged = rng.permutation(len(names))[: int(rng.integers(1, 40))]
        for i in judged:
            label = int(rng.choice([-1, 0, 0, 0, 1, 1, 2, 3, 4]))
            q_lines.append(line(qid, 0, names[i], label))
        if not complete and q % 7 == 3:
            continue
        n_ret = int(rng.integers(1, 60)) if q % 5 else int(rng.integers(1, 4))
        ret = rng.permutation(len(names))[:n_ret]
        kind = q % 3
        for rank, i in enumerate(ret, 1):
            if kind == 0:  # many exact ties: tie-break by docno
                score = float(rng.integers(0, 4)) / 2
                text = repr(score)
            elif kind == 1:  # near-ties 1e-12 apart
                score = 0.25 + float(rng.integers(0, 5)) * 1e-12
                text = repr(score)
            else:  # scientific notation, both cases, some exact duplicates
                score = float(rng.normal()) * 10.0 ** int(rng.integers(-5, 5))
                text = f"{score:.17e}" if rank % 2 else f"{score:.17E}"
            r_lines.append(line(qid, "Q0", names[i], rank, text, "run"))
    r_lines.append(line("unjudged_query", "Q0", "d1", 1, "1.0", "run"))
    order = rng.permutation(len(r_lines))  # file order must not matter
    return "\n".join(q_lines) + "\n", "\n".join(r_lines[i] for i in order) + "\n"


def write(tmp_path: Path, qrels: str, run: str) -> tuple[Path, Path]:
    """Write the two files; return their paths."""
    qp, rp = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qp.write_text(qrels)
    rp.write_text(run)
    return qp, rp


# --------------------------------------------------------------------------- tests
@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: "".join(f) or "plain")
def test_adversarial_collection(trec_eval_bin, tmp_path, flags):
    """Near-ties, mixed-case and digit docnos, exponents, tabs, long cutoffs agree."""
    qrels, run = write(tmp_path, ADVERSARIAL_QRELS, ADVERSARIAL_RUN)
    ours = assert_same(trec_eval_bin, flags, MEASURES + GAIN_MAPS, qrels, run)
    # the cases are really there: a score 1e-12 above 0.5 puts doc1 (label 1) first
    if rel_level(flags) <= 1:
        assert ours[("recip_rank", "q1")] == 1.0


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("flags", FLAG_SETS, ids=lambda f: "".join(f) or "plain")
def test_random_collections(trec_eval_bin, tmp_path, flags, seed):
    """Seeded random collections agree on every measure, per query and all."""
    complete = "-c" not in flags or seed % 2 == 0
    qrels, run = write(tmp_path, *random_collection(1000 + seed, complete))
    measures = [*MEASURES, GAIN_MAPS[seed % len(GAIN_MAPS)]]
    ours = assert_same(trec_eval_bin, flags, measures, qrels, run)
    assert len({q for _, q in ours}) > 30


@pytest.mark.parametrize("nickname", [None, "official", "all_trec"])
@pytest.mark.parametrize("flags", [[], ["-c", "-q"], ["-c", "-J", "-l", "2"]], ids=str)
def test_measure_sets_print_trec_evals_lines_in_its_order(trec_eval_bin, tmp_path, flags, nickname):
    """Without -m, with -m official and -m all_trec: the same lines in the same order.

    Values are compared as trec_eval prints them (4 decimals); the other tests compare
    them to 1e-9.
    """
    qrels, run = write(tmp_path, *random_collection(77, complete=True))
    m = ["-m", nickname] if nickname else []
    proc = subprocess.run(
        [str(trec_eval_bin), *flags, *m, str(qrels), str(run)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    theirs = [line.split("\t") for line in proc.stdout.splitlines()]
    parser = argparse.ArgumentParser()
    cli.add_arguments(parser)
    argv = [*flags, *m] + ([] if "-c" in flags else ["--no-c"])
    opts = vars(parser.parse_args([*argv, str(qrels), str(run)]))
    lines: list[str] = []
    cli.write_trec(
        cli.evaluate_args(opts),
        opts["per_query"],
        lines.append,
        runid=cli.requested_measures(opts).runid,
    )
    ours = [line.split("\t") for line in lines]
    left_out = set(cli.requested_measures(opts).left_out)
    if left_out:  # all_trec: the measures Graded does not compute are named, not printed
        theirs = [row for row in theirs if not row[0].rstrip().startswith(tuple(left_out))]
    assert [(a.rstrip(), q) for a, q, _ in ours] == [(a.rstrip(), q) for a, q, _ in theirs]
    for (name, qid, mine), (_, _, their) in zip(ours, theirs, strict=True):
        if name.rstrip() == "runid" or their.startswith("'"):  # the run's tag, relstring
            assert mine == their
        elif (name.rstrip(), qid) == ("num_rel", "all") and "-l" in flags:
            continue  # the documented difference, asserted on its own below
        elif math.isnan(float(their)):  # the documented 0/0 differences (iprec, Rndcg)
            assert name.startswith(("iprec_at_recall", "11pt_avg", "Rndcg"))
        elif "." in mine:  # trec_eval prints %6.4f; this build prints %.17g
            assert mine == f"{float(their):.4f}", (name, qid)
        else:
            assert mine == their, (name, qid)


def test_near_ties_are_ranked_as_doubles(trec_eval_bin, tmp_path):
    """Scores 1e-12 apart rank by value, not by docno (pytrec_eval's float32 cannot)."""
    qrels, run = write(
        tmp_path,
        "1 0 a 1\n1 0 b 0\n",
        "1 Q0 a 1 0.7 t\n1 Q0 b 2 0.700000000001 t\n",
    )
    ours = assert_same(trec_eval_bin, [], ["recip_rank", "P.1"], qrels, run)
    assert ours[("recip_rank", "1")] == 0.5  # b ranks first; a docno tie-break would say 1


def test_parameterised_measures_keep_their_keys(trec_eval_bin, tmp_path):
    """The plain ndcg and two gain maps are three keys, each equal to trec_eval's value."""
    qrels, run = write(tmp_path, ADVERSARIAL_QRELS, ADVERSARIAL_RUN)
    measures = ["ndcg", "ndcg.0=0,1=1,2=5", "ndcg.0=0,1=3", "ndcg_cut.5,10", "ndcg_cut.3"]
    ours = assert_same(trec_eval_bin, ["-c"], measures, qrels, run)
    names = {name for name, qid in ours if qid == "all"}
    assert names == {
        "ndcg",
        "ndcg_0=0,1=1,2=5",
        "ndcg_0=0,1=3",
        "ndcg_cut_3",
        "ndcg_cut_5",
        "ndcg_cut_10",
    }
    assert ours[("ndcg", "all")] != ours[("ndcg_0=0,1=1,2=5", "all")]


def test_utility_reads_the_collection_size(trec_eval_bin, tmp_path):
    """utility's fourth coefficient counts unretrieved non-relevant documents: -N N."""
    qrels, run = write(tmp_path, *random_collection(5, complete=True))
    for flags in (["-N", "5000"], ["-c", "-N", "77", "-l", "2"], ["-J", "-N", "300"]):
        ours = assert_same(trec_eval_bin, flags, ["utility.1,-1,-0.5,0.01"], qrels, run)
        assert ours[("utility_1,-1,-0.5,0.01", "all")] != 0


def test_gain_maps_reach_the_0_over_0_cases(trec_eval_bin, tmp_path):
    """Rndcg of a query whose relevant documents all have gain 0 is nan there, 0 here.

    The other gain measures agree: G, ndcg_rel and rbp with a map that zeroes level 1
    and gives level 0 (non-relevant) a gain.
    """
    qrels, run = write(
        tmp_path,
        "a 0 d1 1\na 0 d2 0\nb 0 d1 2\nb 0 d3 1\nb 0 d4 0\n",
        "a Q0 d1 1 3 t\na Q0 d2 2 2 t\nb Q0 d4 1 5 t\nb Q0 d3 2 4 t\nb Q0 d1 3 3 t\n",
    )
    measures = ["Rndcg.1=0", "G.1=0,0=2", "ndcg_rel.1=0", "rbp.1=0,0=2", "rbp.0=-1"]
    theirs = run_trec_eval(trec_eval_bin, ["-c"], measures, qrels, run)
    assert math.isnan(theirs[("Rndcg_1=0", "a")])
    assert_same(trec_eval_bin, ["-c"], measures, qrels, run)
    ours = run_engine(["-c"], measures, qrels, run)
    assert ours[("Rndcg_1=0", "a")] == 0.0
    assert ours[("Rndcg_1=0", "all")] == ours[("Rndcg_1=0", "b")] / 2 > 0


def test_num_rel_under_c_and_l_is_the_documented_difference(trec_eval_bin, tmp_path):
    """trec_eval -c sums labels > 0 for num_rel of all; the engine sums its per-query values."""
    qrels, run = write(tmp_path, ADVERSARIAL_QRELS, ADVERSARIAL_RUN)
    flags = ["-c", "-l", "2"]
    theirs = run_trec_eval(trec_eval_bin, flags, ["num_rel"], qrels, run)
    ours = run_engine(flags, ["num_rel"], qrels, run)
    positive = sum(int(line.split()[3]) > 0 for line in ADVERSARIAL_QRELS.splitlines())
    per_query = sum(v for (_, q), v in theirs.items() if q != "all")
    assert theirs[("num_rel", "all")] == positive == 12
    assert ours[("num_rel", "all")] == per_query == 6
