"""Canary and version checks run in the background, as LLM jobs do.

Starting a check answers at once (the page: a redirect to the check's page, which polls
while the check is queued or running; REST: 202 with the check's URL and status); the
judge is asked by the ``judging.run_quality_check`` task; a provider that refuses every
request ends the check as failed with the reason an LLM job would give. Against the
local fake server (tests/judging/llm/fake_server.py).
"""

from __future__ import annotations

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from judging import background
from judging import services as judging_services
from judging.models import Membership
from judging.quality import checks, selectors, services
from judging.quality.models import CanaryCheck, CanaryResult, VersionCheck, VersionCheckResult
from tests import factories
from tests.api_client import client_for
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db
Role = Membership.Role
KEY_STOP = (
    "Stopped after 3 requests in a row failed: the provider answered 401 Unauthorized — "
    "check the provider's API key (the operator sets it)."
)


@pytest.fixture
def boss(coll):
    """Return a coordinator of ``coll``."""
    usr = factories.user("boss")
    factories.member(coll, usr, Role.COORDINATOR)
    return usr


@pytest.fixture
def human_graded(coll, pooled, boss):
    """One human grades every pooled pair 1 (so version checks have a sample)."""
    usr = factories.user("ann")
    factories.member(coll, usr, Role.JUDGE)
    judge = factories.human_judge(usr)
    for entry in pooled:
        judging_services.judgment_record(
            judge=judge, query=entry.query, document=entry.document, grade=1
        )


def test_a_canary_check_starts_at_once_then_runs_in_the_background(
    client, coll, pooled, llm, fake, boss, django_capture_on_commit_callbacks
):
    client.force_login(boss)
    with django_capture_on_commit_callbacks() as queued:  # no worker has it yet
        response = client.post(reverse("judging:canary_check_create", args=[coll.slug, llm.pk]))
    check = CanaryCheck.objects.get()
    assert response.status_code == 303
    assert response["Location"] == reverse(
        "judging:canary_check_detail", args=[coll.slug, check.pk]
    )
    assert (check.status, fake.requests, len(queued)) == ("queued", [], 1)
    page = client.get(response["Location"]).content.decode()
    poll = f"/c/{coll.slug}/canary-checks/{check.pk}/?part=progress"
    assert 'data-status="queued"' in page and f'hx-get="{poll}"' in page
    part = client.get(poll, headers={"HX-Request": "true"}).content.decode()
    assert part.lstrip().startswith('<div id="check-progress"') and "<html" not in part
    assert "data-check-status>Queued<" in part
    assert selectors.canary_rates(collection=coll) == []  # not done: not in the rates
    queued[0]()  # the worker runs it
    check.refresh_from_db()
    assert check.status == "done" and check.started_at and check.finished_at
    assert len(fake.requests) == 6 and check.results.count() == 6
    page = client.get(response["Location"]).content.decode()
    assert 'data-status="done"' in page and "hx-get" not in page
    assert 'data-field="failed">6<' in page  # the fake's default answer grades each 3
    assert len(selectors.canary_rates(collection=coll)) == 1
    checks.run_check("canary", check.pk)  # a duplicate delivery does nothing
    assert len(fake.requests) == 6 and check.results.count() == 6


def test_rest_answers_202_with_the_url_and_the_status(
    coll, pooled, llm, fake, boss, django_capture_on_commit_callbacks
):
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/judges/{llm.pk}/canary-checks/"
    with django_capture_on_commit_callbacks() as queued:
        made = api.post(url)
    body = made.json()
    check = CanaryCheck.objects.get()
    assert made.status_code == 202 and made["Location"] == body["url"]
    assert body["url"] == f"http://testserver{url}{check.pk}/"
    assert (body["status"], body["error"], body["results"]) == ("queued", "", [])
    assert api.get(body["url"]).json()["status"] == "queued"
    queued[0]()
    done = api.get(body["url"]).json()
    assert done["status"] == "done" and len(done["results"]) == 6
    assert done["prompt_tokens"] == 600 and done["completion_tokens"] == 42
    other = factories.llm_judge("other")
    other.collections.add(coll)
    elsewhere = f"/api/v1/collections/{coll.slug}/judges/{other.pk}/canary-checks/{check.pk}/"
    assert api.get(elsewhere).status_code == 404  # only under its own judge
    assert client_for(factories.user("stranger")).get(body["url"]).status_code == 404


@pytest.mark.parametrize("kind", ["canary", "version"])
def test_a_wrong_key_fails_the_check_after_three_requests_with_the_reason(
    client, coll, pooled, llm, fake, boss, human_graded, kind, django_capture_on_commit_callbacks
):
    fake.script = lambda body, n: Reply(status=401, body='{"error": "invalid api key"}')
    start = services.canary_check_start if kind == "canary" else services.version_check_start
    with django_capture_on_commit_callbacks(execute=True):
        check = start(collection=coll, judge=llm, user=boss)
    check.refresh_from_db()
    assert (check.status, check.error) == ("failed", KEY_STOP)
    # 4 senders: the 3 fatal answers stop them; at most 3 + 4 - 1 requests went out
    assert 3 <= len(fake.requests) <= 6
    assert not CanaryResult.objects.exists() and not VersionCheckResult.objects.exists()
    assert check.finished_at is not None
    assert selectors.canary_rates(collection=coll) == []
    assert selectors.version_report(collection=coll, judge=llm) == []
    api = client_for(boss)
    prefix = f"/api/v1/collections/{coll.slug}/judges/{llm.pk}"
    url = (
        f"{prefix}/canary-checks/{check.pk}/"
        if kind == "canary"
        else (f"{prefix}/versions/{check.pk}/")
    )
    body = api.get(url).json()
    assert (body["status"], body["error"]) == ("failed", KEY_STOP)
    page = "judging:canary_check_detail" if kind == "canary" else "judging:version_check_detail"
    client.force_login(boss)
    shown = client.get(reverse(page, args=[coll.slug, check.pk])).content.decode()
    assert 'data-status="failed"' in shown and "check the provider&#x27;s API key" in shown


def test_a_model_not_found_fails_a_version_check_and_stops_sending(
    coll, pooled, llm, fake, boss, human_graded, django_capture_on_commit_callbacks
):
    fake.script = lambda body, n: Reply(status=404, body='{"error": "not found"}')
    with django_capture_on_commit_callbacks(execute=True):
        check = services.version_check_start(collection=coll, judge=llm, user=boss)
    check.refresh_from_db()
    assert check.status == "failed"
    assert check.error.endswith("404 Not Found — check the model name and the provider's base URL.")
    assert len(fake.requests) <= 6  # the second batch of the 12 pairs is never sent


def test_a_refused_destination_fails_without_a_request(
    coll, pooled, llm, fake, boss, provider, django_capture_on_commit_callbacks
):
    provider.allowed_private_hosts = []  # the fake server is on loopback: refused
    provider.save()
    with django_capture_on_commit_callbacks(execute=True):
        check = services.canary_check_start(collection=coll, judge=llm, user=boss)
    check.refresh_from_db()
    assert fake.requests == [] and check.status == "failed"
    assert check.error.startswith("Stopped after 3 requests in a row failed: Graded did not send")


def test_fewer_failures_than_the_threshold_still_fail_when_every_request_failed(
    coll, pooled, llm, fake, boss, settings, django_capture_on_commit_callbacks
):
    fake.script = lambda body, n: Reply(status=503, body="overloaded")  # retryable: no stop
    with django_capture_on_commit_callbacks(execute=True):
        check = services.canary_check_start(collection=coll, judge=llm, user=boss, queries=1)
    check.refresh_from_db()
    assert len(fake.requests) == 2 and check.status == "failed"
    assert check.error.startswith("All 2 requests failed at fake: HTTP 503")
    settings.GRADED_LLM_FAIL_FAST_AFTER = 0  # never stop early: every request is asked
    fake.script = lambda body, n: Reply(status=401)
    fake.requests.clear()
    with django_capture_on_commit_callbacks(execute=True):
        check = services.canary_check_start(collection=coll, judge=llm, user=boss)
    check.refresh_from_db()
    assert len(fake.requests) == 6 and check.error.startswith("All 6 requests failed at fake")


def test_what_can_be_refused_without_a_request_is_refused_when_starting(
    coll, pooled, llm, fake, boss, monkeypatch
):
    monkeypatch.delenv("GRADED_LLM_KEY_TEST")
    api = client_for(boss)
    made = api.post(f"/api/v1/collections/{coll.slug}/judges/{llm.pk}/canary-checks/")
    assert made.status_code == 400 and not CanaryCheck.objects.exists()
    made = api.post(f"/api/v1/collections/{coll.slug}/judges/{llm.pk}/versions/")
    assert made.status_code == 400 and not VersionCheck.objects.exists()


def test_a_check_lost_with_its_worker_runs_again_only_once_stale(
    coll, pooled, llm, fake, boss, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        check = services.canary_check_start(collection=coll, judge=llm, user=boss)
    assert services.check_claim(check=check)
    assert not services.check_claim(check=check)  # running: another worker has it
    checks.run_check("canary", check.pk)
    assert fake.requests == []
    CanaryCheck.objects.filter(pk=check.pk).update(
        started_at=timezone.now() - services.CHECK_STALE_AFTER - dt.timedelta(seconds=1)
    )
    checks.run_check("canary", check.pk)  # the redelivered task takes the stale check over
    check.refresh_from_db()
    assert check.status == "done" and len(fake.requests) == 6


def test_the_task_is_registered_and_runs_a_check(
    coll, pooled, llm, fake, boss, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks():
        check = services.canary_check_start(collection=coll, judge=llm, user=boss, queries=1)
    background.task("judging.run_quality_check")("canary", check.pk)
    check.refresh_from_db()
    assert check.status == "done" and check.results.count() == 2
