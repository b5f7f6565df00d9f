"""Whole processes on W1 with real collections' document ids (``python -m benchmarks.run --ids``).

For every id style of :mod:`benchmarks.ids`, on the same two files: ``manage.py evaluate
-m ndcg_cut.10``, the C trec_eval 10.0 (-O2) and the small pytrec_eval script, one
repetition of each in turn (so background load hits them alike), ``reps`` times.  Each
row gives the peak RSS (the child's own ``ru_maxrss``, through the launcher) and the
median wall and CPU time, and checks that the three print the same ndcg_cut.10.

Then several runs in one call (``--ids-runs N``, W1's own ids): ``manage.py evaluate``
over 1 and N runs, sequentially (``-j 1``) and with two worker processes (``-j 2``),
measured by :mod:`benchmarks.treemem` (the largest single process and the whole tree).
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks import treemem
from benchmarks.ids import STYLES, ensure_ids
from benchmarks.workload import W1, ensure

ROOT = Path(__file__).resolve().parent.parent
CLI = Path(__file__).resolve().parent / "evaluate_cli.py"


def _value(tool: str, out: str) -> float | None:
    """Return the ndcg_cut.10 mean a tool printed (None if absent)."""
    try:
        if tool == "pytrec_eval":
            return float(json.loads(out.strip().splitlines()[-1])["means"]["ndcg_cut.10"])
        for line in out.splitlines():
            name, qid, value = line.split("\t")
            if name.strip() == "ndcg_cut_10" and qid == "all":
                return float(value)
    except (ValueError, KeyError, IndexError):
        return None
    return None


def _docno_stats(path: Path) -> tuple[str, float, int]:
    """Return (an example docno, mean and max docno length) of a run file."""
    lengths = []
    example = ""
    with open(path, "rb") as fh:
        for i, line in enumerate(fh):
            doc = line.split(b" ", 3)[2]
            lengths.append(len(doc))
            if i == 1:
                example = doc.decode()
    return example, sum(lengths) / len(lengths), max(lengths)


def bench_styles(launcher: Any, trec_eval: Path | None, reps: int) -> list[dict[str, Any]]:
    """Measure the three whole processes on every id style; return one record per style."""
    out = []
    for style in STYLES:
        wl = ensure_ids(style, 1)
        qrels, run = str(wl.qrels), str(wl.runs[0])
        cmds = {
            "graded": [sys.executable, "manage.py", "evaluate", qrels, run, "-m", "ndcg_cut.10"],
            "pytrec_eval": [sys.executable, str(CLI), "--tool", "pytrec_eval", qrels, run],
        }
        if trec_eval is not None:
            cmds["trec_eval"] = [str(trec_eval), "-m", "ndcg_cut.10", qrels, run]
        walls: dict[str, list[float]] = {k: [] for k in cmds}
        cpus: dict[str, list[float]] = {k: [] for k in cmds}
        peaks: dict[str, list[int]] = {k: [] for k in cmds}
        values: dict[str, float | None] = {}
        for _ in range(reps):
            for tool, cmd in cmds.items():
                wall, code, rss, text, cpu = launcher.run(cmd)
                if code != 0:
                    raise RuntimeError(f"{style}: {tool} failed ({code}): {text[-300:]}")
                walls[tool].append(wall)
                cpus[tool].append(cpu)
                peaks[tool].append(rss)
                values[tool] = _value(tool, text)
        example, mean_len, max_len = _docno_stats(wl.runs[0])
        out.append(
            {
                "style": style,
                "example": example,
                "mean_len": mean_len,
                "max_len": max_len,
                "run_mb": wl.runs[0].stat().st_size / 1e6,
                "values": values,
                **{
                    tool: {
                        "peak_mib": max(peaks[tool]) / 1024,
                        "wall": statistics.median(walls[tool]),
                        "cpu": statistics.median(cpus[tool]),
                    }
                    for tool in cmds
                },
            }
        )
        print(f"  {style}: " + json.dumps(out[-1]), file=sys.stderr)
    return out


def bench_many(n_runs: int, reps: int) -> list[dict[str, Any]]:
    """Measure ``manage.py evaluate`` over 1 and ``n_runs`` runs, ``-j 1`` and ``-j 2``."""
    wl = ensure(n_runs, W1, processes=2)
    out = []
    for processes in (1, 2):
        for n in (1, n_runs):
            cmd = [sys.executable, "manage.py", "evaluate", "-j", str(processes), str(wl.qrels)]
            cmd += [str(r) for r in wl.runs[:n]] + ["-m", "ndcg_cut.10"]
            got = [treemem.measure(cmd, cwd=str(ROOT)) for _ in range(reps)]
            if any(g["code"] != 0 for g in got):
                raise RuntimeError(f"evaluate -j {processes} over {n} runs failed")
            out.append(
                {
                    "processes": processes,
                    "runs": n,
                    "process_peak_mib": max(int(g["process_peak_kib"]) for g in got) / 1024,
                    "tree_peak_mib": max(int(g["tree_peak_kib"]) for g in got) / 1024,
                    "processes_seen": max(int(g["processes"]) for g in got),
                    "wall": statistics.median(float(g["wall"]) for g in got),
                }
            )
            print(f"  many: {json.dumps(out[-1])}", file=sys.stderr)
    return out


def render(machine: dict[str, str], styles: list[dict[str, Any]], many: list[dict]) -> str:
    """Return the Markdown report."""
    lines = [
        "# `manage.py evaluate` on W1 with real collections' document ids",
        "",
        f"{machine['date']}; {machine['cpu']}, {machine['cores']}, {machine['ram']}; "
        f"Python {machine['python']}, numpy {machine['numpy']}, pytrec_eval "
        f"{machine['pytrec_eval']}; git {machine['git']}; load average {machine['load']}",
        "",
        "Peak RSS of the whole process (`ru_maxrss`), median wall / CPU seconds; "
        "`-m ndcg_cut.10`, one W1 run (1,000 queries x 1,000 documents), 200,115 qrels.",
        "",
        "| id style | example | mean / max length | run file | Graded | C trec_eval 10.0 "
        "| pytrec_eval script | Graded / trec_eval | same ndcg_cut.10 |",
        "|---|---|---:|---:|---:|---:|---:|---:|---|",
    ]

    def cell(rec: dict[str, Any], tool: str) -> str:
        if tool not in rec:
            return "n/a"
        r = rec[tool]
        return f"{r['peak_mib']:.0f} MiB, {r['wall']:.2f} / {r['cpu']:.2f} s"

    for rec in styles:
        ratio = (
            f"{rec['graded']['peak_mib'] / rec['trec_eval']['peak_mib']:.2f}"
            if "trec_eval" in rec
            else "n/a"
        )
        vals = {v for v in rec["values"].values() if v is not None}
        same = "yes" if len({round(v, 4) for v in vals}) == 1 else f"NO {rec['values']}"
        lines.append(
            f"| {rec['style']} | `{rec['example']}` | {rec['mean_len']:.1f} / {rec['max_len']} "
            f"| {rec['run_mb']:.1f} MB | {cell(rec, 'graded')} | {cell(rec, 'trec_eval')} "
            f"| {cell(rec, 'pytrec_eval')} | {ratio} | {same} |"
        )
    if many:
        lines += [
            "",
            "Several runs in one call (W1's own ids), `manage.py evaluate -j P qrels run...`:",
            "",
            "| -j | runs | largest process peak | whole tree peak (sampled) | processes | wall |",
            "|---:|---:|---:|---:|---:|---:|",
        ]
        for m in many:
            lines.append(
                f"| {m['processes']} | {m['runs']} | {m['process_peak_mib']:.0f} MiB "
                f"| {m['tree_peak_mib']:.0f} MiB | {m['processes_seen']} | {m['wall']:.2f} s |"
            )
    return "\n".join(lines) + "\n"
