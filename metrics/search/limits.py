"""An endpoint's concurrency and rate limits across every worker that sends to it.

A snapshot's requests are limited within its worker by a semaphore and a start spacing
(:mod:`metrics.search.runner`); several workers (Celery's, or *Try it* in a web process)
sending to one endpoint at once would each use the whole limit. These limits are shared
through the cache every process of a deployment shares (Redis, ``CACHE_URL``), with the
atomic counter of the rate limits (:func:`config.cache.hit`):

* **in flight**: a request takes one count under ``search-inflight:<endpoint>`` and waits
  while the count is above the endpoint's concurrency; it gives the count back when its
  answer is in. The counter expires :data:`LEASE_SECONDS` after it was created, so a worker
  killed mid-request frees its counts by then (at that moment, and only then, the limit
  may be exceeded by the requests still in flight);
* **per second**: a request takes one count under ``search-rate:<endpoint>`` in windows of
  one second (or ``1 / rate`` seconds below one per second) and waits for the next window
  while the count is above what the window allows.

Without Redis (development, one process) the cache is the process's memory, which the
threads of one process share. While Redis is down the cache falls back to each process's
memory (logged once): the limits then hold per process, as before.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from asgiref.sync import sync_to_async
from django.core.cache import cache

from config.cache import hit, release

#: Lifetime of an endpoint's in-flight counter (seconds): longer than any request.
LEASE_SECONDS = 600
#: How often a request waiting for a free slot looks again (seconds).
POLL_SECONDS = 0.02


class SharedLimits:
    """The in-flight and per-second limits of one endpoint, shared by every worker."""

    def __init__(self, endpoint_id: int, *, concurrency: int, per_second: float) -> None:
        """Limit ``endpoint_id`` to ``concurrency`` requests in flight, ``per_second`` starts."""
        self.inflight_key = f"search-inflight:{endpoint_id}"
        self.rate_key = f"search-rate:{endpoint_id}"
        self.concurrency = max(1, concurrency)
        if per_second > 0:
            self.window = max(1, math.ceil(1.0 / per_second))
            self.per_window = max(1, math.floor(per_second * self.window))
        else:
            self.window, self.per_window = 0, 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the endpoint's slots (and a start in its rate) while the body runs."""
        while True:
            count, _left = await sync_to_async(hit)(cache, self.inflight_key, LEASE_SECONDS)
            if count <= self.concurrency:
                break
            await sync_to_async(release)(cache, self.inflight_key)
            await asyncio.sleep(POLL_SECONDS)
        try:
            while self.window:
                count, left = await sync_to_async(hit)(cache, self.rate_key, self.window)
                if count <= self.per_window:
                    break
                await asyncio.sleep(max(left, POLL_SECONDS))
            yield
        finally:
            await sync_to_async(release)(cache, self.inflight_key)
