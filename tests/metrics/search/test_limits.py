"""An endpoint's limits hold across workers, not only within one (metrics.search.limits).

Two workers send to one endpoint at once: each has its own semaphore and start spacing,
so only the shared counters can keep the total in flight, and the starts per second,
within the endpoint's limits. Threads of one process share the cache here as the
processes of a deployment share Redis.
"""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from metrics.search import limits, presets, runner
from metrics.search.models import SnapshotQuery
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.test_engines import FAST, configure

pytestmark = pytest.mark.django_db


def _two_workers(work):
    errors = []

    def run():
        try:
            work()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []


def test_two_workers_sending_to_one_endpoint_keep_its_concurrency(setup, engine):
    coll, team, boss = setup
    engine.fault = lambda request, n: time.sleep(0.15)  # answers normally, slowly
    endpoint = endpoint_for(
        engine.url, presets.ELASTICSEARCH, collection=coll, concurrency=2, rate_limit=0
    )
    version = configure(coll, team, boss, endpoint).current
    from metrics.search.models import SearchSnapshot

    snapshot = SearchSnapshot.objects.create(collection=coll, version=version, tag="s", total=3)
    rows = [
        SnapshotQuery.objects.create(snapshot=snapshot, query=q)
        for q in coll.queries.order_by("external_id")
    ]
    rows = list(SnapshotQuery.objects.filter(pk__in=[r.pk for r in rows]).select_related("query"))
    version = type(version).objects.select_related("endpoint").get(pk=version.pk)

    def worker():
        for _ in range(2):
            asyncio.run(runner._send_all(rows, version, "", FAST))

    _two_workers(worker)
    assert len(engine.requests) == 12
    assert engine.max_in_flight == 2  # each worker alone would have sent 2: together 4


def test_starts_per_second_hold_across_workers():
    shared = [
        limits.SharedLimits(424242, concurrency=8, per_second=2.0),  # one per worker
        limits.SharedLimits(424242, concurrency=8, per_second=2.0),
    ]
    starts: list[float] = []
    lock = threading.Lock()

    def worker(index):
        async def go():
            for _ in range(3):
                async with shared[index].slot():
                    with lock:
                        starts.append(time.monotonic())

        asyncio.run(go())

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    starts.sort()
    assert len(starts) == 6
    # Two starts a second, whoever asks: any three starts span at least about a second.
    assert all(starts[i + 2] - starts[i] >= 0.9 for i in range(len(starts) - 2)), starts


def test_a_slot_is_given_back_when_the_request_fails():
    shared = limits.SharedLimits(424243, concurrency=1, per_second=0)

    async def failing():
        async with shared.slot():
            raise RuntimeError("the engine went away")

    for _ in range(3):  # with the slot kept, the second would wait for ever
        with pytest.raises(RuntimeError):
            asyncio.run(asyncio.wait_for(failing(), timeout=5))
