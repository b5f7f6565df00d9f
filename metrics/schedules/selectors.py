"""Reads of scheduled evaluations: a collection's schedules and their checks."""

from __future__ import annotations

from django.db.models import QuerySet

from judging.models import Collection
from metrics.schedules.models import ScheduleCheck, SearchSchedule


def schedules_of(*, collection: Collection) -> QuerySet[SearchSchedule]:
    """Return the collection's schedules with their configuration, baseline and webhook."""
    return (
        SearchSchedule.objects.filter(configuration__collection=collection)
        .select_related("configuration", "baseline", "webhook")
        .order_by("configuration__name")
    )


def checks_of(*, collection: Collection, fired: bool | None = None) -> QuerySet[ScheduleCheck]:
    """Return the collection's checks, newest first (``fired``: alerts only, or the others)."""
    found = ScheduleCheck.objects.filter(schedule__configuration__collection=collection)
    if fired is not None:
        found = found.filter(fired=fired)
    return found.select_related("schedule__configuration", "snapshot", "baseline").order_by(
        "-checked_at", "-pk"
    )
