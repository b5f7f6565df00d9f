"""Search endpoints (operator registry), versioned configurations and snapshots."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q

from judging.job_status import JobStatus
from metrics.search import presets
from metrics.search.client import AUTH_KINDS

if TYPE_CHECKING:
    from judging.llm.egress import EgressPolicy

#: Environment variables an endpoint may name: this prefix only (as for LLM providers), so
#: no registry entry can make Graded send ``SECRET_KEY`` or another provider's key.
SEARCH_KEY_ENV_PREFIX = "GRADED_SEARCH_KEY_"
SEARCH_KEY_ENV_PATTERN = r"\AGRADED_SEARCH_KEY_[A-Z0-9_]+\Z"
SEARCH_KEY_ENV_MESSAGE = (
    f"Name an environment variable starting with {SEARCH_KEY_ENV_PREFIX} "
    "(capital letters, digits, _), never the credential itself."
)


class SearchEndpoint(models.Model):
    """A search engine the operator lets configurations query (only superusers edit it).

    Coordinators of the collections it is open to (``allowed_collections``, or members of
    ``allowed_groups`` in the collections they coordinate) use it by name; open to none, it
    is for superusers only. Its outbound requests pass :mod:`judging.llm.egress`, the
    guard of LLM providers.
    """

    KIND_CHOICES = [(k, presets.KIND_LABELS[k]) for k in presets.KINDS]
    AUTH_CHOICES = [
        ("none", "None"),
        ("basic", "Basic (variable holds user:password)"),
        ("api_key", "API key (Authorization: ApiKey …)"),
        ("bearer", "Bearer token"),
    ]

    name = models.SlugField(max_length=100, unique=True, help_text="Name coordinators pick.")
    kind = models.CharField(max_length=20, choices=KIND_CHOICES, help_text="Engine kind.")
    base_url = models.CharField(
        max_length=500, help_text="Origin (and optional path prefix) every request goes to."
    )
    auth = models.CharField(
        max_length=10, choices=AUTH_CHOICES, default="none", help_text="How the credential goes."
    )
    credential_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[RegexValidator(SEARCH_KEY_ENV_PATTERN, SEARCH_KEY_ENV_MESSAGE)],
        help_text=f"Environment variable holding the credential, {SEARCH_KEY_ENV_PREFIX}….",
    )
    verify_tls = models.BooleanField(default=True, help_text="Verify the TLS certificate.")
    timeout_seconds = models.FloatField(
        default=10.0,
        validators=[MinValueValidator(0.1), MaxValueValidator(300)],
        help_text="Per-request timeout.",
    )
    rate_limit = models.FloatField(
        default=10.0,
        validators=[MinValueValidator(0)],
        help_text="Most requests per second a snapshot sends (0: unlimited).",
    )
    concurrency = models.PositiveSmallIntegerField(
        default=4,
        validators=[MinValueValidator(1), MaxValueValidator(64)],
        help_text="Most requests in flight at once.",
    )
    allowed_private_hosts = models.JSONField(
        default=list,
        blank=True,
        help_text="Host names, addresses or networks this endpoint may reach although they "
        "are private or loopback (an in-house cluster). Empty: public only.",
    )
    allowed_collections = models.ManyToManyField(
        "judging.Collection",
        blank=True,
        related_name="search_endpoints",
        help_text="Collections whose coordinators may use it; none and no group: superusers.",
    )
    allowed_groups = models.ManyToManyField(
        "auth.Group",
        blank=True,
        related_name="search_endpoints",
        help_text="Groups whose members may use it in the collections they coordinate.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(credential_env="") | Q(credential_env__regex=SEARCH_KEY_ENV_PATTERN),
                name="search_endpoint_key_env_prefix",
                violation_error_message=SEARCH_KEY_ENV_MESSAGE,
            ),
            models.CheckConstraint(
                condition=Q(kind__in=presets.KINDS), name="search_endpoint_kind"
            ),
            models.CheckConstraint(condition=Q(auth__in=AUTH_KINDS), name="search_endpoint_auth"),
        ]

    def __str__(self) -> str:
        """Return the endpoint's name."""
        return self.name

    def clean(self) -> None:
        """Refuse a base URL the egress guard refuses and unreadable host entries."""
        from django.core.exceptions import ValidationError

        from judging.llm.egress import destination_problems

        self.base_url, errors = destination_problems(self.base_url, self.allowed_private_hosts)
        if errors:
            raise ValidationError(errors)

    def egress_policy(self) -> EgressPolicy:
        """Return the non-public destinations the operator allowed this endpoint."""
        from judging.llm.egress import EgressPolicy

        return EgressPolicy.from_entries(self.allowed_private_hosts or [])


class SearchConfiguration(models.Model):
    """A named way of querying an endpoint for one collection; its content is versioned."""

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="search_configurations"
    )
    name = models.CharField(max_length=100, help_text="Name within the collection.")
    team = models.ForeignKey(
        "metrics.Team",
        on_delete=models.CASCADE,
        related_name="search_configurations",
        help_text="The team whose runs the snapshots are.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    auto_judge = models.ForeignKey(
        "judging.Judge",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="LLM judge that grades each finished snapshot's pairs it has not labelled "
        "yet, within its provider's budget (empty: none).",
    )

    class Meta:
        ordering = ["collection_id", "name"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "name"], name="search_configuration_unique_name"
            )
        ]

    def __str__(self) -> str:
        """Return the configuration's name."""
        return self.name

    @property
    def current(self) -> SearchConfigVersion | None:
        """Return the latest version."""
        return self.versions.order_by("-number").first()


class SearchConfigVersion(models.Model):
    """One immutable version of a configuration: endpoint, request, depth, mapping."""

    configuration = models.ForeignKey(
        SearchConfiguration, on_delete=models.CASCADE, related_name="versions"
    )
    number = models.PositiveIntegerField(help_text="1, 2, … in order of change.")
    endpoint = models.ForeignKey(SearchEndpoint, on_delete=models.PROTECT, related_name="+")
    method = models.CharField(
        max_length=4, default="POST", choices=[("GET", "GET"), ("POST", "POST")]
    )
    path = models.CharField(max_length=500, help_text="Path after the endpoint's base URL.")
    template = models.JSONField(help_text="Request body (or Solr parameters) with placeholders.")
    depth = models.PositiveIntegerField(
        default=100,
        validators=[MinValueValidator(1), MaxValueValidator(1000)],
        help_text="Depth k: hits kept per query.",
    )
    mapping = models.JSONField(help_text="JMESPath expressions: hits, id, score, title, …")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["configuration_id", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["configuration", "number"], name="search_config_version_unique"
            )
        ]

    def __str__(self) -> str:
        """Return ``name v<number>``."""
        return f"{self.configuration.name} v{self.number}"


class SearchSnapshot(models.Model):
    """One *Run it* of a configuration version: its queries' answers and, done, a run."""

    Status = JobStatus

    class Origin(models.TextChoices):
        RUN = "run", "Run it"
        RETRY = "retry", "Retry of failed queries"
        REMAP = "remap", "Re-mapped from kept answers"
        SCHEDULE = "schedule", "Scheduled"

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="search_snapshots"
    )
    version = models.ForeignKey(
        SearchConfigVersion, on_delete=models.PROTECT, related_name="snapshots"
    )
    run = models.OneToOneField(
        "metrics.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="search_snapshot",
        help_text="The run this snapshot became.",
    )
    tag = models.CharField(max_length=100, help_text="Tag of the run it becomes.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    error = models.TextField(blank=True, help_text="Why the snapshot failed, in one sentence.")
    total = models.PositiveIntegerField(default=0)
    done = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    origin = models.CharField(
        max_length=10,
        choices=Origin.choices,
        default=Origin.RUN,
        help_text="How the answers were got: sent, sent again for failed queries, or re-mapped.",
    )
    source = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The snapshot whose answers a retry or a re-map reuses.",
    )
    auto_job = models.ForeignKey(
        "judging.LLMJob",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The LLM job the configuration's automatic judge started on its pairs.",
    )
    auto_note = models.TextField(
        blank=True, help_text="Why the automatic LLM judge did not start, in one sentence."
    )

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["collection", "status"], name="search_snapshot_status")]

    def __str__(self) -> str:
        """Return the tag."""
        return self.tag


class SnapshotQuery(models.Model):
    """One query of a snapshot: pending, answered (mapped ranking kept) or failed."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    snapshot = models.ForeignKey(SearchSnapshot, on_delete=models.CASCADE, related_name="queries")
    query = models.ForeignKey("judging.Query", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    hits = models.JSONField(default=list, help_text="Mapped hits: docno, score and fields.")
    errors = models.JSONField(default=list, help_text="Mapping problems, by path.")
    error = models.TextField(blank=True, help_text="Why the query failed.")
    retryable = models.BooleanField(default=False)
    raw = models.BinaryField(null=True, blank=True, help_text="The raw answer, zlib-compressed.")
    raw_truncated = models.BooleanField(default=False)
    attempts = models.PositiveSmallIntegerField(default=0)
    latency_ms = models.FloatField(null=True, blank=True)

    class Meta:
        ordering = ["snapshot_id", "query_id"]
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "query"], name="snapshot_query_unique")
        ]
        indexes = [models.Index(fields=["snapshot", "status"], name="snapshot_query_status")]

    def __str__(self) -> str:
        """Return the snapshot and query ids."""
        return f"{self.snapshot_id}/{self.query_id}"
