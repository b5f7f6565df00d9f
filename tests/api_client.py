"""Helpers shared by the API tests: token-authenticated clients and the error body shape."""

from __future__ import annotations

from typing import Any

from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient


def client_for(user: Any | None) -> APIClient:
    """Return an API client authenticated with ``user``'s token (anonymous for None)."""
    client = APIClient()
    if user is not None:
        token, _ = Token.objects.get_or_create(user=user)
        client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return client


def errors_of(response) -> list[dict[str, Any]]:
    """Return the error items of a response, checking the project's error shape."""
    body = response.json()
    assert set(body) == {"errors"}, body
    assert body["errors"], body
    for item in body["errors"]:
        assert isinstance(item["message"], str) and item["message"]
        assert set(item) <= {
            "message",
            "field",
            "line",
            "item",
            "part",
            "file",
            "known",
            "code",
            "quota",
        }, item
        if "known" in item:
            assert isinstance(item["known"], list) and "field" in item, item
        for unit in ("line", "item"):
            if unit in item:
                assert isinstance(item[unit], int), item
        if "part" in item:
            assert item["part"] in {"topics", "documents", "pairs", "judgments"}, item
    return body["errors"]


def clean_schema(urls_module: str | None = None) -> dict[str, Any]:
    """Generate the OpenAPI schema (of one API's URLs, or all), asserting it is warning-free.

    Fails on any drf-spectacular warning or error, and on a schema that does not validate
    against the OpenAPI specification.
    """
    from django.urls import include, path
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.validation import validate_schema

    GENERATOR_STATS.reset()
    patterns = None if urls_module is None else [path("api/v1/", include(urls_module))]
    schema = SchemaGenerator(patterns=patterns).get_schema(request=None, public=True)
    assert not GENERATOR_STATS, (
        dict(GENERATOR_STATS._warn_cache),
        dict(GENERATOR_STATS._error_cache),
    )
    validate_schema(schema)
    return schema
