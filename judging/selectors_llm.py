"""Read side of LLM judge jobs."""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet

from .models import Collection, Judge
from .models_llm import LLMFailure, LLMJob


def jobs_of(*, collection: Collection, with_failures: bool = False) -> QuerySet[LLMJob]:
    """Return the collection's LLM jobs, newest first (with failures prefetched if asked)."""
    jobs = LLMJob.objects.filter(collection=collection).select_related("judge")
    if with_failures:
        jobs = jobs.prefetch_related(
            Prefetch(
                "failures",
                queryset=LLMFailure.objects.select_related("query", "document").order_by("id"),
            )
        )
    return jobs


def job_in(*, collection: Collection, job_id: int) -> LLMJob | None:
    """Return one job of the collection with its failures, or None."""
    return jobs_of(collection=collection, with_failures=True).filter(pk=job_id).first()


def runnable_llm_judges() -> QuerySet[Judge]:
    """Return the LLM judges Graded can run (those with an endpoint)."""
    return Judge.objects.filter(kind=Judge.Kind.LLM).exclude(endpoint="").order_by("name")


def llm_judges() -> QuerySet[Judge]:
    """Return every LLM judge, runnable or not (the ones to configure)."""
    return Judge.objects.filter(kind=Judge.Kind.LLM).order_by("name")
