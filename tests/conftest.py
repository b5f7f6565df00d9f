"""Shared pytest configuration."""

from __future__ import annotations

import pytest

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
