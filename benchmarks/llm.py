"""Throughput of the LLM judge runner against a local stub that answers in 50 ms.

Goal (issue part 4): at concurrency 16, at least 150 pairs/s on the 2-core machine, so
that Graded is never the bottleneck of an LLM judging run. The ideal is
concurrency / latency = 320 pairs/s; the gap is Graded's own cost (rendering prompts,
HTTP client, parsing, batched writes with history, live list and pool counters).

``python -m benchmarks.llm [--pairs N] [--concurrency C ...] [--latency S] [--database-url URL]``

The stub is an asyncio HTTP/1.1 server with keep-alive in a separate process (as a real
endpoint would be on another machine); it sleeps ``--latency`` seconds per request and
answers a chat completion ending with ``##final score: N``. Each concurrency level judges
the same fresh pool (the judgments of the previous level are deleted first). Besides
wall-clock throughput, the report gives the CPU time this process (HTTP client thread and
database thread together; the stub runs elsewhere) spent per pair, and the rate one idle
core could sustain at that cost: on a shared, overloaded machine the wall-clock rate
measures the neighbours as much as Graded. The database
defaults to a temporary SQLite file; pass a PostgreSQL URL to measure there. Progress goes
to stderr, the Markdown report to stdout.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import platform
import socket
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

BODY_WORDS = 180  # a passage of about 1,100 characters


def log(message: str) -> None:
    """Print a progress line to stderr."""
    print(message, file=sys.stderr, flush=True)


def _serve(port: int, latency: float) -> None:
    """Run the stub Chat Completions server forever (in a child process)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                body = await reader.readexactly(length)
                await asyncio.sleep(latency)
                score = len(body) % 4
                payload = json.dumps(
                    {
                        "model": "stub-50ms",
                        "choices": [
                            {
                                "message": {
                                    "role": "assistant",
                                    "content": f"ok\n##final score: {score}",
                                }
                            }
                        ],
                        "usage": {"prompt_tokens": 400, "completion_tokens": 12},
                    }
                ).encode()
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(payload)}\r\n\r\n".encode()
                    + payload
                )
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=256)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def _free_port() -> int:
    """Return a free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _setup_django(url: str) -> None:
    """Configure Django with the test settings on ``url`` and migrate."""
    os.environ["DATABASE_URL"] = url
    os.environ["DJANGO_SETTINGS_MODULE"] = "config.settings.test"
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)


def _build(pairs: int, endpoint: str):
    """Create a collection whose pool has ``pairs`` pairs (10 documents per query)."""
    from judging import services
    from judging.models import Collection, Document, Judge, LLMProvider, PoolEntry, Query

    Collection.objects.filter(slug="llm-bench").delete()
    coll = Collection.objects.create(name="LLM bench", slug="llm-bench")
    n_queries = max(1, pairs // 10)
    words = (
        "light scattering atmosphere wavelength blue sky molecules sun red evening " * 20
    ).split()
    queries = Query.objects.bulk_create(
        Query(
            collection=coll,
            external_id=f"q{i:05d}",
            text=f"why is the sky blue {i}",
            description="Explain the colour of the sky.",
            narrative="Physical explanations are relevant; poems are not.",
        )
        for i in range(n_queries)
    )
    docs = Document.objects.bulk_create(
        Document(
            collection=coll,
            external_id=f"d{i:06d}",
            title=f"Passage {i}",
            body=" ".join(words[(i + k) % len(words)] for k in range(BODY_WORDS)),
        )
        for i in range(pairs)
    )
    PoolEntry.objects.bulk_create(
        PoolEntry(collection=coll, query=queries[i // 10], document=docs[i]) for i in range(pairs)
    )
    judge = Judge.objects.create(
        kind=Judge.Kind.LLM,
        name="stub",
        model="stub",
        # The stub listens on loopback: the operator's provider allows that host explicitly.
        llm_provider=LLMProvider.objects.update_or_create(
            name="bench-stub",
            defaults={
                "base_url": endpoint.rstrip("/"),
                "allowed_models": ["stub"],
                "allowed_private_hosts": ["127.0.0.1"],
            },
        )[0],
        native_scale=["0", "1", "2", "3"],
        scale_mapping={"0": 0, "1": 1, "2": 3, "3": 4},
        max_attempts=3,
        timeout_seconds=10,
    )
    judge.collections.add(coll)  # a judge runs only on the collections it is assigned to
    services.live_grades_rebuild(collection=coll)
    return coll, judge


def _machine() -> str:
    """Describe the CPU, Python and database."""
    from django.db import connection

    cpu = platform.processor() or "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    import httpx

    return (
        f"{os.cpu_count()} cores ({cpu}), Python {platform.python_version()}, "
        f"httpx {httpx.__version__}, {connection.vendor}"
    )


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and print the Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16])
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--database-url", default="")
    args = parser.parse_args(argv)
    tmp = tempfile.mkdtemp(prefix="graded-llm-bench-")
    url = args.database_url or f"sqlite:///{tmp}/bench.sqlite3"
    port = _free_port()
    server = multiprocessing.Process(target=_serve, args=(port, args.latency), daemon=True)
    server.start()
    try:
        _setup_django(url)
        from judging.llm import runner
        from judging.llm import services as services_llm
        from judging.models import Judgment, JudgmentEvent

        coll, judge = _build(args.pairs, f"http://127.0.0.1:{port}/v1")
        time.sleep(0.3)  # let the stub listen
        load_before = os.getloadavg()
        rows = []
        for concurrency in args.concurrency:
            JudgmentEvent.objects.filter(collection=coll).delete()
            Judgment.objects.filter(collection=coll).delete()
            job = services_llm.llm_job_create(collection=coll, judge=judge, concurrency=concurrency)
            log(f"concurrency {concurrency}: judging {args.pairs} pairs ...")
            started, cpu_started = time.perf_counter(), time.process_time()
            job = runner.run_job(job)
            elapsed = time.perf_counter() - started
            cpu_ms = (time.process_time() - cpu_started) * 1000 / max(1, job.done)
            assert job.done == args.pairs and job.failed == 0, (job.done, job.failed)
            ideal = concurrency / args.latency
            rows.append((concurrency, job.done, elapsed, job.done / elapsed, ideal, cpu_ms))
            log(f"  {job.done / elapsed:.1f} pairs/s")
        load_after = os.getloadavg()
        print(f"Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC  ")
        print(f"Machine: {_machine()}  ")
        print(
            f"Load average (1/5/15 min) before: {load_before[0]:.2f}/{load_before[1]:.2f}/"
            f"{load_before[2]:.2f}, after: {load_after[0]:.2f}/{load_after[1]:.2f}/"
            f"{load_after[2]:.2f}  "
        )
        print(f"Stub latency: {args.latency * 1000:.0f} ms per request\n")
        print(
            "| concurrency | pairs | seconds | pairs/s | ideal pairs/s | share of ideal "
            "| Graded CPU ms/pair | pairs/s one idle core could carry |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|")
        for concurrency, done, elapsed, rate, ideal, cpu_ms in rows:
            print(
                f"| {concurrency} | {done} | {elapsed:.2f} | {rate:.1f} | {ideal:.0f} | "
                f"{rate / ideal:.0%} | {cpu_ms:.2f} | {1000 / cpu_ms:.0f} |"
            )
    finally:
        server.terminate()
        server.join()


if __name__ == "__main__":
    main()
