"""Writes of scheduled evaluations: schedules, the scheduler's tick, checks and alerts.

Celery beat calls :func:`schedules_tick` every minute (``metrics.search_schedules_tick``,
``CELERY_BEAT_SCHEDULE``). A tick first checks every finished scheduled snapshot that has
no check yet (against the pinned baseline or the previous scheduled snapshot, by
:func:`metrics.schedules.noise.judge_change`), then starts the snapshots of the schedules
that are due, then delivers the alerts not yet delivered. Each step is idempotent (a
snapshot has at most one check; a due schedule is locked with ``SKIP LOCKED`` and moved
to its next time in the same transaction), so two beats, a killed worker or a tick that
ran late leave nothing done twice and nothing lost: the next tick picks it up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from graded import textpolicy
from judging.models import Membership
from metrics.schedules import delivery, noise, timing
from metrics.schedules.models import (
    PAUSE_AFTER_FAILURES,
    AlertWebhook,
    ScheduleCheck,
    SearchSchedule,
)
from metrics.search import services as search_services
from metrics.search.models import SearchConfiguration, SearchSnapshot, SnapshotQuery
from metrics.search.selectors import score_labels
from metrics.selectors import measure_labels_of, paired_scores

log = logging.getLogger("graded.schedules")

FINISHED = (SearchSnapshot.Status.DONE, SearchSnapshot.Status.FAILED)


@dataclass(frozen=True)
class ScheduleFields:
    """What a coordinator sets on a schedule (validated by :func:`schedule_set`)."""

    frequency: str
    cron: str = ""
    measure: str = ""
    direction: str = "drop"
    alpha: float = noise.ALPHA
    baseline: SearchSnapshot | None = None
    email: bool = True
    webhook: AlertWebhook | None = None
    active: bool = True


def webhooks_open_to(*, collection_id: int, user: AbstractBaseUser) -> QuerySet[AlertWebhook]:
    """Return the webhooks a user may pick in a collection (superusers: every one)."""
    found = AlertWebhook.objects.order_by("name")
    return found if user.is_superuser else found.filter(allowed_collections=collection_id)


def _measure_problem(configuration: SearchConfiguration, measure: str) -> str | None:
    if not measure:
        return None
    labels, _ = measure_labels_of(configuration.collection)
    if measure in {label.canonical for label in labels}:
        return None
    return f"{textpolicy.echo(measure)} is not one of the collection's measures."


@transaction.atomic
def schedule_set(
    *,
    configuration: SearchConfiguration,
    fields: ScheduleFields,
    user: AbstractBaseUser,
    now: datetime | None = None,
) -> SearchSchedule:
    """Create or change the configuration's schedule; raise ``ValidationError`` by field.

    Turning a paused schedule on again clears its failures and its reason. The next run
    is the first time of the frequency after ``now``.
    """
    now = now or timezone.now()
    errors: dict[str, str] = {}
    cron = ""
    try:
        cron = timing.expression(fields.frequency, fields.cron) if fields.frequency else ""
        if not fields.frequency:
            errors["frequency"] = "Choose hourly, daily, weekly or cron."
    except timing.ScheduleError as exc:
        errors["cron" if fields.frequency == "cron" else "frequency"] = str(exc)
    if fields.direction not in noise.DIRECTIONS:
        errors["direction"] = f"Choose one of {', '.join(noise.DIRECTIONS)}."
    if not 0.001 <= fields.alpha <= 0.2:
        errors["alpha"] = "The test's level lies between 0.001 and 0.2 (the leaderboard: 0.05)."
    problem = _measure_problem(configuration, fields.measure)
    if problem:
        errors["measure"] = problem
    if fields.baseline is not None and (
        fields.baseline.version.configuration_id != configuration.pk
        or fields.baseline.run_id is None
    ):
        errors["baseline"] = "Pin a finished snapshot of this configuration that has a run."
    if fields.webhook is not None and not (
        webhooks_open_to(collection_id=configuration.collection_id, user=user)
        .filter(pk=fields.webhook.pk)
        .exists()
    ):
        errors["webhook"] = "No such webhook open to this collection."
    if errors:
        raise ValidationError(errors)
    schedule = SearchSchedule.objects.select_for_update().filter(configuration=configuration)
    found = schedule.first()
    resumed = fields.active and (found is None or not found.active)
    values = {
        "frequency": fields.frequency,
        "cron": cron if fields.frequency == SearchSchedule.Frequency.CRON else "",
        "measure": fields.measure,
        "direction": fields.direction,
        "alpha": fields.alpha,
        "baseline": fields.baseline,
        "email": fields.email,
        "webhook": fields.webhook,
        "active": fields.active,
        "next_run_at": timing.next_time(fields.frequency, cron, after=now),
    }
    if resumed:
        values.update(failures=0, paused_reason="")
    elif not fields.active and (found is None or found.active):
        values["paused_reason"] = "Paused by a coordinator."
    if found is None:
        return SearchSchedule.objects.create(configuration=configuration, created_by=user, **values)
    for name, value in values.items():
        setattr(found, name, value)
    found.created_by = user  # the snapshots use the access of whoever set it last
    found.save()
    return found


@transaction.atomic
def schedule_delete(*, schedule: SearchSchedule) -> None:
    """Remove a schedule; its snapshots and checks stay (checks go with the schedule)."""
    schedule.delete()


def _pause(schedule: SearchSchedule, reason: str) -> None:
    schedule.active = False
    schedule.paused_reason = reason
    log.warning("schedule %s paused: %s", schedule.pk, reason)


def _failed_queries(snapshots: list[SearchSnapshot]) -> set[int]:
    return set(
        SnapshotQuery.objects.filter(
            snapshot__in=snapshots, status=SnapshotQuery.Status.FAILED
        ).values_list("query_id", flat=True)
    )


def _baseline_of(schedule: SearchSchedule, snapshot: SearchSnapshot) -> SearchSnapshot | None:
    if schedule.baseline_id is not None and schedule.baseline_id != snapshot.pk:
        return schedule.baseline
    return (
        SearchSnapshot.objects.filter(
            version__configuration_id=schedule.configuration_id,
            origin=SearchSnapshot.Origin.SCHEDULE,
            status=SearchSnapshot.Status.DONE,
            run__isnull=False,
            created_at__lt=snapshot.created_at,
        )
        .exclude(pk=snapshot.pk)
        .select_related("run")
        .order_by("-created_at", "-pk")
        .first()
    )


@transaction.atomic
def snapshot_check(*, snapshot: SearchSnapshot, now: datetime | None = None) -> ScheduleCheck:
    """Compare a finished scheduled snapshot with its baseline, once; return the check.

    A failed snapshot (no run) counts towards pausing the schedule
    (:data:`~metrics.schedules.models.PAUSE_AFTER_FAILURES` in a row); one with a run
    resets the count. Queries that failed in either snapshot are left out of the
    comparison, and the reason says how many.
    """
    now = now or timezone.now()
    schedule = SearchSchedule.objects.select_for_update().get(
        configuration_id=snapshot.version.configuration_id
    )
    existing = ScheduleCheck.objects.filter(snapshot=snapshot).first()
    if existing is not None:
        return existing
    first, _coverage = score_labels(snapshot.collection)
    measure = schedule.measure or (first.canonical if first else "")
    check = ScheduleCheck(
        schedule=schedule, snapshot=snapshot, measure=measure, alpha=schedule.alpha, checked_at=now
    )
    if snapshot.status != SearchSnapshot.Status.DONE or snapshot.run_id is None:
        schedule.failures += 1
        check.reason = f"The snapshot failed: {snapshot.error or 'no query was answered.'}"
        if schedule.failures >= PAUSE_AFTER_FAILURES and schedule.active:
            _pause(
                schedule,
                f"Paused after {schedule.failures} scheduled snapshots failed in a row; "
                f"the last said: {snapshot.error or 'no query was answered.'}",
            )
        schedule.save(update_fields=["failures", "active", "paused_reason"])
        check.save()
        return check
    schedule.failures = 0
    schedule.save(update_fields=["failures"])
    baseline = _baseline_of(schedule, snapshot)
    check.baseline = baseline
    if baseline is None or baseline.run_id is None or not measure:
        check.reason = (
            "The first scheduled snapshot: the next one is compared with it."
            if measure
            else "The collection has no measure to compare."
        )
        check.save()
        return check
    queries, matrix = paired_scores(runs=[baseline.run, snapshot.run], measure=measure)
    failed = _failed_queries([baseline, snapshot])
    keep = np.array([q.pk not in failed for q in queries], dtype=bool)
    verdict = noise.judge_change(
        matrix[0][keep] if len(queries) else [],
        matrix[1][keep] if len(queries) else [],
        alpha=schedule.alpha,
        direction=schedule.direction,
    )
    for name in ("fired", "queries", "mean_before", "mean_after", "mean_change", "low", "high"):
        setattr(check, name, getattr(verdict, name))
    check.p_value = verdict.p_value
    check.reason = verdict.reason
    left_out = int((~keep).sum())
    if left_out:
        check.reason += f" {left_out} quer{'y' if left_out == 1 else 'ies'} that failed left out."
    if check.fired:
        check.email = ScheduleCheck.Delivery.PENDING if schedule.email else check.email
        check.webhook = ScheduleCheck.Delivery.PENDING if schedule.webhook_id else check.webhook
    check.save()
    return check


@dataclass
class Tick:
    """What one tick did: snapshots checked and started, alerts delivered, problems."""

    checked: list[ScheduleCheck] = field(default_factory=list)
    started: list[SearchSnapshot] = field(default_factory=list)
    delivered: list[ScheduleCheck] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)


def _tag(configuration: SearchConfiguration, now: datetime) -> str:
    version = configuration.current
    number = version.number if version is not None else 0
    return search_services.unused_tag(
        configuration.collection, f"{configuration.name}-v{number}-{now:%Y%m%d%H%M%S}"[:95]
    )


def _start_due(schedule: SearchSchedule, now: datetime, tick: Tick) -> None:
    """Start one due schedule's snapshot and move it to its next time (locked by caller)."""
    schedule.next_run_at = timing.next_time(schedule.frequency, schedule.cron, after=now)
    schedule.last_run_at = now
    running = SearchSnapshot.objects.filter(
        version__configuration_id=schedule.configuration_id,
        origin=SearchSnapshot.Origin.SCHEDULE,
        status__in=(SearchSnapshot.Status.QUEUED, SearchSnapshot.Status.RUNNING),
    ).exists()
    if running:
        tick.skipped.append(f"schedule {schedule.pk}: the previous snapshot is still running")
        schedule.save(update_fields=["next_run_at", "last_run_at"])
        return
    configuration = schedule.configuration
    owner = schedule.created_by
    if owner is None or not (
        owner.is_superuser
        or Membership.objects.filter(
            collection_id=configuration.collection_id,
            user=owner,
            role=Membership.Role.COORDINATOR,
        ).exists()
    ):
        _pause(
            schedule,
            "Paused: whoever set this schedule is no longer a coordinator of the collection; "
            "a coordinator turns it on again (their access is then used).",
        )
        schedule.save(update_fields=["next_run_at", "last_run_at", "active", "paused_reason"])
        tick.skipped.append(f"schedule {schedule.pk}: its owner lost access")
        return
    try:
        with transaction.atomic():
            snapshot = search_services.snapshot_start(
                configuration=configuration,
                user=owner,
                tag=_tag(configuration, now),
                origin=SearchSnapshot.Origin.SCHEDULE,
            )
    except ValidationError as exc:
        reasons = "; ".join(
            f"{name}: {' '.join(messages)}" for name, messages in exc.message_dict.items()
        )
        schedule.failures += 1
        if schedule.failures >= PAUSE_AFTER_FAILURES:
            _pause(
                schedule,
                f"Paused after {schedule.failures} scheduled runs could not start; the last: "
                f"{reasons}",
            )
        schedule.save(
            update_fields=["next_run_at", "last_run_at", "failures", "active", "paused_reason"]
        )
        tick.skipped.append(f"schedule {schedule.pk}: {reasons}")
        return
    schedule.save(update_fields=["next_run_at", "last_run_at"])
    tick.started.append(snapshot)


def schedules_tick(*, now: datetime | None = None) -> Tick:
    """Check finished scheduled snapshots, start due schedules, deliver alerts.

    ``now`` lets tests run schedules in accelerated time.
    """
    now = now or timezone.now()
    tick = Tick()
    unchecked = (
        SearchSnapshot.objects.filter(
            origin=SearchSnapshot.Origin.SCHEDULE,
            status__in=FINISHED,
            schedule_check__isnull=True,
            version__configuration__schedule__isnull=False,
        )
        .select_related("version", "collection", "run")
        .order_by("created_at", "pk")
    )
    for snapshot in unchecked:
        try:
            tick.checked.append(snapshot_check(snapshot=snapshot, now=now))
        except Exception:  # one snapshot that cannot be checked must not stop every tick
            log.exception("snapshot %s could not be checked", snapshot.pk)
            tick.skipped.append(f"snapshot {snapshot.pk}: could not be checked")
    due = list(
        SearchSchedule.objects.filter(active=True, next_run_at__lte=now)
        .order_by("next_run_at", "pk")
        .values_list("pk", flat=True)
    )
    for pk in due:
        try:
            with transaction.atomic():
                schedule = (
                    SearchSchedule.objects.select_for_update(skip_locked=True, of=("self",))
                    .select_related("configuration__collection", "created_by")
                    .filter(pk=pk, active=True, next_run_at__lte=now)
                    .first()
                )
                if schedule is not None:  # another beat took it, or it was changed meanwhile
                    _start_due(schedule, now, tick)
        except Exception:  # the other schedules still start; this one is tried next tick
            log.exception("schedule %s could not start", pk)
            tick.skipped.append(f"schedule {pk}: could not start")
    pending = ScheduleCheck.objects.filter(fired=True).filter(
        email=ScheduleCheck.Delivery.PENDING
    ) | ScheduleCheck.objects.filter(fired=True, webhook=ScheduleCheck.Delivery.PENDING)
    for check in pending.select_related("schedule__webhook", "snapshot", "baseline"):
        try:
            tick.delivered.append(alert_deliver(check=check))
        except Exception:
            log.exception("alert %s could not be delivered", check.pk)
            tick.skipped.append(f"alert {check.pk}: could not be delivered")
    return tick


def _coordinator_emails(collection_id: int) -> list[str]:
    return sorted(
        {
            email
            for email in Membership.objects.filter(
                collection_id=collection_id, role=Membership.Role.COORDINATOR
            ).values_list("user__email", flat=True)
            if email
        }
    )


def _claim(check: ScheduleCheck, channel: str) -> bool:
    """Mark one channel of a check as being sent; False if another worker has it."""
    with transaction.atomic():
        return bool(
            ScheduleCheck.objects.filter(pk=check.pk, **{channel: ScheduleCheck.Delivery.PENDING})
            .select_for_update(skip_locked=True)
            .update(**{channel: ScheduleCheck.Delivery.SENDING})
        )


def alert_deliver(*, check: ScheduleCheck) -> ScheduleCheck:
    """Mail and post a fired check whose channels are pending; record how each went.

    Not atomic on purpose: a webhook may take several attempts, and no transaction is
    held while it waits. Each channel is claimed first, so no alert is sent twice.
    """
    collection_id = check.snapshot.collection_id
    payload = delivery.alert_payload(check)
    if check.email == ScheduleCheck.Delivery.PENDING and _claim(check, "email"):
        recipients = _coordinator_emails(collection_id)
        sent = delivery.send_email(payload, recipients) if recipients else False
        check.email = ScheduleCheck.Delivery.SENT if sent else ScheduleCheck.Delivery.FAILED
        ScheduleCheck.objects.filter(pk=check.pk).update(email=check.email)
    webhook = check.schedule.webhook
    if check.webhook == ScheduleCheck.Delivery.PENDING and _claim(check, "webhook"):
        if webhook is None:
            outcome = delivery.Outcome(ok=False, attempts=0, error="The webhook was removed.")
        else:
            outcome = delivery.post_webhook(webhook, payload)
        check.webhook = ScheduleCheck.Delivery.SENT if outcome.ok else ScheduleCheck.Delivery.FAILED
        check.webhook_attempts = outcome.attempts
        check.webhook_error = outcome.error
        ScheduleCheck.objects.filter(pk=check.pk).update(
            webhook=check.webhook,
            webhook_attempts=check.webhook_attempts,
            webhook_error=check.webhook_error,
        )
    return check
