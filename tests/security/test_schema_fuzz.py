"""Schema fuzzing with schemathesis: every operation of /api/v1/schema/, as a coordinator,
a judge and a team member, must answer without a 5xx and as the schema says (status,
content type, body). Then, with data — human and LLM labels, an adjudication, two runs, an
LLM job — and the path parameters naming real objects (so operations reach their success
paths), every operation again under every aggregation policy. Examples are bounded
(``MAX_EXAMPLES`` per operation, ``POLICY_EXAMPLES`` under each policy: what a policy
changes is the data the operations answer with, which the path parameters reach on the
first examples, not the inputs) so the suite stays fast. Hypothesis draws each
operation's cases once per module (derandomized, they were the same for every role and
policy); every role and policy replays them.
"""

from __future__ import annotations

import copy
import functools

import hypothesis
import pytest
import schemathesis
from django.core.handlers.wsgi import WSGIHandler
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from rest_framework.authtoken.models import Token
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)
from schemathesis.core import NOT_SET

from judging import services
from judging.adjudication import services as services_adjudication
from judging.aggregation import POLICIES
from judging.models import FileImport
from tests.security.conftest import Arena

pytestmark = pytest.mark.django_db
MAX_EXAMPLES = 8
POLICY_EXAMPLES = 3
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def wsgi_app():
    """Return Django's WSGI app, kept from closing the test's database connection.

    One app per module, so that its schema and the operations' strategies are built once
    (:func:`_operations`); the app reads its settings per request (the throttled test
    overrides the rates after the app exists).
    """
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    try:
        yield WSGIHandler()
    finally:
        request_started.connect(close_old_connections)
        request_finished.connect(close_old_connections)


SETTINGS = hypothesis.settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(hypothesis.HealthCheck),
    phases=[hypothesis.Phase.explicit, hypothesis.Phase.generate],
)


def known_path(arena: Arena, path: str) -> dict[str, object]:
    """Return path parameters naming the arena's objects for the operation at ``path``."""
    ids: dict[str, object] = {"slug": arena.coll.slug, "qid": "q1"}
    ids["judge_id"] = arena.judgment.judge_id
    if "/runs/" in path:
        ids["pk"] = ids["id"] = arena.run.pk
    elif "/judgments/" in path:
        ids["pk"] = ids["id"] = arena.judgment.pk
    elif "/adjudications/" in path:
        ids["pk"] = ids["id"] = arena.adjudication().pk
    elif "/llm-jobs/" in path:
        ids["pk"] = ids["id"] = arena.llm_job().pk
    elif "/judges/" in path:
        ids["pk"] = ids["id"] = arena.judgment.judge_id
    elif "/imports/" in path:
        ids["pk"] = ids["id"] = FileImport.objects.get_or_create(collection=arena.coll)[0].pk
    return ids


def fuzz(
    app: WSGIHandler,
    headers: dict[str, str],
    arena: Arena | None = None,
    examples: int = MAX_EXAMPLES,
    only: str | None = None,
) -> list[str]:
    """Send every operation's first ``examples`` cases; return a description of each failure.

    With ``arena``, path parameters name its objects instead of the drawn values; with
    ``only``, just the operations whose label ends with it are sent. An
    operation's cases are drawn once (:func:`_cases`) and replayed here, for every role
    and policy: with ``derandomize`` hypothesis drew the same cases for each of them
    anyway, and drawing took more than half of a fuzz run's time.
    """
    failures: list[str] = []
    drawn = _cases(app)
    assert len(drawn) >= 20, [op.label for op, _ in drawn]
    for operation, cases in drawn:
        if only is not None and not operation.label.endswith(only):
            continue
        known = known_path(arena, operation.path) if arena is not None else {}
        for case in cases[:examples]:
            sent = _replay(operation, case, known)
            try:
                sent.call_and_validate(headers=headers, checks=CHECKS)
            # A failed check raises FailureGroup, a BaseExceptionGroup (not an Exception).
            except (Exception, BaseExceptionGroup) as exc:
                failures.append(f"{operation.label}: {_described(exc)}\n{sent.as_curl_command()}")
                break
    return failures


@functools.cache
def _operations(app: WSGIHandler) -> list[tuple[object, object]]:
    """Return every operation of the schema ``app`` serves, with its strategy of cases.

    Built once per app: loading the schema (drf-spectacular generates it) took about 5 s.
    """
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    return [(operation, operation.as_strategy()) for operation in operations]


@functools.cache
def _cases(app: WSGIHandler) -> list[tuple[object, list[schemathesis.Case]]]:
    """Return every operation with the ``MAX_EXAMPLES`` cases hypothesis draws for it."""
    return [(operation, _draw(operation, strategy)) for operation, strategy in _operations(app)]


def _draw(operation, strategy) -> list[schemathesis.Case]:
    """Return the cases hypothesis draws from ``strategy`` under :data:`SETTINGS`."""
    cases: list[schemathesis.Case] = []

    @hypothesis.given(case=strategy)
    @hypothesis.settings(SETTINGS)
    def draw(case: schemathesis.Case) -> None:
        cases.append(case)

    draw()
    assert cases, f"{operation.label}: hypothesis drew no case"
    return cases


def _described(exc: BaseException) -> str:
    """Return ``exc``'s message with each of a group's failures, at most 2,000 characters."""
    parts = [str(exc)] + [str(inner) for inner in getattr(exc, "exceptions", ())]
    return "\n".join(parts)[:2000]


def _replay(operation, case: schemathesis.Case, known: dict[str, object]) -> schemathesis.Case:
    """Return a fresh copy of ``case`` (a call must not alter the kept one), path from ``known``."""
    path = copy.deepcopy(case.path_parameters)
    if known and path:
        path = {name: known.get(name, value) for name, value in path.items()}
    return operation.Case(
        method=case.method,
        path_parameters=path,
        headers=copy.deepcopy(case.headers),
        cookies=copy.deepcopy(case.cookies),
        query=copy.deepcopy(case.query),
        body=copy.deepcopy(case.body, {id(NOT_SET): NOT_SET}),
        media_type=case.media_type,
        multipart_content_types=copy.deepcopy(case.multipart_content_types),
        _meta=copy.deepcopy(case._meta),
    )


def _headers(arena: Arena, role: str) -> dict[str, str]:
    token, _ = Token.objects.get_or_create(user=arena.users[role])
    # Schemathesis's WSGI transport sends requests' default "Accept-Encoding: gzip, ..."
    # but does not decompress, so a gzipped export could not be checked against the
    # schema; the gzip path has its own tests (tests/judging/api/test_judgment_lists.py).
    return {"Authorization": f"Token {token.key}", "Accept-Encoding": "identity"}


def test_api_as_coordinator(arena: Arena, wsgi_app: WSGIHandler):
    failures = fuzz(wsgi_app, _headers(arena, "cora"))
    assert not failures, "\n\n".join(failures)


def test_api_as_judge(arena: Arena, wsgi_app: WSGIHandler):
    failures = fuzz(wsgi_app, _headers(arena, "judy"))
    assert not failures, "\n\n".join(failures)


def test_api_as_team_member(arena: Arena, wsgi_app: WSGIHandler):
    failures = fuzz(wsgi_app, _headers(arena, "tess"), arena)
    assert not failures, "\n\n".join(failures)


def test_the_fuzz_reports_a_server_error(arena: Arena, wsgi_app: WSGIHandler, monkeypatch):
    """The replayed cases are checked: a view that fails is named with its status."""
    from metrics.api import serializers

    def broken(self, row) -> int:
        raise RuntimeError("a broken serializer")

    _cases(wsgi_app)  # the schema and cases of the unbroken app, as the others use them
    monkeypatch.setattr(serializers.LeaderboardRowSerializer, "get_tier", broken)
    failures = fuzz(wsgi_app, _headers(arena, "cora"), arena, 1, only="/leaderboard/")
    assert len(failures) == 1, failures
    assert failures[0].startswith("GET /api/v1/collections/{slug}/leaderboard/: ")
    assert "Server error" in failures[0] and "Received: 500" in failures[0]


@pytest.fixture
def with_data(arena: Arena) -> Arena:
    """Add LLM labels beside the human ones, an adjudication, a second run and an LLM job."""
    q1 = arena.coll.queries.get(external_id="q1")
    for docno, grade in (("d1", 2), ("d2", 0)):
        services.judgment_record(
            judge=arena.llm,
            query=q1,
            document=arena.coll.documents.get(external_id=docno),
            grade=grade,
            channel="llm",
        )
    arena.adjudication()
    arena.second_run()
    arena.llm_job()
    return arena


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_api_with_data_under_every_policy(with_data: Arena, wsgi_app: WSGIHandler, policy):
    # Through the service, as the settings page does: the live list is rebuilt under it.
    services_adjudication.aggregation_settings_update(
        collection=with_data.coll, aggregation_policy=policy, actor=with_data.users["cora"]
    )
    with_data.coll.refresh_from_db()
    assert with_data.coll.aggregation_policy == policy
    failures = fuzz(wsgi_app, _headers(with_data, "cora"), with_data, POLICY_EXAMPLES)
    assert not failures, "\n\n".join(failures)


THROTTLED = {
    "anon": "3/min",
    "user": "3/min",
    "token_failure": "3/hour",
    "login": None,
    "login_account": None,
    "login_ip": None,
    "login_device": None,
}


@pytest.mark.parametrize(
    "who", ["cora", "bad token"], ids=["throttled user", "throttled bad token"]
)
def test_throttled_answers_conform_to_the_schema(arena: Arena, wsgi_app: WSGIHandler, who):
    """With tight rates nearly every answer is a 429 (or 401): each must be documented."""
    from django.core.cache import cache
    from django.test import override_settings

    headers = (
        {"Authorization": "Token " + "0" * 40, "Accept-Encoding": "identity"}
        if who == "bad token"
        else _headers(arena, who)
    )
    cache.clear()
    try:
        with override_settings(GRADED_THROTTLE_RATES=THROTTLED):
            failures = fuzz(wsgi_app, headers)
    finally:
        cache.clear()
    assert not failures, "\n\n".join(failures)
