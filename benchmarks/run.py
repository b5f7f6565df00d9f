"""Benchmark Graded's evaluation engine against pytrec_eval and ranx on workload W1.

Usage::

    python -m benchmarks.run [--runs N] [--quick] [--reps R] [--output PATH]
    make bench

Everything is measured in this process and its children during one invocation, on
the same files; times are wall clock (``time.perf_counter``), the median of
several repetitions.  The Markdown report is printed and written to
``benchmarks/results/latest.md`` (plus ``latest.json``).  See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import gc
import json
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from importlib import metadata
from multiprocessing import get_context
from pathlib import Path
from typing import Any

from benchmarks.adapters import FOURTEEN, NDCG10, Adapter, Engine, PytrecEval, Ranx
from benchmarks.workload import W1, Workload, ensure

ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = Path(__file__).resolve().parent / "results"
CLI = Path(__file__).resolve().parent / "evaluate_cli.py"
LAUNCHER = Path(__file__).resolve().parent / "launcher.py"

TARGETS = {
    "speed": "one W1 run, parse + ndcg_cut.10, in-process: >= 10x faster than pytrec_eval",
    "process": "whole `manage.py evaluate` process < 1/2 of pytrec_eval's whole process",
    "fourteen": "fourteen measures in one pass < 2x ndcg_cut.10 alone",
    "many": "N = 100 runs < 15 s on 2 cores",
    "memory": "peak memory, whole `manage.py evaluate` on one run <= 150 MiB",
    "c_process": "whole `manage.py evaluate` process faster than C trec_eval's (-O2)",
    "c_memory": "peak memory of `manage.py evaluate` below C trec_eval's",
    "memory85": "peak memory, whole `manage.py evaluate`, ndcg_cut.10 and trec_eval's default "
    "set: <= 85 MiB and <= C trec_eval's on the same set",
    "default_time": "whole `manage.py evaluate`, trec_eval's default set: faster than C trec_eval",
}
TREC_EVAL_BUILD = Path("/tmp") / f"graded_bench_trec_eval_{os.getuid()}"


# -- records -----------------------------------------------------------------------


@dataclass
class Row:
    """One measured (or unavailable) line of the report."""

    key: str
    what: str
    tool: str
    times: list[float] = field(default_factory=list)
    value: str = ""
    notes: str = ""
    error: str = ""
    cpu: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        """Take the CPU times along with wall times measured by :func:`timed`."""
        if not self.cpu:
            self.cpu = list(getattr(self.times, "cpu", []))
        self.times = list(self.times)

    @property
    def cpu_median(self) -> float:
        """Return the median CPU time (NaN if not measured)."""
        return statistics.median(self.cpu) if self.cpu else math.nan

    @property
    def median(self) -> float:
        """Return the median time (NaN if not measured)."""
        return statistics.median(self.times) if self.times else math.nan


@dataclass
class Report:
    """Everything measured in one invocation."""

    machine: dict[str, str]
    workload: dict[str, Any]
    rows: list[Row] = field(default_factory=list)
    memory: list[Row] = field(default_factory=list)

    def get(self, key: str) -> Row | None:
        """Return the row with ``key``."""
        return next((r for r in self.rows + self.memory if r.key == key), None)


def log(msg: str) -> None:
    """Print a progress line to stderr."""
    print(msg, file=sys.stderr, flush=True)


class Timings(list[float]):
    """Wall-clock times, with the matching CPU times in ``cpu``."""

    cpu: list[float]


def _cpu_now() -> float:
    """Return CPU seconds of this process (all threads) and its reaped children."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


def timed(fn: Callable[[], Any], reps: int) -> tuple[Timings, Any]:
    """Call ``fn`` ``reps`` times; return the wall (and CPU) times and the last result.

    A result is released before the next call and outside the timed region.
    """
    times, out = Timings(), None
    times.cpu = []
    for _ in range(reps):
        out = None
        gc.collect()
        c0 = _cpu_now()
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
        times.cpu.append(_cpu_now() - c0)
    return times, out


# -- machine -------------------------------------------------------------------------


def machine_info() -> dict[str, str]:
    """Describe the machine and the software versions."""
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        cpu = platform.processor() or "unknown"
    ram = "unknown"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                ram = f"{int(line.split()[1]) / 1024**2:.1f} GiB"
                break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count() or 0

    def version(dist: str) -> str:
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            return "not installed"

    def git(*args: str) -> str:
        try:
            return subprocess.run(
                ["git", *args], cwd=ROOT, capture_output=True, text=True, check=False
            ).stdout.strip()
        except OSError:
            return ""

    commit = git("rev-parse", "--short", "HEAD")
    if commit and git("status", "--porcelain", "--", "metrics/engine", "metrics/management"):
        commit += " + uncommitted changes in metrics/engine or metrics/management"
    return {
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": f"{os.cpu_count()} logical, {usable} usable",
        "ram": ram,
        "os": platform.platform(),
        "python": platform.python_version(),
        "numpy": version("numpy"),
        "pytrec_eval": version("pytrec-eval-terrier"),
        "ranx": version("ranx"),
        "numba": version("numba"),
        "git": commit or "unknown",
        "load": _loadavg(),
    }


def _loadavg() -> str:
    """Return the 1/5/15-minute load averages (other work on the machine skews timings)."""
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


# -- in-process measurements -------------------------------------------------------


def _time_parts(
    tool: Adapter, qrels_path: Path, run_path: Path, reps: int
) -> tuple[list[float], list[float], list[float]]:
    """Time parsing the qrels, parsing the run and evaluating ndcg_cut.10 separately."""
    t_q = timed(lambda: tool.load_qrels(qrels_path), reps)[0]
    t_r = timed(lambda: tool.load_run(run_path), reps)[0]
    qrels, run = tool.load_qrels(qrels_path), tool.load_run(run_path)
    t_e = timed(lambda: tool.evaluate(qrels, run, [NDCG10]), reps)[0]
    return t_q, t_r, t_e


def _total(tool: Adapter, wl: Workload, measures: Sequence[str]) -> Any:
    """Parse both files and evaluate; return everything so it is freed after timing."""
    q, r = tool.load_qrels(wl.qrels), tool.load_run(wl.runs[0])
    return q, r, tool.evaluate(q, r, measures)


def interleaved(
    tasks: dict[str, tuple[Adapter, Sequence[str]]], wl: Workload, reps: int
) -> tuple[dict[str, Timings], dict[str, dict[str, float]], dict[str, str]]:
    """Time parse + evaluate for several tools in alternation, ``reps`` rounds.

    Alternating (rather than running one tool's repetitions, then the next's) exposes
    every tool to the same background load, which keeps the ratios fair on a busy
    machine.  Returns the timings, the means of the last call and the errors.
    """
    times: dict[str, Timings] = {}
    means: dict[str, dict[str, float]] = {}
    errors: dict[str, str] = {}
    for key in tasks:
        times[key] = Timings()
        times[key].cpu = []
    for _ in range(reps):
        for key, (tool, measures) in tasks.items():
            if key in errors:
                continue
            try:
                t, out = timed(lambda tool=tool, measures=measures: _total(tool, wl, measures), 1)
                means[key] = tool.means(out[2], measures)
            except Exception as exc:
                errors[key] = f"call failed: {type(exc).__name__}: {exc}"
                log(f"{tool.name}: not available ({errors[key]})")
                log(traceback.format_exc())
                continue
            del out
            times[key].append(t[0])
            times[key].cpu.append(t.cpu[0])
    return times, means, errors


def ranx_first_calls(tool: Ranx, wl: Workload, t_import: float) -> Row:
    """Time ranx's first calls in this process (numba JIT compile or cache load)."""
    t0 = time.perf_counter()
    qrels = tool.load_qrels(wl.qrels)
    t_q0 = time.perf_counter() - t0
    t0 = time.perf_counter()
    run = tool.load_run(wl.runs[0])
    t_r0 = time.perf_counter() - t0
    t0 = time.perf_counter()
    tool.evaluate(qrels, run, [NDCG10])
    t_e0 = time.perf_counter() - t0
    return Row(
        "rx.first",
        "first calls in the process (numba JIT compile or load of its on-disk cache)",
        "ranx",
        [t_q0 + t_r0 + t_e0],
        f"qrels {t_q0:.1f} s + run {t_r0:.1f} s + evaluate {t_e0:.1f} s",
        f"`import ranx` alone: {t_import:.1f} s, not included",
    )


def bench_in_process(report: Report, wl: Workload, reps: int) -> None:
    """Time the three tools in this process: parts, and interleaved totals."""
    pt = PytrecEval()
    t0 = time.perf_counter()
    rx = Ranx()
    t_import = time.perf_counter() - t0
    en = Engine()  # the default reader ("auto"), as in `manage.py evaluate` and the web app
    ec = Engine(reader="c")  # the C reader (the default when built)
    enp = Engine(reader="numpy")  # the numpy reader (the default without a compiler)
    ea = Engine(reader="arrow")  # Arrow's reader (pyarrow imported, as in the web app)
    for tool in (pt, rx, en, ec, enp, ea):
        if not tool.available:
            log(f"{tool.name}: not available ({tool.reason})")
    rx_first = ranx_first_calls(rx, wl, t_import) if rx.available else None

    log("  interleaved totals: parse both + ndcg_cut.10, then fourteen measures ...")
    tasks: dict[str, tuple[Adapter, Sequence[str]]] = {}
    for key, tool in (("pt", pt), ("rx", rx), ("en", en), ("ec", ec), ("enp", enp), ("ea", ea)):
        if tool.available:
            tasks[f"{key}.total"] = (tool, [NDCG10])
    for key, tool in (("pt", pt), ("en", en)):
        if tool.available:
            tasks[f"{key}.14"] = (tool, FOURTEEN)
    times, means, errors = interleaved(tasks, wl, reps)

    log("  parts: parse qrels, parse run, evaluate ...")
    parts: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for key, tool in (("pt", pt), ("en", en), ("enp", enp), ("ea", ea)):
        if tool.available and f"{key}.total" not in errors:
            try:
                parts[key] = _time_parts(tool, wl.qrels, wl.runs[0], reps)
            except Exception as exc:
                errors[f"{key}.parts"] = f"call failed: {type(exc).__name__}: {exc}"

    ref = means.get("pt.total", {}).get(NDCG10, math.nan)

    def row(key: str, what: str, tool: Adapter, value: str = "", notes: str = "") -> Row:
        if not tool.available:
            return Row(key, what, tool.name, error=tool.reason)
        if key in errors:
            return Row(key, what, tool.name, error=errors[key])
        return Row(key, what, tool.name, times[key], value, notes)

    def value(key: str) -> str:
        m = means.get(key, {}).get(NDCG10, math.nan)
        if math.isnan(m):
            return ""
        agree = "" if key == "pt.total" or math.isnan(ref) else f" (Δ {abs(m - ref):.1e})"
        return f"mean ndcg_cut.10 = {m:.6f}{agree}"

    if "pt" in parts:
        t_q, t_r, t_e = parts["pt"]
        report.rows += [
            Row("pt.qrels", "parse qrels (`parse_qrel`)", "pytrec_eval", t_q),
            Row("pt.run", "parse run (`parse_run`)", "pytrec_eval", t_r),
            Row("pt.eval", "`RelevanceEvaluator` + `evaluate`, ndcg_cut.10", "pytrec_eval", t_e),
        ]
    m14 = means.get("pt.14", {})
    report.rows += [
        row("pt.total", "**parse both + ndcg_cut.10**", pt, value("pt.total")),
        row(
            "pt.14",
            "parse both + fourteen measures",
            pt,
            f"map = {m14['map']:.6f}, num_rel_ret = {m14['num_rel_ret']:.2f}" if m14 else "",
        ),
    ]
    if rx_first is not None:
        report.rows.append(rx_first)
    report.rows.append(
        row(
            "rx.total",
            "**parse both + ndcg@10** (warm)",
            rx,
            value("rx.total").replace("ndcg_cut.10", "ndcg@10"),
            "`Qrels.from_file`, `Run.from_file`, `evaluate(..., threads=0)`",
        )
    )
    if "en" in parts:
        t_q, t_r, t_e = parts["en"]
        report.rows += [
            Row("en.qrels", "parse qrels (`read_qrels`)", en.name, t_q),
            Row("en.run", "parse run (`read_run`)", en.name, t_r),
            Row("en.eval", "`evaluate`, ndcg_cut.10", en.name, t_e),
        ]
    elif "en.parts" in errors:
        report.rows.append(Row("en.parts", "parse / evaluate", "engine", error=errors["en.parts"]))
    report.rows += [
        row("en.total", "**parse both + ndcg_cut.10**", en, value("en.total")),
        row("en.14", "parse both + fourteen measures", en),
    ]
    report.rows.append(row("ec.total", "**parse both + ndcg_cut.10**", ec, value("ec.total")))
    for key, tool in (("enp", enp), ("ea", ea)):
        if key in parts:
            t_q, t_r, t_e = parts[key]
            report.rows += [
                Row(f"{key}.qrels", "parse qrels (`read_qrels`)", tool.name, t_q),
                Row(f"{key}.run", "parse run (`read_run`)", tool.name, t_r),
            ]
        report.rows.append(
            row(f"{key}.total", "**parse both + ndcg_cut.10**", tool, value(f"{key}.total"))
        )


# -- many runs -------------------------------------------------------------------------

_worker_qrels: Any = None


def _pt_init(qrels_path: str) -> None:
    global _worker_qrels
    _worker_qrels = PytrecEval().load_qrels(Path(qrels_path))


def _pt_one(run_path: str) -> float:
    tool = PytrecEval()
    res = tool.evaluate(_worker_qrels, tool.load_run(Path(run_path)), FOURTEEN)
    return tool.means(res, [NDCG10])[NDCG10]


def bench_many(report: Report, wl: Workload, processes: int, baseline: bool) -> None:
    """Time N runs x fourteen measures: the engine's evaluate_many and a pytrec_eval pool."""
    n = len(wl.runs)
    what = f"{n} runs x fourteen measures, incl. parsing"
    tool = Engine()
    if not tool.available:
        report.rows.append(Row("en.many", what, "engine", error=tool.reason))
    elif not tool.has_many:
        report.rows.append(Row("en.many", what, "engine", error="no `evaluate_many`"))
    else:
        try:

            def many() -> Any:
                q = tool.load_qrels(wl.qrels)
                return q, tool.evaluate_many(q, wl.runs, FOURTEEN, processes)

            t, out = timed(many, 1)
            first = tool.means(out[1][0], [NDCG10])[NDCG10]
            report.rows.append(
                Row(
                    "en.many",
                    what,
                    "engine",
                    t,
                    f"run 0: ndcg_cut.10 = {first:.6f}",
                    f"`evaluate_many(processes={processes})`",
                )
            )
        except Exception as exc:
            reason = f"call failed: {type(exc).__name__}: {exc}"
            log(f"engine evaluate_many: not available ({reason})")
            report.rows.append(Row("en.many", what, "engine", error=reason))
    if baseline:
        ctx = get_context("fork" if sys.platform.startswith("linux") else "spawn")

        def pool_map() -> list[float]:
            pool = ctx.Pool(processes, initializer=_pt_init, initargs=(str(wl.qrels),))
            try:
                return pool.map(_pt_one, [str(p) for p in wl.runs], chunksize=1)
            finally:
                pool.close()
                pool.join()  # reaped inside the timed region, so their CPU time counts

        t, means = timed(pool_map, 1)
        report.rows.append(
            Row(
                "pt.many",
                what,
                "pytrec_eval",
                t,
                f"run 0: ndcg_cut.10 = {means[0]:.6f}",
                f"multiprocessing pool of {processes}, qrels parsed once per worker",
            )
        )


# -- child processes ---------------------------------------------------------------------


class Launcher:
    """Client of ``benchmarks/launcher.py``, started while this process is still small."""

    def __init__(self) -> None:
        """Start the launcher process."""
        self.proc = subprocess.Popen(
            [sys.executable, str(LAUNCHER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, cmd: Sequence[str]) -> tuple[float, int, int, str, float]:
        """Run ``cmd``; return wall seconds, exit status, peak RSS (KiB), output, CPU s.

        The peak RSS is the child's own ``ru_maxrss`` from ``os.wait4`` (Linux: KiB).
        """
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"cmd": list(cmd), "cwd": str(ROOT)}) + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        return out["wall"], out["code"], int(out["maxrss_kib"]), out["output"], out["cpu"]

    def close(self) -> None:
        """Stop the launcher."""
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait()


def build_trec_eval() -> tuple[Path | None, str]:
    """Build the C trec_eval 10.0 (-O2, unpatched) once; return (binary or None, why not).

    The source is looked for at ``$GRADED_TREC_EVAL_SRC`` and at
    ``../shared/reference/trec_eval`` (as the differential tests do); the build lives
    in ``/tmp`` and is reused while its sources are unchanged.
    """
    env = os.environ.get("GRADED_TREC_EVAL_SRC")
    candidates = [Path(env)] if env else []
    candidates.append(ROOT.parent / "shared" / "reference" / "trec_eval")
    src = next((c for c in candidates if (c / "trec_eval.c").is_file()), None)
    if src is None:
        return None, "source not found (set GRADED_TREC_EVAL_SRC)"
    binary = TREC_EVAL_BUILD / "trec_eval"
    stamp = TREC_EVAL_BUILD / "source.txt"
    if binary.is_file() and stamp.is_file() and stamp.read_text() == str(src.resolve()):
        return binary, ""
    import shutil

    shutil.rmtree(TREC_EVAL_BUILD, ignore_errors=True)
    shutil.copytree(src, TREC_EVAL_BUILD)
    flags = '-O2 -I. -DVERSIONID=\\"10.0\\"'
    proc = subprocess.run(
        ["make", "-s", "trec_eval", f"CFLAGS={flags}"],
        cwd=TREC_EVAL_BUILD,
        capture_output=True,
        text=True,
    )
    if proc.returncode or not binary.is_file():
        return None, f"make failed: {_first_line(proc.stderr)}"
    stamp.write_text(str(src.resolve()))
    return binary, ""


def _manage_cmd(wl: Workload, measure: str = NDCG10) -> list[str]:
    return [
        sys.executable,
        "manage.py",
        "evaluate",
        str(wl.qrels),
        str(wl.runs[0]),
        "-m",
        measure,
    ]


def _cli_cmd(tool: str, wl: Workload) -> list[str]:
    return [sys.executable, str(CLI), "--tool", tool, str(wl.qrels), str(wl.runs[0]), "-m", NDCG10]


def _first_line(text: str) -> str:
    """Return the most telling line of a failed child's output."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    if not lines:
        return "no output"
    try:
        return str(json.loads(lines[-1])["error"])[:200]
    except (ValueError, KeyError, TypeError):
        pass
    return (lines[-1] if "Traceback" in text else lines[0])[:200]


def bench_processes(report: Report, wl: Workload, reps: int, launcher: Launcher) -> None:
    """Time whole processes and measure their peak memory."""
    cases = [
        (
            "proc.pt",
            "whole process: small pytrec_eval script",
            "pytrec_eval",
            _cli_cmd("pytrec_eval", wl),
        ),
        (
            "proc.en",
            "whole process: `manage.py evaluate -m ndcg_cut.10`",
            "engine",
            _manage_cmd(wl),
        ),
    ]
    binary, why = build_trec_eval()
    if binary is None:
        log(f"C trec_eval: not available ({why})")
        report.rows.append(
            Row("proc.te", "whole process: C trec_eval -m ndcg_cut.10", "trec_eval", error=why)
        )
    else:
        cmd = [str(binary), "-m", NDCG10, str(wl.qrels), str(wl.runs[0])]
        cases.append(
            ("proc.te", "whole process: C trec_eval 10.0 (-O2) -m ndcg_cut.10", "trec_eval", cmd)
        )
        # trec_eval's default set (no -m): every measure at every depth of the ranking
        cases.append(
            (
                "proc.en.default",
                "whole process: `manage.py evaluate` (trec_eval's default set)",
                "engine",
                _manage_cmd(wl, "official"),
            )
        )
        cmd = [str(binary), str(wl.qrels), str(wl.runs[0])]
        cases.append(
            (
                "proc.te.default",
                "whole process: C trec_eval 10.0 (-O2), default set",
                "trec_eval",
                cmd,
            )
        )
    times: dict[str, list[float]] = {key: [] for key, *_ in cases}
    cpus: dict[str, list[float]] = {key: [] for key, *_ in cases}
    peak: dict[str, int] = dict.fromkeys(times, 0)
    errors: dict[str, str] = {}
    for _ in range(reps):  # alternate the tools, as in-process, for fairness under load
        for key, _what, tool, cmd in cases:
            if key in errors:
                continue
            wall, code, rss, text, cpu = launcher.run(cmd)
            if code != 0:
                errors[key] = f"exit {code}: {_first_line(text)}"
                log(f"{tool}: not available ({errors[key]})")
                continue
            times[key].append(wall)
            cpus[key].append(cpu)
            peak[key] = max(peak[key], rss)
    for key, what, tool, _cmd in cases:
        err = errors.get(key, "")
        report.rows.append(Row(key, what, tool, times[key], error=err, cpu=cpus[key]))
        if not err:
            mib = f"{peak[key] / 1024:.0f} MiB"
            report.memory.append(Row(f"mem.{key}", what, tool, value=mib, notes="ru_maxrss"))
    for tool in ("noop", "engine", "ranx"):
        _wall, code, rss, text, _cpu = launcher.run(_cli_cmd(tool, wl))
        what = {
            "noop": "floor: interpreter + `import numpy`",
            "engine": "`metrics.engine` script: read both + ndcg_cut.10",
            "ranx": "ranx script: parse both + ndcg@10",
        }[tool]
        if code != 0:
            report.memory.append(Row(f"mem.{tool}", what, tool, error=_first_line(text)))
        else:
            report.memory.append(
                Row(f"mem.{tool}", what, tool, value=f"{rss / 1024:.0f} MiB", notes="ru_maxrss")
            )


# -- report ------------------------------------------------------------------------------


def _fmt_times(row: Row) -> tuple[str, str]:
    if row.error:
        return "n/a", ""
    if not row.times:
        return "", ""
    med = f"{row.median:.3f}"
    spread = f"{min(row.times):.3f}–{max(row.times):.3f}" if len(row.times) > 1 else ""
    return med, spread


def _ratio(num: Row | None, den: Row | None) -> float:
    if not num or not den or num.error or den.error or not num.times or not den.times:
        return math.nan
    return num.median / den.median


def _cpu_ratio(num: Row | None, den: Row | None) -> float:
    if not num or not den or num.error or den.error or not num.cpu or not den.cpu:
        return math.nan
    return num.cpu_median / den.cpu_median


def targets(report: Report, n_many: int) -> list[tuple[str, str, str, str, str]]:
    """Return (target, measured, by CPU time, goal, status) rows.

    Status is judged on wall-clock medians; the CPU-time column helps reading a run
    made on a loaded machine.  Without the engine a row is "pending".
    """
    pending = "pending (engine not available)"

    def status(ok: bool | None, why: str = pending, by_cpu: bool | None = None) -> str:
        if ok is None:
            return why
        if by_cpu is not None and by_cpu != ok:
            return (
                f"unclear: {'met' if ok else 'not met'} by wall clock, "
                f"{'met' if by_cpu else 'not met'} by CPU time (busy machine? re-run)"
            )
        return "met" if ok else "NOT met"

    def check(x: float, goal: Callable[[float], bool]) -> bool | None:
        return None if math.isnan(x) else goal(x)

    def fmt(x: float, spec: str) -> str:
        return "pending" if math.isnan(x) else format(x, spec)

    out = []
    pt, en = report.get("pt.total"), report.get("en.total")
    readers = [(f"judged on the default reader: {en.tool if en else '?'}", en)] + [
        (label, report.get(key))
        for key, label in (
            ("ec.total", "C reader"),
            ("enp.total", "numpy reader: the default where the C extension is not built"),
            ("ea.total", "Arrow reader: the web app's default without the C extension"),
        )
    ]
    for label, other in readers:
        r, c = _ratio(pt, other), _cpu_ratio(pt, other)
        out.append(
            (
                f"{TARGETS['speed']} ({label})",
                fmt(r, ".1f") + ("" if math.isnan(r) else "x faster"),
                fmt(c, ".1f") + ("" if math.isnan(c) else "x"),
                ">= 10x",
                status(check(r, lambda x: x >= 10), by_cpu=check(c, lambda x: x >= 10)),
            )
        )
    en, pt = report.get("proc.en"), report.get("proc.pt")
    r, c = _ratio(en, pt), _cpu_ratio(en, pt)
    out.append(
        (
            TARGETS["process"],
            fmt(r, ".2f") + ("" if math.isnan(r) else " of pytrec_eval's"),
            fmt(c, ".2f"),
            "< 0.5",
            status(check(r, lambda x: x < 0.5), by_cpu=check(c, lambda x: x < 0.5)),
        )
    )
    e14, e1 = report.get("en.14"), report.get("en.total")
    r, c = _ratio(e14, e1), _cpu_ratio(e14, e1)
    out.append(
        (
            TARGETS["fourteen"],
            fmt(r, ".2f") + ("" if math.isnan(r) else "x"),
            fmt(c, ".2f") + ("" if math.isnan(c) else "x"),
            "< 2x",
            status(check(r, lambda x: x < 2), by_cpu=check(c, lambda x: x < 2)),
        )
    )
    many = report.get("en.many")
    ok = None if not many or many.error or not many.times else many.median < 15
    measured = "pending" if ok is None else f"{many.median:.1f} s for {n_many} runs"
    cpu = "" if ok is None or not many.cpu else f"{many.cpu_median:.1f} s CPU"
    why = pending
    if ok is not None and n_many != 100:
        ok, why = None, "pending (target is for 100 runs: `--runs 100`)"
    out.append((TARGETS["many"], measured, cpu, "< 15 s", status(ok, why)))
    found = [r for r in (report.get("mem.proc.en"), report.get("mem.engine")) if r and not r.error]
    if not found:
        out.append((TARGETS["memory"], "pending", "", "<= 150 MiB", status(None)))
    else:
        measured = "; ".join(f"{r.value} ({r.what})" for r in found)
        mib = float(found[0].value.split()[0])  # judged on the first: `manage.py evaluate`
        out.append((TARGETS["memory"], measured, "", "<= 150 MiB", status(mib <= 150)))

    def versus_trec_eval(target: str, suffix: str) -> tuple[str, str, str, str, str]:
        """Return the row of a "faster than trec_eval's whole process" target."""
        en, te = report.get(f"proc.en{suffix}"), report.get(f"proc.te{suffix}")
        r, c = _ratio(en, te), _cpu_ratio(en, te)
        return (
            TARGETS[target],
            fmt(r, ".2f") + ("" if math.isnan(r) else " of trec_eval's"),
            fmt(c, ".2f"),
            "< 1",
            status(
                check(r, lambda x: x < 1),
                "pending (trec_eval not built)",
                by_cpu=check(c, lambda x: x < 1),
            ),
        )

    out.append(versus_trec_eval("c_process", ""))
    men, mte = report.get("mem.proc.en"), report.get("mem.proc.te")
    if men and mte and not men.error and not mte.error:
        a, b = float(men.value.split()[0]), float(mte.value.split()[0])
        measured = f"{men.value} vs {mte.value}"
        out.append((TARGETS["c_memory"], measured, "", "< 1", status(a < b)))
    else:
        out.append((TARGETS["c_memory"], "pending", "", "< 1", "pending (trec_eval not built)"))
    pairs = [
        (report.get(f"mem.proc.en{s}"), report.get(f"mem.proc.te{s}")) for s in ("", ".default")
    ]
    if all(e and t and not e.error and not t.error for e, t in pairs):
        mib = [(float(e.value.split()[0]), float(t.value.split()[0])) for e, t in pairs]
        measured = "; ".join(f"{a:.0f} vs {b:.0f} MiB" for a, b in mib)
        ok = all(a <= 85 and a <= b for a, b in mib)
        out.append((TARGETS["memory85"], measured, "", "<= 85 MiB, <= trec_eval", status(ok)))
    else:
        out.append(
            (TARGETS["memory85"], "pending", "", "<= 85 MiB", "pending (trec_eval not built)")
        )
    out.append(versus_trec_eval("default_time", ".default"))
    return out


def _busy_warning(load_at_start: str) -> list[str]:
    """Return a warning line when the load average exceeded the usable cores."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    loads = []
    for text in (load_at_start, _loadavg()):
        with contextlib.suppress(ValueError):
            loads.append(float(text.split("/")[0]))
    if loads and max(loads) > cores:
        return [
            f"- **Warning: the machine was busy (1-minute load {max(loads):.1f} on {cores} "
            "usable cores): wall-clock times are inflated and noisy; compare the CPU column, "
            "and re-run on a quiet machine before trusting a ratio.**"
        ]
    return []


def render(report: Report, n_many: int) -> str:
    """Render the report as Markdown."""
    m, w = report.machine, report.workload
    lines = [
        "# Graded evaluation benchmarks — latest run",
        "",
        f"- Date: {m['date']} (git {m['git']})",
        f"- CPU: {m['cpu']}; cores: {m['cores']}; RAM: {m['ram']}",
        f"- {m['os']}; Python {m['python']}; numpy {m['numpy']}; "
        f"pytrec_eval-terrier {m['pytrec_eval']}; ranx {m['ranx']} (numba {m['numba']})",
        f"- Load average (1/5/15 min) at start: {m['load']}; at end: {_loadavg()}",
        *_busy_warning(m["load"]),
        f"- Workload: {w['name']} — {w['n_queries']} queries x {w['depth']} docs/run "
        f"({w['run_lines']:,} lines, {w['run_mb']:.1f} MB), {w['qrels_lines']:,} qrels; "
        f"{n_many} runs for the many-runs row",
        f"- Wall clock, median of {w['reps']} repetitions (whole processes: {w['proc_reps']}); "
        "many-runs rows are a single repetition.  CPU = user + system time of this process "
        "(all threads) and of its finished children, median; CPU above wall means "
        "parallelism, wall far above CPU means waiting (I/O or other load on the machine).",
        "",
        "## Timings",
        "",
        "| Measurement | Tool | Median (s) | Min–max (s) | CPU (s) | Result | Notes |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for row in report.rows:
        med, spread = _fmt_times(row)
        cpu = "" if row.error or not row.cpu else f"{row.cpu_median:.3f}"
        notes = f"not available ({row.error})" if row.error else row.notes
        lines.append(
            f"| {row.what} | {row.tool} | {med} | {spread} | {cpu} | {row.value} | {notes} |"
        )
    lines += [
        "",
        "## Peak memory (one run)",
        "",
        "Peak resident set size of a child process doing the whole job, from "
        "`os.wait4(...).ru_maxrss` (the child's own, not cumulative).",
        "",
        "| Process | Tool | Peak RSS | Notes |",
        "|---|---|---:|---|",
    ]
    for row in report.memory:
        value = "n/a" if row.error else row.value
        notes = f"not available ({row.error})" if row.error else row.notes
        lines.append(f"| {row.what} | {row.tool} | {value} | {notes} |")
    lines += [
        "",
        "## Targets",
        "",
        "Status is judged on the wall-clock medians above; the memory target on the "
        "first process listed (the whole `manage.py evaluate`, when it exists).",
        "",
        "| Target | Measured (wall) | Same ratio by CPU time | Goal | Status |",
        "|---|---|---|---|---|",
    ]
    lines += [f"| {a} | {b} | {c} | {d} | {e} |" for a, b, c, d, e in targets(report, n_many)]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks and write the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=None, help="runs for the many-runs rows (100)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions, 10 runs")
    parser.add_argument("--reps", type=int, default=None, help="repetitions (5; quick: 2)")
    parser.add_argument("--processes", type=int, default=2, help="processes for many runs (2)")
    parser.add_argument(
        "--no-baseline-many", action="store_true", help="skip pytrec_eval on the N runs"
    )
    parser.add_argument("--output", type=Path, default=RESULTS_DIR / "latest.md")
    parser.add_argument(
        "--ids",
        action="store_true",
        help="only the whole processes on W1 with real collections' id styles (issue 36)",
    )
    parser.add_argument(
        "--ids-runs", type=int, default=20, help="runs in one call for --ids (20; 0 skips)"
    )
    args = parser.parse_args(argv)
    launcher = Launcher()  # first, while this process is small (see launcher.py)
    try:
        return _main(args, launcher)
    finally:
        launcher.close()


def _main(args: argparse.Namespace, launcher: Launcher) -> int:
    """Run everything (``main`` without the launcher's lifetime)."""
    if args.ids:
        return _main_ids(args, launcher)
    n_many = args.runs if args.runs is not None else (10 if args.quick else 100)
    reps = args.reps or (2 if args.quick else 5)
    proc_reps = 1 if args.quick else 3

    log(f"workload W1: generating/reusing qrels and {max(n_many, 1)} runs in benchmarks/data/")
    wl = ensure(max(n_many, 1), W1, processes=args.processes, verbose=True)
    with open(wl.runs[0]) as f:
        run_lines = sum(1 for _ in f)
    with open(wl.qrels) as f:
        qrels_lines = sum(1 for _ in f)
    workload = {
        **asdict(W1),
        "run_lines": run_lines,
        "run_mb": wl.runs[0].stat().st_size / 1e6,
        "qrels_lines": qrels_lines,
        "reps": reps,
        "proc_reps": proc_reps,
    }
    report = Report(machine_info(), workload)

    log("in-process: pytrec_eval, ranx, engine ...")
    bench_in_process(report, wl, reps)
    log("whole processes and peak memory ...")
    bench_processes(report, wl, proc_reps, launcher)
    if n_many > 0:
        many = Workload(wl.spec, wl.qrels, wl.runs[:n_many])
        log(f"{n_many} runs ...")
        bench_many(report, many, args.processes, baseline=not args.no_baseline_many)

    text = render(report, n_many)
    print(text)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(text)
    args.output.with_suffix(".json").write_text(
        json.dumps(
            {
                "machine": report.machine,
                "workload": report.workload,
                "rows": [asdict(r) | {"median": r.median} for r in report.rows],
                "memory": [asdict(r) for r in report.memory],
            },
            indent=1,
            default=str,
        )
    )
    log(f"wrote {args.output}")
    return 0


def _main_ids(args: argparse.Namespace, launcher: Launcher) -> int:
    """``--ids``: every id style beside C trec_eval and pytrec_eval; several runs in one call."""
    from benchmarks import ids_bench

    reps = args.reps or (1 if args.quick else 3)
    machine = machine_info()
    binary, why = build_trec_eval()
    if binary is None:
        log(f"C trec_eval: not available ({why})")
    log(f"id styles: {reps} repetitions of each process ...")
    styles = ids_bench.bench_styles(launcher, binary, reps)
    many = []
    if args.ids_runs > 0:
        log(f"{args.ids_runs} runs in one call ...")
        many = ids_bench.bench_many(args.ids_runs, reps)
    machine["load"] = f"{machine['load']} at the start, {_loadavg()} at the end"
    text = ids_bench.render(machine, styles, many)
    print(text)
    out = args.output if args.output != RESULTS_DIR / "latest.md" else RESULTS_DIR / "ids.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)
    out.with_suffix(".json").write_text(
        json.dumps({"machine": machine, "styles": styles, "many": many}, indent=1)
    )
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
