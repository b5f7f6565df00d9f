"""A collection with one caller of every role, shared by the hostile-input tests.

Roles (:data:`ROLES`, in the order of the permission matrix's columns):
anonymous; ``nina`` a member of nothing; ``judy`` the judge who owns the judgment;
``jim`` another judge; ``tess`` of team ``t1`` (which owns the run); ``toby`` of team
``t2``; ``otto`` the coordinator of another collection; ``cora`` the coordinator.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import transaction

from judging import services
from judging.adjudication import services as services_adjudication
from judging.llm.models import LLMJob
from judging.models import Adjudication, Collection, Judge, Judgment, Membership
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
    made: dict[str, Any] = field(default_factory=dict)

    def client(self, role: str):
        """Return an API client authenticated as ``role`` (anonymous: no credentials)."""
        return client_for(None if role == "anonymous" else self.users[role])

    def adjudication(self) -> Adjudication:
        """Return cora's adjudication of (q1, d1), where judy and jim disagree (made once)."""
        if "adjudication" not in self.made:
            self.made["adjudication"] = services_adjudication.adjudication_record(
                query=self.judgment.query,
                document=self.judgment.document,
                grade=2,
                reason="between the two",
                actor=self.users["cora"],
            )
        return self.made["adjudication"]

    def second_run(self) -> Run:
        """Return another run of team t1, to compare with :attr:`run` (made once).

        Judy grades (q2, d3) first (and :attr:`run` is rescored, as it would be after the
        commit), so the two runs share two scored queries.
        """
        if "second_run" not in self.made:
            q2 = self.coll.queries.get(external_id="q2")
            services.judgment_record(
                judge=self.judgment.judge,
                query=q2,
                document=self.coll.documents.get(external_id="d3"),
                grade=2,
            )
            metrics_services.runs_rescore_after_change(
                collection_id=self.coll.pk, query_ids=[q2.pk]
            )
            self.made["second_run"] = metrics_services.run_submit(
                collection=self.coll,
                team=self.run.team,
                tag="bm25-rm3",
                content=RUN_TEXT.replace(b"d1 1", b"d1 3").replace(b"d2 2", b"d2 1"),
                filename="rm3.txt",
                user=self.users["tess"],
            )
        return self.made["second_run"]

    def llm_job(self) -> LLMJob:
        """Return a queued job of the collection's LLM judge (made once, never started)."""
        if "llm_job" not in self.made:
            self.made["llm_job"] = LLMJob.objects.create(
                collection=self.coll, judge=self.llm, created_by=self.users["cora"]
            )
        return self.made["llm_job"]


def _build() -> Arena:
    """Build the collection, its people, a judgment each for judy and jim, and a run."""
    coll = factories.collection("demo")
    other = factories.collection("other")
    queries = {q: factories.query(coll, q, description=f"{q} need") for q in ("q1", "q2")}
    docs = {d: factories.document(coll, d, url="https://example.org/" + d) for d in ("d1", "d2")}
    docs["d3"] = factories.document(coll, "d3")
    for q, d in (("q1", "d1"), ("q1", "d2"), ("q2", "d3")):
        factories.pool_entry(coll, queries[q], docs[d])
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
    # A provider that needs no key: jobs can be created (they only start after a commit,
    # which the tests' transactions never make, so no request is sent).
    llm.llm_provider = factories.llm_provider("http://127.0.0.1:9/v1")
    llm.save(update_fields=["llm_provider"])
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


@pytest.fixture(scope="module")
def _arena_keys(request, django_db_setup, django_db_blocker) -> dict[str, Any]:
    """Build the arena once per module, in a transaction rolled back after its last test.

    Each test runs in a savepoint inside it (pytest-django's ``db`` fixture nests, as
    Django's ``TestCase.setUpTestData`` does), so what a test writes is undone before the
    next one and every test starts from the same rows. Building it took about 70 ms a
    test, over 3,000 tests: most of the security suite's time (docs/development.md).
    A transactional or live-server test cannot run inside the open transaction, so a
    module that has one beside the arena's tests fails here, naming it.
    """
    transactional = [item.nodeid for item in request.session.items if _commits(item, request)]
    if transactional:
        pytest.fail(f"the shared arena cannot host transactional tests: {transactional}")
    with django_db_blocker.unblock():
        outer = transaction.atomic()
        outer.__enter__()
        try:
            built = _build()
            yield {
                "coll": built.coll.pk,
                "users": {name: user.pk for name, user in built.users.items()},
                "judgment": built.judgment.pk,
                "other_judgment": built.other_judgment.pk,
                "llm": built.llm.pk,
                "run": built.run.pk,
            }
        finally:
            transaction.set_rollback(True)
            outer.__exit__(None, None, None)


def _commits(item: pytest.Item, request: pytest.FixtureRequest) -> bool:
    """Return whether ``item``, of the requesting module, needs real commits."""
    if getattr(item, "module", None) is not request.module:
        return False
    marker = item.get_closest_marker("django_db")
    names = set(getattr(item, "fixturenames", ()))
    return bool({"transactional_db", "live_server"} & names) or bool(
        marker and marker.kwargs.get("transaction")
    )


@pytest.fixture
def arena(_arena_keys, db) -> Arena:
    """Return the module's arena, read afresh: no test sees another's objects in memory."""
    users = get_user_model().objects.in_bulk(_arena_keys["users"].values())
    return Arena(
        Collection.objects.get(pk=_arena_keys["coll"]),
        {name: users[pk] for name, pk in _arena_keys["users"].items()},
        Judgment.objects.get(pk=_arena_keys["judgment"]),
        Judgment.objects.get(pk=_arena_keys["other_judgment"]),
        Judge.objects.get(pk=_arena_keys["llm"]),
        Run.objects.get(pk=_arena_keys["run"]),
    )
