"""A collection with one caller of every role, shared by the hostile-input tests.

Roles (:data:`ROLES`, in the order of the permission matrix's columns):
anonymous; ``nina`` a member of nothing; ``judy`` the judge who owns the judgment;
``jim`` another judge; ``tess`` of team ``t1`` (which owns the run); ``toby`` of team
``t2``; ``otto`` the coordinator of another collection; ``cora`` the coordinator.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from judging import services
from judging.models import Collection, Judge, Judgment, Membership, PoolEntry
from metrics import services as metrics_services
from metrics.models import Run
from tests import factories
from tests.api_client import client_for

Role = Membership.Role
ROLES = ("anonymous", "nina", "judy", "jim", "tess", "toby", "otto", "cora")
RUN_TEXT = b"q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\nq2 Q0 d3 1 1.5 bm25\n"


@dataclass
class Arena:
    """The objects every test of this package works with."""

    coll: Collection
    users: dict[str, Any]
    judgment: Judgment
    other_judgment: Judgment
    llm: Judge
    run: Run

    def client(self, role: str):
        """Return an API client authenticated as ``role`` (anonymous: no credentials)."""
        return client_for(None if role == "anonymous" else self.users[role])


@pytest.fixture
def arena(db) -> Arena:
    """Build the collection, its people, a judgment each for judy and jim, and a run."""
    coll = factories.collection("demo")
    other = factories.collection("other")
    queries = {q: factories.query(coll, q, description=f"{q} need") for q in ("q1", "q2")}
    docs = {d: factories.document(coll, d, url="https://example.org/" + d) for d in ("d1", "d2")}
    docs["d3"] = factories.document(coll, "d3")
    for q, d in (("q1", "d1"), ("q1", "d2"), ("q2", "d3")):
        PoolEntry.objects.create(collection=coll, query=queries[q], document=docs[d])
    users = {name: factories.user(name) for name in ROLES[1:]}
    factories.member(coll, users["cora"], Role.COORDINATOR)
    factories.member(coll, users["judy"], Role.JUDGE)
    factories.member(coll, users["jim"], Role.JUDGE)
    factories.member(other, users["otto"], Role.COORDINATOR)
    t1 = metrics_services.team_create(collection=coll, name="t1", members=[users["tess"]])
    metrics_services.team_create(collection=coll, name="t2", members=[users["toby"]])
    made = {}
    for name, grade in (("judy", 3), ("jim", 1)):
        made[name] = services.judgment_record(
            judge=services.judge_for_user(user=users[name]),
            query=queries["q1"],
            document=docs["d1"],
            grade=grade,
        )
    llm = factories.llm_judge("gpt")
    llm.collections.add(coll)
    run = metrics_services.run_submit(
        collection=coll,
        team=t1,
        tag="bm25",
        content=RUN_TEXT,
        filename="bm25.txt",
        user=users["tess"],
    )
    return Arena(coll, users, made["judy"], made["jim"], llm, run)
