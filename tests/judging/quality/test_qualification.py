"""Qualification: a judge's labels count in the live list only once qualified on gold.

The rule by hand (pure, no database), then the services: labels kept but left out of the
live list until the judge qualifies, counted from the moment they do, dropped again when
their last gold pairs fall below the bar, with the history and the standings kept.
"""

from __future__ import annotations

import math

import pytest
from django.core.exceptions import ValidationError

from judging import services as judging_services
from judging.models import Judgment, LiveGrade
from judging.quality import gold as rule
from judging.quality import qualification, services
from judging.quality.models import JudgeQualification, QualificationChange
from tests import factories

# --- the rule, by hand ------------------------------------------------------------------


def test_fewer_gold_pairs_than_asked_is_qualifying_whatever_the_grades():
    q = rule.qualification([2, 3], [2, 3], needed=3, share=0.5)
    assert (q.status, q.counted, q.graded, q.window, q.window_exact) == (
        "qualifying",
        False,
        2,
        2,
        2,
    )
    assert q.window_share == 1.0
    empty = rule.qualification([], [], needed=1, share=0)
    assert empty.status == "qualifying" and empty.window == 0 and math.isnan(empty.window_share)


def test_the_last_n_gold_pairs_decide():
    # needed 4 at 0.75: the last four are [ok, ok, wrong, ok] -> 3 of 4 = 0.75 -> qualified
    grades, gold = [0, 0, 1, 2, 0, 4], [4, 4, 1, 2, 1, 4]
    q = rule.qualification(grades, gold, needed=4, share=0.75)
    assert (q.status, q.window, q.window_exact) == ("qualified", 4, 3)
    # two early misses do not count against the judge any more: only the last four do
    assert rule.qualification(grades, gold, needed=4, share=0.76).status == "below"
    # one more miss: the window slides to [ok, wrong, ok, wrong] -> 2 of 4 -> lost
    lost = rule.qualification([*grades, 3], [*gold, 2], needed=4, share=0.75)
    assert (lost.status, lost.counted, lost.window_exact) == ("below", False, 2)


def test_exact_agreement_only_within_one_is_not_enough():
    q = rule.qualification([1, 2, 3], [2, 3, 4], needed=3, share=0.1)
    assert q.status == "below" and q.window_exact == 0


def test_the_share_is_compared_without_rounding_trouble():
    # 7 of 10 at 0.7, 1 of 3 at 1/3, 8 of 10 at 0.8: all meet the bar exactly
    assert rule.qualification([1] * 7 + [0] * 3, [1] * 10, needed=10, share=0.7).counted
    assert rule.qualification([1, 0, 0], [1, 1, 1], needed=3, share=1 / 3).counted
    assert rule.qualification([1] * 8 + [0] * 2, [1] * 10, needed=10, share=0.8).counted
    assert not rule.qualification([1] * 7 + [0] * 3, [1] * 10, needed=10, share=0.8).counted
    assert rule.qualification([0, 0], [4, 4], needed=2, share=0).counted  # share 0: any


def test_the_rule_equals_a_plain_reading_of_it_on_random_records():
    """A loop over the judge's last ``needed`` answers, written from the docstring."""
    import numpy as np

    rng = np.random.default_rng(11)
    for _ in range(500):
        n, needed = int(rng.integers(0, 12)), int(rng.integers(1, 8))
        share = float(rng.choice([0.0, 0.25, 0.5, 2 / 3, 0.7, 0.8, 1.0]))
        gold = rng.integers(0, 5, n).tolist()
        grades = [g if rng.random() < 0.6 else int(rng.integers(0, 5)) for g in gold]
        last = list(zip(grades, gold, strict=True))[-needed:]
        right = sum(1 for a, b in last if a == b)
        want = (
            "qualifying"
            if n < needed
            else "qualified"
            if right / needed >= share - 1e-12
            else "below"
        )
        got = rule.qualification(grades, gold, needed=needed, share=share)
        assert (got.status, got.window, got.window_exact) == (want, len(last), right)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (([1], [1]), None),
        (([1, 2], [1]), "one length"),
        (([5], [1]), "whole grades"),
        (([1.5], [1]), "whole grades"),
        (([[1]], [[1]]), "1-d"),
    ],
)
def test_bad_arrays(args, message):
    if message is None:
        assert rule.qualification(*args, needed=1, share=1.0).counted
        return
    with pytest.raises(ValueError, match=message):
        rule.qualification(*args, needed=1, share=1.0)


@pytest.mark.parametrize(
    ("needed", "share"),
    [(0, 0.5), (-1, 0.5), (True, 0.5), (2.0, 0.5), (1, -0.1), (1, 1.5), (1, math.nan)],
)
def test_bad_bar(needed, share):
    with pytest.raises(ValueError):
        rule.qualification([1], [1], needed=needed, share=share)


# --- the services -------------------------------------------------------------------------


@pytest.fixture
def world(db):
    """Collection 'qual': q1 with gold pairs g0–g2 (grade 2), ordinary documents d0–d1."""
    coll = factories.collection("qual")
    q1, q2 = factories.query(coll, "q1"), factories.query(coll, "q2")
    golds = [factories.document(coll, f"g{i}") for i in range(3)]
    docs = [factories.document(coll, f"d{i}") for i in range(2)]
    for doc in golds:
        services.gold_set(query=q1, document=doc, grade=2)
    ann = factories.human_judge(factories.user("ann"))
    ben = factories.human_judge(factories.user("ben"))
    return coll, (q1, q2), golds, docs, ann, ben


def _live(coll) -> dict[tuple[str, str], float]:
    return {
        (q, d): g
        for q, d, g in LiveGrade.objects.filter(collection=coll).values_list(
            "query__external_id", "document__external_id", "grade"
        )
    }


def _standing(coll, judge) -> JudgeQualification | None:
    return JudgeQualification.objects.filter(collection=coll, judge=judge).first()


def test_labels_wait_until_the_judge_qualifies_then_count(world):
    coll, (q1, q2), golds, docs, ann, _ben = world
    services.qualification_set(collection=coll, pairs=2, share=1.0)
    judging_services.judgment_record(judge=ann, query=q2, document=docs[0], grade=3)
    judging_services.judgment_record(judge=ann, query=q1, document=golds[0], grade=2)
    assert Judgment.objects.filter(judge=ann).count() == 2  # kept...
    assert _live(coll) == {}  # ...but not counted: one gold pair of two
    assert _standing(coll, ann).status == "qualifying"
    judging_services.judgment_record(judge=ann, query=q1, document=golds[1], grade=2)
    # qualified: every label of ann enters the live list, in other queries too
    assert _live(coll) == {("q2", "d0"): 3.0, ("q1", "g0"): 2.0, ("q1", "g1"): 2.0}
    standing = _standing(coll, ann)
    assert (standing.status, standing.counted, standing.graded, standing.window_exact) == (
        "qualified", True, 2, 2,
    )  # fmt: skip
    change = QualificationChange.objects.get(judge=ann)
    assert (change.counted, change.needed, change.share, change.graded) == (True, 2, 1.0, 2)


def test_qualification_is_lost_when_the_last_gold_pairs_fall_below(world):
    coll, (q1, q2), golds, docs, ann, _ = world
    services.qualification_set(collection=coll, pairs=2, share=1.0)
    for doc in golds[:2]:
        judging_services.judgment_record(judge=ann, query=q1, document=doc, grade=2)
    judging_services.judgment_record(judge=ann, query=q2, document=docs[1], grade=4)
    assert _live(coll)[("q2", "d1")] == 4.0
    judging_services.judgment_record(judge=ann, query=q1, document=golds[2], grade=0)
    assert _live(coll) == {}  # last two gold pairs: one right of two < 1.0
    assert _standing(coll, ann).status == "below"
    assert list(
        QualificationChange.objects.filter(judge=ann).values_list("counted", flat=True)
    ) == [True, False]
    # regrading the miss right brings the judge back
    judging_services.judgment_record(judge=ann, query=q1, document=golds[2], grade=2)
    assert _live(coll)[("q2", "d1")] == 4.0


def test_unmarking_or_regrading_a_gold_pair_moves_the_standing(world):
    coll, (q1, q2), golds, docs, ann, _ = world
    services.qualification_set(collection=coll, pairs=2, share=1.0)
    for doc in golds[:2]:
        judging_services.judgment_record(judge=ann, query=q1, document=doc, grade=2)
    judging_services.judgment_record(judge=ann, query=q2, document=docs[0], grade=1)
    assert ("q2", "d0") in _live(coll)
    services.gold_set(query=q1, document=golds[1], grade=3)  # ann was wrong after all
    assert _standing(coll, ann).status == "below" and _live(coll) == {}
    services.gold_set(query=q1, document=golds[1], grade=2)
    assert _standing(coll, ann).counted
    services.gold_remove(gold=golds_pair(coll, q1, golds[0]))
    assert _standing(coll, ann).status == "qualifying" and _live(coll) == {}


def golds_pair(coll, query, document):
    return coll.gold_pairs.get(query=query, document=document)


def test_turning_qualification_on_and_off_rebuilds_the_live_list(world):
    coll, (q1, q2), golds, docs, ann, ben = world
    judging_services.judgment_record(judge=ann, query=q2, document=docs[0], grade=3)
    judging_services.judgment_record(judge=ben, query=q2, document=docs[0], grade=1)
    judging_services.judgment_record(judge=ben, query=q1, document=golds[0], grade=2)
    assert _live(coll)[("q2", "d0")] == 1.0  # lower median of 1 and 3
    version = coll.judgments_version
    assert services.qualification_set(collection=coll, pairs=1, share=1.0)
    coll.refresh_from_db()
    assert coll.judgments_version > version
    assert _live(coll) == {("q2", "d0"): 1.0, ("q1", "g0"): 2.0}  # ben alone counts
    assert not services.qualification_set(collection=coll, pairs=1, share=1.0)  # no change
    services.qualification_set(collection=coll, pairs=0, share=1.0)
    assert _live(coll) == {("q2", "d0"): 1.0, ("q1", "g0"): 2.0}  # everyone counts again
    assert not JudgeQualification.objects.filter(collection=coll).exists()


def test_llm_judges_qualify_like_humans(world):
    coll, (_q1, _q2), _golds, _docs, _ann, _ = world
    llm = factories.llm_judge("robot")
    services.qualification_set(collection=coll, pairs=1, share=1.0)
    rows = [
        judging_services.JudgmentRow(1, "q2", "d0", 4),
        judging_services.JudgmentRow(2, "q1", "g0", 1),
    ]
    judging_services.judgments_import(collection=coll, judge=llm, rows=rows)
    assert _live(coll) == {} and _standing(coll, llm).status == "below"
    judging_services.judgments_import(
        collection=coll, judge=llm, rows=[judging_services.JudgmentRow(1, "q1", "g0", 2)]
    )
    assert _live(coll) == {("q2", "d0"): 4.0, ("q1", "g0"): 2.0}


@pytest.mark.parametrize(
    ("pairs", "share", "field"),
    [
        (-1, 0.5, "qualification_pairs"),
        (1001, 0.5, "qualification_pairs"),
        (True, 0.5, "qualification_pairs"),
        ("3", 0.5, "qualification_pairs"),
        (3, 1.01, "qualification_share"),
        (3, math.nan, "qualification_share"),
        (3, "0.5", "qualification_share"),
    ],
)
def test_bad_bar_is_refused_naming_the_field(world, pairs, share, field):
    coll = world[0]
    with pytest.raises(ValidationError) as caught:
        services.qualification_set(collection=coll, pairs=pairs, share=share)
    assert list(caught.value.message_dict) == [field]
    coll.refresh_from_db()
    assert (coll.qualification_pairs, coll.qualification_share) == (0, 0.8)


def test_stored_standings_equal_the_rule_on_the_current_labels(world):
    coll, (q1, _q2), golds, _docs, ann, ben = world
    services.qualification_set(collection=coll, pairs=2, share=0.5)
    for judge, grades in ((ann, [2, 0, 2]), (ben, [0, 0, 2])):
        for doc, grade in zip(golds, grades, strict=True):
            judging_services.judgment_record(judge=judge, query=q1, document=doc, grade=grade)
    want = qualification.standings(coll.pk, qualification.bar(coll.pk))
    stored = {s.judge_id: s for s in JudgeQualification.objects.filter(collection=coll)}
    assert {j: (s.status, s.window_exact) for j, s in want.items()} == {
        j: (s.status, s.window_exact) for j, s in stored.items()
    }
    assert stored[ann.pk].status == "qualified" and stored[ben.pk].status == "qualified"


# --- REST and pages -----------------------------------------------------------------------


@pytest.fixture
def staffed(world):
    """The world with a coordinator 'boss' and ann and ben as judges of the collection."""
    from judging.models import Membership

    coll, queries, golds, docs, ann, ben = world
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    for judge in (ann, ben):
        factories.member(coll, judge.user, Membership.Role.JUDGE)
    return coll, queries, golds, docs, ann, ben, boss


def test_rest_sets_the_bar_and_reports_standings(staffed):
    from tests.api_client import client_for

    coll, (q1, q2), golds, docs, ann, ben, boss = staffed
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/gold/qualification/"
    bar = ("qualification_pairs", "qualification_share")
    assert {k: api.get(url).json()[k] for k in bar} == {
        "qualification_pairs": 0,
        "qualification_share": 0.8,
    }
    done = api.put(url, {"qualification_pairs": 2, "qualification_share": 0.5}, format="json")
    assert done.status_code == 200
    assert {k: done.json()[k] for k in bar} == {
        "qualification_pairs": 2,
        "qualification_share": 0.5,
    }
    for doc, grade in zip(golds[:2], (2, 2), strict=True):
        judging_services.judgment_record(judge=ann, query=q1, document=doc, grade=grade)
    for doc, grade in zip(golds, (0, 0, 2), strict=True):
        judging_services.judgment_record(judge=ben, query=q1, document=doc, grade=grade)
    judging_services.judgment_record(judge=ben, query=q2, document=docs[0], grade=1)
    rows = {
        r["name"]: r
        for r in api.get(f"/api/v1/collections/{coll.slug}/judges/gold/").json()["results"]
    }
    assert (rows["ann"]["qualification"], rows["ann"]["counted"], rows["ann"]["alert"]) == (
        "qualified", True, False,
    )  # fmt: skip
    # ben: last two gold pairs 0 (gold 2) and 2 (gold 2): 1 of 2 at 0.5 -> qualified too
    assert rows["ben"]["qualification"] == "qualified"
    assert (rows["ben"]["window"], rows["ben"]["window_exact"]) == (2, 1)
    api.put(url, {"qualification_pairs": 2, "qualification_share": 1.0}, format="json")
    rows = {
        r["name"]: r
        for r in api.get(f"/api/v1/collections/{coll.slug}/judges/gold/").json()["results"]
    }
    assert (rows["ben"]["qualification"], rows["ben"]["counted"], rows["ben"]["alert"]) == (
        "below", False, True,
    )  # fmt: skip
    assert rows["ben"]["lost_at"] is not None and next(iter(rows)) == "ben"  # alerts first
    labels = api.get(f"/api/v1/collections/{coll.slug}/judgments/").json()["results"]
    assert {(r["judge"]["name"], r["counted"]) for r in labels} == {("ann", True), ("ben", False)}


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({}, {"qualification_pairs", "qualification_share"}),
        ({"qualification_pairs": -1, "qualification_share": 0.5}, {"qualification_pairs"}),
        ({"qualification_pairs": 10**30, "qualification_share": 0.5}, {"qualification_pairs"}),
        ({"qualification_pairs": "3\x00", "qualification_share": 0.5}, {"qualification_pairs"}),
        ({"qualification_pairs": [[[3]]], "qualification_share": 0.5}, {"qualification_pairs"}),
        ({"qualification_pairs": 3, "qualification_share": 1e308}, {"qualification_share"}),
        ({"qualification_pairs": 3, "qualification_share": "NaN"}, {"qualification_share"}),
        ({"qualification_pairs": 3, "qualification_share": {"a": 1}}, {"qualification_share"}),
    ],
)
def test_rest_refuses_bad_and_hostile_bars_naming_the_field(staffed, body, fields):
    from tests.api_client import client_for, errors_of

    coll, *_, boss = staffed
    response = client_for(boss).put(
        f"/api/v1/collections/{coll.slug}/gold/qualification/", body, format="json"
    )
    assert response.status_code == 400
    assert {e.get("field") for e in errors_of(response)} == fields
    coll.refresh_from_db()
    assert (coll.qualification_pairs, coll.qualification_share) == (0, 0.8)


def test_rest_lists_the_qualification_history_newest_first(staffed, django_assert_max_num_queries):
    from tests.api_client import client_for

    coll, (q1, _q2), golds, _docs, ann, ben, boss = staffed
    services.qualification_set(collection=coll, pairs=2, share=1.0)
    for doc in golds[:2]:  # ann qualifies...
        judging_services.judgment_record(judge=ann, query=q1, document=doc, grade=2)
    judging_services.judgment_record(judge=ann, query=q1, document=golds[2], grade=0)  # ...loses it
    for doc in golds[:2]:  # ben qualifies
        judging_services.judgment_record(judge=ben, query=q1, document=doc, grade=2)
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/gold/qualification/changes/"
    with django_assert_max_num_queries(8):  # no query per row
        body = api.get(url).json()
    rows = [(r["judge_name"], r["counted"], r["status"]) for r in body["results"]]
    assert rows == [("ben", True, "qualified"), ("ann", False, "below"), ("ann", True, "qualified")]
    lost = body["results"][1]
    assert (lost["graded"], lost["window"], lost["window_exact"]) == (3, 2, 1)
    assert (lost["needed"], lost["share"], lost["judge"]) == (2, 1.0, ann.pk)
    mine = api.get(url, {"judge": ann.pk}).json()["results"]
    assert [r["counted"] for r in mine] == [False, True]
    for bad in ("x", "1\x00", "9" * 40, "-1"):
        response = api.get(url, {"judge": bad})
        assert response.status_code == 400 and "judge" in response.content.decode()
    assert client_for(ann.user).get(url).status_code == 403


def test_judges_cannot_see_or_set_the_bar(staffed):
    from tests.api_client import client_for

    coll, *_, ann, _ben, _boss = staffed
    url = f"/api/v1/collections/{coll.slug}/gold/qualification/"
    api = client_for(ann.user)
    assert api.get(url).status_code == 403
    assert api.put(url, {"qualification_pairs": 1, "qualification_share": 0}).status_code == 403


def test_pages_set_the_bar_alert_and_mark_labels_not_counted(client, staffed):
    from django.urls import reverse

    coll, (q1, _q2), golds, _docs, ann, ben, boss = staffed
    client.force_login(boss)
    gold_url = reverse("judging:gold_list", args=[coll.slug])
    refused = client.post(gold_url, {"qualification_pairs": "-2", "qualification_percent": "80"})
    assert refused.status_code == 400 and "qualification_pairs" in refused.content.decode()
    saved = client.post(gold_url, {"qualification_pairs": "2", "qualification_percent": "100"})
    assert saved.status_code == 303
    coll.refresh_from_db()
    assert (coll.qualification_pairs, coll.qualification_share) == (2, 1.0)
    for doc in golds[:2]:
        judging_services.judgment_record(judge=ann, query=q1, document=doc, grade=2)
    for doc, grade in zip(golds[:2], (1, 2), strict=True):
        judging_services.judgment_record(judge=ben, query=q1, document=doc, grade=grade)
    judges = client.get(reverse("judging:judge_list", args=[coll.slug])).content.decode()
    assert 'data-field="gold-alerts"' in judges and "1 judge</strong> below the" in judges
    ben_row = (
        judges.split('id="judge-gold"')[1].split(f'data-judge="{ben.pk}"')[1].split("</tr>")[0]
    )
    assert 'data-standing="below"' in ben_row and "1 of last 2 exact" in ben_row
    ann_row = (
        judges.split('id="judge-gold"')[1].split(f'data-judge="{ann.pk}"')[1].split("</tr>")[0]
    )
    assert 'data-standing="qualified"' in ann_row
    attention = judges.split('id="judge-attention"')[1].split("</table>")[0]
    ben_attention = attention.split(f'data-judge="{ben.pk}"')[1].split("</tr>")[0]
    assert "not counted yet: qualifying" in ben_attention
    assert "not counted yet" not in attention.split(f'data-judge="{ann.pk}"')[1].split("</tr>")[0]
    # ben's own list says his labels wait, never which pairs are gold
    client.force_login(ben.user)
    mine = client.get(reverse("judging:judgment_list", args=[coll.slug])).content.decode()
    assert 'data-field="not-counted"' in mine and "gold" not in mine.lower()
    # ann qualified on her second label, but she is told so only once the pairs she has
    # judged reach a multiple of SHOWN_EVERY (20): the change never points at a gold pair
    client.force_login(ann.user)
    mine = client.get(reverse("judging:judgment_list", args=[coll.slug])).content.decode()
    assert "not counted yet" in mine
    more = [factories.document(coll, f"m{i}") for i in range(qualification.SHOWN_EVERY - 2)]
    for doc in more[:-1]:
        judging_services.judgment_record(judge=ann, query=q1, document=doc, grade=0)
    mine = client.get(reverse("judging:judgment_list", args=[coll.slug])).content.decode()
    assert "not counted yet" in mine  # 19 pairs judged
    judging_services.judgment_record(judge=ann, query=q1, document=more[-1], grade=0)
    mine = client.get(reverse("judging:judgment_list", args=[coll.slug])).content.decode()
    assert "not counted yet" not in mine  # 20: told
