"""Issue 32 item 6: form and multipart bodies follow the same text policy as JSON bodies.

A NUL in a form-encoded field (``collections``, ``llm_provider`` of ``POST /api/v1/judges/``)
was a 500; now every parser refuses NUL, lone surrogates and over-long values with a 400
naming the field, before any serializer runs. The parsers of every API view are checked.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import URLPattern, URLResolver, get_resolver
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.parsers import BaseParser

from config.parsers import PolicyFormParser, PolicyJSONParser, PolicyMultiPartParser
from graded import textpolicy
from judging.models import Judge
from metrics.models import Run
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
FORM = "application/x-www-form-urlencoded"
POLICY_PARSERS = (PolicyJSONParser, PolicyFormParser, PolicyMultiPartParser)


def _form(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(k)}={quote(v, safe='')}" for k, v in pairs)


@pytest.mark.parametrize("field", ["collections", "llm_provider", "name", "model"])
def test_nul_in_a_form_field_of_a_judge_is_400_naming_it(arena, field):
    judges = Judge.objects.count()
    values = {"name": "j", "model": "m", "provider": "openai", field: "1\x00"}
    body = _form(list(values.items()))
    response = arena.client("cora").post("/api/v1/judges/", body, content_type=FORM)
    assert response.status_code == 400, response.content[:300]
    [error] = errors_of(response)
    assert error["field"] == field and "NUL" in error["message"]
    assert Judge.objects.count() == judges


def test_nul_in_a_multipart_field_or_file_name_is_400(arena):
    upload = SimpleUploadedFile("r.txt", b"q1 Q0 d1 1 2 t\n")
    response = arena.client("tess").post(
        "/api/v1/collections/demo/runs/", {"tag": "a\x00b", "file": upload}, format="multipart"
    )
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "tag"
    assert Run.objects.count() == 1


def test_over_long_form_values_and_field_names_are_400(arena):
    long_value = "x" * (textpolicy.MAX_TEXT_LENGTH + 1)
    response = arena.client("cora").post(
        "/api/v1/judges/", _form([("name", long_value)]), content_type=FORM
    )
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "name"
    response = arena.client("cora").post(
        "/api/v1/judges/", _form([("n" * 500, "v")]), content_type=FORM
    )
    assert response.status_code == 400
    assert "field name" in errors_of(response)[0]["message"]


def test_a_clean_form_still_works(arena):
    body = _form([("tag", "ok")])
    response = arena.client("tess").post("/api/v1/collections/demo/runs/", body, content_type=FORM)
    # No file: the serializer's own 400 (the parser let the body through).
    assert response.status_code == 400
    assert errors_of(response)[0].get("field") == "file"


def _views():
    def walk(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern):
                cls = getattr(pattern.callback, "cls", None)
                if cls is not None:
                    yield cls

    return sorted(set(walk(get_resolver().url_patterns)), key=lambda c: c.__name__)


@pytest.mark.parametrize("view", _views(), ids=lambda c: c.__name__)
def test_every_api_view_parses_under_the_policy(view):
    parsers = view().get_parsers() if hasattr(view, "get_parsers") else []
    for parser in parsers:
        assert isinstance(parser, BaseParser)
        assert isinstance(parser, POLICY_PARSERS), (view.__name__, type(parser).__name__)


VALUES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\x00", "1\x00", "\ud800", "x" * 300, "", "1", "openai"]),
)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(
    pairs=st.lists(
        st.tuples(
            st.sampled_from(["name", "model", "collections", "llm_provider", "provider", "x"]),
            VALUES,
        ),
        max_size=6,
    )
)
def test_fuzzed_form_bodies_are_never_a_500(arena, pairs):
    body = "&".join(
        f"{quote(k)}={quote(v.encode('utf-8', 'surrogatepass'), safe='')}" for k, v in pairs
    )
    response = arena.client("cora").post("/api/v1/judges/", body, content_type=FORM)
    assert response.status_code in (201, 400, 403), response.content[:300]
    if response.status_code == 400:
        errors_of(response)
