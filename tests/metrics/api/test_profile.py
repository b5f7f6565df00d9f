"""The profile page: create an API token, see its key once, regenerate and revoke it."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from config.profile import token_create, token_revoke
from tests import factories

pytestmark = pytest.mark.django_db
PROFILE = "/accounts/profile/"


@pytest.fixture
def member(world):
    """Return alice, logged in to a browser client."""
    client = Client()
    client.force_login(world.users["alice"])
    return world.users["alice"], client


def api_status(world, key: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client.get(reverse("metrics-api:run-list", args=[world.coll.slug])).status_code


def test_route_and_nav_link(member):
    _, client = member
    assert reverse("profile") == PROFILE
    page = client.get(reverse("judging:home")).content.decode()
    assert f'href="{PROFILE}"' in page


def test_anonymous_is_sent_to_log_in(db):
    response = Client().get(PROFILE)
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_no_token_yet(member):
    _, client = member
    response = client.get(PROFILE)
    assert response.status_code == 200
    assert 'id="no-token"' in response.content.decode()
    assert "no-store" in response["Cache-Control"]


def test_create_shows_the_key_once_then_only_its_prefix(world, member):
    user, client = member
    response = client.post(PROFILE, {"action": "create"})
    assert response.status_code == 303
    assert response["Location"] == PROFILE
    token = Token.objects.get(user=user)
    first = client.get(PROFILE).content.decode()
    assert token.key in first
    assert 'id="new-token-key"' in first
    again = client.get(PROFILE).content.decode()
    assert token.key not in again
    assert f"{token.key[:6]}…" in again
    assert api_status(world, token.key) == 200


def test_regenerate_replaces_the_key(world, member):
    user, client = member
    client.post(PROFILE, {"action": "create"})
    old = Token.objects.get(user=user).key
    client.post(PROFILE, {"action": "create"})
    new = Token.objects.get(user=user).key
    assert new != old
    assert new in client.get(PROFILE).content.decode()
    assert api_status(world, old) == 401
    assert api_status(world, new) == 200


def test_revoke_makes_the_token_fail_with_401(world, member):
    user, client = member
    client.post(PROFILE, {"action": "create"})
    key = Token.objects.get(user=user).key
    assert api_status(world, key) == 200
    response = client.post(PROFILE, {"action": "revoke"}, follow=True)
    assert response.status_code == 200
    assert not Token.objects.filter(user=user).exists()
    assert 'id="no-token"' in response.content.decode()
    assert key not in response.content.decode()
    assert api_status(world, key) == 401


def test_forms_need_the_csrf_token(world):
    user = world.users["alice"]
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    assert client.post(PROFILE, {"action": "create"}).status_code == 403
    assert not Token.objects.filter(user=user).exists()
    page = client.get(PROFILE).content.decode()
    assert 'name="csrfmiddlewaretoken"' in page
    token_create(user=user)
    assert client.post(PROFILE, {"action": "revoke"}).status_code == 403
    assert Token.objects.filter(user=user).exists()


def test_unknown_action_changes_nothing(member):
    user, client = member
    response = client.post(PROFILE, {"action": "steal"})
    assert response.status_code == 303
    assert not Token.objects.filter(user=user).exists()


def test_only_get_and_post(member):
    _, client = member
    assert client.put(PROFILE).status_code == 405


def test_services(db):
    user = factories.user()
    first = token_create(user=user)
    second = token_create(user=user)
    assert first.key != second.key
    assert list(Token.objects.filter(user=user)) == [second]
    token_revoke(user=user)
    token_revoke(user=user)  # idempotent
    assert not Token.objects.filter(user=user).exists()
