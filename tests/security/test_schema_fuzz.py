"""Schema fuzzing with schemathesis: every operation of /api/v1/schema/, as a coordinator
and as a judge, must answer without a 5xx and as the schema says (status, content type,
body). Examples are bounded (``MAX_EXAMPLES`` per operation) so the suite stays fast.
"""

from __future__ import annotations

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

from .conftest import Arena

pytestmark = pytest.mark.django_db
MAX_EXAMPLES = 8
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture
def wsgi_app():
    """Return Django's WSGI app, kept from closing the test's database connection."""
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


def fuzz(app: WSGIHandler, headers: dict[str, str]) -> list[str]:
    """Fuzz every operation of the served schema; return a description of each failure."""
    schema = schemathesis.openapi.from_wsgi("/api/v1/schema/", app)
    failures: list[str] = []
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 20, [op.label for op in operations]
    for operation in operations:

        @hypothesis.given(case=operation.as_strategy())
        @SETTINGS
        def check(case: schemathesis.Case) -> None:
            case.call_and_validate(headers=headers, checks=CHECKS)

        try:
            check()
        except Exception as exc:
            failures.append(f"{operation.label}: {str(exc)[:2000]}")
    return failures


def _headers(arena: Arena, role: str) -> dict[str, str]:
    token, _ = Token.objects.get_or_create(user=arena.users[role])
    return {"Authorization": f"Token {token.key}"}


def test_api_as_coordinator(arena: Arena, wsgi_app: WSGIHandler):
    failures = fuzz(wsgi_app, _headers(arena, "cora"))
    assert not failures, "\n\n".join(failures)


def test_api_as_judge(arena: Arena, wsgi_app: WSGIHandler):
    failures = fuzz(wsgi_app, _headers(arena, "judy"))
    assert not failures, "\n\n".join(failures)
