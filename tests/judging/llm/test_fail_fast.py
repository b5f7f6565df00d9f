"""Issue 34 item 4: an LLM job whose requests cannot succeed stops after a few of them.

Against the local fake server. A worker stops its job after ``GRADED_LLM_FAIL_FAST_AFTER``
(3) fatal answers in a row — 401, 403, 404, a 400 naming an unknown model, a destination
the egress guard refuses — with one reason on the job; retryable faults (429, 5xx,
timeouts) are retried as before. With every answer fatal, a worker with ``concurrency``
senders sends at most ``3 + concurrency - 1`` requests (the answers are counted on the
senders' event loop before any of them takes its next pair); ``W`` workers sharing the
job send at most ``W × (3 + concurrency - 1)``.
"""

from __future__ import annotations

import threading
import time

import pytest

from judging.llm import runner
from judging.llm import services as services_llm
from judging.llm.client import CallFailed, is_fatal
from judging.llm.models import LLMFailure, LLMJob, LLMJobChunk, LLMUsage
from judging.models import Judgment
from tests import factories
from tests.judging.llm.conftest import KEY_ENV
from tests.judging.llm.fake_server import Reply

NOT_FOUND = (
    "Stopped after 3 requests in a row failed: the provider answered 404 Not Found — "
    "check the model name and the provider's base URL."
)


def _run(coll, judge, **options) -> LLMJob:
    job = services_llm.llm_job_create(collection=coll, judge=judge, **options)
    return runner.run_job(job, flush_seconds=0.1)


def assert_consistent(job: LLMJob, sent: int) -> None:
    """Assert that the job's counters match its rows and every request has its outcome."""
    job.refresh_from_db()
    failures = LLMFailure.objects.filter(job=job).count()
    labels = Judgment.objects.filter(judge=job.judge).count()
    assert (job.failed, job.done) == (failures, labels)
    assert job.processed == sent  # each request sent has one outcome, none more
    assert job.processed < job.total
    assert job.finished_at is not None
    # nothing left to claim: the stopped job hands out no chunk
    assert services_llm.llm_chunk_claim(job=job, owner="late", lease_seconds=60) is None


@pytest.mark.parametrize(
    ("status", "body", "fatal"),
    [
        (401, '{"error": "invalid api key"}', True),
        (403, "forbidden", True),
        (404, '{"error": "not found"}', True),
        (301, "", True),
        (400, '{"error": {"code": "model_not_found"}}', True),
        (400, '{"object": "error", "message": "The model `llama-9` does not exist."}', True),
        (400, '{"error": "maximum context length exceeded"}', False),
        (422, '{"detail": "messages: field required"}', False),
        (409, "conflict", False),
    ],
)
def test_which_answers_are_fatal(status, body, fatal):
    assert is_fatal(status, body) is fatal


@pytest.mark.django_db
def test_every_request_404_stops_the_job_after_three(coll, llm, fake, provider):
    """The issue's job: 301 pairs, every answer 404; it sent 301 requests before."""
    factories.pool(coll, 7, 43)
    provider.token_budget = 10**9  # reservations are made (and must all come back)
    provider.save()
    fake.script = lambda body, n: Reply(status=404, body='{"error": "model not found"}')
    job = _run(coll, llm, concurrency=4)
    assert job.total == 301
    assert job.status == LLMJob.Status.FAILED
    assert job.error == NOT_FOUND
    sent = len(fake.requests)
    assert 3 <= sent <= 3 + 4 - 1
    assert_consistent(job, sent)
    assert set(LLMFailure.objects.filter(job=job).values_list("attempts", flat=True)) == {1}
    provider.refresh_from_db()
    usage = LLMUsage.objects.get(provider=provider, collection=coll)
    assert (provider.tokens_reserved, provider.tokens_used) == (0, 0)
    assert (usage.tokens_reserved, usage.spend_reserved_nanos) == (0, 0)
    # The pairs never asked are left for a later job, which stops as fast.
    again = _run(coll, llm, concurrency=1)
    assert again.error == NOT_FOUND
    assert len(fake.requests) == sent + 3


@pytest.mark.django_db
def test_one_sender_sends_exactly_the_threshold_and_401_names_the_key(coll, llm, fake):
    factories.pool(coll, 3, 10)
    fake.script = lambda body, n: Reply(status=401, body='{"error": "bad key"}')
    job = _run(coll, llm, concurrency=1)
    assert len(fake.requests) == 3
    assert job.status == LLMJob.Status.FAILED
    assert job.error == (
        "Stopped after 3 requests in a row failed: the provider answered 401 Unauthorized "
        "— check the provider's API key (the operator sets it)."
    )
    assert_consistent(job, 3)


@pytest.mark.django_db
def test_the_threshold_is_a_setting(coll, llm, fake, settings):
    factories.pool(coll, 3, 10)
    settings.GRADED_LLM_FAIL_FAST_AFTER = 5
    fake.script = lambda body, n: Reply(status=403, body="no")
    job = _run(coll, llm, concurrency=1)
    assert len(fake.requests) == 5 and job.error.startswith("Stopped after 5 requests")
    settings.GRADED_LLM_FAIL_FAST_AFTER = 0  # never stop early: every pair is asked
    job = _run(coll, llm, concurrency=2, limit=8)
    assert (job.status, job.failed, len(fake.requests)) == ("failed", 8, 13)
    assert job.error.startswith("All 8 pairs failed")


@pytest.mark.django_db
def test_a_model_not_found_400_stops_and_says_check_the_model(coll, pooled, llm, fake):
    fake.script = lambda body, n: Reply(
        status=400, body='{"message": "The model `fake-model` does not exist."}'
    )
    job = _run(coll, llm, concurrency=1)
    assert len(fake.requests) == 3
    assert job.error == (
        "Stopped after 3 requests in a row failed: the provider answered 400 Bad Request: "
        "the model is unknown there — check the model name."
    )


@pytest.mark.django_db
def test_a_refused_destination_stops_without_a_request(coll, pooled, llm, fake, provider):
    provider.allowed_private_hosts = []  # the fake server is on loopback: refused
    provider.save()
    job = _run(coll, llm, concurrency=2)
    assert fake.requests == []
    assert job.status == LLMJob.Status.FAILED
    assert job.error.startswith("Stopped after 3 requests in a row failed: Graded did not send")
    assert "loopback" in job.error or "127.0.0.1" in job.error
    assert 3 <= job.failed <= 4


@pytest.mark.django_db
def test_429_then_ok_still_completes(coll, pooled, llm, fake):
    fake.script = lambda body, n: (
        Reply(status=429, body="slow down", headers={"Retry-After": "0"}) if n < 4 else Reply()
    )
    job = _run(coll, llm, concurrency=2)
    assert (job.status, job.done, job.failed, job.error) == ("done", 12, 0, "")
    assert len(fake.requests) == 16


@pytest.mark.django_db
def test_5xx_and_timeouts_never_stop_the_job(coll, pooled, llm, fake):
    llm.max_attempts = 1
    llm.timeout_seconds = 0.3
    llm.save()
    fake.script = lambda body, n: Reply(status=503) if n % 2 else Reply(delay=0.6)
    job = _run(coll, llm, concurrency=3)
    assert (job.status, job.failed, len(fake.requests)) == ("failed", 12, 12)
    assert job.error.startswith("All 12 pairs failed")


@pytest.mark.django_db
def test_a_success_between_fatal_answers_starts_the_count_again(coll, pooled, llm, fake):
    fake.script = lambda body, n: Reply(status=404) if n % 3 != 2 else Reply()
    job = _run(coll, llm, concurrency=1)
    assert (job.status, job.done, job.failed, len(fake.requests)) == ("done", 4, 8, 12)


@pytest.mark.django_db
def test_a_try_is_never_cut_short(coll, pooled, llm, fake):
    fake.script = lambda body, n: Reply(status=404)
    trials = runner.try_judge(llm, runner.trial_pairs(collection=coll))
    assert len(trials) == 3 and all("HTTP 404" in t.problem for t in trials)


def test_the_stop_reason_of_each_cause():
    reason = runner.stop_reason
    assert "403 Forbidden — the provider's key may not use" in reason(
        CallFailed("x", status=403, fatal=True), 3
    )
    assert "308 Permanent Redirect (a redirect, not followed)" in reason(
        CallFailed("x", status=308, fatal=True), 3
    )
    assert reason(CallFailed("Refused: 10.0.0.1 is private.", fatal=True), 4) == (
        "Stopped after 4 requests in a row failed: Graded did not send the request "
        "(Refused: 10.0.0.1 is private)."
    )


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_three_workers_stop_within_their_bound_and_leave_a_consistent_job(
    needs_postgres, fake, api_key
):
    """Three workers (2 senders each) share a job whose every answer is 404."""
    from concurrent.futures import ThreadPoolExecutor

    from tests.pg_threads import in_thread

    coll = factories.collection("stops")
    factories.pool(coll, 7, 43)
    provider = factories.llm_provider(fake.url, name="p", api_key_env=KEY_ENV, token_budget=10**9)
    judge = factories.llm_judge("llm-stops")
    judge.llm_provider = provider
    judge.save()
    judge.collections.add(coll)
    fake.script = lambda body, n: Reply(status=404, body="no such route", delay=0.02)
    job = services_llm.llm_job_create(collection=coll, judge=judge, concurrency=2)
    assert runner.plan(job, chunk_pairs=8)

    def work(job_id: int) -> None:
        runner.work(LLMJob.objects.get(pk=job_id), flush_seconds=0.05, lease_seconds=30)

    with ThreadPoolExecutor(max_workers=3) as pool:
        for future in [pool.submit(in_thread(work), job.pk) for _ in range(3)]:
            future.result(timeout=60)
    sent = len(fake.requests)
    assert 3 <= sent <= 3 * (3 + 2 - 1)
    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", NOT_FOUND)
    assert_consistent(job, sent)
    provider.refresh_from_db()
    assert (provider.tokens_reserved, provider.spend_reserved_nanos) == (0, 0)
    assert LLMUsage.objects.get(provider=provider).tokens_reserved == 0
    assert not LLMJobChunk.objects.filter(job=job, status="queued", claims__gt=0).exists()


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_a_running_worker_sees_a_stop_within_a_flush(needs_postgres, fake, api_key, monkeypatch):
    """Another worker stopped the job: this one, busy with good answers, sends no more.

    The fake server holds requests 6 and 7 (one per sender) until the worker has read
    the job's status (at its next flush, every 0.1 s) and halted; then those two answers
    are recorded and nothing else is sent.
    """
    from tests.pg_threads import in_thread

    coll = factories.collection("seen")
    factories.pool(coll, 5, 40)
    provider = factories.llm_provider(fake.url, name="q", api_key_env=KEY_ENV)
    judge = factories.llm_judge("llm-seen")
    judge.llm_provider = provider
    judge.save()
    judge.collections.add(coll)
    gate, halted = threading.Event(), threading.Event()
    halt = runner._Requests.halt

    def halt_and_tell(self, reason=""):
        halt(self, reason)
        halted.set()

    monkeypatch.setattr(runner._Requests, "halt", halt_and_tell)

    def script(body, n):
        if n >= 6:
            gate.wait(timeout=20)
        return Reply()

    fake.script = script
    job = services_llm.llm_job_create(collection=coll, judge=judge, concurrency=2)
    assert runner.plan(job, chunk_pairs=16)
    worker = threading.Thread(
        target=in_thread(
            lambda: runner.work(LLMJob.objects.get(pk=job.pk), flush_seconds=0.1, lease_seconds=30)
        )
    )
    worker.start()
    deadline = time.monotonic() + 20
    while len(fake.requests) < 8 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(fake.requests) == 8  # both senders wait on the server
    assert services_llm.llm_job_stop(job=job, error="Stopped by another worker.")
    stopped_at = time.monotonic()
    assert halted.wait(timeout=10)
    # one flush (0.1 s) and the batch it writes; generous: the machine is shared
    assert time.monotonic() - stopped_at < 5
    gate.set()
    worker.join(timeout=30)
    assert not worker.is_alive()
    assert len(fake.requests) == 8  # the halt came before the answers: nothing more sent
    job.refresh_from_db()
    assert (job.status, job.error) == ("failed", "Stopped by another worker.")
    assert (job.done, job.failed) == (8, 0)  # the answers out were recorded
    assert Judgment.objects.filter(judge=judge).count() == 8
    assert not services_llm.llm_job_stop(job=job, error="again")  # ended once
