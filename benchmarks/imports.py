"""Imports at scale: time and peak memory of each import path (issue part 10, item 6).

Targets:
- a 3,000,000-line qrels file imported as a judgment list (the coordinators' import,
  ``services_lists.judgment_list_import``, as the API and the page call it): peak memory at
  most 300 MiB above the process's before the import, and at most 20 s;
- ``manage.py import_judgments`` of 200,000 lines: at most 10 s;
- 200,000 documents (JSON Lines, ~450 bytes of text each): at most 200 MiB above.

On PostgreSQL a last row, without a target, measures the floor under the qrels row: the
same file's judgment rows written by SQL alone (:func:`_floor`).

``python -m benchmarks.imports [--database-url URL] [--qrels-lines N] [--judgments N]
[--documents N] [--topics N]``

``python -m benchmarks.imports --growth 0,800000,3000000 [--judgments N]`` measures
instead how an import's time depends on the labels a collection already holds (issue 32,
item 8): for each size, a collection of its own is filled with that many labels of
another judge (imported through the same service, not timed), each with a closed pool
entry, plus an open pool entry for each pair of the measured file; then ``--judgments``
(default 200,000) new labels on other pairs of the same queries are imported as over
REST (``judgment_list_import``, channel ``api``, a coordinator as the actor) and timed.

Before each import the database is vacuumed, analysed and checkpointed (PostgreSQL), so
no autovacuum of the previous import's rows runs during it. Each import runs in a fresh
child process (``python -m benchmarks.imports --child ...``),
so its peak resident set size (``ru_maxrss``) is its own: the figure reported is the peak
during the import minus the resident size just before it (Django set up, connection open). Times are
wall clock, including reading and checking the file and every write, with the
transaction committed. Works on a dedicated database (default PostgreSQL
``graded_bench_imports``, dropped and created fresh; ``sqlite:///path`` works too). Progress
goes to stderr; the Markdown report to stdout. See docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.live import _insert_documents, _machine, _recreate_database, _setup_django, log

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/graded_bench_imports"
ROOT = Path(__file__).resolve().parent.parent
MIB = 1024 * 1024
TARGETS = {
    "qrels": ("3M-line qrels as a judgment list", 300, 20.0),
    "judgments": ("manage.py import_judgments, 200k lines", None, 10.0),
    "documents": ("200k documents (JSON Lines)", 200, None),
    "topics": ("topics (TSV), dry run", None, None),
    "floor": ("PostgreSQL alone: the qrels' judgment rows, COPY + INSERT", None, None),
}
#: Documents per query kept apart for the existing labels of a growth collection.
GROWTH_STRIDE = 1000
#: Where the measured labels of a query start, past its existing ones (see write_pairs).
GROWTH_OFFSET = 150_000


def _rss_peak() -> int:
    """Return this process's peak resident set size in bytes (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _rss_now() -> int:
    """Return this process's resident set size now, in bytes (``VmRSS``)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return _rss_peak()


# --- files -------------------------------------------------------------------------------


def write_qrels(path: Path, *, lines: int, queries: int, documents: int, seed: int) -> None:
    """Write ``lines`` qrels lines over ``queries`` queries, distinct pairs, grades 0-4."""
    rng = random.Random(seed)
    per_query = lines // queries
    with path.open("w") as out:
        for q in range(queries):
            count = per_query + (1 if q < lines % queries else 0)
            start = rng.randrange(documents)
            step = rng.choice((1, 7, 11, 13))  # coprime to the document count (300,000)
            for i in range(count):
                d = (start + i * step) % documents
                out.write(f"Q{q:05d} 0 D{d:07d} {rng.randrange(5)}\n")


def write_pairs(
    path: Path, *, lines: int, queries: int, documents: int, offset: int, seed: int
) -> None:
    """Write ``lines`` qrels lines over ``queries`` queries on pairs set apart by ``offset``.

    Query ``q`` gets documents ``q * GROWTH_STRIDE + offset + i`` (modulo ``documents``):
    the existing labels (offset 0, at most :data:`GROWTH_STRIDE` per query) and the
    measured ones (offset :data:`GROWTH_OFFSET`) never share a pair.
    """
    rng = random.Random(seed)
    per_query = lines // queries
    with path.open("w") as out:
        for q in range(queries):
            count = per_query + (1 if q < lines % queries else 0)
            for i in range(count):
                d = (q * GROWTH_STRIDE + offset + i) % documents
                out.write(f"Q{q:05d} 0 D{d:07d} {rng.randrange(5)}\n")


def write_documents(path: Path, *, count: int, seed: int) -> None:
    """Write ``count`` JSON Lines documents of about 450 bytes of text each."""
    rng = random.Random(seed)
    words = [f"w{n}" for n in range(5000)]
    with path.open("w") as out:
        for n in range(count):
            body = " ".join(rng.choice(words) for _ in range(80))
            doc = {"docno": f"N{n:07d}", "title": f"New document {n}", "body": body}
            out.write(json.dumps(doc) + "\n")


def write_topics(path: Path, *, count: int) -> None:
    """Write ``count`` TSV topics ``qid<TAB>text``."""
    with path.open("w") as out:
        for n in range(count):
            out.write(f"T{n:07d}\tquery number {n} about something\n")


# --- the child: one import, measured -----------------------------------------------------


def child(kind: str, slug: str, path: str) -> dict[str, Any]:
    """Run one import in this (fresh) process; return its time and memory."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connection

    from judging.lists import services as services_lists
    from judging.models import Collection

    collection = Collection.objects.get(slug=slug)
    connection.ensure_connection()
    before = _rss_now()
    started = time.perf_counter()
    if kind in ("existing", "api"):  # growth: fill the collection, or the measured import
        from judging.models import JudgmentEvent

        name = "bench-existing" if kind == "existing" else "bench-api"
        judge = services_lists.judge_for_import(name=name)
        coordinator = get_user_model().objects.get_or_create(username="bench-coordinator")[0]
        with open(path, "rb") as source:
            summary = services_lists.judgment_list_import(
                collection=collection,
                judge=judge,
                source=source,
                format="qrels",
                actor=coordinator,
                channel=JudgmentEvent.Channel.API,
            )
        done = f"{summary.created:,} created"
    elif kind == "qrels":
        judge = services_lists.judge_for_import(name="bench-qrels")
        coordinator = get_user_model().objects.create_user("bench-coordinator")
        with open(path, "rb") as source:  # as the API calls it: the coordinator is the actor
            summary = services_lists.judgment_list_import(
                collection=collection, judge=judge, source=source, format="qrels", actor=coordinator
            )
        done = f"{summary.created:,} created"
    elif kind == "judgments":
        with open(os.devnull, "w") as quiet:
            call_command("import_judgments", slug, path, "--judge", "bench-command", stdout=quiet)
        done = "imported"
    elif kind == "documents":
        with open(path, "rb") as source:
            summary = services_lists.documents_import(
                collection=collection, source=source, format="jsonl"
            )
        done = f"{summary.created:,} created"
    elif kind == "topics":
        with open(path, "rb") as source:
            summary = services_lists.topics_import(
                collection=collection, source=source, format="tsv", dry_run=True
            )
        done = f"{summary.created:,} would be created"
    elif kind == "floor":
        done = f"{_floor(collection.pk, path):,} rows"
    else:
        raise SystemExit(f"unknown import {kind!r}")
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "before": before, "peak": _rss_peak(), "done": done}


def _floor(collection_id: int, path: str) -> int:
    """Write the qrels file's judgment rows with SQL alone; return how many.

    The least any import storing one row per label pays on this database: the file is
    copied as it is into a temporary table, and one ``INSERT ... SELECT`` writes the
    judgment rows (with the table's indexes and migration 0015's check), joined to their
    queries and documents, then commits. No Python per line, no checks of the lines, no
    history events, no live grades.
    """
    from django.db import connection, transaction

    from judging.models import Judge

    judge = Judge.objects.create(kind=Judge.Kind.LLM, name="bench-floor", model="floor")
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "CREATE TEMPORARY TABLE floor (qid TEXT, iter TEXT, docno TEXT, grade SMALLINT)"
            " ON COMMIT DROP"
        )
        with (
            open(path, "rb") as source,
            cursor.cursor.copy("COPY floor FROM STDIN (DELIMITER ' ')") as copy,
        ):
            while block := source.read(1 << 20):
                copy.write(block)
        cursor.execute(
            "INSERT INTO judging_judgment (judge_id, query_id, document_id, collection_id,"
            " grade, status, note, created_at, updated_at)"
            " SELECT %s, q.id, d.id, %s, f.grade, 'graded', '', now(), now() FROM floor f"
            " JOIN judging_query q ON q.collection_id = %s AND q.external_id = f.qid"
            " JOIN judging_document d ON d.collection_id = %s AND d.external_id = f.docno"
            " ORDER BY q.id, d.id",
            [judge.pk, collection_id, collection_id, collection_id],
        )
        return cursor.rowcount


def _run_child(url: str, kind: str, slug: str, path: Path) -> dict[str, Any]:
    env = {**os.environ, "DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "config.settings.test"}
    out = subprocess.run(
        [sys.executable, "-m", "benchmarks.imports", "--child", kind, slug, str(path)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise SystemExit(f"{kind} import failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


# --- the parent: set up, run each import, report ------------------------------------------


def _collection(slug: str, *, queries: int, documents: int) -> None:
    """Create collection ``slug`` with ``queries`` queries and ``documents`` documents."""
    from judging.models import Collection, Query

    collection = Collection.objects.create(slug=slug, name=slug)
    Query.objects.bulk_create(
        [
            Query(collection=collection, external_id=f"Q{q:05d}", text=f"query {q}")
            for q in range(queries)
        ],
        batch_size=5000,
    )
    if documents:
        _insert_documents(collection.pk, documents)


def _quiesce() -> None:
    """Let the database settle before a measured import (PostgreSQL).

    The imports before it leave millions of new rows that autovacuum would otherwise
    vacuum and analyse while the next import runs, on the same two cores: vacuum and
    analyse them now, and write the dirty pages out, so each import starts from a quiet
    database.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE)")
        cursor.execute("CHECKPOINT")


def _pool(collection_id: int, path: Path) -> None:
    """Pool every labelled pair (closed) and the pairs of the qrels file at ``path`` (open).

    Written by SQL, not timed: a collection judged from a pool holds one entry per pair.
    """
    from django.db import connection, transaction

    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO judging_poolentry (query_id, document_id, collection_id, source,"
            " graded_count, shuffle_key, is_open, added_at) SELECT query_id, document_id,"
            " collection_id, 'import', 1, (random() * 1000000)::int, false, now()"
            " FROM judging_judgment WHERE collection_id = %s",
            [collection_id],
        )
        cursor.execute(
            "CREATE TEMPORARY TABLE wanted (qid TEXT, iter TEXT, docno TEXT, grade TEXT)"
            " ON COMMIT DROP"
        )
        with (
            path.open("rb") as source,
            cursor.cursor.copy("COPY wanted FROM STDIN (DELIMITER ' ')") as copy,
        ):
            while block := source.read(1 << 20):
                copy.write(block)
        cursor.execute(
            "INSERT INTO judging_poolentry (query_id, document_id, collection_id, source,"
            " graded_count, shuffle_key, is_open, added_at) SELECT q.id, d.id, %s, 'import',"
            " 0, (random() * 1000000)::int, true, now() FROM wanted w"
            " JOIN judging_query q ON q.collection_id = %s AND q.external_id = w.qid"
            " JOIN judging_document d ON d.collection_id = %s AND d.external_id = w.docno",
            [collection_id, collection_id, collection_id],
        )
        opened = cursor.rowcount
        cursor.execute(  # the progress counter the services keep with the open entries
            "INSERT INTO judging_poolprogress (collection_id, open_pairs) VALUES (%s, %s)"
            " ON CONFLICT (collection_id) DO UPDATE SET open_pairs = EXCLUDED.open_pairs",
            [collection_id, opened],
        )


def growth(args: argparse.Namespace) -> str:
    """Import ``--judgments`` labels into collections already holding each ``--growth`` size."""
    _recreate_database(args.database_url)
    _setup_django(args.database_url)
    from django.db import connection

    from judging.models import Collection

    if connection.vendor != "postgresql":
        raise SystemExit("--growth needs PostgreSQL")
    machine = _machine(connection.vendor)
    queries, documents = 3000, 300_000
    sizes = [int(size) for size in args.growth.split(",")]
    lines = [
        "| Labels already in the collection | Imported | Time |",
        "| ---: | ---: | ---: |",
    ]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        measured = work / "measured.qrels"
        write_pairs(
            measured,
            lines=args.judgments,
            queries=queries,
            documents=documents,
            offset=GROWTH_OFFSET,
            seed=5,
        )
        for size in sizes:
            slug = f"bench-grow-{size}"
            _collection(slug, queries=queries, documents=documents)
            if size:
                existing = work / f"existing-{size}.qrels"
                write_pairs(
                    existing, lines=size, queries=queries, documents=documents, offset=0, seed=4
                )
                connection.close()
                log(f"growth {size:,}: filling the collection")
                built = _run_child(args.database_url, "existing", slug, existing)
                log(f"growth {size:,}: filled in {built['seconds']:.1f} s")
                existing.unlink()
            _pool(Collection.objects.get(slug=slug).pk, measured)
            _quiesce()
            connection.close()
            log(f"growth {size:,}: importing {args.judgments:,} labels")
            result = _run_child(args.database_url, "api", slug, measured)
            log(f"growth {size:,}: {result['seconds']:.1f} s")
            lines.append(f"| {size:,} | {args.judgments:,} | {result['seconds']:.1f} s |")
    header = ", ".join(f"{k}: {v}" for k, v in machine.items())
    return f"Machine: {header}\n\n" + "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> str:
    """Set up the database and files, run every import in a child; return the report."""
    _recreate_database(args.database_url)
    _setup_django(args.database_url)
    from django.db import connection

    machine = _machine(connection.vendor)
    queries, documents = 3000, 300_000  # 1,000 judged documents per query in the qrels
    rows: list[tuple[str, str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        plan = [
            ("qrels", args.qrels_lines, "qrels.txt"),
            ("floor", args.qrels_lines if connection.vendor == "postgresql" else 0, "qrels.txt"),
            ("judgments", args.judgments, "judgments.qrels"),
            ("documents", args.documents, "documents.jsonl"),
            ("topics", args.topics, "topics.tsv"),
        ]
        for kind, size, name in plan:
            if not size:
                continue
            slug = f"bench-{kind}"
            path = work / name
            if kind != "floor":
                log(f"{kind}: writing {size:,} lines")
            if kind == "qrels":
                _collection(slug, queries=queries, documents=documents)
                write_qrels(path, lines=size, queries=queries, documents=documents, seed=1)
            elif kind == "floor":  # the same file, into a collection of its own
                _collection(slug, queries=queries, documents=documents)
            elif kind == "judgments":
                _collection(slug, queries=queries, documents=documents)
                write_qrels(path, lines=size, queries=queries, documents=documents, seed=2)
            elif kind == "documents":
                _collection(slug, queries=0, documents=0)
                write_documents(path, count=size, seed=3)
            else:
                _collection(slug, queries=0, documents=0)
                write_topics(path, count=size)
            _quiesce()
            connection.close()
            log(f"{kind}: importing {path.stat().st_size / MIB:.0f} MiB in a fresh process")
            result = _run_child(args.database_url, kind, slug, path)
            result["mib"] = path.stat().st_size / MIB
            result["size"] = size
            extra = (result["peak"] - result["before"]) / MIB
            log(f"{kind}: {result['seconds']:.1f} s, +{extra:.0f} MiB")
            rows.append((kind, name, result))
    return report(machine, rows)


def report(machine: dict[str, str], rows: list[tuple[str, str, dict[str, Any]]]) -> str:
    """Return the Markdown report: one row per import, with its target and verdict."""
    lines = [
        "| Import | Lines | File | Time | Peak memory above start | Target | Met |",
        "| --- | ---: | ---: | ---: | ---: | --- | :---: |",
    ]
    for kind, _name, r in rows:
        what, mib_target, s_target = TARGETS[kind]
        extra = (r["peak"] - r["before"]) / MIB
        wanted, met = [], True
        if mib_target is not None:
            wanted.append(f"≤ +{mib_target} MiB")
            met &= extra <= mib_target
        if s_target is not None:
            wanted.append(f"≤ {s_target:.0f} s")
            met &= r["seconds"] <= s_target
        lines.append(
            f"| {what} | {r['size']:,} | {r['mib']:.0f} MiB | {r['seconds']:.1f} s | "
            f"+{extra:.0f} MiB (peak {r['peak'] / MIB:.0f} MiB) | {', '.join(wanted) or '—'} | "
            f"{('yes' if met else '**no**') if wanted else '—'} |"
        )
    header = ", ".join(f"{k}: {v}" for k, v in machine.items())
    return f"Machine: {header}\n\n" + "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Parse the options and run the benchmark (or, with ``--child``, one import)."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        import django

        django.setup()
        print(json.dumps(child(*argv[1:4])))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--qrels-lines", type=int, default=3_000_000)
    parser.add_argument("--judgments", type=int, default=200_000)
    parser.add_argument("--documents", type=int, default=200_000)
    parser.add_argument("--topics", type=int, default=1_000_000)
    parser.add_argument(
        "--growth",
        default="",
        help="comma-separated sizes (labels already in the collection): measure "
        "--judgments labels imported into each instead of the usual imports",
    )
    args = parser.parse_args(argv)
    print(growth(args) if args.growth else run(args))


if __name__ == "__main__":
    main()
