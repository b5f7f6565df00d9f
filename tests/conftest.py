"""Shared pytest configuration."""

from __future__ import annotations

import pytest
from django.db import connection

from tests import dbfree, factories


@pytest.fixture
def coll(db):
    """Return an empty collection."""
    return factories.collection("demo")


@pytest.fixture
def judge_user(db, coll):
    """Return a user who is a judge in ``coll``."""
    usr = factories.user("judy")
    factories.member(coll, usr)
    return usr


@pytest.fixture
def needs_postgres() -> None:
    """Skip, with the reason, unless the tests run against PostgreSQL."""
    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL: concurrent writers from several threads need a real server "
            "(SQLite's in-memory test database serialises them); CI runs the PostgreSQL leg"
        )


# --- CI's split: db-free tests run in the SQLite leg only (see tests/dbfree.py) -----------


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In the PostgreSQL leg, deselect the db-free and browser tests (run on SQLite)."""
    if not (dbfree.split_enabled() and dbfree.on_postgres()):
        return
    keep = [item for item in items if not dbfree.sqlite_leg_only(item)]
    if len(keep) < len(items):
        config.hook.pytest_deselected(items=[i for i in items if dbfree.sqlite_leg_only(i)])
        items[:] = keep


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say, in the PostgreSQL leg, that the db-free tests were left to the SQLite leg."""
    if dbfree.split_enabled() and dbfree.on_postgres():
        return (
            "db-free and browser tests deselected: they ran in the SQLite leg "
            "(GRADED_DB_FREE_EVERYWHERE=1 runs them here too; see tests/dbfree.py)"
        )
    return None


def _guarded(item: pytest.Item):
    """Run a db-free test's phase with its cursors recorded; fail if it opened one."""
    if not dbfree.runs_once(item):
        return (yield)
    with dbfree.guard(item) as attempts:
        result = yield
    if attempts:
        pytest.fail(dbfree.touched_message(item, attempts), pytrace=False)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    """Guard the fixtures of a db-free test (see _guarded)."""
    return (yield from _guarded(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item):
    """Guard the body of a db-free test (see _guarded)."""
    return (yield from _guarded(item))
