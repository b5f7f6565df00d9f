"""Fixtures of the judging API tests: a collection with one member of every role."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from judging.models import Membership
from tests import factories
from tests.api_client import client_for
from tests.judging.api.helpers import World

Role = Membership.Role


@pytest.fixture
def world(db, coll) -> World:
    """Build the collection and its people.

    Users: ``cora`` coordinator, ``judy`` and ``jim`` judges, ``tess`` team member,
    ``olga`` a judge of another collection only, ``otto`` a coordinator of another one.
    Queries q1, q2; documents d1–d3 and ``dx`` (id only); q1×{d1, d2, dx} and q2×{d3} pooled.
    """
    queries = {qid: factories.query(coll, qid, description=f"{qid} need") for qid in ("q1", "q2")}
    docs = {docno: factories.document(coll, docno) for docno in ("d1", "d2", "d3")}
    docs["dx"] = factories.document(coll, "dx", title="", body="", has_content=False)
    for qid, docno in [("q1", "d1"), ("q1", "d2"), ("q1", "dx"), ("q2", "d3")]:
        factories.pool_entry(coll, queries[qid], docs[docno])
    other = factories.collection("other")
    users = {name: factories.user(name) for name in ("cora", "judy", "jim", "tess", "olga", "otto")}
    factories.member(coll, users["cora"], Role.COORDINATOR)
    factories.member(coll, users["judy"], Role.JUDGE)
    factories.member(coll, users["jim"], Role.JUDGE)
    factories.member(coll, users["tess"], Role.TEAM)
    factories.member(other, users["olga"], Role.JUDGE)
    factories.member(other, users["otto"], Role.COORDINATOR)
    return World(coll=coll, queries=queries, docs=docs, users=users)


@pytest.fixture
def api(world):
    """Return a function giving an authenticated client by user name (None: anonymous)."""

    def make(name: str | None) -> APIClient:
        return client_for(None if name is None else world.users[name])

    return make
