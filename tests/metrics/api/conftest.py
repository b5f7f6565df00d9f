"""Fixtures of the metrics API tests: a judged collection, two teams and every role."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from rest_framework.test import APIClient

from judging import services as judging_services
from judging.models import Collection, Document, Membership, Query
from metrics.models import Team
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

Role = Membership.Role

#: Live grades of the world: (qid, docno, grade).
GRADES = [("q1", "d1", 3), ("q1", "d2", 0), ("q1", "d3", 1), ("q2", "d4", 2), ("q3", "d5", 1)]


@dataclass
class World:
    """Collection ``demo``: queries q1–q3, documents d1–d6, a live list, teams and people.

    Users: ``cora`` coordinator, ``judy`` judge, ``alice`` and ``amy`` in team Alpha,
    ``bob`` in team Beta, ``tess`` with the team role but in no team, ``otto`` coordinator
    of another collection only.
    """

    coll: Collection
    queries: dict[str, Query]
    docs: dict[str, Document]
    users: dict[str, Any]
    alpha: Team
    beta: Team


@pytest.fixture
def world(db, coll) -> World:
    """Build the collection, its live judgment list, teams and people."""
    queries = {qid: factories.query(coll, qid) for qid in ("q1", "q2", "q3")}
    docs = {f"d{i}": factories.document(coll, f"d{i}") for i in range(1, 7)}
    users = {
        name: factories.user(name)
        for name in ("cora", "judy", "alice", "amy", "bob", "tess", "otto")
    }
    factories.member(coll, users["cora"], Role.COORDINATOR)
    factories.member(coll, users["judy"], Role.JUDGE)
    factories.member(coll, users["tess"], Role.TEAM)
    factories.member(factories.collection("other"), users["otto"], Role.COORDINATOR)
    judge = factories.human_judge(users["cora"])
    for qid, docno, grade in GRADES:
        judging_services.judgment_record(
            judge=judge, query=queries[qid], document=docs[docno], grade=grade
        )
    coll.refresh_from_db()
    alpha = metrics_factories.team(coll, "Alpha", [users["alice"], users["amy"]])
    beta = metrics_factories.team(coll, "Beta", [users["bob"]])
    return World(coll=coll, queries=queries, docs=docs, users=users, alpha=alpha, beta=beta)


@pytest.fixture
def api(world):
    """Return a function giving a token-authenticated client by user name (None: anonymous)."""

    def make(name: str | None) -> APIClient:
        return client_for(None if name is None else world.users[name])

    return make


@pytest.fixture
def runs(world):
    """Create one scored run per team: ``alpha-bm25`` (better) and ``beta-dense``."""
    ndcg, judged = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10", "Judged@10"
    q1, q2 = world.queries["q1"], world.queries["q2"]
    alpha = metrics_factories.run(
        world.coll,
        world.alpha,
        "alpha-bm25",
        scores={ndcg: 0.8, judged: 0.5},
        per_query={q1: {ndcg: 0.9, judged: 0.6}, q2: {ndcg: 0.7, judged: 0.4}},
        submitted_by=world.users["alice"],
        description="BM25 baseline",
    )
    beta = metrics_factories.run(
        world.coll,
        world.beta,
        "beta-dense",
        scores={ndcg: 0.6, judged: 0.3},
        per_query={q1: {ndcg: 0.6, judged: 0.3}, q2: {ndcg: None, judged: 0.3}},
        submitted_by=world.users["bob"],
    )
    return {"alpha": alpha, "beta": beta}
