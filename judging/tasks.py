"""Background work of the judging app (Celery; runs inline when no broker is configured)."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="judging.run_llm_job")
def run_llm_job(job_id: int) -> None:
    """Run one LLM judge job to the end."""
    from judging.llm import runner
    from judging.models_llm import LLMJob

    job = LLMJob.objects.select_related("judge", "collection").filter(pk=job_id).first()
    if job is not None and job.status == LLMJob.Status.QUEUED:
        runner.run_job(job)


@shared_task(name="judging.run_file_import")
def run_file_import(import_id: int) -> None:
    """Run one queued file import (large uploads of the Import files page)."""
    from judging import services_files

    services_files.file_import_run(import_id=import_id)
