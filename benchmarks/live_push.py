"""How fast a new grade reaches an open leaderboard page (issue 20 item 6).

``python -m benchmarks.live_push [--database-url URL] [--runs N] [--grades N]``

Setup (untimed, default PostgreSQL ``graded_bench_live_push``): one collection of 50
queries × 100 documents, 1,500 judgments by one judge, ``--runs`` submitted runs (100
documents per query each, a shuffled pool). Graded is served by Django's threaded WSGI
server in this process (static files included) and the leaderboard is opened in Debian's
Chromium, logged in as the coordinator.

Timed: ``--grades`` times, a judge's new grade is recorded through the service (the
judgment, the live list and the rescoring of every run, committed) and the clock runs until
the open page shows the new judgment-list version (its live part swapped in by the poll).
Reported: that latency (median, p90, max) beside the poll interval, the server time of an
unchanged poll (204) and of a changed one (the page), median of many, through the test
client.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from typing import Any

from benchmarks.live import _machine, _percentile, _recreate_database, _setup_django, log

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/graded_bench_live_push"
SLUG = "live-push"
N_QUERIES, N_DOCS, DEPTH = 50, 100, 100
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


def _setup(runs: int) -> dict[str, Any]:
    """Create the collection, judgments and runs; return what the timing needs."""
    from django.contrib.auth import get_user_model

    from judging import services as judging
    from judging.models import Collection, Document, Membership, Query
    from metrics import services as metrics
    from metrics.models import Team

    rng = random.Random(20)
    users = get_user_model().objects
    coll = Collection.objects.create(slug=SLUG, name="Live push benchmark")
    coordinator = users.create_user("coord", password="bench-pass-1")
    judge_user = users.create_user("judge", password="bench-pass-1")
    team_user = users.create_user("team", password="bench-pass-1")
    judging.membership_grant(collection=coll, user=coordinator, role=Membership.Role.COORDINATOR)
    judging.membership_grant(collection=coll, user=judge_user, role=Membership.Role.JUDGE)
    team = Team.objects.create(collection=coll, name="Bench team")
    team.members.add(team_user)
    queries = Query.objects.bulk_create(
        Query(collection=coll, external_id=f"q{i}", text=f"query {i}") for i in range(N_QUERIES)
    )
    docs = Document.objects.bulk_create(
        Document(collection=coll, external_id=f"d{i}", title=f"Doc {i}") for i in range(N_DOCS)
    )
    judge = judging.judge_for_user(user=judge_user)
    rows = [
        judging.JudgmentRow(n + 1, q.external_id, d.external_id, rng.choice((0, 0, 1, 2, 3)))
        for n, (q, d) in enumerate((q, d) for q in queries for d in docs[:30])
    ]
    judging.judgments_import(collection=coll, judge=judge, rows=rows)
    for r in range(runs):
        lines = []
        for q in queries:
            ranked = rng.sample(docs, DEPTH)
            lines += [
                f"{q.external_id} Q0 {d.external_id} {k + 1} {DEPTH - k} run{r}"
                for k, d in enumerate(ranked)
            ]
        metrics.run_submit(
            collection=coll,
            team=team,
            tag=f"run{r}",
            content=("\n".join(lines) + "\n").encode(),
            filename=f"run{r}.txt",
            user=team_user,
        )
    coll.leaderboard_published = True
    coll.save(update_fields=["leaderboard_published"])
    return {
        "coll": coll,
        "queries": queries,
        "docs": docs,
        "judge": judge,
        "coordinator": coordinator,
    }


def _serve() -> tuple[Any, str]:
    """Serve Graded on a free port in a thread; return the server and its address."""
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.core.handlers.wsgi import WSGIHandler
    from django.core.servers.basehttp import ThreadedWSGIServer, WSGIRequestHandler

    class Quiet(WSGIRequestHandler):
        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadedWSGIServer(("127.0.0.1", 0), Quiet, allow_reuse_address=False)
    server.set_app(StaticFilesHandler(WSGIHandler()))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def _server_times(world: dict[str, Any], requests: int) -> tuple[float, float]:
    """Return the median server time (ms) of an unchanged poll and of a changed one."""
    import re

    from django.test import Client
    from django.urls import reverse

    client = Client()
    client.force_login(world["coordinator"])
    url = reverse("metrics:leaderboard", args=[SLUG])
    html = client.get(url).content.decode()
    token = re.search(r'"live": "([0-9a-f]{16})"', html).group(1)
    unchanged, changed = [], []
    for _ in range(requests):
        start = time.perf_counter()
        assert client.get(url, {"live": token}).status_code == 204
        unchanged.append(time.perf_counter() - start)
        start = time.perf_counter()
        assert client.get(url, {"live": "0" * 16}).status_code == 200
        changed.append(time.perf_counter() - start)
    return statistics.median(unchanged) * 1000, statistics.median(changed) * 1000


def run(args: argparse.Namespace) -> str:
    """Set up, serve, measure; return the Markdown report."""
    _recreate_database(args.database_url)
    # Playwright's sync API runs an event loop in this thread; the ORM calls stay sync.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    _setup_django(args.database_url)
    from django.conf import settings
    from django.db import connection
    from django.test import Client
    from django.urls import reverse
    from playwright.sync_api import sync_playwright

    from judging import services as judging
    from metrics.views import LIVE_POLL_SECONDS

    settings.ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
    log(f"setting up {args.runs} runs ...")
    world = _setup(args.runs)
    machine = _machine(connection.vendor)
    poll_204, poll_200 = _server_times(world, args.requests)
    server, base = _serve()
    session = Client()
    session.force_login(world["coordinator"])
    cookie = session.cookies[settings.SESSION_COOKIE_NAME].value
    latencies: list[float] = []
    rng = random.Random(7)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(base_url=base)
        context.add_cookies([{"name": settings.SESSION_COOKIE_NAME, "value": cookie, "url": base}])
        page = context.new_page()
        page.goto(reverse("metrics:leaderboard", args=[SLUG]))
        coll = world["coll"]
        for n in range(args.grades):
            time.sleep(rng.uniform(0, LIVE_POLL_SECONDS))  # grades come at any moment of a poll
            start = time.perf_counter()
            judging.judgment_record(
                judge=world["judge"],
                query=rng.choice(world["queries"]),
                document=rng.choice(world["docs"][30:]),
                grade=rng.choice((1, 2, 3, 4)),
            )
            coll.refresh_from_db(fields=["judgments_version"])
            page.wait_for_function(
                "v => document.querySelector('[data-live]').dataset.liveVersion === v",
                arg=str(coll.judgments_version),
                timeout=30_000,
            )
            latencies.append(time.perf_counter() - start)
            log(f"grade {n + 1}: {latencies[-1] * 1000:.0f} ms")
        browser.close()
    server.shutdown()
    ms = [x * 1000 for x in latencies]
    machine["Load average (1, 5, 15 min) at the end"] = ", ".join(
        f"{x:.1f}" for x in os.getloadavg()
    )
    lines = [
        "### Live leaderboard push (`python -m benchmarks.live_push`)",
        "",
        *(f"- {key}: {value}" for key, value in machine.items()),
        f"- {args.runs} runs × {N_QUERIES} queries × {DEPTH} documents; {args.grades} grades, "
        f"each at a random moment of the {LIVE_POLL_SECONDS} s poll interval",
        "",
        "| What | Median | p90 | Max |",
        "| --- | ---: | ---: | ---: |",
        f"| Grade recorded → open leaderboard shows it (ms) | {statistics.median(ms):.0f} | "
        f"{_percentile(ms, 90):.0f} | {max(ms):.0f} |",
        f"| Unchanged poll, server time (ms, 204) | {poll_204:.1f} | | |",
        f"| Changed poll, server time (ms, the page) | {poll_200:.1f} | | |",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments and print the report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--grades", type=int, default=20)
    parser.add_argument("--requests", type=int, default=50, help="server-time samples")
    args = parser.parse_args(argv)
    print(run(args))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
