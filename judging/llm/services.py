"""Write side of LLM judging: record a batch of LLM grades and failures, start jobs.

LLM grades go through :func:`judging.services.judgments_import` (history, pool counters,
live list and one bulk ``judgments_changed`` per batch), and their provenance is kept in
:class:`~judging.llm.models.LLMOutput` beside the judgment, in the same transaction.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from judging import background, services
from judging.llm import selectors as selectors_llm
from judging.llm.egress import EgressRefused, check_base_url
from judging.llm.judges import judge_version
from judging.llm.models import (
    KEY_ENV_MESSAGE,
    KEY_ENV_PATTERN,
    LLMFailure,
    LLMJob,
    LLMJobChunk,
    LLMOutput,
    LLMProvider,
    LLMUsage,
)
from judging.models import Collection, Judge, Judgment, JudgmentEvent
from judging.services import ImportSummary, JudgmentRow

#: The provenance fields of an LLM judge's output (written together, read by the API).
OUTPUT_FIELDS = [
    "job",
    "native_label",
    "raw_output",
    "prompt_hash",
    "template_version",
    "model_reported",
    "prompt_tokens",
    "completion_tokens",
    "latency_ms",
    "attempts",
]


@dataclass(frozen=True)
class LLMGrade:
    """One graded pair with its provenance (mapped grade beside the native label)."""

    query_external_id: str
    document_external_id: str
    grade: int
    native_label: str = ""
    raw_output: str = ""
    prompt_hash: str = ""
    template_version: str = ""
    model_reported: str = ""
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    latency_ms: float | None = None
    attempts: int | None = None
    note: str = ""  # the model's explanation of its grade (judging.llm.parse.explanation)
    #: Evidence spans from the quotes the answer gave (none: the label keeps no spans).
    evidence: tuple = ()


@dataclass(frozen=True)
class LLMPairFailure:
    """One pair that could not be graded."""

    query_id: int
    document_id: int
    reason: str
    raw_answer: str = ""
    attempts: int = 1


def api_key_for(judge: Judge) -> str:
    """Return the API key of the judge's provider, from the operator's environment.

    Raises ``ValidationError`` on ``llm_provider`` when the provider names a variable that is
    unset or empty, or (re-checked at every call, whatever the database holds) one without
    the ``GRADED_LLM_KEY_`` prefix. The key itself never appears in a message. A provider
    naming no variable needs no key and gets an empty string.
    """
    provider = judge.llm_provider
    if provider is None or not provider.api_key_env:
        return ""
    if not re.match(KEY_ENV_PATTERN, provider.api_key_env):
        raise ValidationError({"llm_provider": f"The provider {provider.name}: {KEY_ENV_MESSAGE}"})
    key = os.environ.get(provider.api_key_env, "")
    if not key:
        raise ValidationError(
            {
                "llm_provider": f"The provider {provider.name} has no key: the operator must "
                f"set {provider.api_key_env} where Graded runs."
            }
        )
    return key


def check_runnable(judge: Judge) -> None:
    """Raise ``ValidationError`` naming the field if ``judge`` cannot be run by Graded.

    Checks the provider's base URL and model as the operator registered them now (a
    provider may have changed since the judge was configured).
    """
    if judge.kind != Judge.Kind.LLM:
        raise ValidationError({"judge": "Only an LLM judge can be run."})
    provider = judge.llm_provider
    if provider is None:
        raise ValidationError({"llm_provider": "Choose a provider for the judge."})
    try:
        check_base_url(provider.base_url)
    except EgressRefused as exc:
        raise ValidationError({"llm_provider": f"The provider {provider.name}: {exc}"}) from None
    if not provider.allows_model(judge.model):
        raise ValidationError(
            {"model": f"The provider {provider.name} does not allow the model {judge.model}."}
        )
    api_key_for(judge)


def check_open_to(*, judge: Judge, collection: Collection, user: AbstractBaseUser | None) -> None:
    """Refuse (``ValidationError`` on ``llm_provider``) a provider not open to ``collection``.

    ``user`` None is the operator; see :func:`judging.llm.selectors.provider_open_to`.
    """
    provider = judge.llm_provider
    if provider is not None and not selectors_llm.provider_open_to(
        provider=provider, collection=collection, user=user
    ):
        raise ValidationError(
            {
                "llm_provider": f"The provider {provider.name} is not open to this collection: "
                "the operator decides which collections may use it."
            }
        )


# --- budgets ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TokenCount:
    """Tokens of one request or of several: prompt and completion."""

    prompt: int = 0
    completion: int = 0

    @property
    def total(self) -> int:
        """Return prompt and completion tokens together."""
        return self.prompt + self.completion

    def __add__(self, other: TokenCount) -> TokenCount:
        """Return the sum of two counts."""
        return TokenCount(self.prompt + other.prompt, self.completion + other.completion)


def _nanos_per_token(price_per_1k: Decimal) -> int:
    """Return the price of one token in 10⁻⁹ of the currency (exact: prices have 6 places)."""
    return int(Decimal(price_per_1k) * 1_000_000)


def spend_nanos(provider: LLMProvider, count: TokenCount) -> int:
    """Return what ``count`` costs at the provider's prices, in 10⁻⁹ of the currency."""
    return count.prompt * _nanos_per_token(provider.price_input_per_1k) + (
        count.completion * _nanos_per_token(provider.price_output_per_1k)
    )


def _left(limit: int | None, used: int) -> float:
    return math.inf if limit is None else max(0, limit - used)


def _money_nanos(amount: Decimal | None) -> int | None:
    return None if amount is None else int(Decimal(amount) * 1_000_000_000)


@dataclass(frozen=True)
class Reservation:
    """What :func:`llm_budget_reserve` granted.

    ``granted``: how many of the counts (from the first) were reserved. ``why``: which
    budget had no room for the next one (empty when all fitted). ``final``: whether the
    next one would not fit even once every request in flight has answered (what they
    reserved given back), so waiting cannot help.
    """

    granted: int
    why: str = ""
    final: bool = False


def _limits(provider: LLMProvider, usage: LLMUsage) -> list[tuple[str, float, float, str]]:
    """Return each budget as (unit, room left, room left once reservations are back, name)."""
    budgets = [
        ("tokens", provider.token_budget, provider, "token budget"),
        ("tokens", provider.collection_token_budget, usage, "token budget per collection"),
        ("spend", _money_nanos(provider.spend_budget), provider, "spend budget"),
        (
            "spend",
            _money_nanos(provider.collection_spend_budget),
            usage,
            "spend budget per collection",
        ),
    ]
    limits = []
    for unit, limit, row, name in budgets:
        if unit == "tokens":
            used, reserved = row.tokens_used, row.tokens_reserved
        else:
            used, reserved = row.spend_used_nanos, row.spend_reserved_nanos
        limits.append((unit, _left(limit, used + reserved), _left(limit, used), name))
    return limits


def budget_message(provider: LLMProvider, name: str) -> str:
    """Return the message of a job stopped by ``provider``'s budget ``name``."""
    return (
        f"Budget reached: the provider {provider.name}'s {name} has no room for another "
        "request (the operator can raise it); the pairs not asked are left for a later job."
    )


def _locked_rows(provider_id: int, collection_id: int) -> tuple[LLMProvider, LLMUsage]:
    """Lock the provider's row, then the collection's usage row (always in this order)."""
    provider = LLMProvider.objects.select_for_update().get(pk=provider_id)
    usage, _ = LLMUsage.objects.get_or_create(provider_id=provider_id, collection_id=collection_id)
    return provider, LLMUsage.objects.select_for_update().get(pk=usage.pk)


@transaction.atomic
def llm_budget_reserve(
    *, provider_id: int, collection_id: int, counts: Sequence[TokenCount]
) -> Reservation:
    """Reserve the first of ``counts`` that fit in every budget, before their requests go.

    Each count is the most one request may use (its prompt's bound and its
    ``max_tokens``); a budget holds what was used plus what is reserved. The provider's
    row is locked first, then the collection's usage row, so concurrent workers (and jobs
    of other collections) reserve one after the other and together never pass a budget.
    """
    provider, usage = _locked_rows(provider_id, collection_id)
    limits = _limits(provider, usage)
    granted, tokens, spend = 0, 0, 0
    refusal: Reservation | None = None
    for count in counts:
        cost = {"tokens": count.total, "spend": spend_nanos(provider, count)}
        taken = {"tokens": tokens, "spend": spend}
        short = [
            (cost[unit] > without, name)
            for unit, room, without, name in limits
            if taken[unit] + cost[unit] > room
        ]
        if short:
            final = any(never for never, _ in short)
            name = next((n for never, n in short if never), short[0][1])
            refusal = Reservation(granted, budget_message(provider, name), final)
            break
        granted, tokens, spend = granted + 1, tokens + count.total, spend + cost["spend"]
    if granted:
        _add(provider, usage, reserved=(tokens, spend))
    return refusal or Reservation(granted)


def _add(
    provider: LLMProvider,
    usage: LLMUsage,
    *,
    reserved: tuple[int, int] = (0, 0),
    used: tuple[int, int] = (0, 0),
) -> None:
    """Add tokens and spend (reserved ones may be negative) to both locked rows."""
    for row in (provider, usage):
        row.tokens_reserved = max(0, row.tokens_reserved + reserved[0])
        row.spend_reserved_nanos = max(0, row.spend_reserved_nanos + reserved[1])
        row.tokens_used += used[0]
        row.spend_used_nanos += used[1]
    fields = ["tokens_reserved", "spend_reserved_nanos", "tokens_used", "spend_used_nanos"]
    provider.save(update_fields=fields)
    usage.save(update_fields=[*fields, "updated_at"])


@transaction.atomic
def llm_budget_settle(
    *, provider_id: int, collection_id: int, reserved: TokenCount, used: TokenCount
) -> None:
    """Give back the reservations of answered requests and count what they used.

    ``reserved`` is the sum of those requests' reservations (a request never sent gives
    its back whole), ``used`` the sum of their usage as the API reported it.
    """
    if reserved == used == TokenCount():
        return
    provider, usage = _locked_rows(provider_id, collection_id)
    _add(
        provider,
        usage,
        reserved=(-reserved.total, -spend_nanos(provider, reserved)),
        used=(used.total, spend_nanos(provider, used)),
    )


def outputs_store(
    *,
    judge: Judge,
    collection: Collection,
    grades: Sequence[LLMGrade],
    job: LLMJob | None = None,
) -> None:
    """Create or replace the provenance of the judge's judgments of ``grades``' pairs."""
    if not grades:
        return
    by_key = {(g.query_external_id, g.document_external_id): g for g in grades}
    # Ids first (one indexed look-up each), then the judge's judgments of exactly those
    # queries and documents through its (judge, query, document) index: the cost follows
    # the batch, not the number of labels the judge has in the collection.
    queries = dict(
        collection.queries.filter(external_id__in={k[0] for k in by_key}).values_list(
            "pk", "external_id"
        )
    )
    documents = dict(
        collection.documents.filter(external_id__in={k[1] for k in by_key}).values_list(
            "pk", "external_id"
        )
    )
    judgments = Judgment.objects.filter(
        judge=judge, query_id__in=list(queries), document_id__in=list(documents)
    ).values_list("pk", "query_id", "document_id")
    rows = []
    for pk, query_id, document_id in judgments:
        grade = by_key.get((queries[query_id], documents[document_id]))
        if grade is None:
            continue
        rows.append(
            LLMOutput(
                judgment_id=pk,
                job=job,
                native_label=grade.native_label[:100],
                raw_output=grade.raw_output,
                prompt_hash=grade.prompt_hash,
                template_version=grade.template_version[:100],
                model_reported=grade.model_reported[:200],
                prompt_tokens=grade.prompt_tokens,
                completion_tokens=grade.completion_tokens,
                latency_ms=grade.latency_ms,
                attempts=grade.attempts,
                updated_at=timezone.now(),
            )
        )
    LLMOutput.objects.bulk_create(
        rows,
        batch_size=500,
        update_conflicts=True,
        unique_fields=["judgment"],
        update_fields=[*OUTPUT_FIELDS, "updated_at"],
    )


@transaction.atomic
def llm_grades_import(
    *,
    collection: Collection,
    judge: Judge,
    grades: Sequence[LLMGrade],
    channel: str = JudgmentEvent.Channel.LLM,
    actor: AbstractBaseUser | None = None,
    job: LLMJob | None = None,
) -> ImportSummary:
    """Record LLM grades and their provenance at once, all or nothing.

    The judgments go through :func:`judging.services.judgments_import`, so history, pool
    counters and the live list are updated once for the whole batch.
    """
    rows = [
        JudgmentRow(
            line=i,
            query_external_id=g.query_external_id,
            document_external_id=g.document_external_id,
            grade=g.grade,
            note=g.note,
            evidence=tuple(g.evidence),
        )
        for i, g in enumerate(grades, start=1)
    ]
    summary = services.judgments_import(
        collection=collection,
        judge=judge,
        rows=rows,
        channel=channel,
        actor=actor,
        judge_version=judge_version(judge),
    )
    outputs_store(judge=judge, collection=collection, grades=grades, job=job)
    return summary


class LeaseLost(Exception):
    """The worker no longer holds the chunk: another took it over after its lease ran out."""


def _held_chunk(chunk_id: int, owner: str) -> LLMJobChunk:
    """Lock and return chunk ``chunk_id`` if ``owner`` still holds it, else raise LeaseLost."""
    chunk = (
        LLMJobChunk.objects.select_for_update(of=("self",))
        .filter(pk=chunk_id, owner=owner, status=LLMJobChunk.Status.RUNNING)
        .order_by()
        .first()
    )
    if chunk is None:
        raise LeaseLost(f"chunk {chunk_id} is no longer held by {owner}")
    return chunk


@transaction.atomic
def llm_batch_record(
    *,
    job: LLMJob,
    grades: Sequence[LLMGrade],
    failures: Sequence[LLMPairFailure],
    chunk_id: int | None = None,
    owner: str = "",
    lease_seconds: float = 60.0,
    chunk_done: bool = False,
) -> None:
    """Record one batch of a job: its grades, its failures and the job's counters.

    With ``chunk_id`` the batch belongs to that chunk of the job: it is written only if
    ``owner`` still holds the chunk (checked under a row lock, so a worker whose lease
    ran out and was taken over can never write a pair twice; raises :class:`LeaseLost`
    and writes nothing), the lease is renewed, and ``chunk_done`` marks the chunk done
    in the same transaction as its last outcomes.
    """
    if chunk_id is not None:
        _held_chunk(chunk_id, owner)
        fields: dict = {"lease_until": timezone.now() + timedelta(seconds=lease_seconds)}
        if chunk_done:
            fields.update(status=LLMJobChunk.Status.DONE, finished_at=timezone.now())
        LLMJobChunk.objects.filter(pk=chunk_id).update(**fields)
    if grades:
        llm_grades_import(
            collection=job.collection,
            judge=job.judge,
            grades=grades,
            channel=JudgmentEvent.Channel.LLM,
            job=job,
        )
    if failures:
        LLMFailure.objects.bulk_create(
            [
                LLMFailure(
                    job=job,
                    query_id=f.query_id,
                    document_id=f.document_id,
                    reason=f.reason,
                    raw_answer=f.raw_answer,
                    attempts=f.attempts,
                )
                for f in failures
            ],
            batch_size=500,
            update_conflicts=True,
            unique_fields=["job", "query", "document"],
            update_fields=["reason", "raw_answer", "attempts"],
        )
    LLMJob.objects.filter(pk=job.pk).update(
        done=F("done") + len(grades),
        failed=F("failed") + len(failures),
        prompt_tokens=F("prompt_tokens") + sum(g.prompt_tokens or 0 for g in grades),
        completion_tokens=F("completion_tokens") + sum(g.completion_tokens or 0 for g in grades),
    )


@transaction.atomic
def llm_job_create(
    *,
    collection: Collection,
    judge: Judge,
    concurrency: int = 4,
    limit: int | None = None,
    queries: Sequence[str] = (),
    actor: AbstractBaseUser | None = None,
) -> LLMJob:
    """Create a queued job after checking the judge can run and the options make sense.

    Raises ``ValidationError`` naming the field; no request is made.
    """
    check_runnable(judge)
    if not judge.collections.filter(pk=collection.pk).exists():
        raise ValidationError(
            {"judge": f"LLM judge {judge.pk} is not assigned to this collection."}
        )
    check_open_to(judge=judge, collection=collection, user=actor)
    if not 1 <= concurrency <= 256:
        raise ValidationError({"concurrency": "Use a concurrency from 1 to 256."})
    if limit is not None and limit < 1:
        raise ValidationError({"limit": "Use a positive limit, or none."})
    wanted = [q.strip() for q in queries if q.strip()]
    if wanted:
        known = set(
            collection.queries.filter(external_id__in=wanted).values_list("external_id", flat=True)
        )
        unknown = [q for q in wanted if q not in known]
        if unknown:
            raise ValidationError({"queries": f"Unknown query id(s): {', '.join(unknown)}."})
    return LLMJob.objects.create(
        collection=collection,
        judge=judge,
        created_by=actor,
        options={"concurrency": concurrency, "limit": limit, "queries": wanted},
    )


def llm_job_set_status(
    *,
    job: LLMJob,
    status: str,
    error: str = "",
    total: int | None = None,
    skipped: int | None = None,
) -> None:
    """Move a job to ``status`` (stamping start or end times), with its pair counts if given."""
    fields: dict = {"status": status}
    if total is not None:
        fields["total"] = total
    if skipped is not None:
        fields["skipped"] = skipped
    if status == LLMJob.Status.RUNNING:
        fields["started_at"] = timezone.now()
    if status in (LLMJob.Status.DONE, LLMJob.Status.FAILED):
        fields["finished_at"] = timezone.now()
    if error:
        fields["error"] = error
    LLMJob.objects.filter(pk=job.pk).update(**fields)
    for name, value in fields.items():
        setattr(job, name, value)


#: Characters of a job's error message kept (failure reasons are short already).
MAX_JOB_ERROR = 500


#: Pairs in one chunk of a job when the settings name no other size.
DEFAULT_CHUNK_PAIRS = 128


@transaction.atomic
def llm_job_plan(
    *,
    job: LLMJob,
    pairs: Sequence[tuple[int, int]],
    skipped: int,
    chunk_pairs: int = DEFAULT_CHUNK_PAIRS,
) -> bool:
    """Split a queued job's ``pairs`` (query id, document id) into chunks and start it.

    Returns False and changes nothing when the job is no longer queued (another worker
    planned it first: a task delivered twice plans once).
    """
    if chunk_pairs < 1:
        raise ValueError("chunk_pairs must be positive")
    locked = LLMJob.objects.select_for_update().filter(pk=job.pk).first()
    if locked is None or locked.status != LLMJob.Status.QUEUED:
        return False
    LLMJobChunk.objects.bulk_create(
        [
            LLMJobChunk(job=job, index=i, pairs=[list(p) for p in pairs[a : a + chunk_pairs]])
            for i, a in enumerate(range(0, len(pairs), chunk_pairs))
        ],
        batch_size=500,
    )
    llm_job_set_status(job=job, status=LLMJob.Status.RUNNING, total=len(pairs), skipped=skipped)
    return True


@transaction.atomic
def llm_chunk_claim(*, job: LLMJob, owner: str, lease_seconds: float) -> LLMJobChunk | None:
    """Take the job's first queued chunk, or one whose lease ran out; None if there is none.

    Nothing is claimed once the job has ended. On PostgreSQL concurrent claimers skip each
    other's locked rows, so no two workers take the same chunk.
    """
    if not LLMJob.objects.filter(pk=job.pk, status=LLMJob.Status.RUNNING).exists():
        return None
    now = timezone.now()
    free = LLMJobChunk.objects.filter(job=job).filter(
        Q(status=LLMJobChunk.Status.QUEUED)
        | Q(status=LLMJobChunk.Status.RUNNING, lease_until__lt=now)
    )
    if connection.features.has_select_for_update_skip_locked:
        free = free.select_for_update(skip_locked=True, of=("self",))
    chunk = free.order_by("index").first()
    if chunk is None:
        return None
    chunk.status = LLMJobChunk.Status.RUNNING
    chunk.owner = owner
    chunk.lease_until = now + timedelta(seconds=lease_seconds)
    chunk.claims += 1
    chunk.save(update_fields=["status", "owner", "lease_until", "claims"])
    return chunk


def llm_chunks_renew(*, chunk_ids: Sequence[int], owner: str, lease_seconds: float) -> set[int]:
    """Extend the leases ``owner`` holds on ``chunk_ids``; return the ids it still holds."""
    if not chunk_ids:
        return set()
    held = LLMJobChunk.objects.filter(
        pk__in=list(chunk_ids), owner=owner, status=LLMJobChunk.Status.RUNNING
    )
    with transaction.atomic():
        ids = set(held.select_for_update(of=("self",)).order_by().values_list("pk", flat=True))
        LLMJobChunk.objects.filter(pk__in=ids).update(
            lease_until=timezone.now() + timedelta(seconds=lease_seconds)
        )
    return ids


def llm_chunks_release(*, chunk_ids: Sequence[int], owner: str) -> None:
    """End ``owner``'s leases on ``chunk_ids`` now, so any worker may take the chunks over."""
    if chunk_ids:
        LLMJobChunk.objects.filter(
            pk__in=list(chunk_ids), owner=owner, status=LLMJobChunk.Status.RUNNING
        ).update(lease_until=timezone.now())


def llm_job_running(*, job: LLMJob) -> bool:
    """Return whether ``job`` is still running (workers ask this to see a stop promptly)."""
    return LLMJob.objects.filter(pk=job.pk, status=LLMJob.Status.RUNNING).exists()


@transaction.atomic
def llm_job_stop(*, job: LLMJob, error: str) -> bool:
    """Fail a queued or running job now with ``error``; return whether this call ended it.

    Under a lock on the job row, so a job another worker has just ended (Done, or
    stopped for another reason) keeps its status and error.
    """
    locked = LLMJob.objects.select_for_update().filter(pk=job.pk).first()
    if locked is None or locked.status not in (LLMJob.Status.QUEUED, LLMJob.Status.RUNNING):
        return False
    llm_job_set_status(job=job, status=LLMJob.Status.FAILED, error=error[:MAX_JOB_ERROR])
    return True


@transaction.atomic
def llm_job_finish_if_complete(*, job: LLMJob) -> bool:
    """End a running job whose chunks are all done (once, whoever asks); return whether it ended.

    Returns True as well when the job had already ended (done or failed).
    """
    locked = LLMJob.objects.select_for_update().filter(pk=job.pk).first()
    if locked is None or locked.status in (LLMJob.Status.DONE, LLMJob.Status.FAILED):
        return True
    if locked.status != LLMJob.Status.RUNNING:
        return False
    if job.chunks.exclude(status=LLMJobChunk.Status.DONE).exists():
        return False
    llm_job_finish(job=job)
    return True


def llm_job_finish(*, job: LLMJob) -> None:
    """End a job that ran: Failed when every pair failed, else Done.

    A failed job's ``error`` names the commonest reason and the provider's registered
    name; a done job with failures lists them as before (pages say "done with N failures").
    """
    job.refresh_from_db(fields=["total", "done", "failed"])
    if job.total and job.failed and not job.done:
        commonest = (
            LLMFailure.objects.filter(job=job)
            .values("reason")
            .annotate(n=Count("pk"))
            .order_by("-n", "reason")
            .first()
        )
        provider = job.judge.llm_provider
        where = f" at {provider.name}" if provider is not None else ""
        reason = f": {commonest['reason']}" if commonest else ""
        error = f"All {job.failed} pairs failed{where}{reason}"[:MAX_JOB_ERROR]
        llm_job_set_status(job=job, status=LLMJob.Status.FAILED, error=error)
    else:
        llm_job_set_status(job=job, status=LLMJob.Status.DONE)


def llm_job_start(*, job: LLMJob) -> None:
    """Run ``job`` in the background once the current transaction commits.

    With a Celery broker the job is a task; without one it runs inline when Celery is
    eager in tests (``GRADED_LLM_JOBS_INLINE``), else in a thread of this process
    (:func:`judging.background.start_after_commit`).
    """
    background.start_after_commit("judging.run_llm_job", job.pk, thread_name=f"llm-job-{job.pk}")


def maps_labels(judge: Judge) -> bool:
    """Return whether grades posted for ``judge`` are native labels to map onto 0–4."""
    return judge.kind == Judge.Kind.LLM and bool(judge.native_scale or judge.scale_mapping)


def native_to_grade(judge: Judge, value: object) -> tuple[str, int]:
    """Return ``(native label, grade 0–4)`` of a label posted for ``judge``.

    Raises ``ValidationError`` on ``grade`` for a label off the judge's native scale (never
    rounded or clamped).
    """
    from judging.llm import parse

    label = parse.label_of(value)
    if label is None:
        raise ValidationError({"grade": f"{value!r} is not a label of this judge's scale."})
    try:
        return parse.parse_label(
            label, native_scale=judge.native_scale or [], mapping=judge.scale_mapping or {}
        )
    except parse.AnswerError as exc:
        raise ValidationError({"grade": str(exc)}) from None
