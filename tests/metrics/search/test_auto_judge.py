"""An LLM judge grades each snapshot's new pairs as they arrive (issue 42 item 6, Quepid 8.7).

The configuration names an LLM judge of the collection; when a snapshot becomes a run, an
LLM job starts on the pooled pairs of its queries that the judge has not labelled yet,
within its provider's budget. A judge that cannot start says why on the snapshot.
"""

from __future__ import annotations

import pytest

from judging.models import Judge, Judgment, LLMJob, PoolEntry
from metrics.search import presets, runner, services
from metrics.search.models import SearchSnapshot
from tests import factories
from tests.api_client import client_for, errors_of
from tests.judging.llm.fake_server import FakeLLM
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.test_engines import FAST, configure

pytestmark = pytest.mark.django_db
KEY_ENV = "GRADED_LLM_KEY_AUTO"


@pytest.fixture
def llm_server():
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture
def auto(setup, engine, llm_server, monkeypatch):
    """A configuration of the fake engine and an LLM judge of the collection."""
    monkeypatch.setenv(KEY_ENV, "sk-auto-SECRET")
    coll, team, boss = setup
    provider = factories.llm_provider(llm_server.url, name="fake", api_key_env=KEY_ENV)
    judge = Judge.objects.create(
        kind=Judge.Kind.LLM,
        name="umbrela",
        provider="fake",
        model="fake-model",
        llm_provider=provider,
        native_scale=["0", "1", "2", "3"],
        scale_mapping={"0": 0, "1": 1, "2": 3, "3": 4},
        max_attempts=2,
        timeout_seconds=5,
    )
    judge.collections.add(coll)
    endpoint = endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    return coll, boss, configure(coll, team, boss, endpoint), judge, provider


def _snapshot(configuration, boss, capture):
    snap = services.snapshot_start(configuration=configuration, user=boss)
    with capture(execute=True):  # the job starts after the snapshot's transaction commits
        return runner.work(SearchSnapshot.objects.get(pk=snap.pk), retries=FAST)


def test_each_snapshots_new_pairs_are_graded_by_the_configurations_llm_judge(
    auto, llm_server, django_capture_on_commit_callbacks
):
    coll, boss, configuration, judge, _provider = auto
    services.configuration_auto_judge(configuration=configuration, judge=judge, user=boss)
    first = _snapshot(configuration, boss, django_capture_on_commit_callbacks)
    assert first.status == SearchSnapshot.Status.DONE and first.auto_job_id
    job = LLMJob.objects.get(pk=first.auto_job_id)
    assert job.judge == judge and job.status == LLMJob.Status.DONE
    pooled = set(PoolEntry.objects.filter(collection=coll).values_list("query_id", "document_id"))
    graded = set(Judgment.objects.filter(judge=judge).values_list("query_id", "document_id"))
    assert pooled and graded == pooled  # every pair the snapshot pooled, once
    # A second snapshot of the same engine brings no new pair: nothing is asked again.
    asked = len(llm_server.requests)
    second = _snapshot(configuration, boss, django_capture_on_commit_callbacks)
    assert LLMJob.objects.get(pk=second.auto_job_id).status == LLMJob.Status.DONE
    assert len(llm_server.requests) == asked
    assert Judgment.objects.filter(judge=judge).count() == len(pooled)


def test_the_providers_budget_holds_and_a_judge_that_cannot_start_says_why(
    auto, django_capture_on_commit_callbacks
):
    _coll, boss, configuration, judge, provider = auto
    services.configuration_auto_judge(configuration=configuration, judge=judge, user=boss)
    provider.token_budget = 250  # about two requests of the fake's 107 tokens
    provider.save(update_fields=["token_budget"])
    snap = _snapshot(configuration, boss, django_capture_on_commit_callbacks)
    job = LLMJob.objects.get(pk=snap.auto_job_id)
    assert Judgment.objects.filter(judge=judge).count() <= 2
    assert "budget" in (job.error or "").lower()
    # The provider closed to the collection: the snapshot is done and says why.
    provider.allowed_collections.clear()
    later = _snapshot(configuration, boss, django_capture_on_commit_callbacks)
    assert later.status == SearchSnapshot.Status.DONE and later.auto_job_id is None
    assert later.auto_note.startswith("The LLM judge did not start:")
    assert "not open to this collection" in later.auto_note


def test_rest_sets_and_clears_the_judge_and_refuses_others(auto):
    coll, boss, configuration, judge, _provider = auto
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/search-configurations/{configuration.pk}/"
    assert api.patch(url, {"auto_judge": judge.pk}, format="json").json()["auto_judge"] == judge.pk
    human = factories.human_judge(factories.user("jo"))
    other = Judge.objects.create(kind=Judge.Kind.LLM, name="elsewhere", model="m")
    for value in (human.pk, other.pk, 424242, "x"):
        refused = api.patch(url, {"auto_judge": value}, format="json")
        assert refused.status_code == 400, (value, refused.json())
        assert "auto_judge" in str(errors_of(refused))
    assert api.patch(url, {"auto_judge": None}, format="json").json()["auto_judge"] is None
    assert api.patch(url, {"colour": "red"}, format="json").status_code == 400
