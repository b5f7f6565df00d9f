"""Deployment checks (``manage.py check --deploy``) of Graded's own settings."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.checks import Tags, Warning, register

#: Cache backends whose counters live in one process (or nowhere).
PER_PROCESS_CACHES = (
    "django.core.cache.backends.locmem.LocMemCache",
    "django.core.cache.backends.dummy.DummyCache",
)


@register(Tags.security, deploy=True)
def shared_throttle_cache(app_configs: Any = None, **kwargs: Any) -> list[Warning]:
    """Warn when the rate-limit counters are kept per process (no ``CACHE_URL``)."""
    backend = settings.CACHES.get("default", {}).get("BACKEND", "")
    if backend not in PER_PROCESS_CACHES:
        return []
    return [
        Warning(
            "The rate-limit counters (failed sign-ins and tokens) are kept per process: "
            "with several workers an attacker gets each limit once per worker.",
            hint="Set CACHE_URL to a Redis shared by every web worker, e.g. "
            "CACHE_URL=redis://127.0.0.1:6379/1.",
            id="graded.W001",
        )
    ]
