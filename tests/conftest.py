"""Shared pytest configuration."""

from __future__ import annotations

import pytest
from django.db import connection

from tests import factories


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
