"""The coordinators' search pages: create, change (a version), try, run, snapshot."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client

from judging import services
from judging.models import Document
from metrics.live import store
from metrics.live.scoring import canonical_names
from metrics.search import selectors
from metrics.search.models import SearchConfiguration, SearchSnapshot
from tests import factories
from tests.api_client import client_for
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


def _configure_and_run(client, team, capture, tag: str) -> SearchConfiguration:
    """Create the bm25 configuration through the page and run a snapshot ``tag`` of it."""
    with capture(execute=True):
        client.post("/c/search/search/", {**FORM, "team": team.pk})
        configuration = SearchConfiguration.objects.get(name="bm25")
        client.post(f"/c/search/search/{configuration.pk}/", {"action": "run", "tag": tag})
    return configuration


def _cell(html: str, snapshot_pk: int, field: str) -> str:
    row = re.search(rf'<tr data-snapshot="{snapshot_pk}">(.*?)</tr>', html, re.S).group(1)
    return re.sub(r"<[^>]+>", "", re.search(rf'data-field="{field}">(.*?)</td>', row).group(1))


@pytest.mark.django_db
def test_a_snapshot_shows_its_live_score_with_its_judged_share(
    browser, engine, django_capture_on_commit_callbacks
):
    """Issue 42 item 6: coverage beside the score, so an unjudged snapshot never looks bad."""
    client, team = browser
    _configure_and_run(client, team, django_capture_on_commit_callbacks, "s1")
    snapshot = SearchSnapshot.objects.get(tag="s1")
    coll = snapshot.collection
    listed = client.get("/c/search/search/").content.decode()
    assert '<th scope="col" class="num">nDCG@10</th>' in listed  # the first measure
    # nothing judged yet: no score, and the coverage cell says so
    assert _cell(listed, snapshot.pk, "score").strip() == "—"
    assert "nothing judged yet" in _cell(listed, snapshot.pk, "judged")
    detail = client.get(f"/c/search/search/snapshots/{snapshot.pk}/").content.decode()
    assert "data-thin" in detail and "None of this snapshot" in detail
    # judge the snapshot's first document of each query relevant
    judge = factories.human_judge(factories.user("grader"))
    firsts = {}
    for row in snapshot.run.rankings.select_related("query"):
        document = Document.objects.get(pk=int(row.document_ids[0]))
        firsts[row.query.external_id] = document
    with django_capture_on_commit_callbacks(execute=True):
        for external_id, document in firsts.items():
            services.judgment_record(
                judge=judge, query=coll.queries.get(external_id=external_id), document=document,
                grade=3,
            )  # fmt: skip
    board = store.board_read(coll.pk).means()[snapshot.run_id]
    ndcg, judged = (board[name] for name in canonical_names(["nDCG@10", "Judged@10"]))
    assert ndcg is not None and 0 < judged < 1
    listed = client.get("/c/search/search/").content.decode()
    assert _cell(listed, snapshot.pk, "score").strip() == f"{ndcg:.4f}"
    assert _cell(listed, snapshot.pk, "judged").startswith(f"{round(judged * 100)}%")
    assert ("low coverage" in _cell(listed, snapshot.pk, "judged")) == (
        judged < coll.coverage_threshold
    )
    detail = client.get(f"/c/search/search/snapshots/{snapshot.pk}/").content.decode()
    assert f"{ndcg:.4f}" in detail and f"{round(judged * 100)}%" in detail
    # and the same numbers over REST, in the list and the detail
    api = client_for(coll.memberships.get(role="coordinator").user)
    base = f"/api/v1/collections/{coll.slug}/search-snapshots/"
    listed = {row["id"]: row for row in api.get(base).json()}
    for live in (listed[snapshot.pk]["live"], api.get(f"{base}{snapshot.pk}/").json()["live"]):
        assert (live["measure"], live["coverage"]) == ("nDCG@10", "Judged@10")
        assert (live["score"], live["judged"]) == (ndcg, judged)
        assert live["thin"] == (judged < coll.coverage_threshold) and live["stale"] is False


@pytest.mark.django_db
def test_the_measure_over_several_snapshots_is_charted_from_the_live_scores(
    browser, engine, django_capture_on_commit_callbacks
):
    """Issue 42 item 4: each configuration's score per snapshot, oldest first, as a chart."""
    client, team = browser
    configuration = _configure_and_run(client, team, django_capture_on_commit_callbacks, "deep")
    url = f"/c/search/search/{configuration.pk}/"
    coll = configuration.collection
    judge = factories.human_judge(factories.user("grader"))
    with django_capture_on_commit_callbacks(execute=True):  # grade everything retrieved
        for row in SearchSnapshot.objects.get(tag="deep").run.rankings.select_related("query"):
            for pk in row.document_ids:
                services.judgment_record(
                    judge=judge, query=row.query, document=Document.objects.get(pk=int(pk)),
                    grade=int(pk) % 4,
                )  # fmt: skip
    page = client.get("/c/search/search/").content.decode()
    assert "data-snapshot-trend" not in page  # one scored snapshot: nothing to chart yet
    with django_capture_on_commit_callbacks(execute=True):  # a second, shallower version
        client.post(url, {**FORM, "action": "save", "depth": "1"})
        client.post(url, {"action": "run", "tag": "shallow"})
    snapshots = list(SearchSnapshot.objects.filter(tag__in=["deep", "shallow"]))
    scores = selectors.snapshot_scores(collection=coll, snapshots=snapshots)
    means = store.board_read(coll.pk).means()
    (ndcg,) = canonical_names(["nDCG@10"])
    by_tag = {s.tag: means[s.run_id][ndcg] for s in snapshots}
    assert by_tag["deep"] != by_tag["shallow"]
    series = selectors.score_series(snapshots=snapshots, scores=scores)
    assert series == [("bm25", [(1.0, by_tag["deep"]), (2.0, by_tag["shallow"])])]
    page = client.get("/c/search/search/").content.decode()
    assert "data-snapshot-trend" in page and "nDCG@10 per snapshot, per configuration" in page
    assert page.count("<polyline") == 2  # one line, drawn for a desk and for a phone
