"""The scheduler's tick: Celery beat runs it every minute (``CELERY_BEAT_SCHEDULE``)."""

from __future__ import annotations

from celery import shared_task

from metrics.schedules import services


@shared_task(name="metrics.search_schedules_tick", acks_late=True, ignore_result=True)
def search_schedules_tick() -> dict[str, int]:
    """Check finished scheduled snapshots, start the due ones, deliver alerts."""
    tick = services.schedules_tick()
    return {
        "checked": len(tick.checked),
        "started": len(tick.started),
        "delivered": len(tick.delivered),
    }
