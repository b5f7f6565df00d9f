"""LLM judge jobs over one and several Celery worker processes (issue 21, item 3).

Goal: two worker processes give at least 1.8 times one worker's pairs per second against
the 50 ms stub when Graded's CPU is the limit (concurrency high enough that one process
cannot keep its senders busy).

Usage (the database is created by hand, then migrated by the benchmark)::

    python -m benchmarks.llm_workers \
        --database-url postgres://postgres@127.0.0.1:5432/graded_bench_workers \
        [--pairs N] [--concurrency C] [--workers 1 2] [--reps R]

The workers are real processes (``celery -A config worker --pool=solo``, production
settings, Redis broker on a queue of their own) on a PostgreSQL database the benchmark
migrates; the stub of :mod:`benchmarks.llm` runs in its own process. For each worker
count the same pool is judged afresh (the previous labels are deleted), the job is sent
as the web app sends it, and the rate is its pairs over the time from the job's start to
its end as the database recorded them. The CPU columns are the workers' own (user +
system from ``/proc``), per pair. Progress goes to stderr, the Markdown report to stdout.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchmarks.llm import _build, _free_port, _machine, _serve, _setup_django, log

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")


def _cpu_seconds(pid: int) -> float:
    """Return user + system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def _cpu_of_command(command: str) -> float:
    """Return the CPU seconds so far of every process named ``command`` and its ended children.

    A PostgreSQL backend that ends is reaped by the postmaster, whose children's times
    then hold its CPU: so backends that come and go during a run are counted too.
    """
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:  # the process ended meanwhile
            continue
        if text.split("(", 1)[1].rsplit(")", 1)[0] == command:
            fields = text.rsplit(")", 1)[1].split()
            total += sum(int(v) for v in fields[11:15]) / TICKS  # own and children's
    return total


def _machine_busy() -> tuple[float, float]:
    """Return (busy, total) CPU seconds of the whole machine so far, all cores."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values) - idle) / TICKS, sum(values) / TICKS


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", required=True, help="a PostgreSQL URL")
    parser.add_argument("--pairs", type=int, default=4000)
    parser.add_argument("--concurrency", type=int, default=48, help="senders per worker")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=128, help="pairs per chunk")
    args = parser.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    port = _free_port()
    stub = multiprocessing.Process(target=_serve, args=(port, args.latency), daemon=True)
    stub.start()
    logs = Path(tempfile.mkdtemp(prefix="graded-llm-workers-"))
    try:
        _setup_django(args.database_url)
        from judging.llm import services as services_llm
        from judging.llm.models import LLMJob
        from judging.models import Judgment, JudgmentEvent
        from tests import processes

        coll, judge = _build(args.pairs, f"http://127.0.0.1:{port}/v1")
        load_before = os.getloadavg()
        rows = []
        for count in args.workers:
            env = processes.production_env(
                args.database_url,
                GRADED_LLM_JOB_WORKERS=str(count),
                GRADED_LLM_CHUNK_PAIRS=str(args.chunk),
            )
            with processes.workers(env, count, logs) as procs:
                for rep in range(args.reps):
                    JudgmentEvent.objects.filter(collection=coll).delete()
                    Judgment.objects.filter(collection=coll).delete()
                    job = services_llm.llm_job_create(
                        collection=coll, judge=judge, concurrency=args.concurrency
                    )
                    cpu = [_cpu_seconds(p.pid) for p in procs]
                    machine, stub_cpu = _machine_busy(), _cpu_seconds(stub.pid)
                    pg_cpu, redis_cpu = _cpu_of_command("postgres"), _cpu_of_command("redis-server")
                    log(f"{count} worker(s), run {rep + 1}: judging {args.pairs} pairs ...")
                    processes.send_task(env, "judging.run_llm_job", job.pk)
                    while job.status not in (LLMJob.Status.DONE, LLMJob.Status.FAILED):
                        time.sleep(0.2)
                        job.refresh_from_db()
                    cpu = [_cpu_seconds(p.pid) - c for p, c in zip(procs, cpu, strict=True)]
                    busy, total = (b - a for a, b in zip(machine, _machine_busy(), strict=True))
                    stub_cpu = _cpu_seconds(stub.pid) - stub_cpu
                    pg_cpu = _cpu_of_command("postgres") - pg_cpu
                    redis_cpu = _cpu_of_command("redis-server") - redis_cpu
                    assert job.done == args.pairs and job.failed == 0, (job.done, job.failed)
                    seconds = (job.finished_at - job.started_at).total_seconds()
                    rows.append(
                        (
                            count,
                            rep,
                            job.done,
                            seconds,
                            sum(cpu),
                            cpu,
                            busy / total,
                            stub_cpu,
                            pg_cpu,
                            redis_cpu,
                        )
                    )
                    log(f"  {job.done / seconds:.1f} pairs/s")
        load_after = os.getloadavg()
    finally:
        stub.terminate()
        stub.join()
    best = {}
    for count, _rep, done, seconds, *_ in rows:
        best[count] = max(best.get(count, 0.0), done / seconds)
    print(f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  ")
    print(f"Machine: {_machine()}  ")
    print(
        f"Load average (1/5/15 min) before: {'/'.join(f'{x:.2f}' for x in load_before)}, "
        f"after: {'/'.join(f'{x:.2f}' for x in load_after)}  "
    )
    print(
        f"Stub latency: {args.latency * 1000:.0f} ms; {args.concurrency} senders per worker; "
        f"chunks of {args.chunk} pairs\n"
    )
    print(
        "| workers | run | pairs | seconds | pairs/s | workers' CPU ms/pair "
        "| CPU per worker (s) | stub CPU ms/pair | PostgreSQL CPU ms/pair "
        "| Redis CPU ms/pair | machine busy |"
    )
    print("|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|")
    for count, rep, done, seconds, cpu, each, busy, stub_cpu, pg_cpu, redis_cpu in rows:
        print(
            f"| {count} | {rep + 1} | {done} | {seconds:.2f} | {done / seconds:.1f} | "
            f"{1000 * cpu / done:.2f} | {', '.join(f'{c:.1f}' for c in each)} | "
            f"{1000 * stub_cpu / done:.2f} | {1000 * pg_cpu / done:.2f} | "
            f"{1000 * redis_cpu / done:.2f} | {busy:.0%} |"
        )
    if 1 in best and 2 in best:
        ratio = best[2] / best[1]
        verdict = "met" if ratio >= 1.8 else "NOT met"
        print(f"\nTwo workers / one worker (best runs): {ratio:.2f}x (goal >= 1.8x): {verdict}")


if __name__ == "__main__":
    main()
