"""Background work of LLM judging (Celery; runs inline when no broker is configured)."""

from __future__ import annotations

from celery import shared_task

from judging.llm import runner
from judging.llm.models import LLMJob


@shared_task(name="judging.run_llm_job")
def run_llm_job(job_id: int) -> None:
    """Run one LLM judge job to the end."""
    job = LLMJob.objects.select_related("judge", "collection").filter(pk=job_id).first()
    if job is not None and job.status == LLMJob.Status.QUEUED:
        runner.run_job(job)
