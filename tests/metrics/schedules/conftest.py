"""Fixtures of the schedule tests: a judged collection and a configuration of the fake engine.

Helpers walk a schedule through accelerated time: the scheduler's tick takes ``now``, and a
test runs each started snapshot's work itself (on_commit does not fire inside a test's
transaction), as the Celery task would.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from judging import services as judging_services
from metrics.models import Team
from metrics.schedules import services
from metrics.search import presets, runner
from metrics.search.models import SearchSnapshot
from tests import factories
from tests.metrics.search import fake_engine
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.test_engines import FAST, configure

T0 = datetime(2026, 12, 7, 9, 30, tzinfo=UTC)
#: Queries whose words the fake engine's corpus holds, and each one's relevant documents.
QUERIES = {
    "q1": ("solar power", {"d1": 3, "d4": 2}),
    "q2": ("wind power", {"d2": 3}),
    "q3": ("coal smoke", {"d3": 3}),
    "q4": ("sunlight solar", {"d4": 3, "d1": 2}),
    "q5": ("batteries power", {"d5": 3}),
    "q6": ("solar heat", {"d4": 3}),
    "q7": ("wind turbines", {"d2": 3}),
    "q8": ("store batteries", {"d5": 3}),
}


@pytest.fixture
def engine():
    server = fake_engine.FakeEngine()
    yield server
    server.close()


@pytest.fixture
def watched(engine, db):
    """A collection of eight judged queries and a configuration of the fake engine."""
    coll = factories.collection("watched", measures=["nDCG@10"])
    for qid, (text, _) in QUERIES.items():
        factories.query(coll, qid, text=text)
    team = Team.objects.create(collection=coll, name="engine")
    boss = factories.user("boss", email="boss@example.org")
    factories.member(coll, boss, "coordinator")
    endpoint = endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    configuration = configure(coll, team, boss, endpoint)
    docs = {docno: factories.document(coll, docno) for docno in fake_engine.CORPUS}
    judge = factories.human_judge(factories.user("jo"))
    factories.member(coll, judge.user)
    for qid, (_, grades) in QUERIES.items():
        for docno, grade in grades.items():
            judging_services.judgment_record(
                judge=judge,
                query=coll.queries.get(external_id=qid),
                document=docs[docno],
                grade=grade,
            )
    return coll, boss, configuration


def tick(now):
    """One tick, then the started snapshots' work (the Celery task's), as beat would."""
    tick = services.schedules_tick(now=now)
    for snapshot in tick.started:
        runner.work(SearchSnapshot.objects.get(pk=snapshot.pk), retries=FAST)
    return tick


def walk(start, hours, step=timedelta(minutes=15)):
    now, ticks = start, []
    while now <= start + timedelta(hours=hours):
        ticks.append(tick(now))
        now += step
    return ticks


def set_schedule(configuration, boss, *, now=T0, **fields):
    """Set ``configuration``'s schedule as ``boss`` at ``now`` (``fields``: ScheduleFields)."""
    return services.schedule_set(
        configuration=configuration, fields=services.ScheduleFields(**fields), user=boss, now=now
    )


def alerted(watched, monkeypatch, webhook=None):
    """Two daily snapshots, the second after the engine broke: one alert (delivered)."""
    _coll, boss, configuration = watched
    services.schedule_set(
        configuration=configuration,
        fields=services.ScheduleFields(frequency="daily", webhook=webhook),
        user=boss,
        now=T0,
    )
    walk(T0, hours=24, step=timedelta(hours=6))
    good = fake_engine.rank
    monkeypatch.setattr(fake_engine, "rank", lambda text, k: good(text, k)[1:])
    walk(T0 + timedelta(days=1), hours=24, step=timedelta(hours=6))
    walk(T0 + timedelta(days=2), hours=0)  # the tick that checks and delivers
    from metrics.schedules.models import ScheduleCheck

    return ScheduleCheck.objects.get(fired=True)
