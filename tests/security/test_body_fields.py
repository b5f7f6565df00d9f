"""Unknown request-body fields are a 400 naming them, on every write of the API (issue 45).

The fuzz walks every POST, PUT and PATCH route of the URL conf (the route matrix's
:data:`~tests.security.test_route_matrix.BODIES`, which must name a body for every write,
so a new endpoint is covered without editing this file) and sends its valid body with one
field more: the answer must be a 400 whose error names that field and lists the fields
the operation's schema declares, and nothing may be written. The schema walk checks that
every write operation of the OpenAPI schema declares its body's fields (no free-form
object), so the check has something to compare with.
"""

from __future__ import annotations

import random
import string

import pytest
from django.apps import apps
from django.urls import resolve

from config import body_fields, declared
from config.api import CheckedBodyMixin
from judging.models import Judgment
from tests.api_client import errors_of
from tests.security.conftest import Arena
from tests.security.test_route_matrix import BODIES, MATRIX, api_routes, url_for

pytestmark = pytest.mark.django_db

WRITES = sorted(key for key in MATRIX if key[0] in body_fields.WRITE_METHODS)
#: The JSON batches posted as an array; with a field more they are sent as ``{key: [...]}``.
ARRAY_KEYS = {"queries/": "queries", "documents/": "documents"}


def _unknown_name(rng: random.Random) -> str:
    return "zz_" + "".join(rng.choice(string.ascii_lowercase) for _ in range(8))


def _with_field(route: str, body, name: str):
    """Return ``body`` with one top-level field ``name`` more."""
    if body is None:
        return {name: "1"}
    if isinstance(body, list):
        key = next(k for suffix, k in ARRAY_KEYS.items() if route.endswith(suffix))
        return {key: body, name: "1"}
    return {**body, name: "1"}


def _row_counts() -> dict[str, int]:
    """Return the number of rows of every model of the two apps."""
    return {
        model._meta.label: model.objects.count()
        for app in ("judging", "metrics")
        for model in apps.get_app_config(app).get_models()
    }


def _resolved(route: str):
    """Return the URL conf's match of a route (its parameters filled with dummies)."""
    path = "/api/v1/" + route.replace("<slug:slug>", "x")
    for part in ("<int:pk>", "<int:judge_id>", "<str:qid>"):
        path = path.replace(part, "1")
    return resolve(path)


def _declared_fields(method: str, route: str, fmt: str) -> frozenset[str]:
    """Return the writable body fields the schema declares for the route, in format ``fmt``."""
    match = _resolved(route)
    by_type = declared.declared().bodies[(declared.shape(match.route), method)]
    media = "multipart/form-data" if fmt == "multipart" else "application/json"
    if not by_type:
        return frozenset()
    return by_type[media].writable


@pytest.mark.parametrize(("method", "route"), WRITES, ids=[f"{m} {r}" for m, r in WRITES])
def test_an_unknown_body_field_is_a_400_naming_it(arena: Arena, method, route):
    name = _unknown_name(random.Random(route + method))
    body, fmt = BODIES[(method, route)](arena)
    url = url_for(route, arena, method)  # may make objects (an adjudication, a gold pair)
    before = _row_counts()
    response = getattr(arena.client("cora"), method.lower())(
        url, _with_field(route, body, name), format=fmt
    )
    assert response.status_code == 400, (method, route, response.content[:500])
    (error,) = errors_of(response)
    assert error["field"] == name
    assert name in error["message"] and "request body" in error["message"]
    assert set(error["known"]) == _declared_fields(method, route, fmt)
    for known in error["known"]:
        assert known in error["message"]
    assert _row_counts() == before, f"{method} {route} wrote with an unknown field"


@pytest.mark.parametrize(("method", "route"), WRITES, ids=[f"{m} {r}" for m, r in WRITES])
def test_the_valid_body_still_passes_the_check(arena: Arena, method, route):
    """The bodies of the route matrix, as they are, are not refused for their fields."""
    body, fmt = BODIES[(method, route)](arena)
    response = getattr(arena.client("cora"), method.lower())(
        url_for(route, arena, method), body, format=fmt
    )
    if response.status_code == 400:
        for item in errors_of(response):
            assert "known" not in item and "request body" not in item["message"], item


def test_every_write_of_the_schema_declares_its_body_fields(arena: Arena):
    """No write operation leaves its top level open (then nothing could be refused)."""
    bodies = declared.declared().bodies
    open_ones = sorted(
        f"{method} {path} {media}"
        for (path, method), by_type in bodies.items()
        if method in body_fields.WRITE_METHODS
        for media, fields in by_type.items()
        if fields is declared.OPEN
    )
    assert not open_ones, open_ones
    schema_writes = {key for key in bodies if key[1] in body_fields.WRITE_METHODS}
    routed = set()
    for method, route in WRITES:
        match = _resolved(route)
        routed.add((declared.shape(match.route), method))
    assert schema_writes == routed


def test_every_writing_view_checks_its_body():
    """Every API view that handles POST, PUT or PATCH runs the check (the mixin)."""
    unchecked = set()
    for method, route in api_routes():
        if method not in body_fields.WRITE_METHODS:
            continue
        view = _resolved(route).func.cls
        if not issubclass(view, CheckedBodyMixin):
            unchecked.add(view.__name__)
    assert not unchecked, sorted(unchecked)


def test_several_unknown_fields_are_each_named(arena: Arena):
    url = url_for("collections/<slug:slug>/judgments/<int:pk>/", arena)
    response = arena.client("judy").patch(
        url, {"grdae": 0, "grade": 0, "colour": "red"}, format="json"
    )
    assert response.status_code == 400
    errors = errors_of(response)
    assert [e["field"] for e in errors] == ["colour", "grdae"]
    assert "grade" in errors[0]["known"] and "colour" not in errors[0]["known"]
    arena.judgment.refresh_from_db()
    assert arena.judgment.grade == 3  # unchanged: nothing written


@pytest.mark.parametrize("fmt", ["json", "multipart"])
def test_form_and_json_bodies_are_checked_alike(arena: Arena, fmt):
    url = url_for("collections/<slug:slug>/judgments/<int:pk>/", arena)
    response = arena.client("judy").patch(url, {"grade": "0", "typo": "x"}, format=fmt)
    assert response.status_code == 400
    assert [e["field"] for e in errors_of(response)] == ["typo"]


def test_a_form_csrf_token_is_not_a_field(arena: Arena):
    url = url_for("collections/<slug:slug>/judgments/<int:pk>/", arena)
    response = arena.client("judy").patch(
        url, {"grade": "0", "csrfmiddlewaretoken": "x"}, format="multipart"
    )
    assert response.status_code == 200, response.content


def test_read_only_fields_are_ignored_so_a_read_resource_can_be_sent_back(arena: Arena):
    url = url_for("collections/<slug:slug>/judgments/<int:pk>/", arena)
    client = arena.client("judy")
    read = client.get(url).json()
    response = client.patch(url, {**read, "grade": 1, "id": 999_999}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["id"] == arena.judgment.pk
    assert Judgment.objects.get(pk=arena.judgment.pk).grade == 1
    assert not Judgment.objects.filter(pk=999_999).exists()


def test_an_unknown_field_comes_after_the_role_check(arena: Arena):
    """A caller who may not write learns that first (403/404), not which fields exist."""
    url = url_for("collections/<slug:slug>/aggregation/", arena)
    assert arena.client("judy").patch(url, {"zz": 1}, format="json").status_code == 403
    assert arena.client("nina").patch(url, {"zz": 1}, format="json").status_code == 404
    assert arena.client("anonymous").patch(url, {"zz": 1}, format="json").status_code == 401


def test_a_405_stays_a_405(arena: Arena):
    url = url_for("collections/<slug:slug>/aggregation/", arena)
    assert arena.client("cora").put(url, {"zz": 1}, format="json").status_code == 405
