"""``manage.py evaluate``: trec_eval layout, JSON/CSV output, errors, no database."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

ROOT = Path(__file__).resolve().parents[2]

QRELS = "1 0 D1 2\n1 0 D2 0\n1 0 D3 1\n2 0 D1 1\n2 0 D4 -1\n3 0 X 1\n"
RUN = (
    "1 Q0 D1 1 3.0 runA\n"
    "1 Q0 D3 2 2.0 runA\n"
    "1 Q0 D9 3 1.0 runA\n"
    "2 Q0 D2 1 1.0 runA\n"
    "2 Q0 D1 2 0.5 runA\n"
    "4 Q0 Z 1 1 runA\n"
)


NDCG_ALL = (1.0 + 1 / math.log2(3)) / 3  # q1 perfect, q2 D1 at rank 2, q3 missing


@pytest.fixture
def files(tmp_path):
    qrels = tmp_path / "qrels.txt"
    run = tmp_path / "run.txt"
    qrels.write_text(QRELS)
    run.write_text(RUN)
    return qrels, run


def run_command(*args: str) -> str:
    out = io.StringIO()
    call_command("evaluate", *args, stdout=out)
    return out.getvalue()


def test_trec_layout(files):
    qrels, run = files
    out = run_command(str(qrels), str(run), "-m", "ndcg_cut.10", "-m", "num_q", "-m", "num_ret")
    lines = out.splitlines()
    # Printed in trec_eval's order of measures, not the order asked for.
    assert lines == [
        f"{'num_q':<22s}\tall\t3",
        f"{'num_ret':<22s}\tall\t5",
        f"{'ndcg_cut_10':<22s}\tall\t{NDCG_ALL:.4f}",
    ]


def test_trec_layout_per_query_and_canonical_names(files):
    qrels, run = files
    out = run_command(str(qrels), str(run), "-m", "P.2", "-m", "nDCG(gain=exp)@10", "-q")
    lines = [line.split("\t") for line in out.splitlines()]
    assert [(name.rstrip(), qid) for name, qid, _ in lines] == [
        ("P_2", "1"),
        ("nDCG(gain=exp,discount=log2,ideal=global,empty=zero)@10", "1"),
        ("P_2", "2"),
        ("nDCG(gain=exp,discount=log2,ideal=global,empty=zero)@10", "2"),
        ("P_2", "3"),
        ("nDCG(gain=exp,discount=log2,ideal=global,empty=zero)@10", "3"),
        ("P_2", "all"),
        ("nDCG(gain=exp,discount=log2,ideal=global,empty=zero)@10", "all"),
    ]
    assert lines[0] == ["P_2                   ", "1", "1.0000"]
    assert lines[-2][2] == f"{(1.0 + 0.5 + 0.0) / 3:.4f}"


def test_no_c_averages_over_shared_queries_only(files):
    qrels, run = files
    out = run_command(str(qrels), str(run), "-m", "P.2", "-m", "num_q", "--no-c")
    assert out.splitlines() == [f"{'num_q':<22s}\tall\t2", f"{'P_2':<22s}\tall\t0.7500"]


def test_relevance_level(files):
    qrels, run = files
    out = run_command(str(qrels), str(run), "-m", "P.2", "-l", "2")
    assert out.splitlines() == [f"{'P_2':<22s}\tall\t{0.5 / 3:.4f}"]


def test_json_full_precision(files):
    qrels, run = files
    out = run_command(
        str(qrels), str(run), "-m", "ndcg_cut.10", "-m", "num_rel", "--format", "json", "-q"
    )
    data = json.loads(out)
    assert list(data) == ["runA"]
    ndcg = data["runA"]["ndcg_cut_10"]
    assert ndcg["all"] == pytest.approx(NDCG_ALL, abs=1e-15)  # not rounded
    assert ndcg["2"] == pytest.approx(1 / math.log2(3), abs=1e-15)
    assert set(ndcg) == {"all", "1", "2", "3"}
    assert data["runA"]["num_rel"] == {"all": 4, "1": 2, "2": 1, "3": 1}


def test_several_runs_grouped_by_tag(files, tmp_path):
    qrels, run = files
    other = tmp_path / "other.txt"
    other.write_text(RUN.replace("runA", "runB").replace("D1 2 0.5", "D1 2 5.0"))
    out = run_command(str(qrels), str(run), str(other), "-m", "P.1", "-j", "1")
    assert out.splitlines() == [
        f"{'runid':<22s}\tall\trunA",
        f"{'P_1':<22s}\tall\t{1 / 3:.4f}",
        f"{'runid':<22s}\tall\trunB",
        f"{'P_1':<22s}\tall\t{2 / 3:.4f}",
    ]
    data = json.loads(
        run_command(str(qrels), str(run), str(run), "-m", "P.1", "--format", "json", "-j", "1")
    )
    assert len(data) == 2  # same tag twice: labels made distinct


def test_csv(files):
    qrels, run = files
    out = run_command(str(qrels), str(run), "-m", "nDCG@10", "-m", "num_ret", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[0] == ["run", "measure", "qid", "value"]
    # trec_eval names first, in trec_eval's order; other spellings after, as asked.
    assert rows[1] == ["runA", "num_ret", "all", "5"]
    assert rows[2][:3] == [
        "runA",
        "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10",
        "all",
    ]
    assert float(rows[2][3]) == pytest.approx(NDCG_ALL, abs=1e-15)


def test_default_set_is_trec_evals_official(files):
    qrels, run = files
    names = [
        line.split("\t")[0].rstrip() for line in run_command(str(qrels), str(run)).splitlines()
    ]
    levels = [f"iprec_at_recall_{x / 10:3.2f}" for x in range(11)]
    cutoffs = [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    assert names == [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        *levels,
        *cutoffs,
    ]
    assert names == [
        line.split("\t")[0].rstrip()
        for line in run_command(str(qrels), str(run), "-m", "official").splitlines()
    ]


def test_all_trec_prints_the_whole_set(files):
    qrels, run = files
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate", str(qrels), str(run), "-m", "all_trec", stdout=out, stderr=err)
    names = [line.split("\t")[0].rstrip() for line in out.getvalue().splitlines()]
    assert names[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    for name in ("gm_bpref", "11pt_avg", "ndcg", "ndcg_cut_10", "set_F", "success_1"):
        assert name in names
    for name in ("infAP", "utility", "binG", "G", "ndcg_rel", "Rndcg", "relative_P_5", "rbp"):
        assert name in names
    assert names[-3:] == ["unj_5", "unj_10", "unj_20"]
    assert "relstring" not in names  # per query only, with -q
    assert err.getvalue() == ""
    out = io.StringIO()
    call_command("evaluate", str(qrels), str(run), "-m", "all_trec", "-q", stdout=out)
    assert any(line.startswith("relstring") for line in out.getvalue().splitlines())


def test_gm_map_is_the_geometric_mean_with_trec_evals_floor(files):
    qrels, run = files
    # AP: q1 (D1, D3 relevant, both found at 1, 2) 1; q2 (D1 at rank 2) 0.5; q3 missing: 0.
    out = run_command(str(qrels), str(run), "-m", "gm_map", "-m", "map", "-q")
    lines = out.splitlines()
    assert [line.split("\t")[1] for line in lines if line.startswith("gm_map")] == ["all"]
    expected = math.exp((math.log(1.0) + math.log(0.5) + math.log(0.00001)) / 3)
    assert f"{'gm_map':<22s}\tall\t{expected:.4f}" in lines


def test_bad_run_file_names_file_and_line(files, tmp_path):
    qrels, _ = files
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 D1 1 1.0 t\n1 Q0 D2 1 abc t\n1 Q0 D1 3 0.5 t\n")
    with pytest.raises(CommandError) as exc:
        run_command(str(qrels), str(bad), "-m", "map")
    msg = str(exc.value)
    assert f"{bad}:2: score 'abc' is not a number" in msg
    assert f"{bad}:3: docno D1 repeated for query 1 (first on line 1)" in msg


def test_bad_measure(files):
    qrels, run = files
    with pytest.raises(CommandError, match="unknown measure"):
        run_command(str(qrels), str(run), "-m", "nope")


def _subprocess(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **env}
    full_env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "manage.py", "evaluate", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=full_env,
        timeout=120,
    )


def test_runs_without_any_database(files, tmp_path):
    qrels, run = files
    # A database that cannot be reached (nothing listens on port 9) and, for SQLite,
    # a path in a directory that does not exist: any access would fail.
    for url in ("postgres://nobody:x@127.0.0.1:9/nowhere", f"sqlite:///{tmp_path}/no/such.db"):
        proc = _subprocess([str(qrels), str(run), "-m", "map"], DATABASE_URL=url)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.startswith("map")


def test_subprocess_exit_status_on_bad_input(files, tmp_path):
    qrels, _ = files
    bad = tmp_path / "bad.txt"
    bad.write_text("1 Q0 D1 1\n")
    proc = _subprocess(
        [str(qrels), str(bad), "-m", "map"], DATABASE_URL="postgres://nobody:x@127.0.0.1:9/x"
    )
    assert proc.returncode != 0
    assert f"{bad}:1: expected 6 columns" in proc.stderr


def test_module_entry_point_matches_the_command(files):
    qrels, run = files
    args = [str(qrels), str(run), "-m", "ndcg_cut.10", "-m", "nDCG(gain=exp)@5", "-q"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    proc = subprocess.run(
        [sys.executable, "-m", "metrics.engine", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == run_command(*args)
    bad = subprocess.run(
        [sys.executable, "-m", "metrics.engine", str(qrels), str(qrels), "-m", "map"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert bad.returncode == 2
    assert f"{qrels}:1: expected 6 columns" in bad.stderr


def test_manage_py_evaluate_skips_django_and_prints_what_the_command_prints():
    import subprocess
    import sys
    from io import StringIO
    from pathlib import Path

    from django.core.management import call_command

    root = Path(__file__).resolve().parents[2]
    args = [
        str(root / "demo" / "qrels-reference.txt"),
        str(root / "demo" / "runs" / "bm25-baseline.txt"),
        "-m",
        "ndcg_cut.10",
        "-m",
        "nDCG(gain=exp)@10",
        "-q",
    ]
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "no.such.settings"}
    done = subprocess.run(
        [sys.executable, str(root / "manage.py"), "evaluate", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    in_process = StringIO()
    call_command("evaluate", *args, stdout=in_process)
    assert done.stdout == in_process.getvalue()
