"""Registering LLM judges and recording as them: coordinators only."""

from __future__ import annotations

import pytest

from judging import services
from judging.models import Judge, Judgment, Membership
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/judgments/"
ONE = {"query": "q1", "document": "d1", "grade": 2}


@pytest.fixture
def llm(world):
    judge = Judge.objects.create(kind="llm", name="gpt", provider="test", model="gpt-x")
    judge.collections.add(world.coll)
    return judge


def test_register_llm_judge(api, world):
    payload = {
        "name": "gpt-4o zero-shot",
        "provider": "openai",
        "model": "gpt-4o",
        "model_version": "2024-08-06",
        "prompt_template": "Query: {query}\nDocument: {document}",
        "prompt_version": "v3",
        "decoding": {"temperature": 0},
        "native_scale": ["no", "partly", "yes"],
        "scale_mapping": {"no": 0, "partly": 2, "yes": 3},
        "kind": "human",
    }
    response = api("cora").post("/api/v1/judges/", payload, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["kind"] == "llm"
    judge = Judge.objects.get(pk=body["id"])
    assert (judge.kind, judge.user, judge.scale_mapping["partly"]) == ("llm", None, 2)
    assert api("cora").get(f"/api/v1/judges/{judge.pk}/").json() == body


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"name": "x"}, "model"),
        ({"name": "x", "model": ""}, "model"),
        ({"model": "m"}, "name"),
        ({"name": "x", "model": "m", "native_scale": ["a"], "scale_mapping": {"b": 1}}, None),
        ({"name": "x", "model": "m", "scale_mapping": {"a": 7}}, "scale_mapping.a"),
        ({"name": "x", "model": "m", "decoding": [1]}, "decoding"),
    ],
)
def test_register_rejects_bad_judges(api, world, payload, field):
    response = api("cora").post("/api/v1/judges/", payload, format="json")
    assert response.status_code == 400
    fields = {e.get("field") for e in errors_of(response)}
    assert field in fields or (field is None and "scale_mapping" in fields)
    assert not Judge.objects.filter(kind="llm").exists()


def test_only_coordinators_record_as_llm(api, world, llm):
    refused = api("judy").post(URL, {**ONE, "judge": llm.pk}, format="json")
    assert refused.status_code == 403
    assert "coordinator" in errors_of(refused)[0]["message"]
    batch = api("judy").post(URL, {"judge": llm.pk, "judgments": [ONE]}, format="json")
    assert batch.status_code == 403
    assert not Judgment.objects.exists()

    response = api("cora").post(URL, {**ONE, "judge": llm.pk}, format="json")
    assert response.status_code == 201
    assert response.json()["judge"] == {"id": llm.pk, "name": "gpt", "kind": "llm"}
    batch = api("cora").post(
        URL,
        {"judge": llm.pk, "judgments": [{"query": "q2", "document": "d3", "grade": 4}]},
        format="json",
    )
    assert batch.status_code == 201
    assert Judgment.objects.filter(judge=llm).count() == 2


def test_judge_never_writes_as_another_human(api, world):
    jim = services.judge_for_user(user=world.users["jim"])
    response = api("judy").post(URL, {**ONE, "judge": jim.pk}, format="json")
    assert response.status_code == 403
    missing = api("judy").post(URL, {**ONE, "judge": 99999}, format="json")
    assert missing.status_code == 403  # no hint whether the id exists
    assert not Judgment.objects.exists()


def test_judge_may_name_own_judge(api, world):
    own = services.judge_for_user(user=world.users["judy"])
    response = api("judy").post(URL, {**ONE, "judge": own.pk}, format="json")
    assert response.status_code == 201
    assert Judgment.objects.get().judge == own


def test_coordinator_records_for_members_only(api, world):
    judy = services.judge_for_user(user=world.users["judy"])
    assert api("cora").post(URL, {**ONE, "judge": judy.pk}, format="json").status_code == 201
    olga = services.judge_for_user(user=world.users["olga"])
    response = api("cora").post(URL, {**ONE, "judge": olga.pk}, format="json")
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "judge"
    unknown = api("cora").post(URL, {**ONE, "judge": 99999}, format="json")
    assert unknown.status_code == 400
    assert errors_of(unknown) == [{"field": "judge", "message": "Unknown judge id 99999."}]


def test_team_member_cannot_record_at_all(api, world):
    response = api("tess").post(URL, ONE, format="json")
    assert response.status_code == 403
    assert not Judge.objects.filter(user=world.users["tess"]).exists()


def test_superuser_is_a_coordinator_everywhere(api, world, llm):
    admin = factories.user("root", is_superuser=True, is_staff=True)
    client = client_for(admin)
    slugs = [c["slug"] for c in client.get("/api/v1/collections/").json()["results"]]
    assert slugs == ["demo", "other"]
    assert client.get("/api/v1/collections/demo/").json()["roles"] == [Membership.Role.COORDINATOR]
    assert client.post(URL, {**ONE, "judge": llm.pk}, format="json").status_code == 201
