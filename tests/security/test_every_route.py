"""Issue 17 item 7: no route answers 500 — OPTIONS everywhere, every aggregation policy.

Routes come from the URL conf (a new route is covered without editing this file).
"""

from __future__ import annotations

import pytest
from django.test import Client

from judging import services
from judging.aggregation import POLICIES
from tests.security.conftest import ROLES, Arena
from tests.security.test_route_matrix import api_routes, page_routes, page_url, url_for

pytestmark = pytest.mark.django_db

API_ROUTES = sorted({route for _method, route in api_routes()})


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("route", API_ROUTES)
def test_options_on_every_api_route_is_never_a_500(arena, route, role):
    response = arena.client(role).options(url_for(route, arena))
    assert response.status_code < 500, response.content[:500]
    if not response["Content-Type"].startswith("application/json"):
        assert route in ("schema/", "docs/"), route  # the schema's own format, the UI's HTML
    elif response.status_code == 200:
        body = response.json()
        assert "name" in body and "renders" in body
    else:
        assert set(response.json()) == {"errors"}


def _page_client(arena: Arena, role: str) -> Client:
    client = Client()
    if role != "anonymous":
        client.force_login(arena.users[role])
    return client


@pytest.mark.parametrize("role", ["anonymous", "judy", "tess", "cora"])
@pytest.mark.parametrize("route", sorted(page_routes()))
def test_options_on_every_page_is_never_a_500(arena, route, role):
    path = page_url(
        route.replace("<int:entry_id>", str(arena.coll.pool_entries.first().pk)).replace(
            "<int:judge_id>", str(arena.judgment.judge_id)
        ),
        arena,
    )
    response = _page_client(arena, role).options(path)
    assert response.status_code < 500


def test_quota_options_describe_the_write_to_a_coordinator(arena):
    url = f"/api/v1/collections/{arena.coll.slug}/judges/{arena.judgment.judge_id}/quota/"
    body = arena.client("cora").options(url).json()
    assert "quota" in body["actions"]["PUT"]
    assert "actions" not in arena.client("judy").options(url).json()


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_llm_agreement_answers_under_every_policy(arena, policy):
    """Human and LLM labels on shared pairs, every policy: the page and the API answer."""
    arena.coll.aggregation_policy = policy
    arena.coll.save(update_fields=["aggregation_policy"])
    q1 = arena.coll.queries.get(external_id="q1")
    for docno, grade in (("d1", 2), ("d2", 0)):
        document = arena.coll.documents.get(external_id=docno)
        services.judgment_record(
            judge=arena.llm, query=q1, document=document, grade=grade, channel="llm"
        )
        services.judgment_record(
            judge=services.judge_for_user(user=arena.users["jim"]),
            query=q1,
            document=document,
            grade=grade + 1,
        )
    api = arena.client("cora").get(f"/api/v1/collections/{arena.coll.slug}/agreement/llm/")
    assert api.status_code == 200, api.content[:500]
    assert api.json()["aggregation_policy"] == policy
    page = _page_client(arena, "cora").get(f"/c/{arena.coll.slug}/agreement/llm/")
    assert page.status_code == 200


def test_routes_are_found():
    assert len(API_ROUTES) > 30 and len(set(page_routes())) > 20


def test_the_schema_documents_the_query_string_400_of_every_operation():
    from drf_spectacular.generators import SchemaGenerator

    from config.schema import QUERY_400

    schema = SchemaGenerator().get_schema(request=None, public=True)
    operations = [
        (path, method, op)
        for path, item in schema["paths"].items()
        for method, op in item.items()
        if method in ("get", "put", "post", "patch", "delete")
    ]
    assert len(operations) > 40
    for path, method, op in operations:
        assert QUERY_400 in op["responses"]["400"]["description"], (method, path)
        # Every operation documents the answers any view may give (issue 32 item 6).
        codes = set(op["responses"])
        assert {"400", "401", "403", "404", "429", "503"} <= codes, (method, path, codes)
        assert "Retry-After" in op["responses"]["429"]["headers"], (method, path)
        if "requestBody" in op:
            assert {"413", "415"} <= codes, (method, path, codes)
        for code in ("401", "403", "404", "429"):
            schema = op["responses"][code]["content"]["application/json"]["schema"]
            assert schema == {"$ref": "#/components/schemas/Error"}, (method, path, code)


@pytest.mark.parametrize("route", API_ROUTES)
def test_a_nul_in_a_query_parameter_is_the_documented_400(arena, route):
    url = url_for(route, arena)
    url += ("&" if "?" in url else "?") + "q=%00"
    response = arena.client("cora").get(url)
    assert response.status_code == 400
    [error] = response.json()["errors"]
    assert "NUL" in error["message"] and error["field"] == "q"
