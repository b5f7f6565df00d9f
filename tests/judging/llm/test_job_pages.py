"""Issue 34 item 4: the LLM job page, its failures by reason, raw outputs, provider hints.

A job stopped early shows as failed with its reason and no row per pair; its failures
are grouped by reason with counts and a paginated list behind each group; every grade's
raw output is on a paginated page (escaped, the API's fields); the judge forms say who
registers providers when none is open to the user.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client

from judging.llm import runner
from judging.llm import services as services_llm
from judging.llm.models import LLMFailure, LLMJob, LLMProvider
from judging.llm.views import ROWS_PER_PAGE
from judging.models import Membership, PoolEntry
from tests import factories
from tests.api_client import client_for
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def cora(coll):
    user = factories.user("cora")
    factories.member(coll, user, Membership.Role.COORDINATOR)
    return user


def _client(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _run(coll, judge, **options) -> LLMJob:
    job = services_llm.llm_job_create(collection=coll, judge=judge, **options)
    return runner.run_job(job, flush_seconds=0.1)


def test_a_job_stopped_early_reads_as_failed_with_one_group(coll, cora, llm, fake):
    factories.pool(coll, 5, 20)
    fake.script = lambda body, n: Reply(status=404, body='{"error": "no route"}')
    job = _run(coll, llm, concurrency=1)
    assert (job.status, job.failed, job.total) == ("failed", 3, 100)
    page = _client(cora).get(f"/c/{coll.slug}/llm-jobs/{job.pk}/").content.decode()
    assert 'class="llm-job llm-job-failed"' in page
    assert "<strong data-job-status>Failed</strong>" in page
    assert "97 pairs not asked" in page
    assert html.escape(job.error) in page
    assert "3 of 100 pairs · 0 judged · 3 failed · 97 not asked" in page
    # the bar: a red segment of the failed share (3 %: 30 of 1000), no green one
    assert '<rect class="llm-bar-failed" x="0" width="30" height="10"/>' in page
    assert "llm-bar-done" not in page.split("</svg>")[0].split("<svg")[1]
    assert 'aria-valuetext="Failed: 0 judged, 3 failed, 97 not asked of 100"' in page
    # one group with its count, not one row per pair
    assert page.count("data-failure-group") == 1
    assert '3 pairs</strong> <span class="llm-failure-reason">HTTP 404 (not retried).</span>' in (
        page
    )
    assert page.count("<tr") == 0
    assert "{&quot;error&quot;: &quot;no route&quot;}" in page  # the answer, escaped
    # actions: fix the judge first (primary), then run again with the same options
    configure = (  # the page's primary action (issue 34)
        f'<a class="button button-primary" href="/c/{coll.slug}/llm-judges/{llm.pk}/edit/" '
        "data-primary>"
    )
    assert configure in page
    assert f'<input type="hidden" name="judge" value="{llm.pk}">' in page
    assert '<input type="hidden" name="concurrency" value="1">' in page
    assert ">Run again</button>" in page


def test_failures_are_grouped_commonest_first_and_paginated(
    coll, cora, llm, django_assert_max_num_queries
):
    factories.pool(coll, 6, 25)
    job = LLMJob.objects.create(
        collection=coll, judge=llm, status=LLMJob.Status.DONE, total=150, done=20, failed=130
    )
    entries = list(
        PoolEntry.objects.filter(collection=coll).order_by(
            "query__external_id", "document__external_id"
        )
    )
    reasons = ["HTTP 400 (not retried)."] * 120 + ["No match for the answer pattern."] * 7
    reasons += [f"Odd reason {i}" for i in range(3)]  # 5 groups in all: all are shown
    LLMFailure.objects.bulk_create(
        LLMFailure(job=job, query=e.query, document=e.document, reason=r, raw_answer=f"<b>{i}</b>")
        for i, (e, r) in enumerate(zip(entries, reasons, strict=False))
    )
    client = _client(cora)
    with django_assert_max_num_queries(12):
        page = client.get(f"/c/{coll.slug}/llm-jobs/{job.pk}/").content.decode()
    counts = re.findall(r"data-failure-count>(\d+) pairs?<", page)
    assert counts == ["120", "7", "1", "1", "1"]
    assert "Done with 130 failures" in page
    assert "<b>0</b>" not in page and "&lt;b&gt;0&lt;/b&gt;" in page
    # the job is done with failures: running it again (asks them again) is the primary action
    run_again = 'class="button button-primary" data-primary>Run again</button>'
    assert '<button type="submit" ' + run_again in page
    link = f"/c/{coll.slug}/llm-jobs/{job.pk}/failures/?reason=HTTP%20400%20%28not%20retried%29."
    assert f'href="{link}"' in page

    first = client.get(link).content.decode()
    assert first.count("data-failure>") == ROWS_PER_PAGE
    assert "<strong>120</strong> failed pairs" in first and "page 1 of 3" in first
    last = client.get(link + "&page=3").content.decode()
    assert last.count("data-failure>") == 20
    assert "&lt;b&gt;" in last and "No match" not in last
    odd = client.get(link.split("?")[0] + "?reason=nothing&page=x")  # not a number: page 1
    assert odd.status_code == 200 and "No failed pairs for this reason" in odd.content.decode()
    assert client.get(link.split("?")[0] + "?reason=%00").status_code == 400  # NUL: refused
    with django_assert_max_num_queries(8):
        every = client.get(f"/c/{coll.slug}/llm-jobs/{job.pk}/failures/?page=3").content.decode()
    assert every.count("data-failure>") == 130 - 2 * ROWS_PER_PAGE


def test_more_reasons_than_shown_link_to_all_failures(coll, cora, llm):
    factories.pool(coll, 2, 5)
    job = LLMJob.objects.create(
        collection=coll, judge=llm, status=LLMJob.Status.FAILED, total=10, failed=10
    )
    LLMFailure.objects.bulk_create(
        LLMFailure(job=job, query=e.query, document=e.document, reason=f"Reason {i}")
        for i, e in enumerate(PoolEntry.objects.filter(collection=coll))
    )
    page = _client(cora).get(f"/c/{coll.slug}/llm-jobs/{job.pk}/").content.decode()
    assert page.count("data-failure-group") == 5
    assert "All failures (5 more reasons)" in page


def test_raw_outputs_of_every_grade_are_on_a_page_like_the_api(coll, cora, pooled, llm, fake):
    answer = 'Looks <script>alert("x")</script> fine &amp; relevant.\n##final score: 2'
    fake.script = lambda body, n: Reply(content=answer)
    job = _run(coll, llm, concurrency=2)
    assert (job.status, job.done) == ("done", 12)
    client = _client(cora)
    detail = client.get(f"/c/{coll.slug}/llm-jobs/{job.pk}/").content.decode()
    outputs_url = f"/c/{coll.slug}/llm-jobs/{job.pk}/outputs/"
    assert (
        f'<a class="button button-primary" href="{outputs_url}" data-outputs-link data-primary>'
        in detail
    )
    assert "Raw outputs (12)" in detail
    page = client.get(outputs_url).content.decode()
    assert page.count("data-output>") == 12
    assert '<script>alert("x")' not in page
    shown = [html.unescape(m) for m in re.findall(r"data-raw-output>(.*?)</pre>", page, re.S)]
    api = client_for(cora).get(f"/api/v1/collections/{coll.slug}/llm-jobs/{job.pk}/outputs/")
    assert api.status_code == 200
    rows = api.json()["results"] if isinstance(api.json(), dict) else api.json()
    assert shown == [row["raw_output"] for row in rows] == [answer] * 12
    for row in rows[:1]:  # the API's other fields are on the page too
        for field in ("query", "document", "model_reported", "prompt_hash", "template_version"):
            assert html.escape(str(row[field])) in page, field
        assert f"grade {row['grade']}" in page and f"label {row['native_label']}" in page


def test_outputs_page_is_paginated_with_constant_queries(
    coll, cora, llm, fake, django_assert_max_num_queries
):
    factories.pool(coll, 4, 15)
    job = _run(coll, llm, concurrency=4)
    assert job.done == 60
    client = _client(cora)
    with django_assert_max_num_queries(8):
        first = client.get(f"/c/{coll.slug}/llm-jobs/{job.pk}/outputs/").content.decode()
    assert first.count("data-output>") == ROWS_PER_PAGE and "page 1 of 2" in first
    second = client.get(f"/c/{coll.slug}/llm-jobs/{job.pk}/outputs/?page=2").content.decode()
    assert second.count("data-output>") == 10


def test_the_job_pages_are_for_coordinators(coll, judge_user, llm):
    job = LLMJob.objects.create(collection=coll, judge=llm, total=1)
    client = _client(judge_user)
    for part in ("", "failures/", "outputs/"):
        assert client.get(f"/c/{coll.slug}/llm-jobs/{job.pk}/{part}").status_code == 403
    other = factories.collection("other")
    factories.member(other, judge_user, Membership.Role.COORDINATOR)
    assert client.get(f"/c/{other.slug}/llm-jobs/{job.pk}/outputs/").status_code == 404


DOCS_ANCHOR = "docs/deployment.md#registering-an-llm-provider"


@pytest.fixture
def bare(coll):
    """Return an LLM judge of ``coll`` with no provider, none being registered."""
    judge = factories.llm_judge("bare")
    judge.collections.add(coll)
    assert not LLMProvider.objects.exists()
    return judge


def test_no_provider_a_coordinator_is_told_to_ask_the_operator(coll, cora, bare):
    llm = bare
    client = _client(cora)
    for url in (
        f"/c/{coll.slug}/llm-judges/new/",
        f"/c/{coll.slug}/llm-judges/{llm.pk}/edit/",
        f"/c/{coll.slug}/llm-jobs/",
    ):
        page = client.get(url).content.decode()
        assert "data-provider-hint" in page, url
        assert "ask your operator to register a provider" in page
        assert DOCS_ANCHOR in page
        assert "/admin/judging/llmprovider/add/" not in page
    page = client.get(f"/c/{coll.slug}/llm-judges/new/").content.decode()
    assert "None is open to this collection yet" in page  # beside the empty list too
    # The anchor the hint names exists.
    heading = "## Registering an LLM provider"
    assert heading in (Path(settings.BASE_DIR) / "docs" / "deployment.md").read_text()


def test_no_provider_a_superuser_gets_the_admin_link(coll, bare):
    boss = factories.user("boss")
    boss.is_superuser = boss.is_staff = True
    boss.save()
    page = _client(boss).get(f"/c/{coll.slug}/llm-judges/new/").content.decode()
    assert 'href="/admin/judging/llmprovider/add/"' in page
    assert "Register a provider in the admin" in page
    assert "ask your operator" not in page


def test_a_provider_open_to_the_collection_removes_the_hint(coll, cora, llm, provider):
    page = _client(cora).get(f"/c/{coll.slug}/llm-judges/new/").content.decode()
    assert "data-provider-hint" not in page and ">fake</option>" in page
    other = factories.collection("elsewhere")
    factories.member(other, cora, Membership.Role.COORDINATOR)
    page = _client(cora).get(f"/c/{other.slug}/llm-judges/new/").content.decode()
    assert "data-provider-hint" in page  # open to coll only


def test_the_recent_jobs_are_a_tab_of_their_own(coll, cora, llm):
    """The form and the recent jobs are tabs (one screen each); the jobs sit in a list box."""
    client = _client(cora)
    url = f"/c/{coll.slug}/llm-jobs/"
    assert '<nav aria-label="LLM jobs">' not in client.get(url).content.decode()  # no job yet
    job = LLMJob.objects.create(collection=coll, judge=llm, status="done", total=4, done=4)
    start = client.get(url).content.decode()
    assert '<nav aria-label="LLM jobs">' in start and "Recent jobs" in start
    assert f'data-job="{job.pk}"' not in start
    jobs = client.get(url, {"tab": "jobs"}).content.decode()
    assert (
        '<div class="table-scroll list-box" tabindex="0" role="region" aria-label="Recent jobs">'
        in jobs
    )
    assert f'data-job="{job.pk}"' in jobs and f"/llm-jobs/{job.pk}/" in jobs
    assert 'id="llm-job-form"' not in jobs
    assert 'data-primary href="?"' in jobs  # back to the form
