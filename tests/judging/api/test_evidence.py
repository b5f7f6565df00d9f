"""Evidence spans over REST (issue 35 item 5): record, change, import, export, settings.

The document ``d1`` holds an emoji and astral letters, so offsets counted in UTF-16 (as a
browser would) are off by one or more: every offset below is a code point, worked out by
hand from the body.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import StreamingHttpResponse

from judging import services
from judging.models import Judgment, JudgmentEvent
from tests import factories
from tests.api_client import clean_schema, errors_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/judgments/"
# W0 a1 v2 e3 _4 👋5 _6 a7 t8 _9 c10 a11 f12 é13 .14 \n15 𝔣16 𝔞17 𝔰18 𝔱19 _20 t21 …
# "Helsinki." ends at 39: 39 characters (a browser counts 44 UTF-16 units)
BODY = "Wave 👋 at café.\n𝔣𝔞𝔰𝔱 train to Helsinki."


def span(start: int, end: int, text: str) -> dict:
    return {"start": start, "end": end, "text": text}


CAFE, FAST = span(10, 14, "café"), span(16, 20, "𝔣𝔞𝔰𝔱")


@pytest.fixture
def evidence_world(world):
    world.coll.evidence = "optional"
    world.coll.save()
    world.docs["d1"].body = BODY
    world.docs["d1"].save()
    return world


def _post(api, name="judy", **fields):
    return api(name).post(URL, {"query": "q1", "document": "d1", **fields}, format="json")


def test_record_read_change_and_history(api, evidence_world):
    response = _post(api, grade=3, evidence=[FAST, CAFE, span(12, 15, "fé.")])
    assert response.status_code == 201, response.json()
    body = response.json()
    merged = [span(10, 15, "café."), FAST]  # 10-14 and 12-15 overlap: one span
    assert body["evidence"] == merged
    pk = body["id"]
    assert api("judy").get(f"{URL}{pk}/").json()["evidence"] == merged
    listed = api("cora").get(URL).json()["results"]
    assert {r["docno"]: r["evidence"] for r in listed} == {"d1": merged}
    # PATCH without evidence keeps it; with [] removes it; null too
    kept = api("judy").patch(f"{URL}{pk}/", {"note": "fast train"}, format="json")
    assert kept.status_code == 200 and kept.json()["evidence"] == merged
    cleared = api("judy").patch(f"{URL}{pk}/", {"evidence": []}, format="json")
    assert cleared.json()["evidence"] == []
    again = api("judy").patch(f"{URL}{pk}/", {"evidence": [CAFE]}, format="json")
    assert again.json()["evidence"] == [CAFE]
    assert (
        api("judy").patch(f"{URL}{pk}/", {"evidence": None}, format="json").json()["evidence"] == []
    )
    history = api("judy").get(f"{URL}{pk}/history/").json()
    events = history["results"] if isinstance(history, dict) else history
    assert events[0]["after"]["evidence"] == merged
    assert "evidence" not in events[2]["after"] and events[2]["before"]["evidence"] == merged
    assert events[3]["after"]["evidence"] == [CAFE]


@pytest.mark.parametrize(
    ("evidence", "words"),
    [
        ([span(10, 14, "cafe")], "does not match the document at 10–14"),
        ([span(11, 15, "café")], "does not match"),  # UTF-16 offsets: one too far
        ([span(0, 10**12, "x")], "is not an offset"),
        ([span(0, 10**400, "x")], "number"),  # refused by the JSON policy, before the field
        ([span(10, 14, "ca\x00é")], "NUL"),  # likewise, naming evidence[0].text
        ([span(40, 44, "café")], "beyond the document's text (39 characters)"),
        ("café", "Give a list of spans"),
        ({"start": 10}, "Give a list of spans"),
        ([[10, 14]], "must be an object"),
        ([span(10, 14, "café")] * 21, "At most 20 spans"),
        ([{"start": 10, "end": 14, "text": "café", "deep": [[[[[1]]]]]}], "unknown field"),
    ],
)
def test_bad_spans_are_a_400_naming_evidence_and_write_nothing(
    api, evidence_world, evidence, words
):
    response = _post(api, grade=2, evidence=evidence)
    assert response.status_code == 400, response.json()
    error = errors_of(response)[0]
    assert error.get("field", "evidence").startswith("evidence") and words in error["message"]
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()


def test_deep_nesting_is_a_400(api, evidence_world):
    deep = "[" * 200 + "]" * 200
    response = api("judy").post(
        URL,
        f'{{"query": "q1", "document": "d1", "grade": 2, "evidence": {deep}}}',
        content_type="application/json",
    )
    assert response.status_code == 400
    assert not Judgment.objects.exists()


def test_required_from_a_grade_for_humans_not_llm_judges(api, evidence_world):
    coll = evidence_world.coll
    coll.evidence, coll.evidence_from_grade = "required", 2
    coll.save()
    refused = _post(api, grade=2)
    assert refused.status_code == 400
    error = errors_of(refused)[0]
    assert error["field"] == "evidence" and "Grade 2 needs evidence" in error["message"]
    assert _post(api, grade=1).status_code == 201  # below the grade
    assert _post(api, grade=None, status="cannot_judge").status_code == 200
    assert _post(api, grade=4, evidence=[CAFE]).status_code == 200
    # a change that drops the spans of a required grade is refused too
    pk = Judgment.objects.get().pk
    dropped = api("judy").patch(f"{URL}{pk}/", {"evidence": []}, format="json")
    assert dropped.status_code == 400 and Judgment.objects.get().evidence == [CAFE]
    # an LLM judge (recorded by the coordinator) gives an explanation, not spans
    llm = factories.llm_judge("gpt-x")
    llm.collections.add(coll)
    response = _post(api, "cora", grade=3, judge=llm.pk, note="It names the café.")
    assert response.status_code == 201, response.json()
    assert response.json()["note"] == "It names the café."


def test_off_refuses_spans(api, evidence_world):
    evidence_world.coll.evidence = "off"
    evidence_world.coll.save()
    response = _post(api, grade=2, evidence=[CAFE])
    assert response.status_code == 400 and "takes no evidence" in errors_of(response)[0]["message"]
    assert _post(api, grade=2).status_code == 201


def test_batch_and_file_imports_check_spans_all_or_nothing(api, evidence_world):
    batch = {
        "judgments": [
            {"query": "q1", "document": "d1", "grade": 3, "evidence": [CAFE]},
            {"query": "q1", "document": "d2", "grade": 1, "evidence": [span(0, 3, "xyz")]},
        ]
    }
    refused = api("judy").post(URL, batch, format="json")
    assert refused.status_code == 400
    errors = errors_of(refused)
    assert [e["line"] for e in errors] == [2]
    assert errors[0]["message"].startswith("evidence[1].text: does not match")
    assert not Judgment.objects.exists()
    batch["judgments"].pop()
    created = api("judy").post(URL, batch, format="json")
    assert created.status_code == 201 and Judgment.objects.get().evidence == [CAFE]
    bad_shape = {"judgments": [{"query": "q1", "document": "d1", "grade": 3, "evidence": 7}]}
    response = api("judy").post(URL, bad_shape, format="json")
    assert (
        response.status_code == 400 and "Give a list of spans" in errors_of(response)[0]["message"]
    )
    # a JSON Lines file: line 2 gives a span past the end of the document
    lines = [
        json.dumps({"qid": "q1", "docno": "d1", "grade": 3, "evidence": [FAST]}),
        json.dumps({"qid": "q1", "docno": "d2", "grade": 2, "evidence": [span(0, 999, "x" * 999)]}),
    ]
    upload = SimpleUploadedFile("labels.jsonl", "\n".join(lines).encode())
    response = api("judy").post(URL, {"file": upload}, format="multipart")
    assert response.status_code == 400 and errors_of(response)[0]["line"] == 2
    assert Judgment.objects.get().evidence == [CAFE]
    upload = SimpleUploadedFile("labels.jsonl", lines[0].encode())
    assert api("judy").post(URL, {"file": upload}, format="multipart").status_code == 200
    assert Judgment.objects.get().evidence == [FAST]


def test_jsonl_export_round_trip(api, evidence_world):
    judy = services.judge_for_user(user=evidence_world.users["judy"])
    services.judgment_record(
        judge=judy,
        query=evidence_world.queries["q1"],
        document=evidence_world.docs["d1"],
        grade=3,
        evidence=[CAFE, FAST],
    )
    services.judgment_record(
        judge=judy, query=evidence_world.queries["q1"], document=evidence_world.docs["d2"], grade=0
    )
    response = api("cora").get(
        "/api/v1/collections/demo/qrels/", {"format": "jsonl", "labels": "raw"}
    )
    assert isinstance(response, StreamingHttpResponse)
    rows = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert {r["document"]: r["evidence"] for r in rows} == {"d1": [CAFE, FAST], "d2": []}
    # the exported spans import back onto another judge unchanged
    items = [
        {"query": r["query"], "document": r["document"], "grade": r["grade"],
         "evidence": r["evidence"]}
        for r in rows
    ]  # fmt: skip
    response = api("jim").post(URL, {"judgments": items}, format="json")
    assert response.status_code == 201, response.json()
    jim = Judgment.objects.filter(judge__user=evidence_world.users["jim"])
    assert {j.document.external_id: j.evidence for j in jim} == {"d1": [CAFE, FAST], "d2": None}


def test_settings_over_rest(api, evidence_world):
    url = "/api/v1/collections/demo/aggregation/"
    assert api("cora").get(url).json()["evidence"] == "optional"
    changed = api("cora").patch(
        url, {"evidence": "required", "evidence_from_grade": 3}, format="json"
    )
    assert changed.status_code == 200
    assert (changed.json()["evidence"], changed.json()["evidence_from_grade"]) == ("required", 3)
    evidence_world.coll.refresh_from_db()
    assert (evidence_world.coll.evidence, evidence_world.coll.evidence_from_grade) == (
        "required",
        3,
    )
    for bad in ({"evidence": "always"}, {"evidence_from_grade": 5}, {"evidence_from_grade": -1}):
        response = api("cora").patch(url, bad, format="json")
        assert response.status_code == 400 and errors_of(response)[0]["field"] in bad
    evidence_world.coll.refresh_from_db()
    assert evidence_world.coll.evidence_from_grade == 3
    assert api("judy").patch(url, {"evidence": "off"}, format="json").status_code == 403


def test_adjudication_shows_spans_and_explanations(api, evidence_world):
    coll = evidence_world.coll
    judy = services.judge_for_user(user=evidence_world.users["judy"])
    q1, d1 = evidence_world.queries["q1"], evidence_world.docs["d1"]
    services.judgment_record(judge=judy, query=q1, document=d1, grade=4, evidence=[CAFE])
    llm = factories.llm_judge("gpt-x")
    services.judgment_record(judge=llm, query=q1, document=d1, grade=0, note="Off topic.")
    response = api("cora").get(
        f"/api/v1/collections/{coll.slug}/pair/", {"query": "q1", "document": "d1"}
    )
    assert response.status_code == 200, response.json()
    labels = {label["kind"]: label for label in response.json()["labels"]}
    assert labels["human"]["evidence"] == [CAFE]
    assert (labels["llm"]["note"], labels["llm"]["evidence"]) == ("Off topic.", [])


def test_schema_lists_the_fields():
    schema = clean_schema()
    components = schema["components"]["schemas"]
    assert set(components["EvidenceSpan"]["properties"]) == {"start", "end", "text"}
    assert components["Judgment"]["properties"]["evidence"]["items"] == {
        "$ref": "#/components/schemas/EvidenceSpan"
    }
    assert "evidence" in components["JudgmentCreate"]["properties"]
    assert "evidence" in components["PatchedJudgmentUpdate"]["properties"]
    assert "evidence" in components["JudgmentLabel"]["properties"]
    settings = components["AggregationSettings"]["properties"]
    assert {"evidence", "evidence_from_grade"} <= set(settings)
