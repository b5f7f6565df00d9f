"""Fixtures of the live search tests: a fake engine and a collection with a team."""

from __future__ import annotations

import pytest

from metrics.models import Team
from metrics.search.models import SearchEndpoint
from tests import factories
from tests.metrics.search.fake_engine import FakeEngine


@pytest.fixture
def engine():
    server = FakeEngine()
    yield server
    server.close()


@pytest.fixture
def setup(db):
    """A collection with three queries, one document with content, a team and a coordinator."""
    coll = factories.collection("search")
    factories.query(coll, "q1", text="solar power")
    factories.query(coll, "q2", text="wind")
    factories.query(coll, "q3", text="coal smoke")
    factories.document(coll, "d1", title="Imported title", body="Imported body")
    team = Team.objects.create(collection=coll, name="engine")
    boss = factories.user("boss")
    factories.member(coll, boss, "coordinator")
    return coll, team, boss


def endpoint_for(url: str, kind: str, *, collection=None, **fields) -> SearchEndpoint:
    """Register an endpoint as the operator would (the fake engine is on 127.0.0.1)."""
    endpoint = SearchEndpoint.objects.create(
        name=fields.pop("name", kind),
        kind=kind,
        base_url=url,
        allowed_private_hosts=fields.pop("private", ["127.0.0.1"]),
        **fields,
    )
    if collection is not None:
        endpoint.allowed_collections.add(collection)
    return endpoint
