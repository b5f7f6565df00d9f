"""Judgment-list export and document import at scale (issue part 5).

Targets: with 1,000,000 live grades on PostgreSQL, the full csv export
(``GET /api/v1/collections/<slug>/qrels/?format=csv``) finishes in at most 5 s with the
server process growing by at most 50 MiB; a 2.5M-document TSV file imports without being
held in memory.

``python -m benchmarks.exports [--pairs N] [--documents N] [--database-url URL]``
(``--pairs 0`` or ``--documents 0`` skips that part).

Works on a dedicated PostgreSQL database (default ``graded_bench_exports`` on localhost,
dropped and created fresh). The export is measured against a real server process: a
stdlib WSGI server (``wsgiref``, one thread, the test settings with ``DEBUG`` off) in a
child process, whose resident memory is read from ``/proc`` before the export (after a
warm-up request) and as its high-water mark after. The peer is PostgreSQL itself:
``COPY (SELECT ... ORDER BY ...) TO STDOUT`` of the same rows, the floor for any export.
The document import runs ``manage.py import_collection --documents`` in a child process
and reports its wall time and peak memory, next to the same command on 1% of the file.
Progress goes to stderr; the Markdown report to stdout.
"""

from __future__ import annotations

import argparse
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/graded_bench_exports"
SLUG = "export-bench"
WORDS = [
    "soil",
    "water",
    "garden",
    "compost",
    "lawn",
    "drain",
    "paint",
    "roof",
    "window",
    "floor",
    "heat",
    "pump",
    "tile",
    "grout",
    "mould",
    "damp",
    "fence",
    "hedge",
    "seed",
    "bulb",
    "prune",
    "mulch",
    "weed",
    "pest",
    "ant",
    "wasp",
    "moss",
    "leak",
    "pipe",
]


def log(message: str) -> None:
    """Print a progress line to stderr."""
    print(message, file=sys.stderr, flush=True)


def _setup(url: str) -> None:
    """Recreate the database, configure Django on it and migrate."""
    from benchmarks.live import _recreate_database, _setup_django

    _recreate_database(url)
    _setup_django(url)


def _fill(pairs: int) -> tuple[object, str]:
    """Create the collection with ``pairs`` live grades (1000 queries); return it and a token."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from rest_framework.authtoken.models import Token

    from judging import services
    from judging.models import Collection, Membership

    queries = 1000
    docs = max(1, pairs // queries)
    collection = Collection.objects.create(slug=SLUG, name="Export benchmark")
    user = get_user_model().objects.create_user("bench-coordinator")
    services.membership_grant(collection=collection, user=user, role=Membership.Role.COORDINATOR)
    token = Token.objects.create(user=user).key
    cid = collection.pk
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO judging_query (collection_id, external_id, text, description, narrative)"
            " SELECT %s, (1000 + n)::text, 'query, \"number\" ' || n, '', ''"
            " FROM generate_series(0, %s) n",
            [cid, queries - 1],
        )
        cursor.execute(
            "INSERT INTO judging_document (collection_id, external_id, title, body, url, extra,"
            " has_content) SELECT %s, 'doc-' || lpad(n::text, 7, '0'), '', '', '', '{}', true"
            " FROM generate_series(0, %s) n",
            [cid, docs - 1],
        )
        cursor.execute(
            "INSERT INTO judging_livegrade (collection_id, query_id, document_id, grade,"
            " human_count, llm_count, version, updated_at, policy, adjudicated, judge_ids)"
            " SELECT %s, q.id, d.id, (q.id + d.id) %% 5, 1, 0, 1, now(), '', false, '[]'"
            " FROM judging_query q CROSS JOIN judging_document d"
            " WHERE q.collection_id = %s AND d.collection_id = %s",
            [cid, cid, cid],
        )
        cursor.execute("ANALYZE")
    Collection.objects.filter(pk=cid).update(judgments_version=1)
    return collection, token


def _free_port() -> int:
    """Return a free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _rss_kib(pid: int, field: str) -> int:
    """Return a memory field (VmRSS, VmHWM) of a process from /proc, in KiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} for {pid}")


def _cpu_seconds(pid: int) -> float:
    """Return the user + system CPU time a process has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _explain(collection_id: int) -> float:
    """Return PostgreSQL's own execution time (ms) of the csv export query."""
    from django.db import connection, transaction

    from judging.lists import exports
    from judging.models import Collection

    spec = exports.ExportSpec(format="csv")
    collection = Collection.objects.get(pk=collection_id)
    queryset = exports._ordered(
        exports._live_queryset(collection, spec), "query__external_id", "document__external_id"
    ).values_list(
        "query__external_id", "document__external_id", "grade", "human_count", "llm_count",
        "query__text",
    )  # fmt: skip
    sql, params = queryset.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        cursor.execute("EXPLAIN (ANALYZE, FORMAT JSON) " + sql, params)
        plan = cursor.fetchone()[0]
    plan = plan if isinstance(plan, list) else __import__("json").loads(plan)
    return float(plan[0]["Execution Time"])


def _reset_hwm(pid: int) -> None:
    """Reset the process's memory high-water mark (Linux ``clear_refs`` 5)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")


def _serve(port: int) -> None:
    """Serve the Django WSGI application on ``port`` (runs in the child process)."""
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from django.core.wsgi import get_wsgi_application

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    make_server("127.0.0.1", port, get_wsgi_application(), handler_class=Quiet).serve_forever()


def _download(url: str, token: str, gzip: bool = False) -> tuple[float, int, int]:
    """GET ``url`` streaming; return seconds to the last byte, bytes and lines received."""
    import httpx

    headers = {"Authorization": f"Token {token}"}
    headers["Accept-Encoding"] = "gzip" if gzip else "identity"
    size = lines = 0
    t0 = time.perf_counter()
    with httpx.stream("GET", url, headers=headers, timeout=600) as response:
        response.raise_for_status()
        for chunk in response.iter_raw():
            size += len(chunk)
            if not gzip:
                lines += chunk.count(b"\n")
    return time.perf_counter() - t0, size, lines


def _copy_floor(collection_id: int) -> tuple[float, int]:
    """Time PostgreSQL's own COPY of the same csv rows; return seconds and bytes."""
    from django.db import connection

    sql = (
        "COPY (SELECT q.text, d.external_id, g.grade FROM judging_livegrade g"
        " JOIN judging_query q ON q.id = g.query_id JOIN judging_document d"
        f" ON d.id = g.document_id WHERE g.collection_id = {int(collection_id)}"
        ' ORDER BY q.external_id COLLATE "C", d.external_id COLLATE "C")'
        " TO STDOUT WITH (FORMAT csv)"
    )
    size = 0
    t0 = time.perf_counter()
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        for block in copy:
            size += len(block)
    return time.perf_counter() - t0, size


def bench_export(url: str, pairs: int, reps: int) -> list[str]:
    """Measure the streamed csv export against a server process; return report lines."""
    collection, token = _fill(pairs)
    port = _free_port()
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    code = f"import django; django.setup(); from benchmarks.exports import _serve; _serve({port})"
    server = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env)
    base = f"http://127.0.0.1:{port}/api/v1/collections/{SLUG}/qrels/"
    try:
        for _ in range(100):
            try:
                _download(base + "?format=csv&query=1000", token)
                break
            except Exception:
                time.sleep(0.2)
        lines = [
            "| Export (1 server process) | Time to last byte | Server CPU | Size "
            "| Server RSS before → peak (growth) |",
            "|---|---|---|---|---|",
        ]
        for fmt, gzip in (("csv", False), ("qrels", False), ("jsonl", False), ("csv", True)):
            times, cpus, growths = [], [], []
            for _ in range(reps):
                rss = _rss_kib(server.pid, "VmRSS")
                _reset_hwm(server.pid)
                cpu = _cpu_seconds(server.pid)
                seconds, size, count = _download(base + f"?format={fmt}", token, gzip=gzip)
                cpus.append(_cpu_seconds(server.pid) - cpu)
                peak = _rss_kib(server.pid, "VmHWM")
                growths.append(peak - rss)
                times.append(seconds)
                log(f"  {fmt}{' gzip' if gzip else ''}: {seconds:.2f} s, {size / 1e6:.1f} MB, "
                    f"RSS {rss / 1024:.0f} → {peak / 1024:.0f} MiB")  # fmt: skip
            if not gzip:
                header = 1 if fmt == "csv" else 0
                assert count == pairs + header, (fmt, count)
            label = f"`format={fmt}`" + (" gzip" if gzip else "")
            lines.append(
                f"| {label} | {min(times):.2f} s (median {sorted(times)[len(times) // 2]:.2f} s)"
                f" | {min(cpus):.2f} s | {size / 1e6:.1f} MB | {rss / 1024:.0f} → "
                f"{peak / 1024:.0f} MiB (largest growth +{max(growths) / 1024:.1f} MiB) |"
            )
        floor = [_copy_floor(collection.pk) for _ in range(reps)]
        lines.append(
            f"| PostgreSQL `COPY (SELECT … ORDER BY …) TO STDOUT` (csv, the floor) | "
            f"{min(t for t, _ in floor):.2f} s | — | {floor[0][1] / 1e6:.1f} MB | — |"
        )
        explain = min(_explain(collection.pk) for _ in range(reps))
        lines.append(f"\nPostgreSQL's execution time of the export query: {explain / 1000:.2f} s.")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return lines


def _write_documents(path: Path, count: int) -> int:
    """Write ``count`` MS MARCO-style ``docno<TAB>text`` lines; return the file size."""
    rng = random.Random(20261123)
    with path.open("w", encoding="utf-8") as out:
        for n in range(count):
            text = " ".join(rng.choices(WORDS, k=18))
            out.write(f"{n}\t{text}\n")
    return path.stat().st_size


def _import(url: str, path: Path, slug: str) -> tuple[float, float]:
    """Run import_collection on ``path`` in a child; return seconds and its peak RSS (MiB)."""
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    code = (
        "import resource, sys, django; django.setup(); "
        "from django.core.management import call_command; "
        f"call_command('import_collection', {slug!r}, '--documents', {str(path)!r}); "
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)"
    )
    t0 = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.perf_counter() - t0
    return seconds, int(done.stderr.strip().splitlines()[-1]) / 1024


def bench_documents(url: str, count: int) -> list[str]:
    """Measure importing a ``count``-line TSV of documents; return report lines."""
    lines = ["| Document import (`import_collection --documents`, TSV) | Time | Peak RSS |",
             "|---|---|---|"]  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        small, big = Path(tmp) / "small.tsv", Path(tmp) / "big.tsv"
        small_size = _write_documents(small, max(1, count // 100))
        seconds, peak = _import(url, small, "docs-small")
        lines.append(
            f"| {count // 100:,} documents ({small_size / 1e6:.1f} MB) | {seconds:.1f} s | "
            f"{peak:.0f} MiB |"
        )
        log(f"  small import: {seconds:.1f} s, {peak:.0f} MiB")
        size = _write_documents(big, count)
        log(f"  wrote {count:,} documents ({size / 1e6:.0f} MB); importing …")
        seconds, peak = _import(url, big, "docs-big")
        lines.append(
            f"| {count:,} documents ({size / 1e6:.0f} MB) | {seconds:.0f} s "
            f"({count / seconds:,.0f} documents/s) | {peak:.0f} MiB |"
        )
        log(f"  big import: {seconds:.1f} s, {peak:.0f} MiB")
    return lines


def main() -> None:
    """Run both benchmarks and print the Markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--documents", type=int, default=2_500_000)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--database-url", default=DEFAULT_URL)
    args = parser.parse_args()
    if not args.database_url.startswith("postgres"):
        parser.error("the export benchmark needs PostgreSQL")
    _setup(args.database_url)
    from benchmarks.live import _machine

    report = [f"- {k}: {v}" for k, v in _machine("postgresql").items()]
    report.append(f"- Load average before: {os.getloadavg()[0]:.2f}")
    if args.pairs:
        log(f"filling {args.pairs:,} live grades …")
        report += ["", *bench_export(args.database_url, args.pairs, args.reps)]
    if args.documents:
        report += ["", *bench_documents(args.database_url, args.documents)]
    report.append(f"\n- Load average after: {os.getloadavg()[0]:.2f}")
    print("\n".join(report))


if __name__ == "__main__":
    main()
