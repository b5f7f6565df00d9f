"""The OpenAPI schema documents the metrics API and generates cleanly."""

from __future__ import annotations

import pytest
from django.urls import include, path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

pytestmark = pytest.mark.django_db

PATHS = [
    "/api/v1/collections/{slug}/runs/",
    "/api/v1/collections/{slug}/runs/{id}/",
    "/api/v1/collections/{slug}/runs/{id}/scores/",
    "/api/v1/collections/{slug}/leaderboard/",
    "/api/v1/collections/{slug}/teams/",
]


def test_schema_endpoint_lists_the_metrics_paths(api, world):
    response = api("alice").get("/api/v1/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert set(PATHS) <= set(schema["paths"])
    submit = schema["paths"]["/api/v1/collections/{slug}/runs/"]["post"]
    form = submit["requestBody"]["content"]["multipart/form-data"]["schema"]
    component = schema["components"]["schemas"][form["$ref"].rsplit("/", 1)[-1]]
    assert component["properties"]["file"] == {
        "type": "string",
        "format": "binary",
        "description": component["properties"]["file"]["description"],
    }
    assert set(component["required"]) == {"file", "tag"}
    assert {"201", "400", "401", "403", "404"} <= set(submit["responses"])
    detail = schema["paths"]["/api/v1/collections/{slug}/runs/{id}/"]
    assert set(detail) >= {"get", "patch", "delete"}
    assert "put" not in detail


def test_metrics_api_schema_has_no_warnings_and_validates():
    GENERATOR_STATS.reset()
    generator = SchemaGenerator(patterns=[path("api/v1/", include("metrics.api.urls"))])
    schema = generator.get_schema(request=None, public=True)
    assert not GENERATOR_STATS, (
        dict(GENERATOR_STATS._warn_cache),
        dict(GENERATOR_STATS._error_cache),
    )
    validate_schema(schema)
    assert sorted(schema["paths"]) == sorted(PATHS)


def test_whole_api_schema_has_no_warnings():
    GENERATOR_STATS.reset()
    SchemaGenerator().get_schema(request=None, public=True)
    assert not GENERATOR_STATS, (
        dict(GENERATOR_STATS._warn_cache),
        dict(GENERATOR_STATS._error_cache),
    )
