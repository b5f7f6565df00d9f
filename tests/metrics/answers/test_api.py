"""REST of RAG answers: submit, list and read answer runs, with the runs' rules."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging.models import Membership
from metrics.answers.models import AnswerRun
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def world(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("ragapi")
    for qid in ("t1", "t2", "t3"):
        factories.query(coll, qid)
    factories.document(coll, "d1")
    factories.document(coll, "d2")
    users = {n: factories.user(n) for n in ("cora", "alice", "bob", "jude")}
    factories.member(coll, users["cora"], Membership.Role.COORDINATOR)
    factories.member(coll, users["jude"], Membership.Role.JUDGE)
    alpha = metrics_factories.team(coll, "Alpha", [users["alice"]])
    metrics_factories.team(coll, "Beta", [users["bob"]])
    return coll, users, alpha


def body(*topics: str) -> bytes:
    return "\n".join(
        json.dumps(
            {
                "run_id": "r1",
                "topic_id": t,
                "references": ["d1", "d2"],
                "answer": [{"text": f"About {t}.", "citations": [0]}],
            }
        )
        for t in topics
    ).encode()


def post(coll, user, tag, content, **extra):
    return client_for(user).post(
        f"/api/v1/collections/{coll.slug}/answer-runs/",
        {"tag": tag, "file": SimpleUploadedFile("a.jsonl", content), **extra},
        format="multipart",
    )


def test_submit_list_and_read(world):
    coll, users, _ = world
    created = post(coll, users["alice"], "rag", body("t1", "t2"))
    assert created.status_code == 201, created.json()
    data = created.json()
    assert (data["tag"], data["team"], data["query_count"], data["pairs_pooled"]) == (
        "rag",
        "Alpha",
        2,
        2,
    )
    listed = client_for(users["alice"]).get(f"/api/v1/collections/{coll.slug}/answer-runs/")
    assert [r["tag"] for r in listed.json()["results"]] == ["rag"]
    url = f"/api/v1/collections/{coll.slug}/answer-runs/{data['id']}/"
    with CaptureQueriesContext(connection) as queries:
        detail = client_for(users["alice"]).get(url)
    assert detail.status_code == 200
    assert [a["topic_id"] for a in detail.json()["answers"]] == ["t1", "t2"]
    assert detail.json()["answers"][0]["answer"] == [{"text": "About t1.", "citations": [0]}]
    assert len(queries) < 15  # not one per answer
    # another team does not see it; a coordinator does; a judge is refused
    assert client_for(users["bob"]).get(url).status_code == 404
    assert client_for(users["cora"]).get(url).status_code == 200
    judge = client_for(users["jude"]).get(f"/api/v1/collections/{coll.slug}/answer-runs/")
    assert judge.status_code == 403


def test_every_problem_is_a_400_naming_line_and_field(world):
    coll, users, _ = world
    bad = body("t1") + b"\n" + body("t9") + b'\n{"run_id": "r1"}\n\x00\n'
    response = post(coll, users["alice"], "rag", bad)
    assert response.status_code == 400
    errors = response.json()["errors"]
    places = {(e.get("line"), e.get("field")) for e in errors}
    assert (2, "topic_id") in places
    assert {(3, "topic_id"), (3, "references"), (3, "answer")} <= places
    assert any(e.get("line") == 4 and "NUL" in e["message"] for e in errors)
    assert AnswerRun.objects.count() == 0


def test_unknown_body_fields_and_the_budget(world):
    coll, users, alpha = world
    unknown = post(coll, users["alice"], "x", body("t1"), colour="red")
    assert unknown.status_code == 400
    assert "colour" in json.dumps(unknown.json())
    from metrics.visibility.services import score_visibility_update

    score_visibility_update(collection=coll, runs_per_day=1)
    assert post(coll, users["alice"], "a", body("t1")).status_code == 201
    refused = post(coll, users["alice"], "b", body("t1"))
    assert refused.status_code == 429
    assert refused.json()["errors"][0]["field"] == "budget"
    taken = post(coll, users["cora"], "a", body("t1"), team=alpha.pk)
    assert taken.status_code == 400
    assert taken.json()["errors"][0]["field"] == "tag"
