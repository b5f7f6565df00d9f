"""Who gets what: every endpoint against every kind of caller, and nothing leaks."""

from __future__ import annotations

import pytest

from judging import services
from judging.models import Judge, Judgment
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db

C = "/api/v1/collections/demo/"
CALLERS = (None, "olga", "otto", "tess", "jim", "judy", "cora")
# Expected status per caller, in the order of CALLERS:
# anonymous, judge elsewhere, coordinator elsewhere, team member, another judge,
# the judge who owns the judgment, the coordinator.
MATRIX = {
    "collections": ("get", "/api/v1/collections/", None, (401, 200, 200, 200, 200, 200, 200)),
    "collection": ("get", C, None, (401, 404, 404, 200, 200, 200, 200)),
    "queries": ("get", C + "queries/", None, (401, 404, 404, 403, 200, 200, 200)),
    "documents": ("get", C + "documents/", None, (401, 404, 404, 403, 200, 200, 200)),
    "pool": ("get", C + "pool/", None, (401, 404, 404, 403, 200, 200, 200)),
    "judgments": ("get", C + "judgments/", None, (401, 404, 404, 403, 200, 200, 200)),
    "record": (
        "post",
        C + "judgments/",
        {"query": "q2", "document": "d3", "grade": 1},
        (401, 404, 404, 403, 201, 201, 201),
    ),
    "judgment": ("get", C + "judgments/{jid}/", None, (401, 404, 404, 403, 404, 200, 200)),
    "patch": (
        "patch",
        C + "judgments/{jid}/",
        {"grade": 0},
        (401, 404, 404, 403, 404, 200, 200),
    ),
    "delete": ("delete", C + "judgments/{jid}/", None, (401, 404, 404, 403, 404, 204, 204)),
    "history": (
        "get",
        C + "judgments/{jid}/history/",
        None,
        (401, 404, 404, 403, 404, 200, 200),
    ),
    "events": ("get", C + "events/", None, (401, 404, 404, 403, 403, 403, 200)),
    "qrels": ("get", C + "qrels/", None, (401, 404, 404, 403, 403, 403, 200)),
    "judges": ("get", "/api/v1/judges/", None, (401, 200, 200, 200, 200, 200, 200)),
    "register": (
        "post",
        "/api/v1/judges/",
        {"name": "gpt", "model": "gpt-x"},
        (401, 403, 201, 403, 403, 403, 201),
    ),
    "judge": ("get", "/api/v1/judges/{judge_id}/", None, (401, 404, 404, 404, 404, 200, 200)),
}
CASES = [
    pytest.param(endpoint, caller, expected, id=f"{endpoint}-{caller or 'anonymous'}")
    for endpoint, (*_, statuses) in MATRIX.items()
    for caller, expected in zip(CALLERS, statuses, strict=True)
]
SECRETS = ("judy", "jim", '"grade"', "q1 need")


@pytest.fixture
def judged(world):
    """Give judy and jim a judgment each of q1/d1 (3 and 1)."""
    made = {}
    for name, grade in (("judy", 3), ("jim", 1)):
        judge = services.judge_for_user(user=world.users[name])
        made[name] = services.judgment_record(
            judge=judge, query=world.queries["q1"], document=world.docs["d1"], grade=grade
        )
    return made


@pytest.mark.parametrize(("endpoint", "caller", "expected"), CASES)
def test_permission_matrix(api, judged, endpoint, caller, expected):
    method, url, body, _ = MATRIX[endpoint]
    url = url.format(jid=judged["judy"].pk, judge_id=judged["judy"].judge_id)
    response = getattr(api(caller), method)(url, body, format="json")
    assert response.status_code == expected, response.content
    if expected >= 400:
        errors_of(response)
        text = response.content.decode()
        assert not any(secret in text for secret in SECRETS), text


def test_writes_refused_leave_nothing(api, judged):
    before = list(Judgment.objects.order_by("pk").values_list("pk", "grade"))
    url = f"{C}judgments/{judged['judy'].pk}/"
    for caller in (None, "olga", "otto", "tess", "jim"):
        api(caller).patch(url, {"grade": 0}, format="json")
        api(caller).delete(url)
    for caller in (None, "olga", "otto", "tess"):
        api(caller).post(C + "judgments/", {"query": "q2", "document": "d3", "grade": 1})
    assert list(Judgment.objects.order_by("pk").values_list("pk", "grade")) == before
    assert not Judge.objects.filter(kind="llm").exists()


def test_unknown_collection_looks_like_a_foreign_one(api, judged):
    missing = api("cora").get("/api/v1/collections/nope/judgments/")
    foreign = api("olga").get(C + "judgments/")
    assert missing.status_code == foreign.status_code == 404
    assert missing.json() == foreign.json() == {"errors": [{"message": "Not found."}]}


def test_non_members_do_not_see_the_collection_listed(api, judged):
    assert api("olga").get("/api/v1/collections/").json()["results"][0]["slug"] == "other"
    assert [c["slug"] for c in api("otto").get("/api/v1/collections/").json()["results"]] == [
        "other"
    ]


def test_judge_reads_only_own_judgments(api, judged):
    rows = api("jim").get(C + "judgments/").json()["results"]
    assert [(r["judge"]["name"], r["grade"]) for r in rows] == [("jim", 1)]
    assert api("jim").get(f"{C}judgments/{judged['jim'].pk}/").status_code == 200


def test_team_member_sees_collection_but_no_grades(api, judged):
    body = api("tess").get(C).json()
    assert body["roles"] == ["team"]
    for path in ("judgments/", "qrels/", "events/", f"judgments/{judged['judy'].pk}/history/"):
        assert api("tess").get(C + path).status_code == 403
    assert api("tess").get(C + "qrels/?format=json").status_code == 403


def test_judges_list_shows_others_only_their_own_judge(api, judged):
    llm = Judge.objects.create(kind="llm", name="gpt", model="gpt-x")
    llm.collections.add(judged["judy"].collection)
    names = [j["name"] for j in api("judy").get("/api/v1/judges/").json()["results"]]
    assert names == ["judy"]
    assert api("tess").get("/api/v1/judges/").json()["results"] == []
    every = {j["name"] for j in api("cora").get("/api/v1/judges/").json()["results"]}
    assert every == {"judy", "jim", "gpt"}
    assert api("judy").get(f"/api/v1/judges/{llm.pk}/").status_code == 404
    # A coordinator of another collection sees neither its LLM judges nor its people.
    assert api("otto").get(f"/api/v1/judges/{llm.pk}/").status_code == 404
    assert api("otto").get("/api/v1/judges/").json()["results"] == []
    assert api("cora").get(f"/api/v1/judges/{llm.pk}/").json()["collections"] == ["demo"]


def test_method_not_allowed_for_members(api, judged):
    response = api("cora").delete(C + "qrels/")
    assert response.status_code == 405
    assert errors_of(response) == [{"message": 'Method "DELETE" not allowed.'}]
