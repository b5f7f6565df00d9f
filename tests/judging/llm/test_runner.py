"""Running an LLM judge against a local fake OpenAI-compatible server."""

from __future__ import annotations

import io
import logging

import pytest
from django.core.management import CommandError, call_command

from judging import services
from judging.llm import runner
from judging.llm import services as services_llm
from judging.llm.models import LLMFailure, LLMJob, LLMOutput
from judging.models import Collection, Judgment, JudgmentEvent, LiveGrade, PoolEntry
from tests.judging.llm.conftest import KEY, KEY_ENV
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db


def _job(coll, judge, **options) -> LLMJob:
    return services_llm.llm_job_create(collection=coll, judge=judge, **options)


def _run(coll, judge, **options) -> LLMJob:
    return runner.run_job(_job(coll, judge, **options))


def test_judges_every_pair_with_mapping_and_provenance(coll, pooled, llm, fake):
    job = _run(coll, llm, concurrency=3)
    assert (job.status, job.total, job.done, job.failed, job.skipped) == ("done", 12, 12, 0, 0)
    assert len(fake.requests) == 12
    first = fake.requests[0]
    assert first["path"] == "/v1/chat/completions"
    assert first["headers"]["Authorization"] == f"Bearer {KEY}"
    body = first["body"]
    assert body["model"] == "fake-model"
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0, 7, 300)
    assert "response_format" not in body
    assert body["messages"][-1]["role"] == "user"
    assert "##final score: N" in body["messages"][-1]["content"]
    judgments = Judgment.objects.filter(judge=llm)
    assert judgments.count() == 12
    assert set(judgments.values_list("grade", flat=True)) == {3}  # native 2 maps to 3
    output = LLMOutput.objects.select_related("judgment").first()
    assert output.native_label == "2" and output.judgment.grade == 3
    assert output.raw_output == "##final score: 2"
    assert output.model_reported == "fake-model-2026-01"
    assert (output.prompt_tokens, output.completion_tokens) == (100, 7)
    assert output.latency_ms > 0 and output.attempts == 1
    assert len(output.prompt_hash) == 64 and output.template_version.startswith("sha256:")
    assert output.job_id == job.pk
    assert job.prompt_tokens == 1200 and job.completion_tokens == 84
    assert set(JudgmentEvent.objects.values_list("channel", flat=True)) == {"llm"}
    assert LiveGrade.objects.filter(collection=coll).count() == 12
    assert set(PoolEntry.objects.values_list("graded_count", flat=True)) == {1}


def test_live_list_changes_once_per_batch(coll, pooled, llm):
    job = runner.run_job(_job(coll, llm, concurrency=4), batch_size=5, flush_seconds=30)
    assert job.done == 12
    coll.refresh_from_db()
    assert coll.judgments_version == 3  # batches of 5, 5 and 2 pairs


def test_system_prompt_template_and_json_answers(coll, pooled, llm, fake):
    fake.script = lambda body, n: Reply(content='{"grade": 3, "reason": "exact answer"}')
    llm.system_prompt = "Be strict."
    llm.prompt_template = "Q {qid}: {query}\nD {docno}: {title}\n{document}"
    llm.prompt_version = "strict-v1"
    llm.json_mode = True
    llm.save()
    job = _run(coll, llm, limit=2, concurrency=1)
    assert job.done == 2 and job.total == 2
    body = fake.requests[0]["body"]
    assert body["response_format"] == {"type": "json_object"}
    system, user = body["messages"]
    assert system == {"role": "system", "content": "Be strict."}
    entry = PoolEntry.objects.order_by("query__external_id", "document__external_id").first()
    assert user["content"] == (
        f"Q {entry.query.external_id}: {entry.query.text}\n"
        f"D {entry.document.external_id}: {entry.document.title}\n{entry.document.body}"
    )
    assert set(Judgment.objects.values_list("grade", flat=True)) == {4}
    assert set(LLMOutput.objects.values_list("template_version", flat=True)) == {"strict-v1"}


def test_html_documents_are_sent_as_plain_text(coll, llm, fake):
    from tests import factories

    q = factories.query(coll, "q1")
    d = factories.document(coll, "d1", body="<p>Blue &amp; <b>red</b></p><script>x()</script>")
    services.pool_add_ids(collection=coll, pairs=[(q.pk, d.pk)], source="manual")
    llm.prompt_template = "{document}"
    llm.save()
    _run(coll, llm)
    assert fake.requests[0]["body"]["messages"][-1]["content"] == "Blue & red"


def test_429_with_retry_after_is_honoured(coll, pooled, llm, fake):
    fake.script = lambda body, n: (
        Reply(status=429, body='{"error": "slow down"}', headers={"Retry-After": "0.4"})
        if n == 0
        else Reply()
    )
    job = _run(coll, llm, concurrency=1, limit=1)
    assert (job.done, job.failed) == (1, 0)
    assert len(fake.requests) == 2
    assert fake.requests[1]["at"] - fake.requests[0]["at"] >= 0.4
    assert LLMOutput.objects.get().attempts == 2


def test_500_then_success(coll, pooled, llm, fake):
    fake.script = lambda body, n: Reply(status=500, body="oops") if n < 2 else Reply()
    job = _run(coll, llm, concurrency=1, limit=1)
    assert (job.done, job.failed) == (1, 0)
    assert len(fake.requests) == 3


def test_timeouts_are_retried_then_recorded(coll, pooled, llm, fake):
    llm.timeout_seconds = 0.2
    llm.save()
    fake.script = lambda body, n: Reply(delay=0.6) if n < 1 else Reply()
    job = _run(coll, llm, concurrency=1, limit=1)
    assert (job.done, job.failed) == (1, 0)
    fake.script = lambda body, n: Reply(delay=0.6)
    job = _run(coll, llm, concurrency=1, limit=1)
    assert (job.done, job.failed) == (0, 1)
    failure = LLMFailure.objects.get(job=job)
    assert "Timed out" in failure.reason and failure.attempts == 3


def test_persistent_errors_and_bad_answers_are_failures_not_judgments(coll, pooled, llm, fake):
    answers = {
        0: Reply(status=503, body="unavailable"),
        1: Reply(body="this is not json"),
        2: Reply(content="##final score: 4"),  # off the 0–3 scale
        3: Reply(content="##final score: 2.5"),
        4: Reply(status=400, body='{"error": "bad request"}'),
        5: Reply(content="no score here"),
    }

    def script(body, n):
        key = body["messages"][-1]["content"]
        index = sorted_prompts.index(key)
        return answers.get(index, Reply())

    llm.prompt_template = "{qid} {docno}"
    llm.max_attempts = 2
    llm.save()
    sorted_prompts = [
        f"{q} {d}"
        for q, d in PoolEntry.objects.order_by(
            "query__external_id", "document__external_id"
        ).values_list("query__external_id", "document__external_id")
    ]
    fake.script = script
    job = _run(coll, llm, concurrency=4)
    assert (job.done, job.failed, job.total) == (6, 6, 12)
    reasons = {
        f"{f.query.external_id} {f.document.external_id}": f
        for f in LLMFailure.objects.filter(job=job).select_related("query", "document")
    }
    assert "HTTP 503" in reasons[sorted_prompts[0]].reason
    assert reasons[sorted_prompts[0]].attempts == 2
    assert "Malformed" in reasons[sorted_prompts[1]].reason
    assert reasons[sorted_prompts[1]].raw_answer == "this is not json"
    assert "not on the scale" in reasons[sorted_prompts[2]].reason
    assert reasons[sorted_prompts[2]].raw_answer == "##final score: 4"
    assert "not on the scale" in reasons[sorted_prompts[3]].reason
    assert "HTTP 400" in reasons[sorted_prompts[4]].reason
    assert reasons[sorted_prompts[4]].attempts == 1  # a 400 is not retried
    assert "No match" in reasons[sorted_prompts[5]].reason
    assert Judgment.objects.filter(judge=llm).count() == 6
    assert LiveGrade.objects.filter(collection=coll).count() == 6


def test_a_job_whose_every_pair_failed_says_failed_with_reason_and_provider(
    coll, pooled, llm, fake
):
    """Issue 20 item 1: not a green "Done" when nothing was graded."""
    llm.max_attempts = 1
    llm.save()
    fake.script = lambda body, n: Reply(status=400, body='{"error": "bad request"}')
    job = _run(coll, llm, concurrency=2, limit=3)
    assert (job.status, job.done, job.failed) == (LLMJob.Status.FAILED, 0, 3)
    assert job.error.startswith(f"All 3 pairs failed at {llm.llm_provider.name}: HTTP 400")
    # Some graded, some failed: done, and the pages say with how many failures.
    fake.script = lambda body, n: Reply(status=400) if n % 2 else Reply()
    job = _run(coll, llm, concurrency=1, limit=4)
    assert job.status == LLMJob.Status.DONE and job.done and job.failed and not job.error


def test_rerun_skips_graded_and_retries_failed(coll, pooled, llm, fake):
    fake.script = lambda body, n: Reply(status=500) if n % 3 == 0 else Reply()
    llm.max_attempts = 1
    llm.save()
    first = _run(coll, llm, concurrency=1)
    assert (first.done, first.failed, first.skipped) == (8, 4, 0)
    fake.script = lambda body, n: Reply()
    out = io.StringIO()
    call_command("llm_judge", coll.slug, "--judge", str(llm.pk), stdout=out)
    assert out.getvalue().strip().splitlines()[-1] == "judged 4, failed 0, skipped 8"
    out = io.StringIO()
    call_command("llm_judge", coll.slug, "--judge", str(llm.pk), stdout=out)
    assert out.getvalue().strip().splitlines()[-1] == "judged 0, failed 0, skipped 12"
    assert Judgment.objects.filter(judge=llm).count() == 12
    assert len(fake.requests) == 16


def test_command_limit_and_queries(coll, pooled, llm, fake):
    qid = pooled[4].query.external_id
    out = io.StringIO()
    call_command(
        "llm_judge",
        coll.slug,
        "--judge",
        str(llm.pk),
        "--queries",
        qid,
        "--limit",
        "3",
        stdout=out,
    )
    assert out.getvalue().strip() == "judged 3, failed 0, skipped 0"
    assert set(Judgment.objects.values_list("query__external_id", flat=True)) == {qid}
    with pytest.raises(CommandError, match="Unknown query id"):
        call_command("llm_judge", coll.slug, "--judge", str(llm.pk), "--queries", "nope")


def test_concurrency_is_reached_and_not_exceeded(coll, llm, fake):
    from tests import factories

    factories.pool(coll, 2, 8)
    # Long enough that all eight are in flight together even on a loaded 2-core machine.
    fake.script = lambda body, n: Reply(delay=2.0)
    job = _run(coll, llm, concurrency=8)
    assert job.done == 16
    assert fake.max_in_flight == 8


def test_missing_key_variable_fails_before_any_request(coll, pooled, llm, fake, monkeypatch):
    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(CommandError, match=f"must set {KEY_ENV} where"):
        call_command("llm_judge", coll.slug, "--judge", str(llm.pk))
    assert fake.requests == []
    assert not LLMJob.objects.exists()


def test_key_never_logged(coll, pooled, llm, fake, caplog):
    fake.script = lambda body, n: Reply(status=500, body="x") if n % 2 else Reply()
    llm.max_attempts = 1
    llm.save()
    with caplog.at_level(logging.DEBUG):
        job = _run(coll, llm, concurrency=2)
    assert job.failed == 6
    assert caplog.records  # httpx and the runner did log
    for record in caplog.records:
        assert KEY not in record.getMessage()
    assert KEY not in caplog.text
    assert KEY not in repr(runner.client_config(llm, KEY))


def test_a_batch_is_atomic(coll, pooled, llm, fake, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("disk full")

    monkeypatch.setattr(services_llm, "outputs_store", broken)
    with pytest.raises(RuntimeError):
        _run(coll, llm)
    assert not Judgment.objects.exists()
    assert not JudgmentEvent.objects.exists()
    assert Collection.objects.get(pk=coll.pk).judgments_version == 0
    job = LLMJob.objects.get()
    assert job.status == "failed" and job.done == 0 and "RuntimeError" in job.error


def test_start_uses_celery_when_a_broker_is_configured(
    coll, pooled, llm, settings, monkeypatch, django_capture_on_commit_callbacks
):
    from judging import tasks

    settings.CELERY_BROKER_URL = "redis://127.0.0.1:6379/15"
    settings.GRADED_LLM_JOBS_INLINE = False
    calls = []
    monkeypatch.setattr(tasks.run_llm_job, "delay", lambda pk: calls.append(pk))
    job = _job(coll, llm)
    with django_capture_on_commit_callbacks(execute=True):
        services_llm.llm_job_start(job=job)
    assert calls == [job.pk]
    assert LLMJob.objects.get(pk=job.pk).status == "queued"
    tasks.run_llm_job(job.pk)  # what the worker runs
    assert LLMJob.objects.get(pk=job.pk).done == 12
    tasks.run_llm_job(job.pk)  # a duplicate delivery does nothing
    assert Judgment.objects.filter(judge=llm).count() == 12


class _Terminal(io.StringIO):
    """A StringIO that says it is a terminal."""

    def isatty(self) -> bool:
        return True


def test_progress_bar_on_a_terminal(coll, pooled, llm, fake):
    fake.script = lambda body, n: Reply(status=400) if n == 0 else Reply()
    out = _Terminal()
    call_command("llm_judge", coll.slug, "--judge", str(llm.pk), "--concurrency", "1", stdout=out)
    text = out.getvalue()
    bar = text.split("\r")[-1].splitlines()[0]
    assert bar.startswith("[" + "#" * 30 + "] 12/12 ")
    assert "pairs/s" in bar and "1177 tokens" in bar and "1 failed" in bar
    assert text.strip().splitlines()[-1] == "judged 11, failed 1, skipped 0"


def test_raw_outputs_of_a_job_over_rest(coll, pooled, llm, fake):
    """Issue 20 item 1: coordinators read what the model answered, pair by pair."""
    from judging.models import Membership
    from tests import factories
    from tests.api_client import client_for, errors_of

    fake.script = lambda body, n: Reply(content="Reasoning... ##final score: 2")
    job = _run(coll, llm, concurrency=2, limit=3)
    cora, tess = factories.user("cora-o"), factories.user("tess-o")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    factories.member(coll, tess, Membership.Role.TEAM)
    url = f"/api/v1/collections/{coll.slug}/llm-jobs/{job.pk}/outputs/"
    body = client_for(cora).get(url).json()
    items = body["results"] if isinstance(body, dict) else body
    assert len(items) == 3
    first = items[0]
    assert first["raw_output"] == "Reasoning... ##final score: 2"
    assert first["native_label"] == "2" and first["grade"] == llm.scale_mapping["2"]
    assert len(first["prompt_hash"]) == 64 and first["attempts"] == 1
    assert [(i["query"], i["document"]) for i in items] == sorted(
        (i["query"], i["document"]) for i in items
    )
    assert client_for(tess).get(url).status_code == 403
    other = factories.collection("other-o")
    factories.member(other, cora, Membership.Role.COORDINATOR)
    foreign = client_for(cora).get(f"/api/v1/collections/other-o/llm-jobs/{job.pk}/outputs/")
    assert foreign.status_code == 404 and errors_of(foreign)[0]["message"] == "No such LLM job."
