"""Configurations against each engine's real formats: *Try it*, snapshots that are runs."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from judging.models import Document
from metrics.models import Run, RunQuery
from metrics.search import client, presets, runner, services
from metrics.search.models import SearchSnapshot, SnapshotQuery
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.fake_engine import FakeEngine

FAST = client.Retries(max_attempts=3, backoff_base=0.01, backoff_cap=0.02)

REQUESTS = {
    presets.ELASTICSEARCH: ("/docs/_search", None),
    presets.OPENSEARCH: ("/docs/_search", None),
    presets.SOLR: ("/solr/docs/select", None),
    presets.VESPA: ("/search/", None),
    presets.GENERIC: (
        "/api/find",
        {"hits": "data.items", "id": "doc.key", "score": "rel", "title": "name", "url": "link"},
    ),
}


def configure(coll, team, boss, endpoint, *, path=None, template=None, mapping=None, depth=10):
    kind = endpoint.kind
    default_path, default_mapping = REQUESTS[kind]
    method, _, default_template = presets.DEFAULT_REQUESTS[kind]
    return services.configuration_create(
        collection=coll,
        name=f"{kind}-config",
        team=team,
        fields=services.VersionFields(
            endpoint=endpoint,
            path=path or default_path,
            template=template if template is not None else default_template,
            depth=depth,
            method=method,
            mapping=mapping if mapping is not None else default_mapping,
        ),
        user=boss,
    )


def snapshot(configuration, boss, **kwargs):
    snap = services.snapshot_start(configuration=configuration, user=boss, **kwargs)
    return runner.work(SearchSnapshot.objects.get(pk=snap.pk), retries=FAST)


@pytest.mark.django_db(transaction=False)
@pytest.mark.parametrize("kind", presets.KINDS)
def test_each_engine_is_tried_then_snapshotted_into_a_scored_run(kind, engine, setup):
    coll, team, boss = setup
    endpoint = endpoint_for(engine.url, kind, collection=coll)
    configuration = configure(coll, team, boss, endpoint)
    version = configuration.current
    assert version.number == 1
    tried = services.try_configuration(
        version=version, queries=list(coll.queries.order_by("external_id")), user=boss
    )
    assert [t["query_id"] for t in tried] == ["q1", "q2", "q3"]
    first = tried[0]
    assert first["errors"] == [] and first["hits"][0]["docno"] in ("d1", "d4")
    assert json.loads(first["raw"])  # the raw answer as the engine sent it
    assert first["request"]["url"].startswith(engine.url)
    if kind == presets.SOLR:
        # The queries go out concurrently, so the engine sees them in any order.
        assert {r["method"] for r in engine.requests} == {"GET"}
        assert sorted(r["query"]["q"][0] for r in engine.requests) == sorted(
            coll.queries.values_list("text", flat=True)
        )
    else:
        assert {r["method"] for r in engine.requests} == {"POST"}
    engine.requests.clear()

    snap = snapshot(configuration, boss)
    assert snap.status == SearchSnapshot.Status.DONE, snap.error
    assert (snap.done, snap.failed, snap.total) == (3, 0, 3)
    run = Run.objects.get(pk=snap.run_id)
    assert run.team == team and run.tag == snap.tag
    assert run.query_count == 3 and len(engine.requests) == 3
    assert RunQuery.objects.filter(run=run).count() == 3
    # Documents the collection lacked came from the mapped fields; d1 kept its import.
    d1 = Document.objects.get(collection=coll, external_id="d1")
    assert (d1.title, d1.body) == ("Imported title", "Imported body")
    d2 = Document.objects.get(collection=coll, external_id="d2")
    assert d2.title == "Wind power" and d2.has_content
    if kind == presets.GENERIC:
        assert d2.url == "https://x.example/d2"
    # The raw answers are kept, compressed, and can be read back.
    row = SnapshotQuery.objects.get(snapshot=snap, query__external_id="q2")
    assert json.loads(services.raw_text(row)) and row.hits[0]["docno"] == "d2"


@pytest.mark.django_db
def test_every_change_is_a_new_version_and_a_snapshot_names_its_version(engine, setup):
    coll, team, boss = setup
    endpoint = endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    configuration = configure(coll, team, boss, endpoint)
    first = snapshot(configuration, boss, tag="first")
    services.configuration_change(
        configuration=configuration,
        fields=services.VersionFields(
            endpoint=endpoint,
            path="/docs/_search",
            template={"size": "{{k}}", "query": {"match": {"title": "{{query_text}}"}}},
            depth=1,
        ),
        user=boss,
    )
    engine.requests.clear()
    second = snapshot(configuration, boss, tag="second")
    assert (first.version.number, second.version.number) == (1, 2)
    assert configuration.versions.count() == 2
    assert max(RunQuery.objects.filter(run=second.run).values_list("retrieved", flat=True)) == 1
    # Version 2's template went out for every query (concurrently, so in any order).
    assert sorted(r["body"]["query"]["match"]["title"] for r in engine.requests) == [
        "coal smoke",
        "solar power",
        "wind",
    ]


@pytest.mark.django_db
def test_a_hostile_query_text_reaches_the_engine_as_one_string(engine, setup):
    coll, team, boss = setup
    hostile = 'x" } }, "size": 10000, "q": {"a": "\\\\'
    coll.queries.filter(external_id="q1").update(text=hostile)
    endpoint = endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    configuration = configure(coll, team, boss, endpoint, depth=5)
    services.try_configuration(
        version=configuration.current, queries=[coll.queries.get(external_id="q1")], user=boss
    )
    [sent] = engine.requests
    assert sent["body"] == {"size": 5, "query": {"match": {"body": hostile}}}


@pytest.mark.django_db
def test_the_credential_is_sent_only_in_its_header_and_shown_masked(engine, setup, monkeypatch):
    coll, team, boss = setup
    monkeypatch.setenv("GRADED_SEARCH_KEY_ES", "sekrit-api-key-123")
    endpoint = endpoint_for(
        engine.url,
        presets.ELASTICSEARCH,
        collection=coll,
        auth="api_key",
        credential_env="GRADED_SEARCH_KEY_ES",
    )
    configuration = configure(coll, team, boss, endpoint)
    [tried] = services.try_configuration(
        version=configuration.current, queries=[coll.queries.first()], user=boss
    )
    assert engine.requests[0]["headers"]["Authorization"] == "ApiKey sekrit-api-key-123"
    assert "sekrit" not in json.dumps(tried)
    assert tried["request"]["headers"]["Authorization"] == client.MASK
    monkeypatch.delenv("GRADED_SEARCH_KEY_ES")
    with pytest.raises(ValidationError, match="GRADED_SEARCH_KEY_ES"):
        services.snapshot_start(configuration=configuration, user=boss)


@pytest.mark.django_db
def test_an_endpoint_open_to_no_collection_is_for_superusers_only(engine, setup):
    coll, team, boss = setup
    endpoint = endpoint_for(engine.url, presets.SOLR)
    with pytest.raises(ValidationError) as caught:
        configure(coll, team, boss, endpoint)
    assert "endpoint" in caught.value.message_dict


def _faulty(fault):
    return FakeEngine(fault)


@pytest.mark.django_db
def test_429_with_retry_after_and_5xx_are_retried_then_answered(setup):
    coll, team, boss = setup
    seen = []

    def fault(request, n):
        seen.append(n)
        if n == 0:
            return (429, "slow down", {"Retry-After": "0"})
        if n == 1:
            return (503, "busy", {})
        return None

    server = _faulty(fault)
    try:
        endpoint = endpoint_for(server.url, presets.ELASTICSEARCH, collection=coll, concurrency=1)
        snap = snapshot(configure(coll, team, boss, endpoint), boss)
        assert snap.status == "done" and snap.failed == 0
        assert len(server.requests) == 5  # two retries, then three answers
        assert max(snap.queries.values_list("attempts", flat=True)) == 3
    finally:
        server.close()


@pytest.mark.django_db
def test_failed_queries_are_listed_and_the_run_says_so(setup):
    coll, team, boss = setup

    def fault(request, n):
        body = request["body"]["query"]["match"]["body"]
        if body == "wind":
            return (500, "internal error " * 1000, {})
        if body == "coal smoke":
            return (200, "{not json", {})
        return None

    server = _faulty(fault)
    try:
        endpoint = endpoint_for(server.url, presets.ELASTICSEARCH, collection=coll)
        snap = snapshot(configure(coll, team, boss, endpoint), boss)
        assert snap.status == "done" and (snap.done, snap.failed) == (1, 2)
        failed = {r.query.external_id: r for r in snap.queries.filter(status="failed")}
        assert set(failed) == {"q2", "q3"}
        assert "HTTP 500" in failed["q2"].error and failed["q2"].retryable
        assert len(failed["q2"].error) < 200 and len(services.raw_text(failed["q2"])) <= 200
        assert "not JSON" in failed["q3"].error and not failed["q3"].retryable
        assert "2 of 3 queries failed" in snap.run.description
        assert snap.run.query_count == 1
        # Where it is scored, the leaderboard says so.
        page = Client()
        page.force_login(boss)
        board = page.get(f"/c/{coll.slug}/leaderboard/").content.decode()
        assert "data-snapshot-failed>2 queries failed" in board
    finally:
        server.close()


@pytest.mark.django_db
def test_timeouts_huge_answers_and_missing_fields(setup, monkeypatch):
    coll, team, boss = setup
    huge = json.dumps({"hits": {"hits": [{"_id": "d1", "_score": 1, "pad": "x" * 200_000}]}})

    def fault(request, n):
        text = request["body"]["query"]["match"]["body"]
        if text == "wind":
            return "sleep"
        if text == "coal smoke":
            return (200, huge, {})
        return (200, json.dumps({"hits": {"hits": [{"_score": 1}, {"_id": "d5"}]}}), {})

    server = _faulty(fault)
    monkeypatch.setattr(client, "DEFAULT_MAX_BYTES", 100_000)
    monkeypatch.setattr(
        client.send, "__kwdefaults__", {**client.send.__kwdefaults__, "max_bytes": 100_000}
    )
    try:
        endpoint = endpoint_for(
            server.url, presets.ELASTICSEARCH, collection=coll, timeout_seconds=0.3
        )
        snap = snapshot(configure(coll, team, boss, endpoint), boss)
        rows = {r.query.external_id: r for r in snap.queries.select_related("query")}
        assert "Timed out" in rows["q2"].error and rows["q2"].retryable
        assert "over 100,000 bytes" in rows["q3"].error
        assert rows["q1"].status == "done" and rows["q1"].errors == ["hits.hits[0]._id: missing"]
        assert [h["docno"] for h in rows["q1"].hits] == ["d5"]
    finally:
        server.close()


@pytest.mark.django_db
def test_a_redirect_to_loopback_is_not_followed_and_fails_fast(setup):
    coll, team, boss = setup
    target = FakeEngine()
    server = _faulty(lambda request, n: (302, "", {"Location": f"{target.url}/docs/_search"}))
    try:
        endpoint = endpoint_for(server.url, presets.ELASTICSEARCH, collection=coll, concurrency=1)
        coll.queries.create(external_id="q4", text="more")
        coll.queries.create(external_id="q5", text="even more")
        snap = snapshot(configure(coll, team, boss, endpoint), boss)
        assert snap.status == "failed" and snap.run is None
        assert "Stopped after 3" in snap.error and "redirects are not followed" in snap.error
        assert target.requests == []
        assert snap.queries.filter(status="pending").count() == 2  # never sent
    finally:
        server.close()
        target.close()


@pytest.mark.django_db
def test_a_killed_worker_resumes_with_the_pending_queries_only(engine, setup):
    coll, team, boss = setup
    endpoint = endpoint_for(engine.url, presets.SOLR, collection=coll)
    configuration = configure(coll, team, boss, endpoint)
    snap = services.snapshot_start(configuration=configuration, user=boss)
    # A worker answered q1 and died: its row is recorded, the snapshot is still running.
    SearchSnapshot.objects.filter(pk=snap.pk).update(status="running")
    row = snap.queries.get(query__external_id="q1")
    services.snapshot_query_record(
        row=row,
        result=client.Answer(
            data={"response": {"docs": [{"id": "d1", "score": 1}]}},
            raw="{}",
            status=200,
            latency_ms=1,
            attempts=1,
        ),
        version=configuration.current,
    )
    done = runner.work(SearchSnapshot.objects.get(pk=snap.pk), retries=FAST)
    assert done.status == "done" and done.done == 3
    assert sorted(r["query"]["q"][0] for r in engine.requests) == ["coal smoke", "wind"]


@pytest.mark.django_db
def test_concurrency_limit_is_honoured(setup):
    coll, team, boss = setup
    for i in range(12):
        coll.queries.create(external_id=f"x{i}", text="power")
    server = _faulty(lambda request, n: __import__("time").sleep(0.05))
    try:
        endpoint = endpoint_for(
            server.url, presets.ELASTICSEARCH, collection=coll, concurrency=2, rate_limit=0
        )
        snap = snapshot(configure(coll, team, boss, endpoint), boss)
        assert snap.status == "done" and snap.done == 15
        assert server.max_in_flight <= 2
    finally:
        server.close()
