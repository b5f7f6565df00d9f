"""A small evaluation world: a collection, two teams with runs, a coordinator and a judge."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.test import Client

from judging.models import Collection, Membership, Query
from metrics.models import Run, Team
from tests import factories
from tests.metrics import pages_factories as pf

VERSION = 5


@dataclass
class World:
    coll: Collection
    queries: list[Query]
    team_a: Team
    team_b: Team
    runs: dict[str, Run]
    users: dict[str, object]

    def client(self, who: str) -> Client:
        client = Client()
        client.force_login(self.users[who])
        return client


def per_query(queries, ndcg, p10, judged):
    return {
        q: {"nDCG@10": n, "P@10": p, "Judged@10": j, "RR": n, "AP": n / 2}
        for q, n, p, j in zip(queries, ndcg, p10, judged, strict=True)
    }


@pytest.fixture
def world(db) -> World:
    coll = factories.collection("trec", name="TREC test", coverage_threshold=0.9)
    pf.bump_version(coll, VERSION)
    queries = [factories.query(coll, f"q{i}", text=f"query text {i}") for i in range(1, 5)]
    users = {
        "coord": factories.user("coord"),
        "alice": factories.user("alice"),
        "bob": factories.user("bob"),
        "judy": factories.user("judy"),
        "stranger": factories.user("stranger"),
    }
    factories.member(coll, users["coord"], role=Membership.Role.COORDINATOR)
    factories.member(coll, users["judy"], role=Membership.Role.JUDGE)
    team_a = pf.team(coll, "Team A", [users["alice"]])
    team_b = pf.team(coll, "Team B", [users["bob"]])
    runs = {
        "a-bm25": pf.run(
            coll,
            team_a,
            "a-bm25",
            per_query=per_query(queries, [0.5, 0.4, 0.3, 0.6], [0.5, 0.4, 0.2, 0.6], [1] * 4),
            content=b"q1 Q0 d1 1 1.0 a-bm25\n",
        ),
        "a-thin": pf.run(
            coll,
            team_a,
            "a-thin",
            per_query=per_query(
                queries, [0.2, 0.1, 0.3, 0.2], [0.1, 0.1, 0.2, 0.3], [0.5, 0.6, 1.0, 0.4]
            ),
        ),
        "b-dense": pf.run(
            coll,
            team_b,
            "b-dense",
            per_query=per_query(queries, [0.7, 0.6, 0.5, 0.9], [0.3, 0.3, 0.3, 0.3], [1] * 4),
            content=b"q1 Q0 d2 1 1.0 b-dense\n",
        ),
        "b-old": pf.run(
            coll,
            team_b,
            "b-old",
            per_query=per_query(queries, [0.1, 0.2, 0.1, 0.2], [0.9, 0.9, 0.9, 0.9], [1] * 4),
            scored_version=VERSION - 2,
        ),
    }
    return World(coll, queries, team_a, team_b, runs, users)
