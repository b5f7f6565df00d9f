"""Issue 32 item 2: the Django admin is scoped to the collections a staff user coordinates.

The URLs come from the admin site's registry (a new admin is covered without editing this
file): the list, add, change, delete and history pages of every registered model, and the
autocomplete endpoint for every relation to a registered model. Roles: ``root`` a
superuser; ``cora`` staff, coordinator of A, with every model permission; ``jude`` staff,
judge of A, with every model permission; ``nora`` coordinator of A, not staff. Every
collection model has one object in A and one in B; the operator's models (users, groups,
tokens, LLM providers) one object.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import pytest
from django.contrib import admin
from django.contrib.auth.models import Group, Permission
from django.db.models import Model
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token, TokenProxy

from judging import services
from judging.admin_base import TenantScopedMixin, collection_path
from judging.llm.models import (
    LLMFailure,
    LLMJob,
    LLMJobChunk,
    LLMOutput,
    LLMProvider,
    LLMUsage,
)
from judging.models import Collection, Judge, Membership, Query
from metrics import services as metrics_services
from metrics.schedules.models import AlertWebhook
from metrics.search.models import SearchEndpoint
from tests import factories

pytestmark = pytest.mark.django_db

Role = Membership.Role
ROLES = ("root", "cora", "jude", "nora")
RUN_TEXT = b"q1 Q0 d1 1 2.0 bm25\n"


@dataclass
class World:
    """Two collections with one object of every collection model each, and the callers."""

    a: Collection
    b: Collection
    users: dict[str, Any]
    #: model -> {"A": obj, "B": obj} for collection models, {"op": obj} for the operator's.
    objects: dict[type[Model], dict[str, Model]]

    def client(self, role: str) -> Client:
        """Return a client signed in as ``role``."""
        client = Client()
        client.force_login(self.users[role])
        return client


def _fill(coll: Collection, coordinator: Any, judge_user: Any, provider: LLMProvider) -> dict:
    """Create one object of every collection model in ``coll``; return them by model."""
    query = factories.query(coll, "q1", text="secret need " + coll.slug)
    document = factories.document(coll, "d1")
    entry = factories.pool_entry(coll, query, document)
    membership = factories.member(coll, coordinator, Role.COORDINATOR)
    factories.member(coll, judge_user, Role.JUDGE)
    judgment = services.judgment_record(
        judge=services.judge_for_user(user=judge_user),
        query=query,
        document=document,
        grade=3,
        note="private note " + coll.slug,
    )
    llm = factories.llm_judge("llm-" + coll.slug)
    llm.llm_provider = provider
    llm.save(update_fields=["llm_provider"])
    llm.collections.add(coll)
    llm_judgment = services.judgment_record(
        judge=llm, query=query, document=document, grade=2, channel="llm"
    )
    job = LLMJob.objects.create(collection=coll, judge=llm)
    chunk = LLMJobChunk.objects.create(job=job, index=0, pairs=[[query.pk, document.pk]])
    failure = LLMFailure.objects.create(job=job, query=query, document=document, reason="x")
    output = LLMOutput.objects.create(judgment=llm_judgment, job=job, native_label="2")
    usage = LLMUsage.objects.create(provider=provider, collection=coll, tokens_used=107)
    team = metrics_services.team_create(collection=coll, name="team-" + coll.slug, members=[])
    run = metrics_services.run_submit(
        collection=coll,
        team=team,
        tag="run-" + coll.slug,
        content=RUN_TEXT,
        filename="r.txt",
        user=None,
    )
    return {
        Collection: coll,
        Membership: membership,
        Query: query,
        type(document): document,
        Judge: llm,
        type(entry): entry,
        type(judgment): judgment,
        type(judgment.events.first()): judgment.events.first(),
        type(coll.live_grades.first()): coll.live_grades.first(),
        LLMJob: job,
        LLMJobChunk: chunk,
        LLMFailure: failure,
        LLMOutput: output,
        LLMUsage: usage,
        type(team): team,
        type(run): run,
    }


@pytest.fixture
def world(db) -> World:
    """Build collections A and B, their objects, the operator's objects and the callers."""
    a = factories.collection("coll-a", name="Alphacoll")
    b = factories.collection("coll-b", name="Betacoll")
    users = {
        "root": factories.user("root", is_staff=True, is_superuser=True),
        "cora": factories.user("cora", is_staff=True),
        "jude": factories.user("jude", is_staff=True),
        "nora": factories.user("nora"),
        "bea": factories.user("bea"),
        "bob": factories.user("bob"),
    }
    every = list(Permission.objects.all())
    for name in ("cora", "jude", "nora"):
        users[name].user_permissions.set(every)
    provider = factories.llm_provider("http://127.0.0.1:9/v1", name="local", open_to=())
    in_a = _fill(a, users["cora"], users["jude"], provider)
    factories.member(a, users["nora"], Role.COORDINATOR)
    in_b = _fill(b, users["bea"], users["bob"], provider)
    objects: dict[type[Model], dict[str, Model]] = {
        model: {"A": obj, "B": in_b[model]} for model, obj in in_a.items()
    }
    group = Group.objects.create(name="operators")
    token = Token.objects.create(user=users["bea"])
    objects[type(users["bea"])] = {"op": users["bea"]}
    objects[Group] = {"op": group}
    objects[TokenProxy] = {"op": TokenProxy.objects.get(pk=token.pk)}
    objects[LLMProvider] = {"op": provider}
    objects[SearchEndpoint] = {
        "op": SearchEndpoint.objects.create(
            name="engine", kind="solr", base_url="http://127.0.0.1:9"
        )
    }
    objects[AlertWebhook] = {
        "op": AlertWebhook.objects.create(
            name="ops", url="http://127.0.0.1:9/hook", secret_env="GRADED_WEBHOOK_SECRET_OPS"
        )
    }
    return World(a, b, users, objects)


def _name(model: type[Model], view: str) -> str:
    return f"admin:{model._meta.app_label}_{model._meta.model_name}_{view}"


def _refused(response: Any) -> bool:
    """Return whether the admin refused: 403, 404, or a redirect to the index or sign-in."""
    if response.status_code in (403, 404):
        return True
    return response.status_code == 302 and response["Location"].startswith("/admin/")


def test_every_registered_admin_is_scoped_and_every_model_has_objects(world):
    registry = admin.site._registry
    assert all(isinstance(model_admin, TenantScopedMixin) for model_admin in registry.values())
    assert set(registry) == set(world.objects), set(registry) ^ set(world.objects)
    for model, objs in world.objects.items():
        assert ("op" in objs) == (collection_path(model) is None), model


@pytest.mark.parametrize("role", ROLES)
def test_admin_pages_show_a_staff_coordinator_only_their_collections(world, role):
    client = world.client(role)
    for model, objs in world.objects.items():
        listing = client.get(reverse(_name(model, "changelist")))
        add = client.get(reverse(_name(model, "add")))
        root_add = world.client("root").get(reverse(_name(model, "add"))).status_code
        if role == "nora":  # not staff: every page sends to the sign-in
            assert listing.status_code == add.status_code == 302, model
            assert listing["Location"].startswith("/admin/login/"), model
        elif role == "jude" or (role == "cora" and "op" in objs):
            assert listing.status_code == add.status_code == 403, (role, model)
        elif role == "cora" and model is Collection:  # new collections: the site's page
            assert (listing.status_code, add.status_code) == (200, 403)
        else:
            assert listing.status_code == 200, (role, model)
            assert add.status_code == root_add, (role, model)
        for where, obj in objs.items():
            visible = role == "root" or (role == "cora" and where == "A")
            change = reverse(_name(model, "change"), args=[obj.pk])
            if listing.status_code == 200:
                assert (change in listing.content.decode()) == visible, (role, model, where)
            for view in ("change", "delete", "history"):
                url = reverse(_name(model, view), args=[obj.pk])
                response = client.get(url)
                if visible:
                    expected = world.client("root").get(url).status_code
                    assert response.status_code == expected, (role, model, where, view)
                    if view != "delete":
                        assert response.status_code == 200, (role, model, where, view)
                else:
                    assert _refused(response), (role, model, where, view, response.status_code)


def _autocomplete_urls() -> list[tuple[type[Model], str, type[Model]]]:
    """Return (source model, field, target model) of every relation to a registered model."""
    registry = admin.site._registry
    found = []
    for model in registry:
        for field in model._meta.get_fields():
            if field.is_relation and field.concrete and field.related_model in registry:
                found.append((model, field.name, field.related_model))
    return found


@pytest.mark.parametrize("role", ROLES)
def test_autocomplete_answers_a_staff_coordinator_with_their_objects_only(world, role):
    client = world.client(role)
    relations = _autocomplete_urls()
    assert len(relations) > 20
    answered = 0
    for source, field, target in relations:
        params = {
            "app_label": source._meta.app_label,
            "model_name": source._meta.model_name,
            "field_name": field,
            "term": "",
        }
        response = client.get("/admin/autocomplete/?" + urlencode(params))
        if role == "nora":
            assert response.status_code == 302, (source, field)
            continue
        if response.status_code != 200:  # no search_fields (404) or no permission (403)
            assert response.status_code in (403, 404), (role, source, field)
            continue
        answered += 1
        ids = {int(item["id"]) for item in response.json()["results"]}
        objs = world.objects[target]
        for where, obj in objs.items():
            visible = role == "root" or (role == "cora" and where == "A")
            assert (obj.pk in ids) == visible or (visible and len(ids) >= 20), (
                role,
                source,
                field,
                where,
            )
    assert (answered > 10) == (role in ("root", "cora")), answered


def test_the_exploit_a_coordinator_cannot_make_themselves_coordinator_elsewhere(world):
    """The issue's recipe: Membership(self, B, coordinator); B's raw labels stay 404."""
    cora = world.client("cora")
    export = reverse("judging:judgment_list_download", args=[world.b.slug])
    raw = {"labels": "raw", "format": "csv"}
    assert cora.get(export, raw).status_code == 404
    response = cora.post(
        reverse(_name(Membership, "add")),
        {"user": world.users["cora"].pk, "collection": world.b.pk, "role": Role.COORDINATOR},
    )
    assert response.status_code == 200  # the form again, with the error
    assert "collection" in response.context["adminform"].form.errors
    assert not Membership.objects.filter(user=world.users["cora"], collection=world.b).exists()
    assert cora.get(export, raw).status_code == 404
    # The same form grants a role in her own collection.
    response = cora.post(
        reverse(_name(Membership, "add")),
        {"user": world.users["bob"].pk, "collection": world.a.pk, "role": Role.JUDGE},
    )
    assert response.status_code == 302
    assert Membership.objects.filter(user=world.users["bob"], collection=world.a).exists()
    # Nor by changing her own membership of A into one of B.
    mine = world.objects[Membership]["A"]
    response = cora.post(
        reverse(_name(Membership, "change"), args=[mine.pk]),
        {"user": world.users["cora"].pk, "collection": world.b.pk, "role": Role.COORDINATOR},
    )
    assert response.status_code == 200
    mine.refresh_from_db()
    assert mine.collection_id == world.a.pk
    assert cora.get(export, raw).status_code == 404


def test_a_coordinator_cannot_move_change_or_delete_another_collections_objects(world):
    cora = world.client("cora")
    query_a, query_b = world.objects[Query]["A"], world.objects[Query]["B"]
    body = {"collection": world.b.pk, "external_id": "q1x", "text": "moved"}
    response = cora.post(reverse(_name(Query, "change"), args=[query_a.pk]), body)
    assert response.status_code == 200
    assert "collection" in response.context["adminform"].form.errors
    body["collection"] = world.a.pk
    response = cora.post(reverse(_name(Query, "change"), args=[query_b.pk]), body)
    assert _refused(response)
    response = cora.post(reverse(_name(Query, "delete"), args=[query_b.pk]), {"post": "yes"})
    assert _refused(response)
    response = cora.post(reverse(_name(Query, "add")), {**body, "collection": world.b.pk})
    assert response.status_code == 200
    query_b.refresh_from_db()
    assert (query_b.text, query_b.collection_id) == ("secret need coll-b", world.b.pk)
    assert not Query.objects.filter(text="moved").exists()
    # An LLM judge of A cannot be given B as well.
    llm = world.objects[Judge]["A"]
    page = cora.get(reverse(_name(Judge, "change"), args=[llm.pk]))
    form = page.context["adminform"].form
    assert list(form.fields["collections"].queryset) == [world.a]
    assert list(form.fields["llm_provider"].queryset) == []  # no provider allows A yet
    # Bulk delete from the list reaches only her rows.
    response = cora.post(
        reverse(_name(Query, "changelist")),
        {"action": "delete_selected", "_selected_action": [query_b.pk], "post": "yes"},
    )
    assert Query.objects.filter(pk=query_b.pk).exists()


def test_list_filters_name_only_the_coordinators_collections(world):
    page = world.client("cora").get(reverse(_name(Query, "changelist"))).content.decode()
    assert "Alphacoll" in page and "Betacoll" not in page
    page = world.client("root").get(reverse(_name(Query, "changelist"))).content.decode()
    assert "Alphacoll" in page and "Betacoll" in page


def test_a_staff_user_with_user_permissions_cannot_make_themselves_superuser(world):
    cora = world.client("cora")
    user = world.users["cora"]
    url = reverse(_name(type(user), "change"), args=[user.pk])
    response = cora.post(
        url, {"username": "cora", "is_staff": "on", "is_superuser": "on", "is_active": "on"}
    )
    assert response.status_code == 403
    user.refresh_from_db()
    assert not user.is_superuser
