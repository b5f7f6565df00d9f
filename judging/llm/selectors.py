"""Read side of LLM judge jobs."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Min, Q, QuerySet

from judging.llm.models import LLMFailure, LLMJob, LLMOutput, LLMProvider
from judging.models import Collection, Judge, Membership


def jobs_of(*, collection: Collection) -> QuerySet[LLMJob]:
    """Return the collection's LLM jobs, newest first, with their judges.

    Their failures are read grouped (:func:`failure_groups`) or a page at a time
    (:func:`job_failures`), by query and document id: requests run concurrently, so the
    order in which they failed says nothing.
    """
    return LLMJob.objects.filter(collection=collection).select_related("judge")


def job_in(*, collection: Collection, job_id: int) -> LLMJob | None:
    """Return one job of the collection (its judge and provider along), or None.

    Its failures are not loaded: pages read them grouped (:func:`failure_groups`) or a
    page at a time (:func:`job_failures`).
    """
    return (
        LLMJob.objects.filter(collection=collection, pk=job_id)
        .select_related("judge__llm_provider")
        .first()
    )


@dataclass(frozen=True)
class FailureGroup:
    """The failures of a job that share one reason: how many, and one raw answer."""

    reason: str
    count: int
    example: str


def failure_groups(*, job: LLMJob, limit: int | None = None) -> list[FailureGroup]:
    """Return the job's failures grouped by reason, commonest first (two queries).

    ``example`` is the raw answer of the group's first failure (often all the same).
    """
    rows = (
        LLMFailure.objects.filter(job=job)
        .values("reason")
        .annotate(n=Count("pk"), first=Min("pk"))
        .order_by("-n", "reason")
    )
    rows = list(rows[:limit] if limit else rows)
    examples = dict(
        LLMFailure.objects.filter(pk__in=[r["first"] for r in rows]).values_list("pk", "raw_answer")
    )
    return [FailureGroup(r["reason"], r["n"], examples.get(r["first"], "")) for r in rows]


def failure_reasons(*, job: LLMJob) -> int:
    """Return how many different reasons the job's failures have."""
    return LLMFailure.objects.filter(job=job).values("reason").distinct().count()


def job_failures(*, job: LLMJob, reason: str | None = None) -> QuerySet[LLMFailure]:
    """Return the job's failures (of one ``reason`` if given), by query and document id."""
    failures = LLMFailure.objects.filter(job=job)
    if reason is not None and "\x00" in reason:  # no reason has one (PostgreSQL refuses it)
        return failures.none()
    if reason is not None:
        failures = failures.filter(reason=reason)
    return failures.select_related("query", "document").order_by(
        "query__external_id", "document__external_id", "id"
    )


def runnable_llm_judges(*, collection: Collection) -> QuerySet[Judge]:
    """Return the LLM judges Graded can run in ``collection`` (assigned, with a provider)."""
    return (
        Judge.objects.filter(kind=Judge.Kind.LLM, collections=collection)
        .filter(llm_provider__isnull=False)
        .select_related("llm_provider")
        .order_by("name")
    )


def llm_judges(*, collection: Collection) -> QuerySet[Judge]:
    """Return every LLM judge assigned to ``collection``, runnable or not (to configure)."""
    return (
        Judge.objects.filter(kind=Judge.Kind.LLM, collections=collection)
        .select_related("llm_provider")
        .order_by("name")
    )


def job_outputs(*, collection: Collection, job_id: int) -> QuerySet[LLMOutput]:
    """Return the outputs of one of the collection's jobs (its judge's current judgments).

    Sorted by query and document id; the judgment, its pair and the job come along.
    """
    return (
        LLMOutput.objects.filter(job_id=job_id, job__collection=collection)
        .select_related("judgment__query", "judgment__document")
        .order_by("judgment__query__external_id", "judgment__document__external_id", "pk")
    )


def providers_for(*, user: AbstractBaseUser) -> QuerySet[LLMProvider]:
    """Return the providers ``user`` may choose for an LLM judge, by name.

    Superusers: every provider. Others: those open to a collection they coordinate, and,
    if they coordinate any, those open to one of their groups. A provider open to no
    collection and no group is for superusers only.
    """
    providers = LLMProvider.objects.order_by("name")
    if user.is_superuser:
        return providers
    coordinated = Membership.objects.filter(user=user, role=Membership.Role.COORDINATOR)
    if not coordinated.exists():
        return providers.none()
    ids = LLMProvider.objects.filter(
        Q(allowed_collections__in=coordinated.values("collection_id"))
        | Q(allowed_groups__in=user.groups.all())
    ).values("pk")
    return providers.filter(pk__in=ids)


def providers_in(*, collection: Collection, user: AbstractBaseUser) -> QuerySet[LLMProvider]:
    """Return the providers ``user`` (a coordinator of ``collection``) may use there."""
    providers = LLMProvider.objects.order_by("name")
    if user.is_superuser:
        return providers
    ids = LLMProvider.objects.filter(
        Q(allowed_collections=collection) | Q(allowed_groups__in=user.groups.all())
    ).values("pk")
    return providers.filter(pk__in=ids)


def provider_open_to(
    *, provider: LLMProvider, collection: Collection, user: AbstractBaseUser | None
) -> bool:
    """Return whether a job of ``collection`` started by ``user`` may use ``provider``.

    ``user`` None is the operator (the command line): always. Superusers: always.
    """
    if user is None or user.is_superuser:
        return True
    return providers_in(collection=collection, user=user).filter(pk=provider.pk).exists()
