"""Models of LLM judge runs: jobs, per-pair failures, and the provenance of LLM grades."""

from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from judging.job_status import JobStatus

if TYPE_CHECKING:
    from judging.llm.egress import EgressPolicy

#: Environment variables an operator may name as a provider's key: this prefix only, so no
#: registry entry can make Graded send ``SECRET_KEY``, ``DATABASE_URL`` or any other secret.
KEY_ENV_PREFIX = "GRADED_LLM_KEY_"
KEY_ENV_PATTERN = r"\AGRADED_LLM_KEY_[A-Z0-9_]+\Z"  # \Z: no trailing newline
KEY_ENV_MESSAGE = (
    f"Name an environment variable starting with {KEY_ENV_PREFIX} "
    "(capital letters, digits, _), never the key itself."
)


class LLMProvider(models.Model):
    """An endpoint the operator lets LLM judges call: where requests go, with which key.

    Only superusers create or change providers (the admin); coordinators of the collections
    it is open to (``allowed_collections``, or coordinators in ``allowed_groups``) pick one
    for their LLM judges by name, and the runner keeps every job within its token and spend
    budgets (:func:`judging.llm.services.llm_budget_reserve`). See :mod:`judging.llm.egress`
    for what is refused on the way.
    """

    name = models.SlugField(
        max_length=100, unique=True, help_text="Name coordinators pick (letters, digits, -, _)."
    )
    base_url = models.CharField(
        max_length=500,
        help_text="Base URL of an OpenAI-compatible API (requests go to <it>/chat/completions).",
    )
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[RegexValidator(KEY_ENV_PATTERN, KEY_ENV_MESSAGE)],
        help_text=f"Environment variable holding the key, {KEY_ENV_PREFIX}…; empty: no key.",
    )
    allowed_models = models.JSONField(
        default=list,
        blank=True,
        help_text='Model names judges may use with this provider, e.g. ["gpt-4o"]; ["*"]: any.',
    )
    allowed_private_hosts = models.JSONField(
        default=list,
        blank=True,
        help_text="Host names, addresses or networks (10.0.0.0/8) this provider may reach "
        "although they are loopback, private or link-local (a local vLLM). Empty: public only.",
    )
    allowed_collections = models.ManyToManyField(
        "judging.Collection",
        blank=True,
        related_name="llm_providers",
        help_text="Collections whose coordinators may use this provider. With no collection "
        "and no group here, only superusers may.",
    )
    allowed_groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="llm_providers",
        help_text="Groups whose members may use this provider in the collections they coordinate.",
    )
    price_input_per_1k = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        default=Decimal(0),
        validators=[MinValueValidator(Decimal(0))],
        help_text="Price of 1,000 prompt tokens, in the operator's currency (for budgets).",
    )
    price_output_per_1k = models.DecimalField(
        max_digits=12,
        decimal_places=6,
        default=Decimal(0),
        validators=[MinValueValidator(Decimal(0))],
        help_text="Price of 1,000 completion tokens, in the operator's currency.",
    )
    token_budget = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="Most tokens (prompt and completion) all jobs together may use through "
        "this provider; empty: no limit.",
    )
    spend_budget = models.DecimalField(
        max_digits=14,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="Most all jobs together may spend through this provider (at the prices "
        "above); empty: no limit.",
    )
    collection_token_budget = models.PositiveBigIntegerField(
        null=True,
        blank=True,
        help_text="Most tokens each collection may use through this provider; empty: no limit.",
    )
    collection_spend_budget = models.DecimalField(
        max_digits=14,
        decimal_places=6,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="Most each collection may spend through this provider; empty: no limit.",
    )
    tokens_used = models.PositiveBigIntegerField(
        default=0, help_text="Tokens used so far, as the API reported them (kept by the runner)."
    )
    spend_used_nanos = models.PositiveBigIntegerField(
        default=0, help_text="Spent so far, in 10⁻⁹ of the currency (kept by the runner)."
    )
    tokens_reserved = models.PositiveBigIntegerField(
        default=0,
        help_text="Tokens reserved for requests in flight (their most: prompt bound and "
        "max_tokens); given back as answers come.",
    )
    spend_reserved_nanos = models.PositiveBigIntegerField(
        default=0, help_text="Spend reserved for requests in flight, in 10⁻⁹ of the currency."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "LLM provider"
        constraints = [
            models.CheckConstraint(
                condition=Q(api_key_env="") | Q(api_key_env__regex=KEY_ENV_PATTERN),
                name="llm_provider_key_env_prefix",
                violation_error_message=KEY_ENV_MESSAGE,
            ),
        ]

    def __str__(self) -> str:
        """Return the provider's name."""
        return self.name

    def clean(self) -> None:
        """Refuse a base URL with user info or another scheme, and unreadable host entries."""
        from django.core.exceptions import ValidationError

        from judging.llm.egress import destination_problems

        self.base_url, errors = destination_problems(self.base_url, self.allowed_private_hosts)
        if not isinstance(self.allowed_models, list) or not all(
            isinstance(m, str) and m for m in self.allowed_models
        ):
            errors["allowed_models"] = 'Give a JSON list of model names, e.g. ["gpt-4o"].'
        if errors:
            raise ValidationError(errors)

    def egress_policy(self) -> EgressPolicy:
        """Return the non-public destinations the operator allowed this provider."""
        from judging.llm.egress import EgressPolicy

        return EgressPolicy.from_entries(self.allowed_private_hosts or [])

    def allows_model(self, model: str) -> bool:
        """Return whether judges may call ``model`` through this provider."""
        allowed = [str(m) for m in self.allowed_models or []]
        return "*" in allowed or model in allowed


class LLMUsage(models.Model):
    """What one collection used (and has reserved) through one provider: tokens and spend."""

    provider = models.ForeignKey(LLMProvider, on_delete=models.CASCADE, related_name="usage")
    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="llm_usage"
    )
    tokens_used = models.PositiveBigIntegerField(default=0, help_text="Tokens used.")
    spend_used_nanos = models.PositiveBigIntegerField(
        default=0, help_text="Spent, in 10⁻⁹ of the operator's currency."
    )
    tokens_reserved = models.PositiveBigIntegerField(
        default=0, help_text="Tokens reserved for requests in flight."
    )
    spend_reserved_nanos = models.PositiveBigIntegerField(
        default=0, help_text="Spend reserved for requests in flight, in 10⁻⁹ of the currency."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["provider_id", "collection_id"]
        verbose_name = "LLM usage"
        verbose_name_plural = "LLM usage"
        constraints = [
            models.UniqueConstraint(
                fields=["provider", "collection"], name="llm_usage_unique_provider_collection"
            ),
        ]

    def __str__(self) -> str:
        """Return ``provider @ collection: N tokens``."""
        return f"{self.provider_id} @ {self.collection_id}: {self.tokens_used} tokens"


class LLMJob(models.Model):
    """One run of an LLM judge over a collection's pool."""

    Status = JobStatus

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="llm_jobs"
    )
    judge = models.ForeignKey("judging.Judge", on_delete=models.PROTECT, related_name="llm_jobs")
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, help_text="Where it is."
    )
    total = models.PositiveIntegerField(default=0, help_text="Pairs this job set out to judge.")
    done = models.PositiveIntegerField(default=0, help_text="Pairs judged.")
    failed = models.PositiveIntegerField(default=0, help_text="Pairs that failed.")
    skipped = models.PositiveIntegerField(
        default=0, help_text="Pairs in scope the judge had already graded."
    )
    prompt_tokens = models.PositiveBigIntegerField(default=0, help_text="Prompt tokens used.")
    completion_tokens = models.PositiveBigIntegerField(
        default=0, help_text="Completion tokens used."
    )
    options = models.JSONField(
        default=dict, blank=True, help_text="concurrency, limit and queries as requested."
    )
    error = models.TextField(blank=True, help_text="Why the whole job failed, if it did.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="llm_jobs",
        help_text="Who started it (empty from the command line).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "LLM job"
        indexes = [models.Index(fields=["collection", "created_at"], name="llm_job_collection")]
        constraints = [
            models.CheckConstraint(
                condition=Q(done__lte=models.F("total")), name="llm_job_done_le_total"
            ),
        ]

    def __str__(self) -> str:
        """Return ``job N (status)``."""
        return f"LLM job {self.pk} ({self.status})"

    @property
    def processed(self) -> int:
        """Return how many pairs have an outcome (judged or failed)."""
        return self.done + self.failed

    @property
    def percent(self) -> int:
        """Return the share of pairs with an outcome, 0–100."""
        return 100 if not self.total else min(100, round(100 * self.processed / self.total))

    @property
    def ended(self) -> bool:
        """Return whether the job has ended (done or failed)."""
        return self.status in (self.Status.DONE, self.Status.FAILED)

    @property
    def not_asked(self) -> int:
        """Return the pairs an ended job never asked (stopped early); 0 while it runs."""
        return max(0, self.total - self.processed) if self.ended else 0

    @property
    def bar_done(self) -> int:
        """Return the judged pairs' share of the job's bar, in thousandths."""
        return round(1000 * self.done / self.total) if self.total else 0

    @property
    def bar_failed(self) -> int:
        """Return the failed pairs' share of the bar, in thousandths (never hidden by rounding)."""
        if not self.total or not self.failed:
            return 0
        return min(1000 - self.bar_done, max(8, round(1000 * self.failed / self.total)))


class LLMJobChunk(models.Model):
    """A slice of a job's pairs that one worker takes at a time, under a lease.

    A worker claims a queued chunk, or one whose lease ran out (its worker died or
    stalled), renews the lease while it works and records each batch only while it still
    holds the lease, so a pair is graded or failed exactly once however many workers share
    the job and whichever of them is killed.
    """

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    job = models.ForeignKey(LLMJob, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField(help_text="Position of the chunk in the job (from 0).")
    pairs = models.JSONField(help_text="The chunk's pairs as [query id, document id] lists.")
    status = models.CharField(
        max_length=10, choices=Status.choices, default=Status.QUEUED, help_text="Where it is."
    )
    owner = models.CharField(
        max_length=200, blank=True, help_text="The worker holding the lease (host:pid:token)."
    )
    lease_until = models.DateTimeField(
        null=True, blank=True, help_text="When the lease runs out unless the worker renews it."
    )
    claims = models.PositiveIntegerField(
        default=0, help_text="Times a worker took the chunk (above 1: a worker died holding it)."
    )
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["job_id", "index"]  # by column: no join (a FOR UPDATE would lock the job)
        verbose_name = "LLM job chunk"
        indexes = [models.Index(fields=["job", "status", "index"], name="llm_chunk_job_status")]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="llm_chunk_unique_index"),
        ]

    def __str__(self) -> str:
        """Return ``job N chunk I (status)``."""
        return f"LLM job {self.job_id} chunk {self.index} ({self.status})"


class LLMFailure(models.Model):
    """A pair an LLM job could not grade: never a judgment, retried by the next run."""

    job = models.ForeignKey(LLMJob, on_delete=models.CASCADE, related_name="failures")
    query = models.ForeignKey("judging.Query", on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey("judging.Document", on_delete=models.CASCADE, related_name="+")
    reason = models.TextField(help_text="What went wrong.")
    raw_answer = models.TextField(blank=True, help_text="The answer as received, if any.")
    attempts = models.PositiveSmallIntegerField(default=1, help_text="Requests made.")
    at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        verbose_name = "LLM failure"
        constraints = [
            models.UniqueConstraint(
                fields=["job", "query", "document"], name="llm_failure_unique_pair"
            ),
        ]

    def __str__(self) -> str:
        """Return ``query/document: reason``."""
        return f"{self.query_id}/{self.document_id}: {self.reason}"


class LLMOutput(models.Model):
    """Provenance of an LLM judge's current judgment: what was asked and answered."""

    judgment = models.OneToOneField(
        "judging.Judgment", on_delete=models.CASCADE, related_name="llm_output"
    )
    job = models.ForeignKey(
        LLMJob,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="outputs",
        help_text="The job that produced it (empty when posted over the API).",
    )
    native_label = models.CharField(
        max_length=100, blank=True, help_text="The label on the judge's own scale."
    )
    raw_output = models.TextField(blank=True, help_text="The answer as the model gave it.")
    prompt_hash = models.CharField(
        max_length=64, blank=True, help_text="SHA-256 of the system and user messages sent."
    )
    template_version = models.CharField(
        max_length=100, blank=True, help_text="Prompt version, or a hash of the template."
    )
    model_reported = models.CharField(
        max_length=200, blank=True, help_text="Model name as the API reported it."
    )
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.FloatField(null=True, blank=True, help_text="Latency of the answer.")
    attempts = models.PositiveSmallIntegerField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "LLM output"

    def __str__(self) -> str:
        """Return ``judgment N: label``."""
        return f"judgment {self.judgment_id}: {self.native_label}"
