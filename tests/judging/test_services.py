"""Judgment services: every write leaves history, nothing is overwritten without a trace."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging import services
from judging.models import Collection, Judgment, JudgmentEvent, PoolEntry
from judging.signals import judgments_changed
from tests import factories

pytestmark = pytest.mark.django_db
Status = Judgment.Status
Channel = JudgmentEvent.Channel


@pytest.fixture
def pair(coll):
    q, d = factories.query(coll), factories.document(coll)
    factories.pool_entry(coll, q, d)
    return q, d


@pytest.fixture
def judge(judge_user):
    return factories.human_judge(judge_user)


def _events(q, d):
    return list(
        JudgmentEvent.objects.filter(query=q, document=d).values_list("action", "before", "after")
    )


def test_first_judgment_creates_event(judge, pair, judge_user):
    q, d = pair
    j = services.judgment_record(judge=judge, query=q, document=d, grade=3, actor=judge_user)
    assert (j.grade, j.status) == (3, Status.GRADED)
    event = JudgmentEvent.objects.get()
    assert event.action == JudgmentEvent.Action.CREATE
    assert event.before is None
    assert event.after["grade"] == 3
    assert event.channel == Channel.BROWSER
    assert event.actor == judge_user


def test_regrade_keeps_both_values_in_history(judge, pair):
    q, d = pair
    services.judgment_record(judge=judge, query=q, document=d, grade=3)
    services.judgment_record(judge=judge, query=q, document=d, grade=1, channel=Channel.API)
    assert Judgment.objects.get().grade == 1
    events = _events(q, d)
    assert [e[0] for e in events] == ["create", "change"]
    assert events[1][1]["grade"] == 3 and events[1][2]["grade"] == 1
    assert JudgmentEvent.objects.last().channel == Channel.API


def test_status_change_leaves_history(judge, pair):
    q, d = pair
    services.judgment_record(judge=judge, query=q, document=d, grade=2)
    services.judgment_record(
        judge=judge, query=q, document=d, status=Status.CANNOT_JUDGE, note="Page is in Finnish"
    )
    services.judgment_record(judge=judge, query=q, document=d, status=Status.LATER)
    j = Judgment.objects.get()
    assert (j.grade, j.status) == (None, Status.LATER)
    events = _events(q, d)
    assert [e[2]["status"] for e in events] == ["graded", "cannot_judge", "later"]
    assert events[1][2]["note"] == "Page is in Finnish"
    assert events[1][1]["grade"] == 2


def test_identical_rerecord_adds_no_event(judge, pair):
    q, d = pair
    services.judgment_record(judge=judge, query=q, document=d, grade=2)
    services.judgment_record(judge=judge, query=q, document=d, grade=2)
    assert JudgmentEvent.objects.count() == 1


def test_delete_keeps_history(judge, pair):
    q, d = pair
    j = services.judgment_record(judge=judge, query=q, document=d, grade=4)
    services.judgment_delete(judgment=j)
    assert not Judgment.objects.exists()
    events = _events(q, d)
    assert [e[0] for e in events] == ["create", "delete"]
    assert events[1][1]["grade"] == 4 and events[1][2] is None


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"grade": 5}, "grade"),
        ({"grade": -1}, "grade"),
        ({"grade": None}, "grade"),
        ({"grade": 2.5}, "grade"),
        ({"grade": 2, "status": "later"}, "grade"),
        ({"grade": 2, "status": "bogus"}, "status"),
        ({"grade": 2, "seconds": -3}, "seconds"),
        ({"grade": 2, "abstain_probability": 1.5}, "abstain_probability"),
    ],
)
def test_bad_labels_name_the_field(judge, pair, kwargs, field):
    q, d = pair
    with pytest.raises(ValidationError) as exc:
        services.judgment_record(judge=judge, query=q, document=d, **kwargs)
    assert field in exc.value.message_dict
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()


def test_cross_collection_pair_rejected_by_service(judge, coll):
    other = factories.collection("other")
    q, d = factories.query(coll), factories.document(other)
    with pytest.raises(ValidationError) as exc:
        services.judgment_record(judge=judge, query=q, document=d, grade=1)
    assert "document" in exc.value.message_dict


def test_seconds_are_capped(judge, pair, settings):
    q, d = pair
    j = services.judgment_record(judge=judge, query=q, document=d, grade=1, seconds=99999)
    assert j.seconds == settings.GRADED_MAX_SECONDS_PER_PAIR


def test_pool_graded_count_follows_status(judge, pair, coll):
    q, d = pair
    other = factories.human_judge(factories.user())
    entry = PoolEntry.objects.get()
    services.judgment_record(judge=judge, query=q, document=d, grade=1)
    services.judgment_record(judge=other, query=q, document=d, grade=2)
    entry.refresh_from_db()
    assert entry.graded_count == 2
    services.judgment_record(judge=judge, query=q, document=d, status=Status.LATER)
    entry.refresh_from_db()
    assert entry.graded_count == 1
    services.judgment_delete(judgment=Judgment.objects.get(judge=other))
    entry.refresh_from_db()
    assert entry.graded_count == 0


def test_version_bumps_and_signal_fires_after_commit(
    judge, pair, coll, django_capture_on_commit_callbacks
):
    q, d = pair
    received = []

    def handler(**kwargs):
        received.append(kwargs)

    judgments_changed.connect(handler)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            services.judgment_record(judge=judge, query=q, document=d, grade=2)
    finally:
        judgments_changed.disconnect(handler)
    assert Collection.objects.get(pk=coll.pk).judgments_version == 1
    assert received and received[0]["query_ids"] == frozenset({q.pk})
    assert received[0]["version"] == 1 and received[0]["collection_id"] == coll.pk


def test_pool_add_is_atomic_and_names_lines(coll):
    q = factories.query(coll, "q1")
    factories.document(coll, "d1")
    rows = [
        services.PairRow(1, "q1", "d1"),
        services.PairRow(2, "nope", "d1"),
        services.PairRow(3, "q1", "missing"),
    ]
    with pytest.raises(ValidationError) as exc:
        services.pool_add(collection=coll, pairs=rows)
    messages = exc.value.messages
    assert any("line 2" in m and "nope" in m for m in messages)
    assert any("line 3" in m and "missing" in m for m in messages)
    assert not PoolEntry.objects.exists()
    assert services.pool_add(collection=coll, pairs=rows[:1]) == 1
    assert services.pool_add(collection=coll, pairs=rows[:1]) == 0
    assert PoolEntry.objects.get().query == q


def test_pool_add_creates_id_only_documents_when_asked(coll):
    factories.query(coll, "q1")
    added = services.pool_add(
        collection=coll,
        pairs=[services.PairRow(1, "q1", "unseen")],
        source=PoolEntry.Source.RUN,
        create_missing_documents=True,
    )
    assert added == 1
    assert coll.documents.get(external_id="unseen").has_content is False
