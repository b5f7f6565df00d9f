"""A 1,000-query snapshot of a search engine: wall time at an engine latency, and memory.

``python -m benchmarks.search_snapshot [--queries 1000] [--depth 100] [--latency-ms 20 100]
[--concurrency 4 16] [--database-url URL]``

A local engine speaking Elasticsearch's ``_search`` (a thread per request, each answer
after ``latency`` ms, ``depth`` hits with ``_source`` title and body, drawn from 50,000
documents the collection does not hold) answers every query of a fresh collection. For
each latency × concurrency, one snapshot of every query is sent through the app's own
path (:func:`metrics.search.services.snapshot_start`, then :func:`metrics.search.runner.work`,
as the Celery task does): the requests, the mapping, the documents added from the mapped
fields, the run submitted, pooled and scored. Reported: the wall time, the time the
engine alone would take at that concurrency (queries × latency / concurrency), the
documents added, and the process's peak resident memory (``ru_maxrss``, the whole run so
far). Works on a dedicated database (default: a temporary SQLite file; a PostgreSQL URL
is dropped and created fresh).
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from benchmarks.live import _recreate_database, _setup_django, log

#: Documents the engine draws its hits from.
CORPUS = 50_000


class Engine:
    """An Elasticsearch ``_search`` answering after ``latency`` seconds."""

    def __init__(self, depth: int) -> None:
        """Serve on 127.0.0.1 in a thread."""
        self.latency = 0.0
        self.requests = 0
        engine = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                text = json.dumps(body["query"])
                seed = sum(map(ord, text))
                engine.requests += 1
                time.sleep(engine.latency)
                hits = []
                for rank in range(depth):
                    n = (seed * 7919 + rank * 104_729) % CORPUS
                    hits.append(
                        {
                            "_id": f"doc{n:05d}",
                            "_score": float(depth - rank),
                            "_source": {"title": f"Document {n}", "body": f"Body of {n}. " * 8},
                        }
                    )
                data = json.dumps({"hits": {"total": {"value": depth}, "hits": hits}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


def main(argv: list[str] | None = None) -> int:
    """Print the Markdown table of docs/benchmarks.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1000, help="Queries in the collection.")
    parser.add_argument("--depth", type=int, default=100, help="Hits per query (k).")
    parser.add_argument("--latency-ms", type=float, nargs="+", default=[20.0, 100.0])
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 16])
    parser.add_argument("--database-url", default="", help="Default: a temporary SQLite file.")
    args = parser.parse_args(argv)
    url = args.database_url or f"sqlite:///{Path(tempfile.mkdtemp()) / 'search-bench.sqlite3'}"
    _recreate_database(url)
    _setup_django(url)
    from django.contrib.auth import get_user_model

    from judging import services as judging_services
    from judging.models import Collection, Membership, Query
    from metrics.models import Team
    from metrics.search import presets, runner, services
    from metrics.search.models import SearchEndpoint, SearchSnapshot

    engine = Engine(args.depth)
    collection = Collection.objects.create(name="Search bench", slug="search-bench")
    Query.objects.bulk_create(
        [
            Query(collection=collection, external_id=f"q{i:04d}", text=f"query number {i}")
            for i in range(args.queries)
        ]
    )
    boss = get_user_model().objects.create_user("bench-boss")
    judging_services.membership_grant(
        collection=collection, user=boss, role=Membership.Role.COORDINATOR
    )
    team = Team.objects.create(collection=collection, name="engine")
    rows = []
    for latency in args.latency_ms:
        for concurrency in args.concurrency:
            endpoint = SearchEndpoint.objects.create(
                name=f"es-{int(latency)}-{concurrency}",
                kind=presets.ELASTICSEARCH,
                base_url=engine.url,
                allowed_private_hosts=["127.0.0.1"],
                concurrency=concurrency,
                rate_limit=0,
            )
            endpoint.allowed_collections.add(collection)
            method, _path, template = presets.DEFAULT_REQUESTS[presets.ELASTICSEARCH]
            configuration = services.configuration_create(
                collection=collection,
                name=endpoint.name,
                team=team,
                fields=services.VersionFields(
                    endpoint=endpoint,
                    path="/docs/_search",
                    template=template,
                    depth=args.depth,
                    method=method,
                ),
                user=boss,
            )
            engine.latency = latency / 1000
            documents_before = collection.documents.count()
            log(f"latency {latency:g} ms, concurrency {concurrency}: sending {args.queries}")
            started = time.perf_counter()
            snapshot = services.snapshot_start(configuration=configuration, user=boss)
            snapshot = runner.work(SearchSnapshot.objects.get(pk=snapshot.pk))
            wall = time.perf_counter() - started
            assert snapshot.status == SearchSnapshot.Status.DONE, snapshot.error
            rows.append(
                (
                    latency,
                    concurrency,
                    wall,
                    args.queries * latency / 1000 / concurrency,
                    collection.documents.count() - documents_before,
                    resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                )
            )
    vendor = "PostgreSQL" if url.startswith("postgres") else "SQLite"
    print(
        f"{args.queries} queries × depth {args.depth}, {vendor}, "
        f"{platform.processor() or platform.machine()}, {datetime.now(UTC):%Y-%m-%d %H:%M} UTC\n"
    )
    print(
        "| Engine latency | Concurrency | Snapshot wall | The engine alone | Documents added "
        "| Peak memory (process) |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for latency, concurrency, wall, alone, added, rss in rows:
        print(
            f"| {latency:g} ms | {concurrency} | {wall:.1f} s | {alone:.1f} s | {added:,} | "
            f"{rss:.0f} MiB |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
