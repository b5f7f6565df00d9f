"""Schema fuzzing with schemathesis: every operation of /api/v1/schema/, as a coordinator,
a judge and a team member, must answer without a 5xx and as the schema says (status,
content type, body). Then, with data — human and LLM labels, an adjudication, two runs, an
LLM job — and the path parameters naming real objects (so operations reach their success
paths), every operation again under every aggregation policy. Examples are bounded
(``MAX_EXAMPLES`` per operation, ``POLICY_EXAMPLES`` under each policy: what a policy
changes is the data the operations answer with, which the path parameters reach on the
first examples, not the inputs) so the suite stays fast.
"""

from __future__ import annotations

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
) -> list[str]:
    """Fuzz every operation of the served schema; return a description of each failure.

    With ``arena``, path parameters name its objects instead of random values.
    """
    failures: list[str] = []
    operations = _operations(app)
    assert len(operations) >= 20, [op.label for op, _ in operations]
    for operation, strategy in operations:
        known = known_path(arena, operation.path) if arena is not None else {}
        check = _checker(operation, strategy, headers, known, examples)
        try:
            check()
        except Exception as exc:
            failures.append(f"{operation.label}: {str(exc)[:2000]}")
    return failures


@functools.cache
def _operations(app: WSGIHandler) -> list[tuple[object, object]]:
    """Return every operation of the schema ``app`` serves, with its strategy of cases.

    Built once per app: loading the schema (drf-spectacular generates it) took about 5 s
    and the strategies' first draws most of the rest of a fuzz run's set-up, which every
    role and policy repeated.
    """
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", app)
    operations = [result.ok() for result in schema.get_all_operations()]
    return [(operation, operation.as_strategy()) for operation in operations]


def _checker(operation, strategy, headers: dict[str, str], known: dict[str, object], examples: int):
    """Return the hypothesis test of one operation, its path parameters taken from ``known``."""

    @hypothesis.given(case=strategy)
    @hypothesis.settings(SETTINGS, max_examples=examples)
    def check(case: schemathesis.Case) -> None:
        if known and case.path_parameters:
            case.path_parameters = {
                name: known.get(name, value) for name, value in case.path_parameters.items()
            }
        case.call_and_validate(headers=headers, checks=CHECKS)

    return check


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
