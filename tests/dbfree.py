"""Which tests touch no database, so that CI runs them once (in the SQLite leg) only.

``.ci/run`` runs ``make test`` twice, side by side: on SQLite, and with ``DATABASE_URL``
pointing at PostgreSQL. A test that asks for no database (no ``db``, ``transactional_db``
or ``live_server`` fixture, no ``django_db`` mark, no Django ``TransactionTestCase``)
cannot see which backend is configured: pytest-django blocks its database access. Running
it again in the PostgreSQL leg proves nothing new, so ``tests/conftest.py`` deselects it
there.

Two guards keep the split honest:

* in the leg where they run, every db-free test runs under :func:`guard`, which records any
  attempt to open a cursor (from any thread) and fails the test loudly, even when the test
  swallowed pytest-django's "Database access not allowed" error;
* a test whose child process inherits ``DATABASE_URL`` (so its outcome may depend on the
  leg although it asks for no database) carries ``@pytest.mark.both_databases`` and runs in
  both legs; ``tests/test_ci_split.py`` checks that every db-free test in a module that
  mentions the database URL or vendor is either marked or listed, with its reason, in
  :data:`LEG_INDEPENDENT_MODULES`.

The browser tests (:data:`SQLITE_LEG_DIRS`) use a database but run in the SQLite leg only
too: they are the browser leg, and nothing they check depends on the backend.

``GRADED_DB_FREE_EVERYWHERE=1`` runs everything in both legs (the old behaviour).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest

# Fixtures that give a test a database (directly or through their own dependencies).
DB_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "django_db_setup",
        "live_server",
        "_django_db_helper",
    }
)

# Modules that mention the database URL or vendor, reviewed: their db-free tests do not
# depend on the leg (each reason says why), so they run once.
LEG_INDEPENDENT_MODULES = {
    "tests/conftest.py": "defines needs_postgres, used only by db tests",
    "tests/security/test_degraded.py": "reads DATABASE_URL only to pick its own Redis database "
    "(the legs run side by side and cache.clear() flushes a whole one)",
    "tests/test_ci_split.py": "this check itself: it only reads the names",
    "tests/metrics/test_no_pandas_import.py": "its child drops DATABASE_URL",
    "tests/metrics/test_evaluate_command.py": "its children get unreachable DATABASE_URLs",
    "tests/metrics/pool/test_pooling_simulate.py": "its child gets an unreachable URL",
    "tests/test_readme_commands.py": "its children run with a clean environment",
    "tests/security/test_egress.py": "DATABASE_URL is only a name in a list of secrets",
    "tests/metrics/live/test_store.py": "the vendor check skips a db test; the rest is numpy",
}


def uses_database(item: pytest.Item) -> bool:
    """Return whether ``item`` may use a database (fixtures, mark or Django test case)."""
    if item.get_closest_marker("django_db") is not None:
        return True
    if DB_FIXTURES.intersection(getattr(item, "fixturenames", ())):
        return True
    cls = getattr(item, "cls", None)
    if cls is not None:
        from django.test import TransactionTestCase

        if issubclass(cls, TransactionTestCase):
            return True
    return False


def runs_once(item: pytest.Item) -> bool:
    """Return whether ``item`` is db-free and runs in the SQLite leg only (not marked)."""
    return not uses_database(item) and item.get_closest_marker("both_databases") is None


#: Directories whose tests use a database but run in the SQLite leg only, with the reason.
SQLITE_LEG_DIRS = {
    "tests/browser/": (
        "the browser leg: what Chromium gets and does (layout, focus, scripts, axe) does "
        "not depend on the backend; the views, services and API behind every page run on "
        "PostgreSQL in their own tests, and a browser test that needs PostgreSQL carries "
        "@pytest.mark.both_databases"
    ),
}


def in_sqlite_leg_dir(item: pytest.Item) -> bool:
    """Return whether ``item`` sits in one of :data:`SQLITE_LEG_DIRS`."""
    return any(item.nodeid.startswith(prefix) for prefix in SQLITE_LEG_DIRS)


def sqlite_leg_only(item: pytest.Item) -> bool:
    """Return whether CI runs ``item`` in the SQLite leg only (left out on PostgreSQL)."""
    if item.get_closest_marker("both_databases") is not None:
        return False
    return runs_once(item) or in_sqlite_leg_dir(item)


def on_postgres() -> bool:
    """Return whether the configured default database is PostgreSQL."""
    from django.db import connection

    return connection.vendor == "postgresql"


def split_enabled() -> bool:
    """Return whether db-free tests are left out of the PostgreSQL leg."""
    return os.environ.get("GRADED_DB_FREE_EVERYWHERE", "") not in ("1", "true", "yes")


@contextlib.contextmanager
def guard(item: pytest.Item) -> Iterator[list[str]]:
    """Record every cursor opened while ``item`` runs; yield the list of records."""
    from django.db.backends.base.base import BaseDatabaseWrapper

    attempts: list[str] = []
    original = BaseDatabaseWrapper._cursor

    def _recording_cursor(self, *args, **kwargs):
        attempts.append(f"{self.alias} ({self.vendor})")
        return original(self, *args, **kwargs)

    BaseDatabaseWrapper._cursor = _recording_cursor
    try:
        yield attempts
    finally:
        BaseDatabaseWrapper._cursor = original


def touched_message(item: pytest.Item, attempts: list[str]) -> str:
    """Return the failure message of a db-free test that opened a cursor."""
    return (
        f"{item.nodeid} asks for no database, so CI runs it in the SQLite leg only, but it "
        f"opened a cursor on {', '.join(sorted(set(attempts)))}: give it the db fixture "
        "(or @pytest.mark.django_db) so it runs on both databases"
    )
