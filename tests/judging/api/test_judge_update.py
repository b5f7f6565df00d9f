"""Changing an LLM judge over REST: ``PATCH /api/v1/judges/<id>/`` (issue 45, item 7).

The same checks as the configuration page (judging.llm.judges), coordinators of a
collection the judge works for only, every refusal a 400 naming the field with nothing
changed, and a change of what decides the grades a new version.
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group

from judging import services
from judging.llm.judges import judge_version
from judging.models import Judge, Membership
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def llm(world) -> Judge:
    """An LLM judge of the collection on a provider open to it."""
    judge = factories.llm_judge("gpt")
    judge.llm_provider = factories.llm_provider(
        "http://127.0.0.1:9/v1", name="open", open_to=[world.coll]
    )
    judge.prompt_template = "Query: {query}\nDocument: {document}"
    judge.save()
    judge.collections.add(world.coll)
    return judge


def _url(judge: Judge) -> str:
    return f"/api/v1/judges/{judge.pk}/"


def _snapshot(judge: Judge) -> dict:
    judge.refresh_from_db()
    return {
        "config": {f.name: getattr(judge, f.name) for f in Judge._meta.concrete_fields},
        "collections": sorted(judge.collections.values_list("slug", flat=True)),
    }


def test_a_coordinator_changes_the_prompt_and_gets_a_new_version(api, world, llm):
    before = api("cora").get(_url(llm)).json()
    response = api("cora").patch(
        _url(llm),
        {"prompt_template": "Q: {query}\nD: {document}\nGrade 0-3.", "prompt_version": "v2"},
        format="json",
    )
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["prompt_template"].startswith("Q: {query}")
    assert body["prompt_version"] == "v2"
    assert body["version"] != before["version"] and body["version"].startswith("v-")
    llm.refresh_from_db()
    assert body["version"] == judge_version(llm)
    assert api("cora").get(_url(llm)).json() == body
    # Fields not given keep their values.
    assert {k: body[k] for k in ("name", "model", "llm_provider", "collections")} == {
        k: before[k] for k in ("name", "model", "llm_provider", "collections")
    }


def test_labels_keep_the_version_that_gave_them(api, world, llm):
    q1, d1, d2 = world.queries["q1"], world.docs["d1"], world.docs["d2"]
    old = services.judgment_record(judge=llm, query=q1, document=d1, grade=2)
    first = judge_version(llm)
    api("cora").patch(_url(llm), {"model": "gpt-y"}, format="json")
    llm.refresh_from_db()
    second = judge_version(llm)
    new = services.judgment_record(judge=llm, query=q1, document=d2, grade=1)
    assert first != second
    old.refresh_from_db()
    assert (old.judge_version, new.judge_version) == (first, second)


def test_a_rename_or_a_timeout_is_not_a_new_version(api, world, llm):
    version = api("cora").get(_url(llm)).json()["version"]
    response = api("cora").patch(
        _url(llm), {"name": "gpt renamed", "timeout_seconds": 30}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["name"] == "gpt renamed"
    assert response.json()["version"] == version


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"prompt_template": "Query: {qeury}"}, "prompt_template"),
        ({"answer_pattern": "grade: (\\d)(\\d)"}, "answer_pattern"),
        ({"answer_pattern": "(unclosed"}, "answer_pattern"),
        ({"native_scale": ["a", "b"], "scale_mapping": {"a": 0, "c": 4}}, "scale_mapping"),
        ({"scale_mapping": {"a": 9}}, "scale_mapping.a"),
        ({"max_attempts": 0}, "max_attempts"),
        ({"max_attempts": 21}, "max_attempts"),
        ({"timeout_seconds": 0}, "timeout_seconds"),
        ({"model": ""}, "model"),
        ({"name": ""}, "name"),
        ({"name": "bad\x00name"}, None),  # the parser's text policy (NUL)
        ({"decoding": [1]}, "decoding"),
        ({"llm_provider": "nobody-registered-this"}, "llm_provider"),
        ({"collections": ["other"]}, "collections"),
        ({"collections": []}, "collections"),
    ],
)
def test_a_bad_field_is_a_400_naming_it_and_changes_nothing(api, world, llm, body, field):
    before = _snapshot(llm)
    response = api("cora").patch(_url(llm), body, format="json")
    assert response.status_code == 400, response.content
    fields = [e.get("field") for e in errors_of(response)]
    if field is not None:
        assert field in fields, fields
    assert _snapshot(llm) == before


def test_the_model_must_be_one_the_provider_allows(api, world, llm):
    llm.llm_provider.allowed_models = ["gpt", "gpt-5"]
    llm.llm_provider.save()
    before = _snapshot(llm)
    response = api("cora").patch(_url(llm), {"model": "claude-3"}, format="json")
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["field"] == "model" and "does not allow" in error["message"]
    assert _snapshot(llm) == before
    assert api("cora").patch(_url(llm), {"model": "gpt-5"}, format="json").status_code == 200


def test_the_provider_must_be_open_to_the_judges_collections(api, world, llm):
    elsewhere = factories.llm_provider(
        "http://127.0.0.1:9/v1", name="elsewhere", open_to=[factories.collection("third")]
    )
    group = Group.objects.create(name="llm-team")
    world.users["cora"].groups.add(group)
    elsewhere.allowed_groups.add(group)  # open to cora through her group: listed to her
    closed_to_demo = factories.llm_provider(
        "http://127.0.0.1:9/v1", name="closed", open_to=[world.coll]
    )
    closed_to_demo.allowed_collections.clear()
    before = _snapshot(llm)
    refused = api("cora").patch(_url(llm), {"llm_provider": "closed"}, format="json")
    assert refused.status_code == 400
    assert errors_of(refused)[0]["field"] == "llm_provider"
    assert _snapshot(llm) == before
    # Open through her group: the page offers it too (providers_in), so it is accepted.
    moved = api("cora").patch(_url(llm), {"llm_provider": "elsewhere"}, format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["llm_provider"] == "elsewhere"
    assert api("cora").patch(_url(llm), {"llm_provider": None}, format="json").status_code == 200


def test_registering_checks_the_provider_against_the_collections_too(api, world):
    other_only = factories.llm_provider(
        "http://127.0.0.1:9/v1", name="other-only", open_to=[world.coll]
    )
    mine = factories.collection("mine")
    factories.member(mine, world.users["cora"], Role.COORDINATOR)
    body = {"name": "j", "model": "m", "llm_provider": "other-only"}
    refused = api("cora").post("/api/v1/judges/", {**body, "collections": ["mine"]}, format="json")
    assert refused.status_code == 400, refused.content
    (error,) = errors_of(refused)
    assert error["field"] == "llm_provider" and "mine" in error["message"]
    made = api("cora").post("/api/v1/judges/", {**body, "collections": ["demo"]}, format="json")
    assert made.status_code == 201, made.content
    assert other_only.pk == Judge.objects.get(pk=made.json()["id"]).llm_provider_id


def test_collections_change_only_where_the_caller_coordinates(api, world, llm):
    other = Membership.objects.get(user=world.users["otto"]).collection
    llm.collections.add(other)  # also works for otto's collection
    mine = factories.collection("mine")
    factories.member(mine, world.users["cora"], Role.COORDINATOR)
    llm.llm_provider.allowed_collections.add(mine)
    response = api("cora").patch(_url(llm), {"collections": ["mine"]}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["collections"] == ["mine"]  # cora sees only her collections
    assert sorted(llm.collections.values_list("slug", flat=True)) == ["mine", "other"]


@pytest.mark.parametrize(
    ("who", "status"),
    [("judy", 404), ("tess", 404), ("olga", 404), ("otto", 404), (None, 401)],
)
def test_only_its_coordinators_change_a_judge(api, world, llm, who, status):
    before = _snapshot(llm)
    response = api(who).patch(_url(llm), {"name": "taken over"}, format="json")
    assert response.status_code == status, response.content
    errors_of(response)
    assert _snapshot(llm) == before


def test_a_coordinator_who_sees_but_does_not_serve_the_judge_is_refused(api, world, llm):
    """Otto sees the judge once it labelled in his collection, but it does not work there."""
    other = Membership.objects.get(user=world.users["otto"]).collection
    query, document = factories.query(other, "o1"), factories.document(other, "od1")
    factories.pool_entry(other, query, document)
    services.judgment_record(judge=llm, query=query, document=document, grade=1)
    assert api("otto").get(_url(llm)).status_code == 200
    response = api("otto").patch(_url(llm), {"name": "mine now"}, format="json")
    assert response.status_code == 403
    assert "coordinators of a collection" in errors_of(response)[0]["message"].lower()


def test_a_superuser_changes_any_llm_judge(world, llm):
    root = factories.user("root", is_superuser=True, is_staff=True)
    response = client_for(root).patch(_url(llm), {"model": "gpt-z"}, format="json")
    assert response.status_code == 200, response.content


def test_a_human_judge_has_no_configuration(api, world):
    judy = services.judge_for_user(user=world.users["judy"])
    response = api("cora").patch(f"/api/v1/judges/{judy.pk}/", {"name": "x"}, format="json")
    assert response.status_code == 400
    assert "LLM judge" in errors_of(response)[0]["message"]


def test_put_is_not_offered(api, world, llm):
    body = api("cora").get(_url(llm)).json()
    response = api("cora").put(_url(llm), body, format="json")
    assert response.status_code == 405
    errors_of(response)


def test_the_page_and_the_api_refuse_the_same_template_with_the_same_message(api, world, llm):
    from django.test import Client

    bad = "Query: {qeury}"
    rest = api("cora").patch(_url(llm), {"prompt_template": bad}, format="json")
    (error,) = [e for e in errors_of(rest) if e.get("field") == "prompt_template"]
    page = Client()
    page.force_login(world.users["cora"])
    form = {
        "name": llm.name,
        "model": llm.model,
        "llm_provider": llm.llm_provider_id,
        "prompt_template": bad,
        "max_attempts": 3,
        "timeout_seconds": 60,
    }
    html = page.post(f"/c/{world.coll.slug}/llm-judges/{llm.pk}/edit/", form).content.decode()
    assert error["message"].replace("'", "&#x27;") in html
