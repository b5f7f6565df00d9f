"""Shared pieces of the PostgreSQL concurrency tests (the ``needs_postgres`` fixture is in
tests/conftest.py)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import connections


def in_thread(work: Callable[..., Any]) -> Callable[..., Any]:
    """Return ``work`` wrapped to close the calling thread's database connections after it."""

    def run(*args: Any) -> Any:
        try:
            return work(*args)
        finally:
            connections.close_all()

    return run
