"""Scheduled evaluations of search configurations and the alerts that know noise.

A :class:`SearchSchedule` runs its configuration's current version at the times of its
frequency (hourly, daily, weekly or a cron expression); each run is an ordinary snapshot
(``origin="schedule"``). When the snapshot has finished, a :class:`ScheduleCheck`
compares it with the previous scheduled snapshot (or the pinned baseline) by the
leaderboard's paired test (:mod:`metrics.schedules.noise`): an alert is a check that
fired. Alerts are shown on the collection's pages, mailed to its coordinators and posted
to an :class:`AlertWebhook` the operator registered (signed, retried).
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from metrics.schedules.noise import ALPHA, DIRECTIONS

#: Environment variables a webhook may take its signing secret from (as search keys).
WEBHOOK_SECRET_ENV_PATTERN = r"\AGRADED_WEBHOOK_SECRET_[A-Z0-9_]+\Z"
WEBHOOK_SECRET_ENV_MESSAGE = (
    "Name an environment variable starting with GRADED_WEBHOOK_SECRET_ (capital letters, "
    "digits, _), never the secret itself."
)
#: Scheduled snapshots that failed in a row before the schedule pauses itself.
PAUSE_AFTER_FAILURES = 3


class AlertWebhook(models.Model):
    """Where alerts may be posted: registered by the operator (superusers only).

    Coordinators pick one by name for their schedules if it is open to their collection.
    Posts pass the egress guard of LLM providers and search endpoints (no redirect, no
    private address the operator did not allow) and are signed with HMAC-SHA256 over
    ``<timestamp>.<body>`` with the secret in ``secret_env``.
    """

    name = models.SlugField(max_length=100, unique=True, help_text="Name coordinators pick.")
    url = models.CharField(max_length=500, help_text="https://… where alerts are posted.")
    secret_env = models.CharField(
        max_length=100,
        help_text="Environment variable holding the signing secret (GRADED_WEBHOOK_SECRET_…).",
    )
    timeout_seconds = models.FloatField(
        default=10.0,
        validators=[MinValueValidator(0.1), MaxValueValidator(120.0)],
        help_text="Seconds to wait for the receiver's answer.",
    )
    allowed_private_hosts = models.JSONField(
        default=list,
        blank=True,
        help_text="Non-public hosts or networks this webhook may reach (a JSON list).",
    )
    allowed_collections = models.ManyToManyField(
        "judging.Collection",
        blank=True,
        related_name="+",
        help_text="Collections whose schedules may post here (none: superusers only).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(secret_env__regex=WEBHOOK_SECRET_ENV_PATTERN),
                name="alert_webhook_secret_env_prefix",
                violation_error_message=WEBHOOK_SECRET_ENV_MESSAGE,
            )
        ]

    def __str__(self) -> str:
        """Return the webhook's name."""
        return self.name

    def clean(self) -> None:
        """Refuse a URL the egress guard refuses and unreadable host entries."""
        from django.core.exceptions import ValidationError

        from judging.llm.egress import destination_problems

        self.url, errors = destination_problems(
            self.url, self.allowed_private_hosts, url_field="url"
        )
        if errors:
            raise ValidationError(errors)


class SearchSchedule(models.Model):
    """When a configuration runs by itself, and what its alerts compare with."""

    class Frequency(models.TextChoices):
        HOURLY = "hourly", "Hourly"
        DAILY = "daily", "Daily"
        WEEKLY = "weekly", "Weekly"
        CRON = "cron", "Cron expression"

    configuration = models.OneToOneField(
        "metrics.SearchConfiguration", on_delete=models.CASCADE, related_name="schedule"
    )
    frequency = models.CharField(max_length=10, choices=Frequency.choices)
    cron = models.CharField(
        max_length=100,
        blank=True,
        help_text="Five fields, minute hour day month weekday (UTC), e.g. 30 2 * * 1-5.",
    )
    measure = models.CharField(
        max_length=100, blank=True, help_text="Canonical measure watched (empty: the first)."
    )
    direction = models.CharField(
        max_length=10,
        choices=[(d, d) for d in DIRECTIONS],
        default="drop",
        help_text="Which changes alert: a drop, a rise or either.",
    )
    alpha = models.FloatField(
        default=ALPHA,
        validators=[MinValueValidator(0.001), MaxValueValidator(0.2)],
        help_text="Level of the paired test (the leaderboard's: 0.05).",
    )
    baseline = models.ForeignKey(
        "metrics.SearchSnapshot",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="A pinned snapshot to compare with (empty: the previous scheduled one).",
    )
    email = models.BooleanField(default=True, help_text="Mail alerts to the coordinators.")
    webhook = models.ForeignKey(
        AlertWebhook, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    active = models.BooleanField(default=True, help_text="Off: paused (by a person or itself).")
    paused_reason = models.TextField(blank=True, help_text="Why the schedule is paused.")
    failures = models.PositiveSmallIntegerField(
        default=0, help_text="Scheduled snapshots that failed in a row."
    )
    next_run_at = models.DateTimeField(help_text="When the next snapshot starts (UTC).")
    last_run_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Whose access the scheduled snapshots use.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["configuration_id"]
        indexes = [models.Index(fields=["active", "next_run_at"], name="search_schedule_due")]
        constraints = [
            models.CheckConstraint(
                condition=~Q(frequency="cron") | ~Q(cron=""), name="search_schedule_cron_given"
            ),
            models.CheckConstraint(
                condition=Q(direction__in=DIRECTIONS), name="search_schedule_direction"
            ),
        ]

    def __str__(self) -> str:
        """Return the configuration and the frequency."""
        when = self.cron if self.frequency == self.Frequency.CRON else self.frequency
        return f"{self.configuration_id}: {when}"


class ScheduleCheck(models.Model):
    """One scheduled snapshot compared with its baseline; ``fired``: an alert."""

    class Delivery(models.TextChoices):
        NONE = "none", "Not asked"
        PENDING = "pending", "Pending"
        SENDING = "sending", "Sending"
        SENT = "sent", "Sent"
        FAILED = "failed", "Failed"

    schedule = models.ForeignKey(SearchSchedule, on_delete=models.CASCADE, related_name="checks")
    snapshot = models.OneToOneField(
        "metrics.SearchSnapshot", on_delete=models.CASCADE, related_name="schedule_check"
    )
    baseline = models.ForeignKey(
        "metrics.SearchSnapshot",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="What it was compared with (none: the first scheduled snapshot).",
    )
    measure = models.CharField(max_length=100, help_text="Canonical measure compared.")
    fired = models.BooleanField(default=False, help_text="An alert: a change beyond noise.")
    queries = models.PositiveIntegerField(default=0)
    mean_before = models.FloatField(null=True, blank=True)
    mean_after = models.FloatField(null=True, blank=True)
    mean_change = models.FloatField(null=True, blank=True, help_text="after − before.")
    low = models.FloatField(null=True, blank=True, help_text="Interval of the change.")
    high = models.FloatField(null=True, blank=True)
    p_value = models.FloatField(null=True, blank=True, help_text="Paired t-test.")
    alpha = models.FloatField()
    reason = models.TextField(help_text="The verdict in one sentence.")
    checked_at = models.DateTimeField()
    email = models.CharField(max_length=10, choices=Delivery.choices, default=Delivery.NONE)
    webhook = models.CharField(max_length=10, choices=Delivery.choices, default=Delivery.NONE)
    webhook_attempts = models.PositiveSmallIntegerField(default=0)
    webhook_error = models.TextField(blank=True)

    class Meta:
        ordering = ["-checked_at", "-pk"]
        indexes = [models.Index(fields=["schedule", "fired"], name="schedule_check_fired")]

    def __str__(self) -> str:
        """Return the snapshot and the verdict."""
        return f"{self.snapshot_id}: {'alert' if self.fired else 'no alert'}"
