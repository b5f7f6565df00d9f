"""Background work of LLM judging (Celery; runs inline when no broker is configured).

A job is one ``judging.run_llm_job`` task, which splits the job into chunks and asks for
up to ``GRADED_LLM_JOB_WORKERS - 1`` helpers (``judging.work_on_llm_job``) before working
on it itself; any worker that takes a helper task shares the job. Both tasks are
acknowledged only when they end (``acks_late``) and go back to the queue if their worker
process dies (``reject_on_worker_lost``), and the chunks' leases let the workers still
running take over what a killed one held, so a job finishes with every pair graded or
failed exactly once.
"""

from __future__ import annotations

from celery import current_app, shared_task
from django.conf import settings

from judging.llm import runner
from judging.llm.models import LLMJob


def _job(job_id: int) -> LLMJob | None:
    return LLMJob.objects.select_related("judge", "collection").filter(pk=job_id).first()


@shared_task(name="judging.run_llm_job", acks_late=True, reject_on_worker_lost=True)
def run_llm_job(job_id: int) -> None:
    """Start one LLM judge job, ask for helpers, and work on it until it ends."""
    job = _job(job_id)
    if job is None:
        return
    if job.status == LLMJob.Status.QUEUED and runner.plan(job):
        helpers = min(int(getattr(settings, "GRADED_LLM_JOB_WORKERS", 1)), job.chunks.count()) - 1
        if not current_app.conf.task_always_eager:
            for _ in range(max(0, helpers)):
                work_on_llm_job.delay(job_id)
    if job.status == LLMJob.Status.RUNNING:
        runner.work(job)


@shared_task(name="judging.work_on_llm_job", acks_late=True, reject_on_worker_lost=True)
def work_on_llm_job(job_id: int) -> None:
    """Share the work of a running LLM judge job (nothing if it has ended)."""
    job = _job(job_id)
    if job is not None and job.status == LLMJob.Status.RUNNING:
        runner.work(job)
