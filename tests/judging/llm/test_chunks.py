"""LLM jobs in chunks under leases: shared by workers, taken over when a worker dies.

The first tests drive the services and the runner in one process (both databases); the
last one starts real Celery worker processes on PostgreSQL and Redis and SIGKILLs one of
them in the middle of a job.
"""

from __future__ import annotations

import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from judging.llm import runner
from judging.llm import services as services_llm
from judging.llm.models import LLMFailure, LLMJob, LLMJobChunk, LLMOutput
from judging.llm.services import LeaseLost, LLMGrade
from judging.models import Judgment, JudgmentEvent, PoolEntry
from tests import factories, processes
from tests.judging.llm.conftest import KEY, KEY_ENV
from tests.judging.llm.fake_server import FakeLLM, Reply


def _planned(coll, judge, *, chunk_pairs: int, **options) -> LLMJob:
    job = services_llm.llm_job_create(collection=coll, judge=judge, **options)
    assert runner.plan(job, chunk_pairs=chunk_pairs)
    return job


def assert_each_pair_once(job: LLMJob, pool: int) -> None:
    """Assert that every pooled pair has exactly one outcome in ``job``: a label or a failure."""
    job.refresh_from_db()
    labels = list(Judgment.objects.filter(judge=job.judge).values_list("query_id", "document_id"))
    failed = list(LLMFailure.objects.filter(job=job).values_list("query_id", "document_id"))
    assert len(labels) == len(set(labels)) and len(failed) == len(set(failed))
    assert not set(labels) & set(failed), "a pair was both graded and failed"
    assert set(labels) | set(failed) == set(
        PoolEntry.objects.filter(collection=job.collection).values_list("query_id", "document_id")
    )
    assert (job.status, job.total, job.done, job.failed) == ("done", pool, len(labels), len(failed))
    # one history event per label: no pair was recorded twice and then overwritten
    assert JudgmentEvent.objects.filter(judge=job.judge).count() == len(labels)
    assert LLMOutput.objects.filter(job=job).count() == len(labels)
    assert not job.chunks.exclude(status=LLMJobChunk.Status.DONE).exists()


@pytest.mark.django_db
def test_plan_splits_the_pairs_once(coll, pooled, llm):
    job = _planned(coll, llm, chunk_pairs=5)
    chunks = list(job.chunks.order_by("index"))
    assert [len(c.pairs) for c in chunks] == [5, 5, 2]
    planned = [tuple(p) for c in chunks for p in c.pairs]
    assert (
        sorted(planned) == sorted(PoolEntry.objects.values_list("query_id", "document_id"))
        and len(set(planned)) == 12
    )
    assert (job.status, job.total) == ("running", 12)
    assert not runner.plan(job, chunk_pairs=5)  # delivered twice: planned once
    assert job.chunks.count() == 3


@pytest.mark.django_db
def test_an_expired_lease_is_taken_over_and_the_old_holder_writes_nothing(coll, pooled, llm):
    job = _planned(coll, llm, chunk_pairs=12)
    first = services_llm.llm_chunk_claim(job=job, owner="a", lease_seconds=60)
    assert first is not None and first.claims == 1
    assert services_llm.llm_chunk_claim(job=job, owner="b", lease_seconds=60) is None  # held
    LLMJobChunk.objects.filter(pk=first.pk).update(lease_until=timezone.now() - timedelta(1))
    second = services_llm.llm_chunk_claim(job=job, owner="b", lease_seconds=60)
    assert second is not None and second.pk == first.pk and second.claims == 2
    q, d = first.pairs[0]
    pair = PoolEntry.objects.select_related("query", "document").get(query_id=q, document_id=d)
    grade = LLMGrade(pair.query.external_id, pair.document.external_id, grade=2)
    with pytest.raises(LeaseLost):
        services_llm.llm_batch_record(
            job=job, grades=[grade], failures=[], chunk_id=first.pk, owner="a"
        )
    assert not Judgment.objects.filter(judge=llm).exists()
    assert services_llm.llm_chunks_renew(chunk_ids=[first.pk], owner="a", lease_seconds=9) == set()
    services_llm.llm_batch_record(
        job=job, grades=[grade], failures=[], chunk_id=first.pk, owner="b"
    )
    assert Judgment.objects.filter(judge=llm).count() == 1
    # the pair recorded by the holder is not asked again by whoever takes the chunk next
    LLMJobChunk.objects.filter(pk=first.pk).update(lease_until=timezone.now() - timedelta(1))
    third = services_llm.llm_chunk_claim(job=job, owner="c", lease_seconds=60)
    left = runner.chunk_pairs(job, third)
    assert len(left) == 11 and (q, d) not in {(p.query_id, p.document_id) for p in left}


@pytest.mark.django_db
def test_a_worker_takes_over_the_chunk_of_a_dead_one(coll, pooled, llm, fake):
    """A chunk held by a worker that died is judged by the next worker, each pair once."""
    fake.script = lambda body, n: Reply(content="oops") if n % 5 == 0 else Reply()
    job = _planned(coll, llm, chunk_pairs=4, concurrency=2)
    dead = services_llm.llm_chunk_claim(job=job, owner="dead:1:x", lease_seconds=60)
    pairs = runner.chunk_pairs(job, dead)
    # it recorded one pair, then died (its lease stays until it runs out)
    services_llm.llm_batch_record(
        job=job,
        grades=[LLMGrade(pairs[0].values["qid"], pairs[0].values["docno"], grade=1)],
        failures=[],
        chunk_id=dead.pk,
        owner="dead:1:x",
    )
    LLMJobChunk.objects.filter(pk=dead.pk).update(lease_until=timezone.now() + timedelta(0, 1))
    started = time.monotonic()
    job = runner.work(job, lease_seconds=2, flush_seconds=0.2)
    assert time.monotonic() - started >= 0.5  # it waited for the lease to run out
    assert LLMJobChunk.objects.get(pk=dead.pk).claims == 2
    assert len(fake.requests) == 11  # the recorded pair was not asked again
    assert_each_pair_once(job, 12)
    assert job.failed > 0  # the fault script made some pairs fail, once each


@pytest.mark.django_db
def test_a_job_whose_chunks_are_all_done_ends_once(coll, pooled, llm):
    job = _planned(coll, llm, chunk_pairs=12)
    assert not services_llm.llm_job_finish_if_complete(job=job)
    LLMJobChunk.objects.filter(job=job).update(status=LLMJobChunk.Status.DONE)
    assert services_llm.llm_job_finish_if_complete(job=job)
    finished = LLMJob.objects.get(pk=job.pk).finished_at
    assert services_llm.llm_job_finish_if_complete(job=job)  # already ended: unchanged
    assert LLMJob.objects.get(pk=job.pk).finished_at == finished
    assert services_llm.llm_chunk_claim(job=job, owner="late", lease_seconds=5) is None


# --------------------------------------------------------------------------- processes


@pytest.fixture
def process_env(tmp_path: Path):
    """Return the environment of production processes on this test database (PostgreSQL)."""
    return processes.production_env(
        processes.require_services(),
        GRADED_LLM_LEASE_SECONDS="3",
        GRADED_LLM_CHUNK_PAIRS="8",
        GRADED_LLM_JOB_WORKERS="2",
        **{KEY_ENV: KEY},
    )


@pytest.mark.django_db(transaction=True)
def test_sigkill_a_worker_mid_job_and_every_pair_is_judged_once(process_env, api_key, tmp_path):
    """Two worker processes share a job; one is killed; the other finishes its chunks."""
    fake = FakeLLM(
        lambda body, n: (
            Reply(status=500, body="{}")
            if n % 17 == 3
            else Reply(content="no grade here" if n % 13 == 5 else "##final score: 3", delay=0.05)
        )
    )
    try:
        coll = factories.collection("killed")
        factories.pool(coll, 8, 20)  # 160 pairs, 20 chunks of 8
        judge = factories.umbrela_judge(
            coll,
            fake.url,
            api_key_env=KEY_ENV,
            max_attempts=1,  # a 500 fails its pair at once
        )
        job = services_llm.llm_job_create(collection=coll, judge=judge, concurrency=2)
        with processes.workers(process_env, 2, tmp_path) as (first, second):
            processes.send_task(process_env, "judging.run_llm_job", job.pk)
            pids = {first.pid: first, second.pid: second}
            victim = None
            deadline = time.monotonic() + 60
            while victim is None and time.monotonic() < deadline:
                owners = set(
                    LLMJobChunk.objects.filter(
                        job=job, status=LLMJobChunk.Status.RUNNING
                    ).values_list("owner", flat=True)
                )
                done = LLMJobChunk.objects.filter(job=job, status="done").count()
                holders = {int(o.split(":")[1]) for o in owners} & set(pids)
                if done >= 3 and len(holders) == 2:  # both at work, some chunks behind them
                    victim = pids[min(holders)]
                time.sleep(0.05)
            assert victim is not None, processes.log_tail(tmp_path / "worker0.log")
            held = set(
                LLMJobChunk.objects.filter(
                    job=job, status="running", owner__contains=f":{victim.pid}:"
                ).values_list("pk", flat=True)
            )
            os.kill(victim.pid, signal.SIGKILL)
            victim.wait(timeout=10)
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                job.refresh_from_db()
                if job.status in ("done", "failed"):
                    break
                time.sleep(0.2)
        logs = "\n".join(processes.log_tail(p) for p in tmp_path.glob("worker*.log"))
        assert job.status == "done", logs
        assert held, "the killed worker held a chunk"
        chunks = LLMJobChunk.objects.filter(pk__in=held)
        taken = {c.pk for c in chunks if c.claims >= 2}
        # A chunk whose last batch the worker recorded between the look and the kill is
        # done by it (one claim); every other chunk it held was taken over.
        finished = {c.pk for c in chunks if c.claims == 1 and c.status == "done"}
        assert taken and taken | finished == held, "every chunk it held was taken over"
        assert_each_pair_once(job, 160)
        assert job.failed > 0 and job.done > 100
    finally:
        fake.close()


@pytest.mark.django_db
def test_a_worker_that_shuts_down_releases_its_chunks_and_the_job_goes_on(
    coll, pooled, llm, fake, monkeypatch
):
    """A shutdown (KeyboardInterrupt, SystemExit) is not the job's fault: others take over."""
    job = _planned(coll, llm, chunk_pairs=4, concurrency=2)
    real = services_llm.llm_batch_record
    calls = []

    def interrupted(**kwargs):
        calls.append(kwargs["chunk_id"])
        raise KeyboardInterrupt

    monkeypatch.setattr(services_llm, "llm_batch_record", interrupted)
    with pytest.raises(KeyboardInterrupt):
        runner.work(job, lease_seconds=60, flush_seconds=0.2)
    job.refresh_from_db()
    assert job.status == "running" and job.error == ""  # not failed: no one's fault
    released = LLMJobChunk.objects.get(pk=calls[0])
    assert released.status == "running" and released.lease_until <= timezone.now()
    monkeypatch.setattr(services_llm, "llm_batch_record", real)
    job = runner.work(job, lease_seconds=60, flush_seconds=0.2)  # another worker, at once
    assert LLMJobChunk.objects.get(pk=calls[0]).claims == 2
    assert_each_pair_once(job, 12)


@pytest.mark.django_db
def test_the_admin_lists_chunks_with_their_leases_read_only(coll, pooled, llm, admin_client):
    job = _planned(coll, llm, chunk_pairs=5)
    services_llm.llm_chunk_claim(job=job, owner="host:42:abc", lease_seconds=60)
    page = admin_client.get("/admin/judging/llmjobchunk/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "host:42:abc" in text and text.count("/admin/judging/llmjobchunk/") >= 3
    assert admin_client.get("/admin/judging/llmjobchunk/add/").status_code == 403
