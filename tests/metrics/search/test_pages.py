"""The coordinators' search pages: create, change (a version), try, run, snapshot."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from metrics.search.models import SearchConfiguration, SearchSnapshot
from tests import factories
from tests.metrics.search.conftest import endpoint_for


@pytest.fixture
def browser(setup, engine, monkeypatch):
    coll, team, boss = setup
    monkeypatch.setenv("GRADED_SEARCH_KEY_PAGE", "page-secret-42")
    endpoint_for(
        engine.url,
        "elasticsearch",
        collection=coll,
        auth="bearer",
        credential_env="GRADED_SEARCH_KEY_PAGE",
    )
    client = Client()
    client.force_login(boss)
    return client, team


FORM = {
    "name": "bm25",
    "endpoint": "elasticsearch",
    "path": "/docs/_search",
    "method": "POST",
    "template": json.dumps({"size": "{{k}}", "query": {"match": {"body": "{{query_text}}"}}}),
    "depth": "10",
    "mapping": "",
}


@pytest.mark.django_db
def test_configure_try_and_run_through_the_pages(
    browser, engine, django_capture_on_commit_callbacks
):
    client, team = browser
    page = client.get("/c/search/search/")
    assert page.status_code == 200 and b"New configuration" in page.content
    bad = client.post("/c/search/search/", {**FORM, "team": team.pk, "template": "{nope"})
    assert bad.status_code == 400 and b"Not JSON" in bad.content
    made = client.post("/c/search/search/", {**FORM, "team": team.pk})
    assert made.status_code == 302
    configuration = SearchConfiguration.objects.get(name="bm25")
    url = f"/c/search/search/{configuration.pk}/"
    tried = client.post(url, {"action": "try"})
    assert tried.status_code == 200
    text = tried.content.decode()
    assert "Request sent (credential masked)" in text and "page-secret-42" not in text
    assert text.count('class="panel try-result"') == 3 and "Wind power" in text
    saved = client.post(url, {**FORM, "action": "save", "depth": "2"})
    assert saved.status_code == 302 and configuration.versions.count() == 2
    with django_capture_on_commit_callbacks(execute=True):
        ran = client.post(url, {"action": "run", "tag": "from-page"})
    assert ran.status_code == 302
    snapshot = SearchSnapshot.objects.get(tag="from-page")
    shown = client.get(ran["Location"]).content.decode()
    assert snapshot.status == "done" and "from-page" in shown and "3 of 3" in shown
    assert snapshot.version.number == 2


@pytest.mark.django_db
def test_judges_cannot_open_the_search_pages(setup):
    coll = setup[0]
    judge = factories.user("jo")
    factories.member(coll, judge)
    client = Client()
    client.force_login(judge)
    assert client.get("/c/search/search/").status_code in (403, 404)
