"""LLM judge pages: run a job from the browser, follow it live, configure the judge."""

from __future__ import annotations

import pytest
from django.test import Client

from judging.llm.forms import JudgeAdminForm
from judging.llm.models import LLMJob
from judging.models import Judge, Membership
from tests import factories
from tests.judging.llm.conftest import KEY
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def cora(coll):
    usr = factories.user("cora")
    factories.member(coll, usr, Membership.Role.COORDINATOR)
    return usr


def _client(usr) -> Client:
    client = Client()
    client.force_login(usr)
    return client


def test_collection_page_links_coordinators_only(coll, cora, judge_user):
    link = f"/c/{coll.slug}/llm-jobs/"
    assert link in _client(cora).get(f"/c/{coll.slug}/").content.decode()
    assert link not in _client(judge_user).get(f"/c/{coll.slug}/").content.decode()
    assert _client(judge_user).get(link).status_code == 403


def test_run_from_the_browser_and_follow_progress(
    coll, cora, pooled, llm, fake, django_capture_on_commit_callbacks
):
    client = _client(cora)
    page = client.get(f"/c/{coll.slug}/llm-jobs/")
    assert page.status_code == 200
    assert "umbrela" in page.content.decode()
    fake.script = lambda body, n: Reply(status=400, body="nope") if n == 0 else Reply()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(
            f"/c/{coll.slug}/llm-jobs/", {"judge": llm.pk, "concurrency": 1, "limit": 5}
        )
    job = LLMJob.objects.get()
    assert response.status_code == 303
    assert response["Location"] == f"/c/{coll.slug}/llm-jobs/{job.pk}/"
    detail = client.get(response["Location"]).content.decode()
    assert "4 judged · 1 failed" in detail
    assert "HTTP 400 (not retried)." in detail and "nope" in detail
    assert 'hx-trigger="every 1s"' not in detail  # done: polling stops
    part = client.get(f"{response['Location']}?part=progress", HTTP_HX_REQUEST="true")
    assert part.content.decode().lstrip().startswith('<div id="llm-job-progress"')
    assert KEY not in detail and KEY not in page.content.decode()


def test_running_job_polls(coll, cora, llm):
    job = LLMJob.objects.create(collection=coll, judge=llm, total=10, done=3)
    html = _client(cora).get(f"/c/{coll.slug}/llm-jobs/{job.pk}/").content.decode()
    assert 'hx-trigger="every 1s"' in html
    assert f"/c/{coll.slug}/llm-jobs/{job.pk}/?part=progress" in html


def test_start_with_missing_key_shows_the_error(coll, cora, pooled, llm, fake, monkeypatch):
    monkeypatch.delenv(llm.llm_provider.api_key_env)
    response = _client(cora).post(f"/c/{coll.slug}/llm-jobs/", {"judge": llm.pk, "concurrency": 2})
    assert response.status_code == 400
    assert f"must set {llm.llm_provider.api_key_env} where" in response.content.decode()
    assert not LLMJob.objects.exists() and fake.requests == []


def test_configure_judge(coll, cora, llm):
    url = f"/c/{coll.slug}/llm-judges/{llm.pk}/edit/"
    client = _client(cora)
    assert client.get(url).status_code == 200
    form = {
        "name": "umbrela",
        "model": "m2",
        "llm_provider": "sk-live-abcdef",
        "prompt_template": "{query} {passage}",
        "native_scale": '["0", "1"]',
        "scale_mapping": '{"0": 0, "1": 4}',
        "decoding": '{"temperature": 0}',
        "max_attempts": 3,
        "timeout_seconds": 30,
    }
    response = client.post(url, form)
    assert response.status_code == 400
    html = response.content.decode()
    assert "{passage}" in html and "Select a valid choice" in html
    assert "sk-live-abcdef" not in html
    other = factories.llm_provider("http://127.0.0.1:9/v1/", name="local-vllm", models=("m2",))
    form.update(llm_provider=other.pk, prompt_template="{query}\n{document}")
    response = client.post(url, form)
    assert response.status_code == 303
    llm.refresh_from_db()
    assert (llm.model, llm.llm_provider) == ("m2", other)
    assert llm.scale_mapping == {"0": 0, "1": 4} and llm.decoding == {"temperature": 0}


def test_admin_form_checks_the_template(db):
    form = JudgeAdminForm(
        data={
            "kind": "llm",
            "name": "x",
            "model": "m",
            "prompt_template": "{body}",
            "decoding": "{}",
            "native_scale": "[]",
            "scale_mapping": "{}",
            "max_attempts": 5,
            "timeout_seconds": 60,
        }
    )
    assert not form.is_valid()
    assert "{body}" in form.errors["prompt_template"][0]
    assert Judge.objects.count() == 0


def test_job_page_says_failed_or_done_with_failures(coll, cora, llm):
    """Issue 20 item 1: a job whose pairs all failed is not shown as a green Done."""
    failed = LLMJob.objects.create(
        collection=coll,
        judge=llm,
        status=LLMJob.Status.FAILED,
        total=2,
        failed=2,
        error="All 2 pairs failed at fake: HTTP 401",
    )
    partly = LLMJob.objects.create(
        collection=coll, judge=llm, status=LLMJob.Status.DONE, total=3, done=2, failed=1
    )
    client = _client(cora)
    html = client.get(f"/c/{coll.slug}/llm-jobs/{failed.pk}/").content.decode()
    assert "<strong data-job-status>Failed</strong>" in html
    assert (
        '<p class="llm-job-error" data-job-error>All 2 pairs failed at fake: HTTP 401</p>' in html
    )
    html = client.get(f"/c/{coll.slug}/llm-jobs/{partly.pk}/").content.decode()
    assert "<strong data-job-status>Done with 1 failure</strong>" in html
