"""``GET /healthz``: which of the server's parts answer (database, cache, broker).

The answer is JSON: ``status`` is ``ok`` (every configured part answers), ``degraded``
(the cache or the broker does not, and the server carries on without it: per-process rate
limits and caches, background work run inline) or ``down`` (the database does not; nothing
can be served). ``ok`` and ``degraded`` are 200, so a load balancer keeps a degraded server
in rotation (every server shares the same Redis; taking them all out would turn a degraded
service into none); ``down`` is 503. ``checks`` names each part: ``ok``, ``unavailable``,
``local`` (a per-process cache: no ``CACHE_URL``) or ``inline`` (no broker: background
work runs in the request). No error text is shown: the endpoint needs no sign-in.
"""

from __future__ import annotations

import logging
import time

from django.conf import settings
from django.core.cache import caches
from django.db import DatabaseError, connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from config.cache import DegradingRedisCache

log = logging.getLogger("graded.health")

#: Seconds the broker check may take.
BROKER_TIMEOUT = 1.0


def database_state() -> str:
    """Return ``ok`` if the database answers a query, else ``unavailable``."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return "unavailable"
    return "ok"


def cache_state() -> str:
    """Return ``ok`` if the shared cache answers, ``unavailable`` if not, ``local`` if none."""
    backend = caches["default"]
    if isinstance(backend, DegradingRedisCache):
        return "ok" if backend.ping() else "unavailable"
    return "local"


#: Seconds a broker check's answer is reused: a flood of probes opens few connections.
BROKER_MEMO_SECONDS = 5.0
_broker_memo: dict[str, tuple[float, str]] = {}


def broker_state() -> str:
    """Return ``ok`` if the Celery broker accepts a connection, else ``unavailable``.

    ``inline`` when no broker is configured (background work runs in the request). The
    answer is reused for :data:`BROKER_MEMO_SECONDS` (a dead broker costs up to
    :data:`BROKER_TIMEOUT` to find out, and the endpoint needs no sign-in).
    """
    url = settings.CELERY_BROKER_URL
    if not url:
        return "inline"
    memo = _broker_memo.get(url)
    if memo is not None and time.monotonic() < memo[0]:
        return memo[1]
    from config.celery import app

    try:
        with app.connection_for_write(url, connect_timeout=BROKER_TIMEOUT) as conn:
            conn.ensure_connection(max_retries=0, timeout=BROKER_TIMEOUT)
    except Exception as exc:  # any failure to connect means "unavailable"
        log.info("Broker check failed: %s: %s", type(exc).__name__, exc)
        state = "unavailable"
    else:
        state = "ok"
    _broker_memo[url] = (time.monotonic() + BROKER_MEMO_SECONDS, state)
    return state


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Answer which parts are up: 200 ``ok``/``degraded``, 503 ``down``."""
    checks = {"database": database_state(), "cache": cache_state(), "broker": broker_state()}
    if checks["database"] != "ok":
        status, code = "down", 503
    elif "unavailable" in checks.values():
        status, code = "degraded", 200
    else:
        status, code = "ok", 200
    return JsonResponse({"status": status, "checks": checks}, status=code)
