"""Collections, queries, documents and the pool as LLM-judging scripts read them."""

from __future__ import annotations

import pytest

from judging import services
from judging.models import Judge
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
C = "/api/v1/collections/demo/"


def test_collection_fields_and_roles(api, world):
    body = api("cora").get("/api/v1/collections/").json()
    assert body["count"] == 1
    (item,) = body["results"]
    assert item == {
        "slug": "demo",
        "name": "Demo",
        "purpose": "shared_task",
        "guidelines": "",
        "grade_names": world.coll.grade_names,
        "judges_per_pair": 1,
        "judgments_version": 0,
        "judgments_changed_at": None,
        "roles": ["coordinator"],
    }
    assert api("cora").get(C).json() == item
    assert api("judy").get(C).json()["roles"] == ["judge"]


def test_queries_list(api, world):
    body = api("judy").get(C + "queries/").json()
    assert body["count"] == 2
    assert body["results"][0] == {
        "qid": "q1",
        "external_id": "q1",  # deprecated alias (docs/api.md)
        "text": "query q1",
        "description": "q1 need",
        "narrative": "",
    }
    page = api("judy").get(C + "queries/", {"limit": 1, "offset": 1}).json()
    assert [q["qid"] for q in page["results"]] == ["q2"]


def test_documents_list_and_filters(api, world):
    def ids(name, **params):
        response = api(name).get(C + "documents/", params)
        assert response.status_code == 200, response.json()
        return [d["docno"] for d in response.json()["results"]]

    assert ids("judy") == ["d1", "d2", "d3"]
    assert ids("judy", include_missing=1) == ["d1", "d2", "d3"]
    assert ids("cora", include_missing=1) == ["d1", "d2", "d3", "dx"]
    assert ids("cora", include_missing="true", query="q1") == ["d1", "d2", "dx"]
    assert ids("cora", query="q2") == ["d3"]
    world.docs["d3"].pool_entries.all().delete()
    assert ids("cora", pooled=1) == ["d1", "d2"]
    assert ids("cora", pooled=0) == ["d3"]
    doc = api("judy").get(C + "documents/").json()["results"][0]
    assert set(doc) == {"docno", "external_id", "title", "body", "url", "extra", "has_content"}
    assert api("cora").get(C + "documents/", {"pooled": "maybe"}).status_code == 400


def test_pool_list_and_filters(api, world):
    def pairs(name, **params):
        response = api(name).get(C + "pool/", params)
        assert response.status_code == 200, response.json()
        return [(e["query"], e["document"], e["graded_count"]) for e in response.json()["results"]]

    # judges get no grade counts (a gold pair's would give it away: docs/judges.md)
    assert pairs("judy") == [("q1", "d1", None), ("q1", "d2", None), ("q2", "d3", None)]
    assert pairs("cora", include_missing=1)[2] == ("q1", "dx", 0)
    assert pairs("judy", query="q2") == [("q2", "d3", None)]

    llm = Judge.objects.create(kind="llm", name="gpt", model="gpt-x")
    services.judgment_record(
        judge=llm, query=world.queries["q1"], document=world.docs["d1"], grade=2
    )
    assert pairs("cora")[0] == ("q1", "d1", 1)
    assert pairs("cora", unjudged_by=llm.pk) == [("q1", "d2", 0), ("q2", "d3", 0)]
    assert pairs("cora", needs_grades=1) == [("q1", "d2", 0), ("q2", "d3", 0)]
    assert pairs("cora", needs_grades=0) == [("q1", "d1", 1)]
    assert api("judy").get(C + "pool/", {"unjudged_by": llm.pk}).status_code == 403
    own = services.judge_for_user(user=world.users["judy"])
    assert len(pairs("judy", unjudged_by=own.pk)) == 3
    # for a judge, needs_grades is "still open to you": q1/d1 has its one grade
    assert [p[:2] for p in pairs("judy", needs_grades=1)] == [("q1", "d2"), ("q2", "d3")]
    assert [p[:2] for p in pairs("judy", needs_grades=0)] == [("q1", "d1")]
    services.judgment_record(
        judge=own, query=world.queries["q2"], document=world.docs["d3"], grade=1
    )
    assert [p[:2] for p in pairs("judy", needs_grades=1)] == [("q1", "d2")]
    assert api("cora").get(C + "pool/", {"unjudged_by": "x"}).status_code == 400
    # An id no row can have is a 400 naming the parameter (it was a database error).
    for value in ("18164368268884509590552576", "0", "-3", "٣", str(2**63)):
        response = api("cora").get(C + "pool/", {"unjudged_by": value})
        assert response.status_code == 400, value
        assert errors_of(response)[0]["field"] == "unjudged_by"
