"""The judge's next-card page with 1,000,000 judgments and 100 judges (issue 12, item 5).

Target: the page ``/collections/<slug>/judge/`` renders in at most 25 ms p95 of server
time (the Django view in-process, through the test client: middleware, session, every
SQL query, the template) with a number of queries that does not grow with the data.

``python -m benchmarks.judging_page [--database-url URL] [--keep] [--requests N]``

Setup (untimed, on a dedicated database, default PostgreSQL ``graded_bench_judging``):
one collection with ``judges_per_pair=3``, 1,000 queries × 500 documents with text, all
500,000 pairs pooled; 100 human judges; 1,000,000 judgments — pair *p* is graded by
judges ``p mod 50`` and ``50 + p mod 50`` (1 % of them "later", 4 % "can't judge") — so
every judge has 10,000 judgments and about 490,000 open pairs. Rows are written with
``COPY`` (what the services would write, with consistent ``graded_count``), then the
progress counters are built by the service that rebuilds them (``progress_rebuild``, as
the data migration does; the page reads only the counters), then ``VACUUM ANALYZE``.
Timing: ``--requests`` GETs of the next-card page, spread over ten judges (each request
after a different judge's, so no judge's rows stay hot in a cache the app does not have).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from typing import Any

from benchmarks.live import _machine, _percentile, _recreate_database, _setup_django, log

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/graded_bench_judging"
SLUG = "judging-bench"
N_QUERIES, N_DOCS, N_JUDGES = 1000, 500, 100


def _copy(table: str, columns: str, lines: Any) -> None:
    """COPY tab-separated ``lines`` into ``table`` (PostgreSQL)."""
    from django.db import connection

    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy,
    ):
        batch: list[str] = []
        for line in lines:
            batch.append(line)
            if len(batch) >= 100_000:
                copy.write("".join(batch).encode())
                batch.clear()
        if batch:
            copy.write("".join(batch).encode())


def _setup() -> None:
    """Create the collection, pool, judges and the million judgments."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from judging.models import Collection, Judge, Membership, Query

    if connection.vendor != "postgresql":
        raise SystemExit("this benchmark loads its data with COPY: use PostgreSQL")
    with transaction.atomic():
        coll = Collection.objects.create(name="Judging bench", slug=SLUG, judges_per_pair=3)
        Query.objects.bulk_create(
            [
                Query(collection=coll, external_id=str(q), text=f"query {q}", narrative="n")
                for q in range(N_QUERIES)
            ]
        )
        qids = list(
            Query.objects.filter(collection=coll).order_by("pk").values_list("pk", flat=True)
        )
        users = get_user_model().objects.bulk_create(
            [get_user_model()(username=f"bench-judge-{j}") for j in range(N_JUDGES)]
        )
        users = list(
            get_user_model().objects.filter(username__startswith="bench-judge-").order_by("pk")
        )
        Judge.objects.bulk_create(
            [Judge(kind=Judge.Kind.HUMAN, name=u.username, user=u) for u in users]
        )
        judges = list(
            Judge.objects.filter(user__in=users).order_by("pk").values_list("pk", flat=True)
        )
        Membership.objects.bulk_create(
            [Membership(collection=coll, user=u, role=Membership.Role.JUDGE) for u in users]
        )
        n_pairs = N_QUERIES * N_DOCS
        t0 = time.perf_counter()
        _copy(
            "judging_document",
            "collection_id, external_id, title, body, url, extra, has_content",
            (
                f"{coll.pk}\tD{i:07d}\tDocument {i} title\tThe body of document {i}, a few "
                f"words long, for the judging card.\t\t{{}}\tt\n"
                for i in range(n_pairs)
            ),
        )
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT min(id) FROM judging_document WHERE collection_id = %s", [coll.pk]
            )
            first_doc = cursor.fetchone()[0]
        now = datetime.now(UTC).isoformat()

        def status(p: int, j: int) -> tuple[str, str]:
            # A multiplicative hash of the (pair, judge) number, scaled to 0..99, so that
            # every judge has about 1 % "later" and 4 % "can't judge" (a plain
            # ``(7p + j) mod 100`` gave four judges half their pairs as "later").
            r = ((p * N_JUDGES + j) * 2654435761 % 2**32) * 100 >> 32
            if r == 0:
                return "later", "\\N"
            if r < 5:
                return "cannot_judge", "\\N"
            return "graded", str((p + j) % 5)

        graded = [0] * n_pairs
        for p in range(n_pairs):
            for j in (p % 50, 50 + p % 50):
                if status(p, j)[0] == "graded":
                    graded[p] += 1
        import random

        rng = random.Random(5)
        _copy(
            "judging_poolentry",
            "query_id, document_id, collection_id, source, graded_count, shuffle_key, added_at, "
            "is_open",  # set by the rebuild below
            (
                f"{qids[p // N_DOCS]}\t{first_doc + p}\t{coll.pk}\trun\t{graded[p]}\t"
                f"{rng.randrange(2**31 - 1)}\t{now}\tf\n"
                for p in range(n_pairs)
            ),
        )

        def judgment_lines() -> Any:
            for p in range(n_pairs):
                for j in (p % 50, 50 + p % 50):
                    st, grade = status(p, j)
                    yield (
                        f"{judges[j]}\t{qids[p // N_DOCS]}\t{first_doc + p}\t{coll.pk}\t{grade}\t"
                        f"{st}\t\t\\N\t\\N\t{now}\t{now}\n"
                    )

        _copy(
            "judging_judgment",
            "judge_id, query_id, document_id, collection_id, grade, status, note, seconds, "
            "abstain_probability, created_at, updated_at",
            judgment_lines(),
        )
        log(
            f"  {n_pairs:,} documents and pairs, {2 * n_pairs:,} judgments in "
            f"{time.perf_counter() - t0:.1f} s"
        )
    from judging.progress.services import progress_rebuild

    t0 = time.perf_counter()
    progress_rebuild(collection=coll)
    log(f"  progress counters rebuilt in {time.perf_counter() - t0:.1f} s")
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


def _kind(sql: str) -> str:
    """Name a statement of the page by what it reads."""
    if "UNION ALL" in sql:
        return "next pair (`next_pair`)"
    if "judging_membership" in sql and "quota" in sql:
        return "quota (`_quota_reached`)"
    if "AS remaining" in sql:
        return "progress within the query (`query_progress`)"
    if "judging_poolprogress" in sql:
        return "progress (`judge_progress`)"
    if "django_session" in sql:
        return "session"
    if sql.startswith("SELECT COALESCE((SELECT pe.id"):
        return "previous pair (`previous_entry_id`)"
    if "judging_judgment" in sql and "updated_at" in sql and "LIMIT 1" in sql:
        return "last query / own judgment"
    return sql.split(" FROM ", 1)[-1].split(" ", 1)[0].strip('"')


def run(args: argparse.Namespace) -> str:
    """Time the next-card page; return the Markdown report."""
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from judging.models import Collection, Judge, Judgment

    if not Collection.objects.filter(slug=SLUG).exists():
        _setup()
    coll = Collection.objects.get(slug=SLUG)
    judges = list(
        Judge.objects.filter(user__username__startswith="bench-judge-")
        .select_related("user")
        .order_by("pk")[:: N_JUDGES // 10]
    )
    clients = []
    for judge in judges:
        client = Client(HTTP_HOST="127.0.0.1")  # an allowed host of the settings
        client.force_login(judge.user)
        clients.append(client)
    url = reverse("judging:judge_next", args=[coll.slug])
    for client in clients:  # warm-up: one request each
        assert client.get(url).status_code == 200
    times: list[float] = []
    cpu: list[float] = []
    queries: set[int] = set()
    per_statement: dict[str, list[float]] = {}
    load_before = os.getloadavg()[0]
    for i in range(args.requests):
        client = clients[i % len(clients)]
        with CaptureQueriesContext(connection) as captured:
            t0, c0 = time.perf_counter(), time.process_time()
            response = client.get(url)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        assert response.status_code == 200 and b"data-entry-id" in response.content
        queries.add(len(captured.captured_queries))
        for q in captured.captured_queries:
            per_statement.setdefault(_kind(q["sql"]), []).append(float(q["time"]))
    load_after = os.getloadavg()[0]
    n_judgments = Judgment.objects.filter(collection=coll).count()
    ms = lambda s: f"{s * 1000:.1f} ms"  # noqa: E731
    lines = ["| Machine | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in _machine(connection.vendor).items()]
    lines += [
        "",
        "| Measurement | Value | Target |",
        "|---|---|---|",
        f"| Judgments / judges / pooled pairs | {n_judgments:,} / {N_JUDGES} / "
        f"{N_QUERIES * N_DOCS:,} | |",
        f"| Next-card page, server time: median / p95 / max ({len(times)} requests, "
        f"{len(clients)} judges) | {ms(statistics.median(times))} / "
        f"{ms(_percentile(times, 95))} / {ms(max(times))} | p95 ≤ 25 ms |",
        f"| Python CPU time of this process per page (Django, psycopg; not PostgreSQL's): "
        f"median / p95 | {ms(statistics.median(cpu))} / {ms(_percentile(cpu, 95))} | |",
        f"| SQL queries per page | {sorted(queries)} | constant |",
        "",
        f"1-minute load average before / after: {load_before:.1f} / {load_after:.1f} "
        f"({os.cpu_count()} cores).",
        "",
        "| SQL statement (as Django timed it) | median | p95 |",
        "|---|---:|---:|",
    ]
    for kind, values in sorted(per_statement.items(), key=lambda kv: -statistics.median(kv[1])):
        lines.append(
            f"| {kind} | {ms(statistics.median(values))} | {ms(_percentile(values, 95))} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse the command line, prepare the database and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_URL, help=f"default {DEFAULT_URL}")
    parser.add_argument("--keep", action="store_true", help="reuse the database")
    parser.add_argument("--requests", type=int, default=200, help="timed page requests")
    args = parser.parse_args(argv)
    if not args.keep:
        _recreate_database(args.database_url)
    _setup_django(args.database_url)
    print(run(args))


if __name__ == "__main__":
    sys.exit(main())
