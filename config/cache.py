"""The cache: Redis when it answers, a per-process cache while it does not.

``CACHE_URL`` selects :class:`DegradingRedisCache`. Graded keeps only what it can lose in
the cache (rate-limit counters, versioned report caches, import progress), so when Redis
is unreachable the server carries on with a local in-memory cache instead of answering
500 to every request. The switch is logged once per outage (and once when Redis is back),
not once per request; while Redis is down the shared cache is retried at most every
:data:`RETRY_SECONDS`, so a dead server costs one failed connection per process per period.

Rate limits need an atomic "count one more and tell me the total" operation: :func:`hit`
(a Lua script on Redis, so count and expiry are set in one step; a lock around the local
cache otherwise) and :func:`release` to give a reserved slot back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from django.core.cache import BaseCache
from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache

log = logging.getLogger("graded.cache")
T = TypeVar("T")

#: Seconds between attempts to reach Redis again once it failed.
RETRY_SECONDS = 5.0
#: Connection and socket timeouts (seconds) used unless the cache's OPTIONS set their own.
REDIS_TIMEOUTS = {"socket_connect_timeout": 0.5, "socket_timeout": 1.0}

#: The per-process fallback: one store shared by every thread (locmem caches of one name are).
_LOCAL = LocMemCache("graded-cache-fallback", {"OPTIONS": {"MAX_ENTRIES": 50_000}})
_local_lock = threading.Lock()

# Count and expire in one step; the expiry is (re)set when missing, so no key outlives it.
_HIT = """
local n = redis.call('INCR', KEYS[1])
if n == 1 or redis.call('PTTL', KEYS[1]) < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return {n, redis.call('PTTL', KEYS[1])}
"""
_RELEASE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
"""


class _Health:
    """Whether Redis answered last time, shared by every cache instance of the process."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.down_since: float | None = None
        self.retry_at = 0.0
        self.reason = ""

    def skip(self) -> bool:
        """Return whether to use the local cache without trying Redis now."""
        return self.down_since is not None and time.monotonic() < self.retry_at

    def failed(self, exc: BaseException) -> None:
        """Note a failure; log it if Redis was up until now."""
        with self.lock:
            self.retry_at = time.monotonic() + RETRY_SECONDS
            self.reason = type(exc).__name__
            if self.down_since is None:
                self.down_since = time.time()
                log.warning(
                    "Cache (Redis) unreachable (%s: %s); using a per-process cache and "
                    "per-process rate limits until it answers again.",
                    type(exc).__name__,
                    exc,
                )

    def answered(self) -> None:
        """Note a success; log it if Redis was down."""
        if self.down_since is None:
            return
        with self.lock:
            if self.down_since is not None:
                log.warning(
                    "Cache (Redis) answers again after %.0f s; shared rate limits resume.",
                    time.time() - self.down_since,
                )
                self.down_since = None


HEALTH = _Health()


def _redis_errors() -> tuple[type[BaseException], ...]:
    import redis

    return (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError)


class DegradingRedisCache(RedisCache):
    """Django's Redis cache, falling back to a per-process cache while Redis is unreachable."""

    def __init__(self, server: Any, params: dict[str, Any]) -> None:
        """Set short connection timeouts unless OPTIONS give others."""
        params = {**params, "OPTIONS": {**REDIS_TIMEOUTS, **params.get("OPTIONS", {})}}
        super().__init__(server, params)

    def _try(self, shared: Callable[[], T], local: Callable[[], T]) -> T:
        if HEALTH.skip():
            return local()
        try:
            result = shared()
        except _redis_errors() as exc:
            HEALTH.failed(exc)
            return local()
        HEALTH.answered()
        return result

    @property
    def degraded(self) -> bool:
        """Return whether the last attempt to reach Redis failed."""
        return HEALTH.down_since is not None

    def add(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> bool:
        """Add ``key`` if absent (see ``BaseCache.add``)."""
        return self._try(
            lambda: super(DegradingRedisCache, self).add(key, value, timeout, version),
            lambda: _LOCAL.add(key, value, self.get_backend_timeout(timeout), version),
        )

    def get(self, key: Any, default: Any = None, version: Any = None) -> Any:
        """Return the value of ``key`` (see ``BaseCache.get``)."""
        return self._try(
            lambda: super(DegradingRedisCache, self).get(key, default, version),
            lambda: _LOCAL.get(key, default, version),
        )

    def set(self, key: Any, value: Any, timeout: Any = None, version: Any = None) -> None:
        """Store ``value`` under ``key`` (see ``BaseCache.set``)."""
        return self._try(
            lambda: super(DegradingRedisCache, self).set(key, value, timeout, version),
            lambda: _LOCAL.set(key, value, self.get_backend_timeout(timeout), version),
        )

    def touch(self, key: Any, timeout: Any = None, version: Any = None) -> bool:
        """Renew the expiry of ``key`` (see ``BaseCache.touch``)."""
        return self._try(
            lambda: super(DegradingRedisCache, self).touch(key, timeout, version),
            lambda: _LOCAL.touch(key, self.get_backend_timeout(timeout), version),
        )

    def delete(self, key: Any, version: Any = None) -> bool:
        """Delete ``key`` (see ``BaseCache.delete``)."""
        return self._try(
            lambda: super(DegradingRedisCache, self).delete(key, version),
            lambda: _LOCAL.delete(key, version),
        )

    def get_many(self, keys: Any, version: Any = None) -> dict[Any, Any]:
        """Return the values of ``keys`` that are present."""
        return self._try(
            lambda: super(DegradingRedisCache, self).get_many(keys, version),
            lambda: _LOCAL.get_many(keys, version),
        )

    def has_key(self, key: Any, version: Any = None) -> bool:
        """Return whether ``key`` is present."""
        return self._try(
            lambda: super(DegradingRedisCache, self).has_key(key, version),
            lambda: _LOCAL.has_key(key, version),
        )

    def incr(self, key: Any, delta: int = 1, version: Any = None) -> int:
        """Add ``delta`` to the number under ``key`` (``ValueError`` if absent)."""
        return self._try(
            lambda: super(DegradingRedisCache, self).incr(key, delta, version),
            lambda: _LOCAL.incr(key, delta, version),
        )

    def set_many(self, data: Any, timeout: Any = None, version: Any = None) -> list[Any]:
        """Store every item of ``data``."""
        return self._try(
            lambda: super(DegradingRedisCache, self).set_many(data, timeout, version),
            lambda: _LOCAL.set_many(data, self.get_backend_timeout(timeout), version),
        )

    def delete_many(self, keys: Any, version: Any = None) -> None:
        """Delete ``keys``."""
        return self._try(
            lambda: super(DegradingRedisCache, self).delete_many(keys, version),
            lambda: _LOCAL.delete_many(keys, version),
        )

    def clear(self) -> None:
        """Delete every key (of the Redis database and of the local fallback)."""
        _LOCAL.clear()
        self._try(lambda: super(DegradingRedisCache, self).clear(), lambda: None)

    def hit(self, key: str, seconds: int) -> tuple[int, float]:
        """Count one more under ``key`` in a window of ``seconds``; return (count, seconds left)."""
        return self._try(lambda: _redis_hit(self, key, seconds), lambda: _local_hit(key, seconds))

    def release(self, key: str) -> None:
        """Give back one count under ``key`` (never below zero, never creating the key)."""
        self._try(lambda: _redis_release(self, key), lambda: _local_release(key))

    def count(self, key: str) -> tuple[int, float]:
        """Return (count, seconds left) under ``key`` without counting."""
        return self._try(lambda: _redis_count(self, key), lambda: _local_count(key))

    def ping(self) -> bool:
        """Return whether Redis itself answers now (the fallback does not count)."""
        try:
            return bool(self._cache.get_client(None).ping())
        except _redis_errors() as exc:
            HEALTH.failed(exc)
            return False


def _redis_hit(backend: RedisCache, key: str, seconds: int) -> tuple[int, float]:
    """Count under ``key`` with one Lua script: the increment and the expiry are one step."""
    name = backend.make_and_validate_key(key)
    client = backend._cache.get_client(name, write=True)
    number, left_ms = client.eval(_HIT, 1, name, int(seconds * 1000))
    return int(number), max(0.0, int(left_ms) / 1000)


def _redis_release(backend: RedisCache, key: str) -> None:
    name = backend.make_and_validate_key(key)
    backend._cache.get_client(name, write=True).eval(_RELEASE, 1, name)


def _redis_count(backend: RedisCache, key: str) -> tuple[int, float]:
    name = backend.make_and_validate_key(key)
    client = backend._cache.get_client(name)
    value, left_ms = client.get(name), client.pttl(name)
    return int(value or 0), max(0.0, int(left_ms) / 1000)


def _local_hit(key: str, seconds: int, store: BaseCache = _LOCAL) -> tuple[int, float]:
    """Count one more under ``key`` in ``store`` (a local cache), under a process-wide lock."""
    with _local_lock:
        now = time.time()
        number, ends = store.get(key, (0, 0.0))
        if ends <= now:
            number, ends = 0, now + seconds
        number += 1
        store.set(key, (number, ends), timeout=max(1, int(ends - now + 1)))
        return number, ends - now


def _local_release(key: str, store: BaseCache = _LOCAL) -> None:
    with _local_lock:
        now = time.time()
        number, ends = store.get(key, (0, 0.0))
        if number > 0 and ends > now:
            store.set(key, (number - 1, ends), timeout=max(1, int(ends - now + 1)))


def _local_count(key: str, store: BaseCache = _LOCAL) -> tuple[int, float]:
    number, ends = store.get(key, (0, 0.0))
    now = time.time()
    return (number, ends - now) if ends > now else (0, 0.0)


def _backend(cache: Any) -> Any:
    """Return the backend behind ``django.core.cache.cache`` (a proxy), or ``cache`` itself."""
    connections = getattr(cache, "_connections", None)
    return connections[cache._alias] if connections is not None else cache


def hit(cache: BaseCache, key: str, seconds: int) -> tuple[int, float]:
    """Count one more under ``key`` in ``cache``, atomically; return (count, seconds left).

    The window starts at the first count and lasts ``seconds``. On Redis one Lua script
    counts and sets the expiry (:class:`DegradingRedisCache` falls back to this process's
    memory while Redis is down); any other cache (the local memory cache of development
    and tests) counts under a lock of this process.
    """
    backend = _backend(cache)
    if isinstance(backend, DegradingRedisCache):
        return backend.hit(key, seconds)
    if isinstance(backend, RedisCache):
        return _redis_hit(backend, key, seconds)
    return _local_hit(key, seconds, store=backend)


def release(cache: BaseCache, key: str) -> None:
    """Give back one count of :func:`hit` under ``key``."""
    backend = _backend(cache)
    if isinstance(backend, DegradingRedisCache):
        backend.release(key)
    elif isinstance(backend, RedisCache):
        _redis_release(backend, key)
    else:
        _local_release(key, store=backend)


def count(cache: BaseCache, key: str) -> tuple[int, float]:
    """Return (count, seconds left) under ``key`` without counting."""
    backend = _backend(cache)
    if isinstance(backend, DegradingRedisCache):
        return backend.count(key)
    if isinstance(backend, RedisCache):
        return _redis_count(backend, key)
    return _local_count(key, store=backend)
