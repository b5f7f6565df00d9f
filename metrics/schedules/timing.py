"""When a schedule runs next: frequencies as cron expressions, read by croniter.

Every frequency is a cron expression in UTC (hourly on the hour, daily and weekly at
02:00, weekly on Mondays); a coordinator may write their own five fields. croniter
(pallets-eco) reads them: the de-facto Python cron reader, which Airflow and Celery's own
``crontab`` users rely on, with DST-safe arithmetic on aware datetimes. No Django here.

Edge cases: a run missed while the scheduler was down is not caught up; the next time is
always the first one strictly after ``after``. Expressions that would run more often
than every :data:`MIN_GAP` are refused (a schedule is an evaluation, not a load test).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from croniter import CroniterError, croniter

#: The frequencies' expressions (minute hour day month weekday, UTC).
PRESETS = {"hourly": "0 * * * *", "daily": "0 2 * * *", "weekly": "0 2 * * 1"}
#: The shortest allowed time between two runs of one schedule.
MIN_GAP = timedelta(minutes=10)
#: Occurrences looked at to find the shortest gap of an expression.
GAP_PROBES = 48


class ScheduleError(ValueError):
    """An expression that cannot be a schedule; the message says why."""


def expression(frequency: str, cron: str = "") -> str:
    """Return the cron expression of ``frequency`` (``"cron"``: ``cron`` itself, checked)."""
    if frequency in PRESETS:
        return PRESETS[frequency]
    if frequency != "cron":
        raise ScheduleError(f"Unknown frequency {frequency!r}: hourly, daily, weekly or cron.")
    text = " ".join(cron.split())
    fields = text.split(" ") if text else []
    if len(fields) != 5:
        raise ScheduleError(
            f"A cron expression has five fields (minute hour day month weekday); "
            f"this one has {len(fields)}."
        )
    if not croniter.is_valid(text):
        raise ScheduleError(f"Not a valid cron expression: {text!r}.")
    try:
        times = croniter(text, datetime(2026, 1, 1, tzinfo=UTC))
        previous = times.get_next(datetime)
        for _ in range(GAP_PROBES):
            current = times.get_next(datetime)
            if current - previous < MIN_GAP:
                raise ScheduleError(
                    f"{text!r} runs more often than every {MIN_GAP.seconds // 60} minutes."
                )
            previous = current
    except CroniterError:
        raise ScheduleError(f"{text!r} never runs (no such date).") from None
    return text


def next_time(frequency: str, cron: str, *, after: datetime) -> datetime:
    """Return the first run time of the schedule strictly after ``after`` (aware, UTC)."""
    if after.tzinfo is None:
        raise ValueError("after must be an aware datetime")
    found = croniter(expression(frequency, cron), after.astimezone(UTC)).get_next(datetime)
    return found.astimezone(UTC)
