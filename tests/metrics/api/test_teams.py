"""Listing and creating teams."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging.models import Membership
from metrics.models import Team
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db


def url(world) -> str:
    return reverse("metrics-api:team-list", args=[world.coll.slug])


def test_coordinators_see_every_team(world, api):
    body = api("cora").get(url(world)).json()
    assert [(t["name"], t["members"]) for t in body] == [
        ("Alpha", ["alice", "amy"]),
        ("Beta", ["bob"]),
    ]
    assert {"id", "created_at"} <= set(body[0])


def test_members_see_their_own_teams(world, api):
    body = api("bob").get(url(world)).json()
    assert [t["name"] for t in body] == ["Beta"]


def test_coordinator_creates_a_team(world, api):
    response = api("cora").post(
        url(world), {"name": "Gamma", "members": ["tess", "bob"]}, format="json"
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["name"] == "Gamma"
    assert sorted(body["members"]) == ["bob", "tess"]
    team = Team.objects.get(pk=body["id"])
    assert team.collection == world.coll
    assert Membership.objects.filter(
        collection=world.coll, user=world.users["tess"], role=Membership.Role.TEAM
    ).exists()


def test_team_names_are_unique(world, api):
    response = api("cora").post(url(world), {"name": "Alpha"}, format="json")
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "name"


def test_unknown_members_are_refused(world, api):
    response = api("cora").post(
        url(world), {"name": "Gamma", "members": ["alice", "nobody"]}, format="json"
    )
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["field"] == "members"
    assert "nobody" in error["message"]
    assert not Team.objects.filter(name="Gamma").exists()


@pytest.mark.parametrize("name", ["alice", "judy"])
def test_only_coordinators_create_teams(world, api, name):
    response = api(name).post(url(world), {"name": "Mine"}, format="json")
    assert response.status_code == 403
    errors_of(response)
    assert not Team.objects.filter(name="Mine").exists()
