"""Token authentication and the error body shape."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/"


def test_token_round_trip(world):
    token = Token.objects.create(user=world.users["judy"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    response = client.get(URL)
    assert response.status_code == 200
    assert [c["slug"] for c in response.json()["results"]] == ["demo"]


def test_anonymous_gets_401_with_error_body(world):
    response = APIClient().get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Token")
    assert errors_of(response)[0]["message"]


def test_wrong_token_gets_401(world):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    response = client.get(URL)
    assert response.status_code == 401
    assert errors_of(response) == [{"message": "Invalid token."}]


def test_session_login_also_works(world):
    client = APIClient()
    client.force_login(world.users["cora"])
    assert client.get(URL).status_code == 200


def test_malformed_json_is_a_plain_400(api):
    response = api("judy").post(
        "/api/v1/collections/demo/judgments/", "{oops", content_type="application/json"
    )
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert "JSON parse error" in error["message"] and "field" not in error
