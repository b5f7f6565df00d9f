"""The OpenAPI schema documents the metrics API and generates cleanly."""

from __future__ import annotations

import pytest

from tests.api_client import clean_schema

pytestmark = pytest.mark.django_db

PATHS = [
    "/api/v1/collections/{slug}/answer-runs/",
    "/api/v1/collections/{slug}/answer-runs/{id}/",
    "/api/v1/collections/{slug}/runs/",
    "/api/v1/collections/{slug}/runs/{id}/",
    "/api/v1/collections/{slug}/runs/{id}/scores/",
    "/api/v1/collections/{slug}/runs/{id}/queries/{qid}/",
    "/api/v1/collections/{slug}/compare/",
    "/api/v1/collections/{slug}/compare/pairs/",
    "/api/v1/collections/{slug}/leaderboard/",
    "/api/v1/collections/{slug}/difficulty/",
    "/api/v1/collections/{slug}/teams/",
    "/api/v1/collections/{slug}/teams/{id}/",
    "/api/v1/collections/{slug}/settings/",
    "/api/v1/collections/{slug}/agreement/llm/",
    "/api/v1/collections/{slug}/pooling/",
    "/api/v1/collections/{slug}/pooling/plan/",
    "/api/v1/collections/{slug}/pooling/stability/",
    "/api/v1/collections/{slug}/score-visibility/",
    "/api/v1/collections/{slug}/search-configurations/",
    "/api/v1/collections/{slug}/search-configurations/{id}/",
    "/api/v1/collections/{slug}/search-configurations/{id}/tries/",
    "/api/v1/collections/{slug}/search-configurations/{id}/versions/",
    "/api/v1/collections/{slug}/search-endpoints/",
    "/api/v1/collections/{slug}/search-snapshots/",
    "/api/v1/collections/{slug}/search-snapshots/{id}/",
    "/api/v1/collections/{slug}/search-diffs/",
    "/api/v1/collections/{slug}/search-configurations/{id}/schedule/",
    "/api/v1/collections/{slug}/search-checks/",
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
    assert {"201", "400", "401", "403", "404", "429"} <= set(submit["responses"])
    detail = schema["paths"]["/api/v1/collections/{slug}/runs/{id}/"]
    assert set(detail) >= {"get", "patch", "delete"}
    assert "put" not in detail


def test_metrics_api_schema_has_no_warnings_and_validates():
    schema = clean_schema("metrics.api.urls")
    assert sorted(schema["paths"]) == sorted(PATHS)


def test_whole_api_schema_has_no_warnings():
    assert clean_schema()["paths"]
