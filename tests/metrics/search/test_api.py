"""REST of live search: configure, try, run, progress; declared bodies; hostile input 4xx."""

from __future__ import annotations

import pytest

from metrics.models import Run
from metrics.search import presets
from tests import factories
from tests.api_client import client_for
from tests.metrics.search.conftest import endpoint_for

BASE = "/api/v1/collections/search"
CONFIG = {
    "name": "bm25",
    "endpoint": "elasticsearch",
    "path": "/docs/_search",
    "template": {"size": "{{k}}", "query": {"match": {"body": "{{query_text}}"}}},
    "depth": 10,
}


@pytest.fixture
def api(setup, engine):
    coll, team, boss = setup
    endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    return client_for(boss), team


@pytest.mark.django_db
def test_configure_try_run_and_read_progress(api, engine, django_capture_on_commit_callbacks):
    client, team = api
    listed = client.get(f"{BASE}/search-endpoints/")
    assert listed.status_code == 200 and listed.json() == [
        {"name": "elasticsearch", "kind": "elasticsearch"}
    ]
    made = client.post(f"{BASE}/search-configurations/", {**CONFIG, "team": team.pk}, format="json")
    assert made.status_code == 201, made.json()
    config = made.json()
    assert [v["number"] for v in config["versions"]] == [1]
    assert config["versions"][0]["mapping"]["hits"] == "hits.hits"
    tried = client.post(
        f"{BASE}/search-configurations/{config['id']}/tries/", {"query_ids": ["q2"]}, format="json"
    )
    assert tried.status_code == 200
    [one] = tried.json()
    assert one["hits"][0]["docno"] == "d2" and one["request"]["method"] == "POST"
    changed = client.post(
        f"{BASE}/search-configurations/{config['id']}/versions/",
        {**{k: v for k, v in CONFIG.items() if k != "name"}, "depth": 2},
        format="json",
    )
    assert changed.status_code == 201 and changed.json()["number"] == 2
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(
            f"{BASE}/search-snapshots/",
            {"configuration": config["id"], "tag": "es-v2"},
            format="json",
        )
    assert started.status_code == 202, started.json()
    shown = client.get(f"{BASE}/search-snapshots/{started.json()['id']}/").json()
    assert shown["status"] == "done" and shown["version"] == 2
    assert (shown["done"], shown["failed"], shown["failed_queries"]) == (3, 0, [])
    run = Run.objects.get(pk=shown["run"])
    assert run.tag == "es-v2"
    board = client.get(f"{BASE}/runs/")
    assert board.status_code == 200 and "es-v2" in str(board.json())


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"template": "not json"}, "template"),
        ({"template": {"q": "{{password}}"}}, "template"),
        ({"path": "http://169.254.169.254/"}, "path"),
        ({"endpoint": "nope"}, "endpoint"),
        ({"depth": 0}, "depth"),
        ({"mapping": {"hits": "a.["}}, "mapping"),
        ({"name": "x\x00y"}, "name"),
        ({"team": 999999}, "team"),
    ],
)
def test_hostile_or_unknown_configuration_fields_are_400_naming_the_field(api, body, field):
    client, team = api
    response = client.post(
        f"{BASE}/search-configurations/", {**CONFIG, "team": team.pk, **body}, format="json"
    )
    assert response.status_code == 400, response.json()
    assert field in str(response.json())


@pytest.mark.django_db
def test_only_coordinators_and_only_their_collections(api, setup):
    coll = setup[0]
    judge = factories.user("jules")
    factories.member(coll, judge)
    assert client_for(judge).get(f"{BASE}/search-configurations/").status_code == 403
    stranger = factories.user("stranger")
    assert client_for(stranger).get(f"{BASE}/search-configurations/").status_code == 404
    client, _ = api
    assert client.get(f"{BASE}/search-snapshots/424242/").status_code == 404
    assert (
        client.post(f"{BASE}/search-configurations/424242/tries/", {}, format="json").status_code
        == 404
    )
