"""A snapshot's failed queries retried (all, or one alone), and kept answers re-mapped.

A snapshot's run is a submitted run and is never rewritten: a retry is a new snapshot of
the same version that sends only the failed (or unsent) queries and copies the answered
ones; a re-map is a new snapshot of the configuration's current version that maps the
kept raw answers without sending anything. Both become new runs beside the old one.
"""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from metrics.search import presets, runner, services
from metrics.search.models import SearchSnapshot, SnapshotQuery
from tests.api_client import client_for, errors_of
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.fake_engine import FakeEngine
from tests.metrics.search.test_engines import FAST, configure, snapshot

pytestmark = pytest.mark.django_db
BASE = "/api/v1/collections/search"


class Flaky:
    """A fault: the queries in ``down`` answer 500 (retryable) until taken out of it."""

    def __init__(self, *down: str) -> None:
        self.down = set(down)

    def __call__(self, request, n):
        if request["body"]["query"]["match"]["body"] in self.down:
            return (500, "busy", {})
        return None


@pytest.fixture
def flaky(setup):
    """An Elasticsearch whose 'wind' (q2) and 'coal smoke' (q3) fail, and a first snapshot."""
    coll, team, boss = setup
    fault = Flaky("wind", "coal smoke")
    server = FakeEngine(fault)
    endpoint = endpoint_for(server.url, presets.ELASTICSEARCH, collection=coll)
    configuration = configure(coll, team, boss, endpoint)
    first = snapshot(configuration, boss, tag="first")
    assert (first.status, first.done, first.failed) == ("done", 1, 2)
    assert first.run.query_count == 1
    yield coll, boss, server, fault, configuration, first
    server.close()


def _new_version(configuration, boss, **change):
    """Add a version of ``configuration``: the current one with ``change`` applied."""
    old = configuration.current
    fields = {
        "endpoint": old.endpoint,
        "path": old.path,
        "template": old.template,
        "depth": old.depth,
        "method": old.method,
        "mapping": old.mapping,
        **change,
    }
    services.configuration_change(
        configuration=configuration, fields=services.VersionFields(**fields), user=boss
    )


def _hits(snap: SearchSnapshot) -> dict[str, list[str]]:
    return {
        r.query.external_id: [h["docno"] for h in r.hits]
        for r in snap.queries.select_related("query").filter(status=SnapshotQuery.Status.DONE)
    }


def _sent(server: FakeEngine) -> list[str]:
    return sorted(r["body"]["query"]["match"]["body"] for r in server.requests)


def test_one_failed_query_is_retried_alone_and_the_answered_ones_are_copied(flaky):
    _coll, boss, server, fault, _, first = flaky
    fault.down.discard("wind")  # the engine is back for q2; q3 still fails
    server.requests.clear()
    retry = services.snapshot_retry(snapshot=first, user=boss, query_ids=["q2"])
    assert (retry.origin, retry.source_id, retry.version_id) == (
        "retry",
        first.pk,
        first.version_id,
    )
    retry = runner.work(SearchSnapshot.objects.get(pk=retry.pk), retries=FAST)
    assert _sent(server) == ["wind"]  # q1 was copied, q3 was not chosen
    assert (retry.status, retry.done, retry.failed, retry.total) == ("done", 2, 1, 3)
    assert _hits(retry)["q1"] == _hits(first)["q1"]
    still = retry.queries.get(query__external_id="q3")
    assert still.status == "failed" and "HTTP 500" in still.error
    assert retry.run.query_count == 2 and retry.run.pk != first.run.pk
    assert "Retry of failed queries of snapshot first" in retry.run.description
    assert "1 of 3 queries failed" in retry.run.description
    first.refresh_from_db()
    assert first.run.query_count == 1  # the old run is as it was


def test_a_retry_of_every_failed_query_and_what_is_refused(flaky):
    _coll, boss, server, fault, _, first = flaky
    fault.down.clear()
    server.requests.clear()
    retry = services.snapshot_retry(snapshot=first, user=boss, tag="all-back")
    retry = runner.work(SearchSnapshot.objects.get(pk=retry.pk), retries=FAST)
    assert _sent(server) == ["coal smoke", "wind"]
    assert (retry.done, retry.failed, retry.run.tag, retry.run.query_count) == (3, 0, "all-back", 3)
    with pytest.raises(ValidationError) as answered:
        services.snapshot_retry(snapshot=first, user=boss, query_ids=["q1", "nope"])
    assert "'nope'" in str(answered.value) and "'q1'" in str(answered.value)
    with pytest.raises(ValidationError, match="at least one query"):
        services.snapshot_retry(snapshot=first, user=boss, query_ids=[])
    with pytest.raises(ValidationError, match="nothing to retry"):
        services.snapshot_retry(snapshot=retry, user=boss)
    with pytest.raises(ValidationError, match="already used"):
        services.snapshot_retry(snapshot=first, user=boss, tag="all-back")
    SearchSnapshot.objects.filter(pk=first.pk).update(status="running")
    with pytest.raises(ValidationError, match="still running"):
        services.snapshot_retry(snapshot=first, user=boss)


def test_queries_a_stopped_snapshot_never_sent_are_retried_too(flaky):
    _coll, boss, server, fault, _, first = flaky
    SnapshotQuery.objects.filter(snapshot=first, query__external_id="q3").update(
        status="pending", error=""
    )  # as a fail-fast stop leaves them
    fault.down.clear()
    server.requests.clear()
    retry = runner.work(
        SearchSnapshot.objects.get(pk=services.snapshot_retry(snapshot=first, user=boss).pk),
        retries=FAST,
    )
    assert _sent(server) == ["coal smoke", "wind"] and retry.done == 3


def test_kept_answers_are_mapped_again_with_the_current_version_without_querying(flaky):
    _coll, boss, server, fault, configuration, first = flaky
    fault.down.clear()
    full = runner.work(
        SearchSnapshot.objects.get(pk=services.snapshot_retry(snapshot=first, user=boss).pk),
        retries=FAST,
    )
    _new_version(configuration, boss, mapping={"hits": "hits.hits[:1]"})  # first hits only
    assert services.remap_problem(snapshot=full) == ""
    server.requests.clear()
    remap = services.snapshot_remap(snapshot=full, user=boss, tag="first-hit")
    assert server.requests == []  # nothing was sent
    assert (remap.status, remap.origin, remap.source_id) == ("done", "remap", full.pk)
    assert remap.version.number == 2 and remap.run.tag == "first-hit"
    assert _hits(remap) == {q: hits[:1] for q, hits in _hits(full).items()}
    assert "Re-mapped from kept answers of snapshot" in remap.run.description
    # The snapshot of the current version itself: nothing to re-map.
    with pytest.raises(ValidationError, match="change the mapping"):
        services.snapshot_remap(snapshot=remap, user=boss)


def test_a_changed_request_or_a_deeper_k_cannot_reuse_the_kept_answers(flaky):
    _coll, boss, _server, _, configuration, first = flaky
    old = configuration.current
    for change, words in (
        ({"depth": old.depth + 5}, "asked for 10"),
        (
            {"template": {"size": "{{k}}", "query": {"match": {"title": "{{query_text}}"}}}},
            "request template changed",
        ),
    ):
        # each change is made to version 1 (the snapshot's), not to the previous change
        _new_version(
            configuration, boss, **{"template": old.template, "depth": old.depth, **change}
        )
        assert words in services.remap_problem(snapshot=first)
        with pytest.raises(ValidationError, match=words):
            services.snapshot_remap(snapshot=first, user=boss)


def test_an_answer_cut_at_the_cap_or_pruned_fails_alone_in_a_remap(flaky):
    _coll, boss, _server, fault, configuration, first = flaky
    fault.down.clear()
    full = runner.work(
        SearchSnapshot.objects.get(pk=services.snapshot_retry(snapshot=first, user=boss).pk),
        retries=FAST,
    )
    SnapshotQuery.objects.filter(snapshot=full, query__external_id="q1").update(raw_truncated=True)
    SnapshotQuery.objects.filter(snapshot=full, query__external_id="q2").update(raw=None)
    _new_version(configuration, boss, depth=3)
    remap = services.snapshot_remap(snapshot=full, user=boss)
    errors = {
        r.query.external_id: r.error
        for r in remap.queries.select_related("query").filter(status="failed")
    }
    assert "cut at 1,000,000 bytes" in errors["q1"] and "not kept" in errors["q2"]
    assert (remap.done, remap.failed, remap.run.query_count) == (1, 2, 1)
    assert max(len(h) for h in _hits(remap).values()) <= 3


def test_rest_retries_and_remaps_naming_the_field_of_each_refusal(flaky):
    _coll, boss, _server, fault, configuration, first = flaky
    api = client_for(boss)
    fault.down.clear()
    retried = api.post(
        f"{BASE}/search-snapshots/", {"retry_of": first.pk, "query_ids": ["q3"]}, format="json"
    )
    assert retried.status_code == 202, retried.json()
    body = retried.json()
    assert (body["origin"], body["source"], body["status"]) == ("retry", first.pk, "queued")
    for payload, field in (
        ({"retry_of": first.pk, "configuration": configuration.pk}, "configuration"),
        ({}, "configuration"),
        ({"retry_of": 999_999}, "retry_of"),
        ({"retry_of": first.pk, "query_ids": ["q1"]}, "query_ids"),
        ({"remap_of": first.pk}, "remap_of"),  # its version is the current one
        ({"remap_of": first.pk, "query_ids": ["q1"]}, "query_ids"),
        ({"retry_of": "x"}, "retry_of"),
    ):
        refused = api.post(f"{BASE}/search-snapshots/", payload, format="json")
        assert refused.status_code == 400, (payload, refused.json())
        assert field in {e["field"] for e in errors_of(refused)}, (payload, refused.json())
    _new_version(configuration, boss, depth=2)
    remapped = api.post(f"{BASE}/search-snapshots/", {"remap_of": first.pk}, format="json")
    assert remapped.status_code == 201, remapped.json()
    assert remapped.json()["origin"] == "remap" and remapped.json()["run"] is not None


def test_the_page_retries_one_query_or_all_and_says_why_a_remap_is_not_offered(flaky):
    coll, boss, _server, fault, _, first = flaky
    page = Client()
    page.force_login(boss)
    url = f"/c/{coll.slug}/search/snapshots/{first.pk}/"
    html = page.get(url).content.decode()
    assert "Retry 2 failed or unsent queries" in html
    assert html.count("alone</button>") == 2
    assert "change the mapping first" in html
    fault.down.discard("wind")
    answer = page.post(url, {"action": "retry", "query": "q2"})
    assert answer.status_code == 302
    made = SearchSnapshot.objects.get(source=first)
    assert answer.url == f"/c/{coll.slug}/search/snapshots/{made.pk}/"
    assert made.queries.filter(status="pending").count() == 1
    refused = page.post(url, {"action": "remap"})
    assert refused.status_code == 400 and "data-problem" in refused.content.decode()


def test_raw_answers_are_pruned_after_their_retention_and_a_remap_says_so(flaky, settings, capsys):
    from datetime import timedelta

    from django.core.management import call_command
    from django.utils import timezone

    _coll, boss, _server, _fault, configuration, first = flaky
    kept = SnapshotQuery.objects.filter(snapshot=first, raw__isnull=False)
    assert kept.count() == 3  # the answer and both error pages
    settings.GRADED_SEARCH_ANSWERS_KEEP_DAYS = 30
    assert services.raw_answers_prune() == 0  # finished just now
    assert services.raw_answers_prune(now=timezone.now() + timedelta(days=31)) == 3
    assert kept.count() == 0 and first.queries.filter(status="done").get().hits  # rankings stay
    assert services.raw_answers_prune(days=0, now=timezone.now() + timedelta(days=99)) == 0
    _new_version(configuration, boss, depth=2)
    remap = services.snapshot_remap(snapshot=first, user=boss)
    assert remap.status == "failed" and remap.run is None  # nothing left to map
    assert "not kept" in remap.queries.get(query__external_id="q1").error
    SnapshotQuery.objects.filter(snapshot=remap).update(raw=b"x")
    SearchSnapshot.objects.filter(pk=remap.pk).update(
        finished_at=timezone.now() - timedelta(days=2)
    )
    call_command("prune_search_answers", "--days", "1")
    assert capsys.readouterr().out.strip() == "3 raw answers dropped"


def test_made_tags_name_the_source_and_never_collide(flaky):
    _coll, boss, _server, _fault, _configuration, first = flaky
    tags = [services.snapshot_retry(snapshot=first, user=boss).tag for _ in range(3)]
    assert tags == ["first-retry", "first-retry-2", "first-retry-3"]


@pytest.mark.parametrize("batch", [1, 2, 500])
def test_a_large_remap_runs_in_the_background_and_equals_the_inline_one(flaky, monkeypatch, batch):
    """Over REMAP_INLINE_QUERIES queries the re-map is queued (202) and mapped in batches
    by the task; what it makes equals the inline re-map, query by query, whatever the batch
    (a worker killed between batches resumes from the rows still pending)."""
    _coll, boss, _server, fault, configuration, first = flaky
    fault.down.clear()
    full = runner.work(
        SearchSnapshot.objects.get(pk=services.snapshot_retry(snapshot=first, user=boss).pk),
        retries=FAST,
    )
    SnapshotQuery.objects.filter(snapshot=full, query__external_id="q2").update(raw=None)
    _new_version(configuration, boss, mapping={"hits": "hits.hits[:1]"})
    inline = services.snapshot_remap(snapshot=full, user=boss, tag="inline")
    monkeypatch.setattr(services, "REMAP_INLINE_QUERIES", 1)
    calls = []
    monkeypatch.setattr(
        services.background, "start_after_commit", lambda name, *args, **kw: calls.append(args)
    )
    queued = services.snapshot_remap(snapshot=full, user=boss, tag="queued")
    assert queued.status == "queued" and queued.run_id is None and calls == [(queued.pk,)]
    assert queued.queries.filter(status="pending").count() == 3  # every answered query waits
    done = services.remap_work(queued, batch=batch)
    assert (done.status, done.done, done.failed) == (inline.status, inline.done, inline.failed)
    assert _hits(done) == _hits(inline)
    errors = dict(done.queries.values_list("query__external_id", "error"))
    assert errors == dict(inline.queries.values_list("query__external_id", "error"))
    assert services.remap_work(done).run_id == done.run_id  # run again: nothing changes
    client = client_for(boss)
    answer = client.post(f"{BASE}/search-snapshots/", {"remap_of": full.pk}, format="json")
    assert answer.status_code == 202 and answer.json()["status"] == "queued"
