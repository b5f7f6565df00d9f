"""Adjudication, policy changes and bulk removal of one judge's labels (services)."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging import services
from judging.adjudication import services as adj
from judging.models import (
    Adjudication,
    Collection,
    Judgment,
    JudgmentEvent,
    LiveGrade,
    PolicyChange,
)
from judging.signals import judgments_changed
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def pair(coll):
    """Return (query, document, judge a, judge b, coordinator) with grades 1 and 4."""
    q = factories.query(coll, "q1")
    d = factories.document(coll, "d1")
    a = factories.human_judge(factories.user("ann"))
    b = factories.human_judge(factories.user("bob"))
    boss = factories.user("boss")
    factories.member(coll, boss, "coordinator")
    services.judgment_record(judge=a, query=q, document=d, grade=1)
    services.judgment_record(judge=b, query=q, document=d, grade=4)
    return q, d, a, b, boss


def _live(q, d):
    return LiveGrade.objects.get(query=q, document=d)


def test_adjudication_overrides_until_revoked_and_is_in_history(coll, pair):
    q, d, a, b, boss = pair
    live = _live(q, d)
    assert (live.grade, live.adjudicated, live.policy) == (1.0, False, coll.aggregation_policy)
    assert live.judge_ids == sorted([a.pk, b.pk])
    version = Collection.objects.get(pk=coll.pk).judgments_version
    adjudication = adj.adjudication_record(
        query=q, document=d, grade=3, reason="Narrative counts reviews", actor=boss
    )
    live = _live(q, d)
    assert (live.grade, live.adjudicated) == (3.0, True)
    assert live.version == version + 1 == Collection.objects.get(pk=coll.pk).judgments_version
    # Another judge's new grade does not move an adjudicated pair.
    c = factories.human_judge(factories.user("cid"))
    services.judgment_record(judge=c, query=q, document=d, grade=0)
    assert _live(q, d).grade == 3.0
    # A second adjudication replaces the first.
    adj.adjudication_record(query=q, document=d, grade=2, reason="Second look", actor=boss)
    assert _live(q, d).grade == 2.0
    adjudication.refresh_from_db()
    assert adjudication.revoked_at is not None
    current = Adjudication.objects.get(revoked_at__isnull=True)
    adj.adjudication_revoke(adjudication=current, actor=boss)
    live = _live(q, d)
    assert (live.grade, live.adjudicated) == (1.0, False)  # lower median of 1, 4, 0 -> 1
    events = list(
        JudgmentEvent.objects.filter(channel=JudgmentEvent.Channel.ADJUDICATION).order_by("id")
    )
    assert [(e.action, e.actor_id) for e in events] == [
        ("create", boss.pk),
        ("change", boss.pk),
        ("delete", boss.pk),
    ]
    assert events[0].before is None
    assert events[0].after == {
        "grade": 3,
        "status": "adjudicated",
        "reason": "Narrative counts reviews",
    }
    assert events[1].before["grade"] == 3 and events[1].after["grade"] == 2
    assert events[2].before["grade"] == 2 and events[2].after is None
    with pytest.raises(ValidationError):
        adj.adjudication_revoke(adjudication=current, actor=boss)


def test_adjudicating_a_pair_nobody_could_judge_gives_it_a_grade(coll):
    q, d = factories.query(coll, "q1"), factories.document(coll, "d1")
    boss = factories.user("boss")
    judge = factories.human_judge(factories.user())
    services.judgment_record(judge=judge, query=q, document=d, status="cannot_judge")
    assert not LiveGrade.objects.exists()
    adj.adjudication_record(query=q, document=d, grade=0, reason="Spam page", actor=boss)
    live = _live(q, d)
    assert (live.grade, live.adjudicated, live.judge_ids) == (0.0, True, [])


@pytest.mark.parametrize(
    ("grade", "reason", "field"),
    [(5, "x", "grade"), (-1, "x", "grade"), (2.5, "x", "grade"), (2, "  ", "reason")],
)
def test_bad_adjudications_are_refused(coll, pair, grade, reason, field):
    q, d, _a, _b, boss = pair
    with pytest.raises(ValidationError) as exc:
        adj.adjudication_record(query=q, document=d, grade=grade, reason=reason, actor=boss)
    assert field in exc.value.message_dict
    assert not Adjudication.objects.exists()


def test_same_adjudication_twice_changes_nothing(coll, pair):
    q, d, _a, _b, boss = pair
    first = adj.adjudication_record(query=q, document=d, grade=2, reason="r", actor=boss)
    version = Collection.objects.get(pk=coll.pk).judgments_version
    again = adj.adjudication_record(query=q, document=d, grade=2, reason="r", actor=boss)
    assert again.pk == first.pk
    assert Collection.objects.get(pk=coll.pk).judgments_version == version


def test_policy_change_is_recorded_and_rebuilds(coll, pair, django_capture_on_commit_callbacks):
    q, d, _a, _b, boss = pair
    seen = []

    def receiver(**kwargs):
        seen.append(kwargs)

    judgments_changed.connect(receiver)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            change = adj.aggregation_settings_update(
                collection=coll, actor=boss, aggregation_policy="mean_human_then_llm"
            )
    finally:
        judgments_changed.disconnect(receiver)
    coll.refresh_from_db()
    assert coll.aggregation_policy == "mean_human_then_llm"
    assert (change.previous, change.policy, change.actor) == (
        "lower_median_human_then_llm",
        "mean_human_then_llm",
        boss,
    )
    assert change.version == coll.judgments_version
    live = _live(q, d)
    assert (live.grade, live.policy) == (2.5, "mean_human_then_llm")
    assert seen[-1]["bulk"] is True and seen[-1]["version"] == coll.judgments_version
    # The same policy again is no change.
    assert (
        adj.aggregation_settings_update(
            collection=coll, actor=boss, aggregation_policy="mean_human_then_llm"
        )
        is None
    )
    assert PolicyChange.objects.count() == 1


def test_settings_are_validated_all_or_nothing(coll):
    with pytest.raises(ValidationError) as exc:
        adj.aggregation_settings_update(
            collection=coll,
            actor=None,
            aggregation_policy="median",
            judges_per_pair=0,
            disagreement_spread=5,
            agreement_alert_threshold=1.5,
        )
    assert set(exc.value.message_dict) == {
        "aggregation_policy",
        "judges_per_pair",
        "disagreement_spread",
        "agreement_alert_threshold",
    }
    coll.refresh_from_db()
    assert (coll.judges_per_pair, coll.disagreement_spread) == (1, 2)
    adj.aggregation_settings_update(
        collection=coll, actor=None, judges_per_pair=3, max_judges_per_pair=4
    )
    coll.refresh_from_db()
    assert (coll.judges_per_pair, coll.max_judges_per_pair) == (3, 4)


def test_dawid_skene_policy_in_the_live_list(coll):
    """Two reliable judges and one who always says 3: Dawid–Skene follows the reliable ones."""
    queries = [factories.query(coll, f"q{i}") for i in range(4)]
    d = factories.document(coll, "d1")
    judges = [factories.human_judge(factories.user()) for _ in range(3)]
    grades = [(0, 0, 3), (4, 4, 3), (1, 1, 3), (3, 3, 3)]
    for q, row in zip(queries, grades, strict=True):
        for judge, grade in zip(judges, row, strict=True):
            services.judgment_record(judge=judge, query=q, document=d, grade=grade)
    adj.aggregation_settings_update(collection=coll, actor=None, aggregation_policy="dawid_skene")
    live = {g.query.external_id: g.grade for g in LiveGrade.objects.select_related("query")}
    assert live == {"q0": 0.0, "q1": 4.0, "q2": 1.0, "q3": 3.0}
    # A new grade on one pair refits the model over the whole collection.
    services.judgment_record(judge=judges[2], query=queries[0], document=d, grade=0)
    assert LiveGrade.objects.get(query=queries[0]).grade == 0.0
    assert LiveGrade.objects.get(query=queries[0]).judge_ids == sorted(j.pk for j in judges)


def test_remove_one_judges_labels_keeps_history(coll, pair):
    q, d, a, _b, boss = pair
    other_q = factories.query(coll, "q2")
    services.judgment_record(judge=a, query=other_q, document=d, status="cannot_judge")
    removed = adj.judge_labels_remove(collection=coll, judge=a, actor=boss)
    assert removed == 2
    assert not Judgment.objects.filter(judge=a).exists()
    assert _live(q, d).grade == 4.0  # only bob's grade is left
    deletes = JudgmentEvent.objects.filter(judge=a, action="delete")
    assert deletes.count() == 2
    assert {e.before["grade"] for e in deletes} == {1, None}
    assert JudgmentEvent.objects.filter(judge=a, action="create").count() == 2
    assert adj.judge_labels_remove(collection=coll, judge=a, actor=boss) == 0


def test_quota(coll, judge_user):
    judge = factories.human_judge(judge_user)
    membership = adj.judge_quota_set(collection=coll, judge=judge, quota=5)
    assert membership.quota == 5
    with pytest.raises(ValidationError) as exc:
        adj.judge_quota_set(collection=coll, judge=judge, quota=-1)
    assert "quota" in exc.value.message_dict
    with pytest.raises(ValidationError) as exc:
        adj.judge_quota_set(collection=coll, judge=factories.llm_judge(), quota=1)
    assert "judge" in exc.value.message_dict


def test_adjudication_events_are_the_pairs_not_the_adjudicators(coll, pair):
    """They are no label of the coordinator's own: no judge, only in the pair's history."""
    q, d, _a, _b, boss = pair
    own = factories.human_judge(boss)
    services.judgment_record(judge=own, query=q, document=d, grade=2)  # boss also judges
    adj.adjudication_record(query=q, document=d, grade=3, reason="counts", actor=boss)
    adjudication_events = JudgmentEvent.objects.filter(channel="adjudication")
    assert adjudication_events.count() == 1 and adjudication_events.get().judge is None
    # The coordinator's own label history holds only their own label.
    assert list(JudgmentEvent.objects.filter(judge=own).values_list("channel", flat=True)) == [
        "browser"
    ]
    # The pair's history (the events API, filtered by the pair) still lists it, schema-valid.
    from tests.api_client import client_for

    body = (
        client_for(boss)
        .get(f"/api/v1/collections/{coll.slug}/events/", {"query": "q1", "document": "d1"})
        .json()
    )
    rows = body["results"] if isinstance(body, dict) else body
    adjudication = [e for e in rows if e["channel"] == "adjudication"]
    assert len(adjudication) == 1
    assert adjudication[0]["judge"] is None
    after = adjudication[0]["after"]
    assert (after["grade"], after["status"], after["reason"]) == (3, "adjudicated", "counts")
    # Every other event keeps its judge (the database says so too).
    from django.db import IntegrityError, transaction

    with pytest.raises(IntegrityError), transaction.atomic():
        JudgmentEvent.objects.filter(channel="browser").update(judge=None)


@pytest.mark.django_db(transaction=True)
def test_the_same_collection_trigger_survives_the_migration(coll):
    """0011 rebuilds the events table on SQLite; the 0002 trigger must still refuse."""
    from django.db import DatabaseError, transaction

    other = factories.collection("other")
    q = factories.query(coll, "q1")
    d = factories.document(other, "d1")
    judge = factories.human_judge(factories.user("ann"))
    with pytest.raises(DatabaseError), transaction.atomic():
        JudgmentEvent.objects.create(
            collection=coll, judge=judge, query=q, document=d, action="create", channel="api"
        )
