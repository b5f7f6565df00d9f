"""Send a snapshot's pending queries to its endpoint, in batches (the Celery task's work).

Up to the endpoint's concurrency limit of requests are in flight, their starts spaced by
its rate limit, within one worker and across every worker (:mod:`metrics.search.limits`).
Each batch's answers are written before the next batch is sent, so a worker killed
mid-snapshot loses at most one batch: the task is acknowledged late and, run again, sends
only the queries still pending. After :data:`FAIL_FAST_AFTER` fatal answers in a row (a
refused destination, 401/403/404, a redirect, a missing credential) the snapshot stops
with that one reason.
"""

from __future__ import annotations

import asyncio

from django.core.exceptions import ValidationError

from judging.llm.egress import EgressRefused, guarded_client
from metrics.search import client, limits, services
from metrics.search.models import SearchSnapshot, SnapshotQuery

#: Fatal answers in a row after which a snapshot stops.
FAIL_FAST_AFTER = 3
#: Requests per batch, as a multiple of the endpoint's concurrency.
BATCH_FACTOR = 4


def work(snapshot: SearchSnapshot, *, retries: client.Retries | None = None) -> SearchSnapshot:
    """Send every pending query of ``snapshot``, record the answers, then finish it.

    A re-map's pending rows are never sent: they are mapped from their kept answers.
    """
    if snapshot.origin == SearchSnapshot.Origin.REMAP:
        return services.remap_work(snapshot)
    SearchSnapshot.objects.filter(
        pk=snapshot.pk, status__in=[SearchSnapshot.Status.QUEUED, SearchSnapshot.Status.RUNNING]
    ).update(status=SearchSnapshot.Status.RUNNING)
    snapshot.refresh_from_db()
    if snapshot.status != SearchSnapshot.Status.RUNNING:
        return snapshot
    version = snapshot.version
    endpoint = version.endpoint
    try:
        secret = services.credential_for(endpoint)
    except ValidationError as exc:
        services.snapshot_fail(snapshot=snapshot, reason=" ".join(exc.messages))
        return SearchSnapshot.objects.get(pk=snapshot.pk)
    retries = retries or client.Retries()
    fatal_in_row = 0
    batch = max(1, endpoint.concurrency * BATCH_FACTOR)
    while True:
        rows = list(
            snapshot.queries.filter(status=SnapshotQuery.Status.PENDING)
            .select_related("query")
            .order_by("pk")[:batch]
        )
        if not rows:
            break
        results = services.run_async(_send_all(rows, version, secret, retries))
        for row, result in zip(rows, results, strict=True):
            services.snapshot_query_record(row=row, result=result, version=version)
            if isinstance(result, client.SearchFailed) and result.fatal:
                fatal_in_row += 1
                if fatal_in_row >= FAIL_FAST_AFTER:
                    services.snapshot_fail(
                        snapshot=snapshot,
                        reason=f"Stopped after {fatal_in_row} failures that every query would "
                        f"meet: {result.reason}",
                    )
                    return SearchSnapshot.objects.get(pk=snapshot.pk)
            else:
                fatal_in_row = 0
    return services.snapshot_finish(snapshot=snapshot)


async def _send_all(rows, version, secret, retries):
    endpoint = version.endpoint
    gate = asyncio.Semaphore(max(1, endpoint.concurrency))
    limit = client.RateLimit(endpoint.rate_limit)
    shared = limits.SharedLimits(
        endpoint.pk, concurrency=endpoint.concurrency, per_second=endpoint.rate_limit
    )

    async def one(http, row):
        try:
            request = services.build_request(version, row.query, secret)
        except EgressRefused as exc:
            return client.SearchFailed(str(exc), fatal=True)
        async with gate:
            await limit.wait()
            try:
                async with shared.slot():  # the limits across workers (metrics.search.limits)
                    return await client.send(
                        http, request, timeout=endpoint.timeout_seconds, retries=retries
                    )
            except client.SearchFailed as exc:
                return exc

    async with guarded_client(endpoint.egress_policy(), verify=endpoint.verify_tls) as http:
        return await asyncio.gather(*(one(http, row) for row in rows))
