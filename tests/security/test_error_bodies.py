"""Issue 17 item 7: error bodies are small and JSON-shaped, whatever the client sent."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.api_client import errors_of
from tests.security.conftest import Arena

pytestmark = pytest.mark.django_db
HUGE = 2_000_000  # characters: well under the body limit, far over any echo

#: (method, path after /api/v1/collections/<slug>/ or absolute, body builder)
WRITES = [
    ("PATCH", "aggregation/", lambda v: {"aggregation_policy": v}),
    ("PATCH", "aggregation/", lambda v: {"judges_per_pair": v}),
    ("POST", "judgments/", lambda v: {"query": v, "document": "d1", "grade": 1}),
    ("POST", "judgments/", lambda v: {"query": "q1", "document": "d1", "grade": v}),
    ("POST", "judgments/", lambda v: {"query": "q1", "document": "d1", "grade": 1, "note": v}),
    ("POST", "judgments/", lambda v: {"query": "q1", "document": "d1", "status": v}),
    ("POST", "adjudications/", lambda v: {"query": "q1", "document": v, "grade": 2, "reason": "r"}),
    ("POST", "queries/", lambda v: [{"qid": v, "text": "t"}]),
    ("POST", "documents/", lambda v: [{"docno": "d9", "url": v}]),
    ("POST", "llm-jobs/", lambda v: {"judge": v}),
    ("PUT", "judges/{judge}/quota/", lambda v: {"quota": v}),
    ("POST", "/api/v1/judges/", lambda v: {"name": "n", "model": "m", "llm_provider": v}),
    ("POST", "/api/v1/judges/", lambda v: {"name": "n", "model": "m", "answer_pattern": v}),
    ("POST", "/api/v1/collections/", lambda v: {"slug": v, "name": "n"}),
]


def _path(arena: Arena, path: str) -> str:
    path = path.replace("{judge}", str(arena.judgment.judge_id))
    return path if path.startswith("/") else f"/api/v1/collections/{arena.coll.slug}/{path}"


@pytest.mark.parametrize("value_kind", ["text", "digits"])
@pytest.mark.parametrize(("method", "path", "body"), WRITES)
def test_a_huge_value_is_never_echoed_at_its_size(arena, method, path, body, value_kind):
    value = "x" * HUGE if value_kind == "text" else "9" * HUGE
    response = arena.client("cora").generic(
        method, _path(arena, path), json.dumps(body(value)), content_type="application/json"
    )
    assert 400 <= response.status_code < 500, (path, response.status_code)
    assert len(response.content) < 4096, (path, len(response.content))
    errors_of(response)


def test_many_bad_items_give_a_bounded_list(arena):
    items = [{"qid": "", "text": "t"} for _ in range(5000)]
    response = arena.client("cora").post(
        f"/api/v1/collections/{arena.coll.slug}/queries/", items, format="json"
    )
    assert response.status_code == 400
    errors = errors_of(response)
    assert len(errors) <= 101 and len(response.content) < 64_000


def test_a_body_over_the_limit_gets_a_413_in_the_api_shape(arena, settings):
    body = json.dumps({"aggregation_policy": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)})
    response = arena.client("cora").generic(
        "PATCH",
        f"/api/v1/collections/{arena.coll.slug}/aggregation/",
        body,
        content_type="application/json",
    )
    assert response.status_code == 413
    [error] = errors_of(response)
    assert "larger than" in error["message"]


def test_too_many_form_fields_under_the_api_is_a_json_400(arena, settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 10
    client = Client()
    client.force_login(arena.users["cora"])
    data = "&".join(f"f{i}=1" for i in range(50))
    response = client.generic(
        "POST",
        f"/api/v1/collections/{arena.coll.slug}/judgments/",
        data,
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 400, response.content[:300]
    errors_of(response)


def test_pages_keep_django_s_own_answer(arena, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100
    client = Client()
    client.force_login(arena.users["cora"])
    response = client.post(f"/c/{arena.coll.slug}/pairs/add/", {"pairs": "q1 d1\n" * 100})
    assert response.status_code == 400
    assert not response["Content-Type"].startswith("application/json")
