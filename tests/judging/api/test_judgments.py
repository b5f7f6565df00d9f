"""Recording, reading, changing and deleting single judgments."""

from __future__ import annotations

import pytest

from judging import services
from judging.models import Judge, Judgment, JudgmentEvent
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/judgments/"


def _record(world, name, qid, docno, grade, **extra):
    judge = services.judge_for_user(user=world.users[name])
    return services.judgment_record(
        judge=judge,
        query=world.queries[qid],
        document=world.docs[docno],
        grade=grade,
        **extra,
    )


def test_record_one_judgment(api, world):
    response = api("judy").post(
        URL,
        {
            "query": "q1",
            "document": "d1",
            "grade": 3,
            "note": "on topic",
            "seconds": 4.2,
            "abstain_probability": 0.1,
        },
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    judge = Judge.objects.get(user=world.users["judy"])
    assert body["judge"] == {"id": judge.pk, "name": "judy", "kind": "human"}
    assert (body["query"], body["document"], body["grade"], body["status"]) == (
        "q1",
        "d1",
        3,
        "graded",
    )
    assert (body["note"], body["seconds"], body["abstain_probability"]) == ("on topic", 4.2, 0.1)
    assert body["provenance"] == "api" and (body["qid"], body["docno"]) == ("q1", "d1")
    assert set(body) == {
        "id",
        "judge",
        "query",
        "document",
        "qid",
        "docno",
        "provenance",
        "grade",
        "status",
        "note",
        "evidence",
        "seconds",
        "abstain_probability",
        "guidelines_version",
        "judge_version",
        "counted",
        "created_at",
        "updated_at",
    }
    assert body["counted"] is True  # no qualification asked: every label counts
    event = JudgmentEvent.objects.get()
    assert (event.channel, event.action, event.actor) == ("api", "create", world.users["judy"])

    again = api("judy").post(URL, {"query": "q1", "document": "d1", "grade": 1}, format="json")
    assert again.status_code == 200
    assert again.json()["id"] == body["id"] and again.json()["grade"] == 1

    history = api("judy").get(f"{URL}{body['id']}/history/")
    assert history.status_code == 200
    events = history.json()["results"]
    assert [(e["action"], e["channel"], e["actor"]) for e in events] == [
        ("create", "api", "judy"),
        ("change", "api", "judy"),
    ]
    assert events[0]["before"] is None and events[0]["after"]["grade"] == 3
    assert (events[1]["before"]["grade"], events[1]["after"]["grade"]) == (3, 1)


def test_record_form_encoded(api, world):
    response = api("judy").post(URL, {"query": "q1", "document": "d2", "grade": "2"})
    assert response.status_code == 201, response.json()
    assert Judgment.objects.get().grade == 2


@pytest.mark.parametrize(
    ("payload", "fields"),
    [
        ({"query": "q9", "document": "d1", "grade": 2}, {"query"}),
        ({"query": "q1", "document": "nope", "grade": 2}, {"document"}),
        ({"query": "q1", "document": "d1", "grade": 5}, {"grade"}),
        ({"query": "q1", "document": "d1", "grade": "x"}, {"grade"}),
        ({"query": "q1", "document": "d1"}, {"grade"}),
        ({"query": "q1", "document": "d1", "grade": 2, "status": "later"}, {"grade"}),
        ({"query": "q1", "document": "d1", "grade": 2, "status": "maybe"}, {"status"}),
        ({"query": "q1", "document": "d1", "grade": 2, "seconds": -1}, {"seconds"}),
        (
            {"query": "q1", "document": "d1", "grade": 2, "abstain_probability": 2},
            {"abstain_probability"},
        ),
        ({"document": "d1", "grade": 2}, {"query"}),
    ],
)
def test_record_one_rejects_bad_input_by_field(api, world, payload, fields):
    response = api("judy").post(URL, payload, format="json")
    assert response.status_code == 400
    assert {e.get("field") for e in errors_of(response)} == fields
    assert not Judgment.objects.exists()


def test_record_cannot_judge_without_grade(api, world):
    response = api("judy").post(
        URL,
        {"query": "q1", "document": "d1", "status": "cannot_judge", "note": "broken page"},
        format="json",
    )
    assert response.status_code == 201
    assert response.json()["grade"] is None


def test_non_object_body_is_400(api, world):
    response = api("judy").post(URL, [1, 2], format="json")
    assert response.status_code == 400
    errors_of(response)


def test_judges_see_only_their_own_judgments(api, world):
    mine = _record(world, "judy", "q1", "d1", 3)
    _record(world, "jim", "q1", "d1", 1)
    response = api("judy").get(URL)
    assert response.status_code == 200
    results = response.json()["results"]
    assert [r["id"] for r in results] == [mine.pk]
    assert response.json()["count"] == 1
    # Filtering by another judge does not widen the view.
    jim = Judge.objects.get(user=world.users["jim"])
    assert api("judy").get(URL, {"judge": jim.pk}).json()["results"] == []


def test_coordinators_see_and_filter_all_judgments(api, world):
    a = _record(world, "judy", "q1", "d1", 3)
    b = _record(world, "jim", "q1", "d2", 1)
    c = _record(world, "jim", "q2", "d3", None, status="later")
    client = api("cora")
    ids = lambda params: [r["id"] for r in client.get(URL, params).json()["results"]]  # noqa: E731
    assert sorted(ids({})) == sorted([a.pk, b.pk, c.pk])
    assert sorted(ids({"judge": b.judge_id})) == sorted([b.pk, c.pk])
    assert ids({"query": "q2"}) == [c.pk]
    assert ids({"document": "d2"}) == [b.pk]
    assert sorted(ids({"status": "graded"})) == sorted([a.pk, b.pk])
    Judgment.objects.filter(pk=a.pk).update(updated_at="2000-01-01T00:00:00Z")
    assert a.pk not in ids({"updated_after": "2001-01-01T00:00:00Z"})
    assert a.pk in ids({"updated_after": "1999-01-01T00:00:00Z"})
    bad = client.get(URL, {"judge": "x"})
    assert bad.status_code == 400
    assert errors_of(bad)[0]["field"] == "judge"


def test_patch_goes_through_history(api, world):
    j = _record(world, "judy", "q1", "d1", 3)
    response = api("judy").patch(f"{URL}{j.pk}/", {"grade": 4, "note": "better"}, format="json")
    assert response.status_code == 200, response.json()
    assert (response.json()["grade"], response.json()["note"]) == (4, "better")
    response = api("judy").patch(f"{URL}{j.pk}/", {"status": "later"}, format="json")
    assert response.status_code == 200
    assert (response.json()["grade"], response.json()["status"]) == (None, "later")
    response = api("judy").patch(f"{URL}{j.pk}/", {"grade": 2}, format="json")
    assert (response.json()["grade"], response.json()["status"]) == (2, "graded")
    events = JudgmentEvent.objects.filter(judgment=j).order_by("pk")
    assert [e.channel for e in events][1:] == ["api", "api", "api"]
    bad = api("judy").patch(f"{URL}{j.pk}/", {"grade": 9}, format="json")
    assert bad.status_code == 400 and errors_of(bad)[0]["field"] == "grade"


def test_coordinator_patches_any_judgment_as_actor(api, world):
    j = _record(world, "judy", "q1", "d1", 3)
    response = api("cora").patch(f"{URL}{j.pk}/", {"grade": 0}, format="json")
    assert response.status_code == 200
    event = JudgmentEvent.objects.order_by("pk").last()
    assert (event.actor, event.judge.user, event.channel) == (
        world.users["cora"],
        world.users["judy"],
        "api",
    )


def test_put_is_not_allowed(api, world):
    j = _record(world, "judy", "q1", "d1", 3)
    response = api("judy").put(f"{URL}{j.pk}/", {"grade": 1}, format="json")
    assert response.status_code == 405
    errors_of(response)


def test_delete_keeps_history(api, world):
    j = _record(world, "judy", "q1", "d1", 3)
    response = api("judy").delete(f"{URL}{j.pk}/")
    assert response.status_code == 204
    assert not Judgment.objects.exists()
    events = list(JudgmentEvent.objects.order_by("pk").values_list("action", "channel"))
    assert events == [("create", "browser"), ("delete", "api")]
    assert api("judy").get(f"{URL}{j.pk}/").status_code == 404


def test_history_spans_deleted_and_recorded_again(api, world):
    j = _record(world, "judy", "q1", "d1", 3)
    services.judgment_delete(judgment=j)
    j2 = _record(world, "judy", "q1", "d1", 2)
    response = api("judy").get(f"{URL}{j2.pk}/history/")
    assert [e["action"] for e in response.json()["results"]] == ["create", "delete", "create"]


def test_events_feed_for_coordinators(api, world):
    _record(world, "judy", "q1", "d1", 3)
    _record(world, "jim", "q2", "d3", 1, channel="api")
    client = api("cora")
    url = "/api/v1/collections/demo/events/"
    assert client.get(url).json()["count"] == 2
    jim = Judge.objects.get(user=world.users["jim"])
    rows = client.get(url, {"judge": jim.pk}).json()["results"]
    assert [(r["query"], r["document"], r["channel"]) for r in rows] == [("q2", "d3", "api")]
    assert client.get(url, {"query": "q1"}).json()["count"] == 1
    assert client.get(url, {"document": "d3"}).json()["count"] == 1
    assert client.get(url, {"channel": "browser"}).json()["count"] == 1
    assert client.get(url, {"action": "delete"}).json()["count"] == 0
    row = client.get(url, {"query": "q1"}).json()["results"][0]
    assert set(row) == {
        "id",
        "judgment",
        "judge",
        "query",
        "document",
        "action",
        "channel",
        "actor",
        "before",
        "after",
        "at",
    }


def test_a_judge_past_the_quota_gets_a_403_over_the_api(api, world):
    from judging.adjudication import services as services_adjudication
    from judging.models import Judgment

    judy = services.judge_for_user(user=world.users["judy"])
    services_adjudication.judge_quota_set(collection=world.coll, judge=judy, quota=1)
    url = "/api/v1/collections/demo/judgments/"
    first = api("judy").post(url, {"query": "q1", "document": "d1", "grade": 2}, format="json")
    assert first.status_code == 201
    second = api("judy").post(url, {"query": "q1", "document": "d2", "grade": 1}, format="json")
    assert second.status_code == 403
    [error] = errors_of(second)
    assert "Quota reached" in error["message"] and "raise the quota" in error["message"]
    assert not Judgment.objects.filter(judge=judy, document__external_id="d2").exists()
    # Changing the label already given still works.
    again = api("judy").post(url, {"query": "q1", "document": "d1", "grade": 3}, format="json")
    assert again.status_code in (200, 201)
