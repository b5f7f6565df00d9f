"""The cost of a wide measure set on the demo: the default measures against ``all_trec``.

For each number of runs (the demo's 3 runs, then synthetic reshuffles of them up to
``--runs``) and each measure set, it times saving the set (which rescores every run from
nothing), one judgment change and its live rescoring (median of ``--changes``), the
leaderboard page and ``GET .../leaderboard/`` (median of 5), and reports the scoreboard's
size. Figures in docs/measures.md ("trec_eval's sets on a leaderboard").

``python -m benchmarks.measure_sets [--runs 3,30] [--changes 31] [--database-url URL]``

Works on a fresh SQLite file in a temporary folder unless ``--database-url`` names a
database (it is migrated and the demo loaded into it). Markdown goes to stdout.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _setup(database_url: str | None) -> None:
    """Point Django at the benchmark database and start it."""
    if database_url is None:
        database_url = f"sqlite:///{tempfile.mkdtemp(prefix='graded-sets-')}/bench.sqlite3"
    os.environ["DATABASE_URL"] = database_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()


def _timed(fn: Callable[[], object], reps: int = 1) -> list[float]:
    """Return the wall-clock seconds of ``reps`` calls of ``fn``."""
    out = []
    for _ in range(reps):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main(argv: list[str] | None = None) -> None:
    """Load the demo, time both measure sets at each number of runs, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="3,30", help="numbers of runs, comma-separated")
    parser.add_argument("--changes", type=int, default=31, help="judgment changes timed")
    parser.add_argument("--database-url")
    args = parser.parse_args(argv)
    _setup(args.database_url)

    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import transaction
    from django.test import Client

    from judging import services as judging_services
    from judging.demo.loader import DEMO_SLUG
    from judging.lists import services as lists_services
    from judging.models import DEFAULT_MEASURES, Collection, Judge, PoolEntry
    from metrics import services
    from metrics.live import scoring, store
    from metrics.models import Run, Team

    quiet = open(os.devnull, "w")  # noqa: SIM115 (closed at exit)
    call_command("migrate", verbosity=0, stdout=quiet)
    call_command("load_demo", stdout=quiet)
    call_command("load_demo_team", stdout=quiet)
    coll = Collection.objects.get(slug=DEMO_SLUG)
    demo = ROOT / "demo"
    if not Judge.objects.filter(name="reference").exists():
        with open(demo / "qrels-reference.txt", "rb") as source:
            lists_services.judgment_list_import_named(
                collection=coll,
                judge_name="reference",
                judge_kind="human",
                source=source,
                format="qrels",
            )
    judge = Judge.objects.get(name="reference")
    team = Team.objects.get(collection=coll)
    files = sorted((demo / "runs").glob("*.txt"))
    for path in files:
        if not Run.objects.filter(collection=coll, tag=path.stem).exists():
            services.run_submit(
                collection=coll,
                team=team,
                tag=path.stem,
                content=path.read_bytes(),
                filename=path.name,
                user=None,
            )
    rankings = [path.read_text().splitlines() for path in files]
    rng = random.Random(45)
    entries = list(PoolEntry.objects.filter(collection=coll).select_related("query", "document"))
    coordinator = get_user_model().objects.get(username="coordinator")
    client = Client(HTTP_HOST="127.0.0.1")
    client.force_login(coordinator)
    changed = [0]

    def change() -> None:
        changed[0] += 1
        entry = entries[changed[0] % len(entries)]
        with transaction.atomic():  # the live rescoring runs in the judgment's transaction
            judging_services.judgment_record(
                judge=judge, query=entry.query, document=entry.document, grade=changed[0] % 5
            )

    def add_runs(total: int) -> None:
        count = Run.objects.filter(collection=coll).count()
        while count < total:  # a demo run with its documents reshuffled per query
            by_query: dict[str, list[str]] = {}
            for line in rng.choice(rankings):
                qid, _, docno, *_ = line.split()
                by_query.setdefault(qid, []).append(docno)
            lines = []
            for qid, docs in by_query.items():
                rng.shuffle(docs)
                lines += [f"{qid} Q0 {d} {i + 1} {100 - i} syn{count}" for i, d in enumerate(docs)]
            services.run_submit(
                collection=coll,
                team=team,
                tag=f"syn{count}",
                content="\n".join(lines).encode(),
                filename=f"syn{count}.txt",
                user=None,
            )
            count += 1

    print(
        f"Demo ({coll.queries.count()} queries, {len(entries)} pooled pairs), "
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"{datetime.now(UTC):%Y-%m-%d}, {os.environ['DATABASE_URL'].split(':')[0]}\n"
    )
    print(
        "| runs | measures | save the set (rescore all) | one judgment change, median "
        "(max) | leaderboard page | GET leaderboard/ | scoreboard |"
    )
    print("|---|---|---|---|---|---|---|")
    for total in (int(n) for n in args.runs.split(",")):
        add_runs(total)
        runs = Run.objects.filter(collection=coll).count()
        for name, measures in (("default", list(DEFAULT_MEASURES)), ("all_trec", ["all_trec"])):
            (save,) = _timed(
                lambda m=measures: services.collection_settings_update(collection=coll, measures=m)
            )
            coll.refresh_from_db()
            count = len(scoring.canonical_names(coll.measures))
            changes = _timed(change, args.changes)
            page = _timed(lambda: client.get(f"/c/{coll.slug}/leaderboard/"), 5)
            api = _timed(lambda: client.get(f"/api/v1/collections/{coll.slug}/leaderboard/"), 5)
            board = store.board_read(coll.pk)
            size = board.sums.nbytes + board.counts.nbytes
            print(
                f"| {runs} | {name} ({count}) | {save * 1000:.0f} ms "
                f"| {statistics.median(changes) * 1000:.0f} ms ({max(changes) * 1000:.0f}) "
                f"| {statistics.median(page) * 1000:.0f} ms "
                f"| {statistics.median(api) * 1000:.0f} ms | {size:,} bytes |"
            )


if __name__ == "__main__":
    main()
