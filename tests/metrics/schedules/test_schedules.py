"""Scheduled snapshots in accelerated time, checks against the live list, self-pausing.

The scheduler's tick takes ``now``: a test walks a schedule through days in a loop, the
way Celery beat would call it each minute. Snapshots go to the fake engine of the search
tests (on_commit does not fire inside a test's transaction, so the test runs each
started snapshot's work itself, as the Celery task would).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.core import mail
from django.core.exceptions import ValidationError

from judging.models import Membership
from metrics.schedules import noise, services
from metrics.schedules.models import ScheduleCheck, SearchSchedule
from metrics.search import runner
from metrics.search.models import SearchSnapshot
from metrics.selectors import paired_scores
from tests.metrics.schedules.conftest import T0, set_schedule, tick, walk
from tests.metrics.search import fake_engine
from tests.metrics.search.test_engines import FAST

pytestmark = pytest.mark.django_db


def test_an_hourly_schedule_runs_once_an_hour_and_checks_each_snapshot(watched):
    _coll, boss, configuration = watched
    schedule = set_schedule(configuration, boss, frequency="hourly")
    assert schedule.next_run_at == datetime(2026, 12, 7, 10, 0, tzinfo=UTC)
    ticks = walk(T0, hours=24)
    snapshots = list(
        SearchSnapshot.objects.filter(origin=SearchSnapshot.Origin.SCHEDULE).order_by("created_at")
    )
    assert len(snapshots) == 24  # 10:00 … 09:00 the next day
    assert all(s.status == SearchSnapshot.Status.DONE and s.run_id for s in snapshots)
    checks = list(ScheduleCheck.objects.order_by("snapshot__created_at"))
    tick(T0 + timedelta(hours=24, minutes=15))
    checks = list(ScheduleCheck.objects.order_by("snapshot__created_at", "pk"))
    assert [c.snapshot_id for c in checks] == [s.pk for s in snapshots]
    assert checks[0].baseline is None and "first scheduled snapshot" in checks[0].reason
    # The same engine every hour: no change, no alert, and each compared with the one before.
    assert [c.baseline_id for c in checks[1:]] == [s.pk for s in snapshots[:-1]]
    assert not any(c.fired for c in checks)
    assert {c.reason for c in checks[1:]} == {"No change over 8 queries."}
    assert sum(len(t.started) for t in ticks) == 24
    schedule.refresh_from_db()
    assert schedule.next_run_at == datetime(2026, 12, 8, 10, 0, tzinfo=UTC)
    assert mail.outbox == []


def test_a_real_drop_alerts_with_the_live_lists_numbers_and_mails_the_coordinators(
    watched, monkeypatch
):
    _coll, boss, configuration = watched
    set_schedule(configuration, boss, frequency="daily")
    walk(T0, hours=24, step=timedelta(hours=6))  # 02:00 the next day: the first snapshot
    good = fake_engine.rank
    # The engine breaks: it loses its best document for every query.
    monkeypatch.setattr(fake_engine, "rank", lambda text, k: good(text, k)[1:])
    walk(T0 + timedelta(days=1), hours=24, step=timedelta(hours=6))
    first, second = SearchSnapshot.objects.filter(origin="schedule").order_by("created_at")
    check = ScheduleCheck.objects.get(snapshot=second)
    assert check.baseline == first and check.fired
    # The verdict is the rule's over the runs' live per-query scores.
    _queries, matrix = paired_scores(runs=[first.run, second.run], measure=check.measure)
    expected = noise.judge_change(matrix[0], matrix[1])
    assert check.mean_change == pytest.approx(expected.mean_change) and check.mean_change < 0
    assert (check.low, check.high, check.p_value) == (
        pytest.approx(expected.low),
        pytest.approx(expected.high),
        pytest.approx(expected.p_value),
    )
    assert check.email == ScheduleCheck.Delivery.SENT
    assert [m.to for m in mail.outbox] == [["boss@example.org"]]
    assert "changed beyond noise" in mail.outbox[0].subject
    assert check.reason in mail.outbox[0].body


def test_a_pinned_baseline_is_what_every_check_compares_with(watched):
    _coll, boss, configuration = watched
    set_schedule(configuration, boss, frequency="hourly")
    walk(T0, hours=1)
    pinned = SearchSnapshot.objects.get(origin="schedule")
    later_now = T0 + timedelta(hours=1)
    set_schedule(configuration, boss, frequency="hourly", baseline=pinned, now=later_now)
    walk(T0 + timedelta(hours=1, minutes=15), hours=3)
    later = ScheduleCheck.objects.exclude(snapshot=pinned)
    assert later.count() == 3
    assert set(later.values_list("baseline_id", flat=True)) == {pinned.pk}


def test_a_schedule_whose_endpoint_keeps_failing_pauses_itself_and_says_why(watched, engine):
    _coll, boss, configuration = watched
    engine.fault = lambda request, n: (503, "down for maintenance", {})
    set_schedule(configuration, boss, frequency="hourly")
    walk(T0, hours=6)
    schedule = SearchSchedule.objects.get()
    assert not schedule.active and schedule.failures == 3
    assert schedule.paused_reason.startswith("Paused after 3 scheduled snapshots failed in a row")
    assert SearchSnapshot.objects.filter(origin="schedule").count() == 3  # none after pausing
    # Turning it on again clears the count and the reason.
    engine.fault = None
    schedule = set_schedule(configuration, boss, frequency="hourly", now=T0 + timedelta(hours=6))
    assert schedule.active and schedule.failures == 0 and schedule.paused_reason == ""


def test_a_schedule_pauses_when_its_owner_is_no_longer_a_coordinator(watched):
    _coll, boss, configuration = watched
    set_schedule(configuration, boss, frequency="hourly")
    Membership.objects.filter(user=boss).delete()
    done = tick(T0 + timedelta(hours=1))
    assert done.started == []
    schedule = SearchSchedule.objects.get()
    assert not schedule.active and "no longer a coordinator" in schedule.paused_reason


def test_a_snapshot_still_running_is_not_started_twice(watched):
    _coll, boss, configuration = watched
    set_schedule(configuration, boss, frequency="hourly")
    first = services.schedules_tick(now=T0 + timedelta(hours=1))  # started, not worked
    second = services.schedules_tick(now=T0 + timedelta(hours=2))
    assert len(first.started) == 1 and second.started == []
    assert "still running" in second.skipped[0]
    # A tick that runs twice for one minute (two beats) starts nothing twice.
    runner.work(SearchSnapshot.objects.get(pk=first.started[0].pk), retries=FAST)
    assert len(services.schedules_tick(now=T0 + timedelta(hours=3)).started) == 1
    assert services.schedules_tick(now=T0 + timedelta(hours=3)).started == []


@pytest.mark.parametrize(
    ("fields", "field", "message"),
    [
        ({"frequency": "cron", "cron": "*/5 * * * *"}, "cron", "more often than every 10"),
        ({"frequency": "cron", "cron": "0 0 31 2 *"}, "cron", "never runs"),
        ({"frequency": "cron", "cron": "1 2 3"}, "cron", "five fields"),
        ({"frequency": "minutely"}, "frequency", "Unknown frequency"),
        ({"frequency": "daily", "direction": "down"}, "direction", "Choose one of"),
        ({"frequency": "daily", "alpha": 0.5}, "alpha", "between 0.001 and 0.2"),
        ({"frequency": "daily", "measure": "P_5"}, "measure", "not one of the collection's"),
    ],
)
def test_bad_settings_are_refused_by_field(watched, fields, field, message):
    _coll, boss, configuration = watched
    with pytest.raises(ValidationError) as caught:
        services.schedule_set(
            configuration=configuration, fields=services.ScheduleFields(**fields), user=boss
        )
    assert message in " ".join(caught.value.message_dict[field])
    assert not SearchSchedule.objects.exists()


def test_a_cron_schedule_runs_at_its_times_only(watched):
    _coll, boss, configuration = watched
    services.schedule_set(
        configuration=configuration,
        fields=services.ScheduleFields(frequency="cron", cron="30 2 * * 1-5"),
        user=boss,
        now=T0,  # a Monday
    )
    walk(T0, hours=24 * 7, step=timedelta(hours=1))
    times = [
        s.created_at
        for s in SearchSnapshot.objects.filter(origin="schedule").order_by("created_at")
    ]
    assert len(times) == 5  # Tuesday to Saturday morning's ticks after 02:30 on weekdays
    assert SearchSchedule.objects.get().next_run_at == datetime(2026, 12, 15, 2, 30, tzinfo=UTC)


def test_the_checks_scores_leave_out_failed_queries(watched, engine):
    _coll, boss, configuration = watched
    set_schedule(configuration, boss, frequency="hourly")
    walk(T0, hours=1)
    engine.fault = lambda request, n: (
        (400, "bad query", {}) if "wind turbines" in json.dumps(request["body"]) else None
    )
    walk(T0 + timedelta(hours=1, minutes=15), hours=1)
    check = ScheduleCheck.objects.order_by("-checked_at", "-pk").first()
    assert check.queries == 7
    assert check.reason.endswith("1 query that failed left out.")
    assert np.isfinite(check.mean_before)


def test_one_snapshot_that_cannot_be_checked_does_not_stop_the_tick(watched, monkeypatch):
    _coll, boss, configuration = watched
    set_schedule(configuration, boss, frequency="hourly")
    walk(T0, hours=0.5)  # 10:00: one scheduled snapshot, finished, not yet checked

    def broken(**kwargs):
        raise RuntimeError("the scores went away")

    monkeypatch.setattr(services, "snapshot_check", broken)
    done = tick(T0 + timedelta(hours=1, minutes=30))  # 11:00
    assert done.checked == [] and "could not be checked" in done.skipped[0]
    assert len(done.started) == 1  # the due schedule still started
