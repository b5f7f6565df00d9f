"""Batch and file imports: all or nothing, every bad item or line listed."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging.models import Collection, Judge, Judgment, JudgmentEvent, LiveGrade
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/judgments/"


def _version():
    return Collection.objects.get(slug="demo").judgments_version


def _nothing_written(version_before):
    assert not Judgment.objects.exists()
    assert not JudgmentEvent.objects.exists()
    assert not LiveGrade.objects.exists()
    assert _version() == version_before


def _upload(client, name, text, **fields):
    data = text.encode() if isinstance(text, str) else text
    return client.post(URL, {"file": SimpleUploadedFile(name, data), **fields}, format="multipart")


def test_batch_records_all(api, world):
    items = [
        {"query": "q1", "document": "d1", "grade": 2, "note": "ok"},
        {"query": "q2", "document": "d3", "status": "cannot_judge", "seconds": 3},
    ]
    response = api("judy").post(URL, {"judgments": items}, format="json")
    assert response.status_code == 201, response.json()
    assert response.json() == {"created": 2, "changed": 0, "unchanged": 0, "version": _version()}
    judge = Judge.objects.get(user=world.users["judy"])
    assert Judgment.objects.filter(judge=judge).count() == 2
    assert set(JudgmentEvent.objects.values_list("channel", flat=True)) == {"api"}
    again = api("judy").post(
        URL, {"judgments": [*items, {"query": "q1", "document": "d2", "grade": 0}]}, format="json"
    )
    assert again.status_code == 201
    assert again.json()["created"] == 1 and again.json()["unchanged"] == 2
    same = api("judy").post(URL, {"judgments": items[:1]}, format="json")
    assert same.status_code == 200
    assert same.json() == {"created": 0, "changed": 0, "unchanged": 1, "version": _version()}


def test_batch_is_atomic_and_lists_every_bad_item(api, world):
    version = _version()
    items = [
        {"query": "q1", "document": "d1", "grade": 2},  # 1 fine
        {"query": "q9", "document": "d1", "grade": 2},  # 2 unknown query
        {"query": "q1", "document": "nope", "grade": 2},  # 3 unknown document
        {"query": "q1", "document": "d2", "grade": 7},  # 4 grade out of range
        {"query": "q1", "document": "d1", "grade": 1},  # 5 repeats item 1
        {"query": "q2", "document": "d3", "grade": "x"},  # 6 grade not a number
        "q1 d1 3",  # 7 not an object
        {"query": "q2", "grade": 1},  # 8 no document
        {"query": "q2", "document": "d3", "grade": 2, "status": "later"},  # 9 grade with later
        {"query": "q2", "document": "d3", "grade": 2, "grdae": 3},  # 10 unknown field
        {"query": "q2", "document": "d3", "grade": 2, "seconds": "long"},  # 11 bad seconds
    ]
    response = api("judy").post(URL, {"judgments": items}, format="json")
    assert response.status_code == 400
    errors = errors_of(response)
    assert sorted({e["line"] for e in errors}) == list(range(2, 12))
    assert all(isinstance(e["line"], int) for e in errors)
    by_line = {e["line"]: e["message"] for e in errors}
    assert "unknown query id 'q9'" in by_line[2]
    assert "unknown document id 'nope'" in by_line[3]
    assert "between 0 and 4" in by_line[4]
    assert "first on line 1" in by_line[5]
    assert by_line[7] == "Each judgment must be a JSON object."
    assert "grdae" in by_line[10]
    _nothing_written(version)


def test_batch_with_only_shape_errors_writes_nothing(api, world):
    version = _version()
    items = [{"query": "q1", "document": "d1", "grade": 2}, {"query": "q1", "document": "d2"}]
    items[1]["grade"] = 2.5
    response = api("judy").post(URL, {"judgments": items}, format="json")
    assert response.status_code == 400
    assert [e["line"] for e in errors_of(response)] == [2]
    _nothing_written(version)


@pytest.mark.parametrize("judgments", [[], "q1", {"query": "q1"}])
def test_batch_needs_a_list(api, world, judgments):
    response = api("judy").post(URL, {"judgments": judgments}, format="json")
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "judgments"


def test_qrels_file_upload(api, world):
    text = "q1 0 d1 2\nq1 0 d2 0\n\n# comment\nq2 Q0 d3 4\r\n"
    response = _upload(api("judy"), "judy.qrels", text)
    assert response.status_code == 201, response.json()
    assert response.json()["created"] == 3
    grades = dict(
        Judgment.objects.values_list("document__external_id", "grade").order_by("document")
    )
    assert grades == {"d1": 2, "d2": 0, "d3": 4}
    assert set(JudgmentEvent.objects.values_list("channel", "actor__username")) == {("api", "judy")}


def test_qrels_file_errors_carry_line_numbers(api, world):
    version = _version()
    text = "\n".join(
        [
            "q1 0 d1 2",  # 1 fine
            "q1 0 d2",  # 2 three columns
            "q1 0 d2 2.5",  # 3 not a whole number
            "q1 0 d2 5",  # 4 grade 5
            "q9 0 d1 1",  # 5 unknown qid
            "q1 0 nope 1",  # 6 unknown docno
            "",  # 7 blank
            "q1 0 d1 3",  # 8 repeats line 1
            "q1 0 d2 x y",  # 9 five columns
            "q2 0 d3 -1",  # 10 negative
        ]
    )
    response = _upload(api("judy"), "bad.qrels", text)
    assert response.status_code == 400
    errors = errors_of(response)
    by_line = {e["line"]: e["message"] for e in errors}
    assert sorted(by_line) == [2, 3, 4, 5, 6, 8, 9, 10]
    assert "expected 4 columns" in by_line[2] and "found 3" in by_line[2]
    assert "whole number" in by_line[3]
    assert "between 0 and 4" in by_line[4]
    assert "unknown query id 'q9'" in by_line[5]
    assert "unknown document id 'nope'" in by_line[6]
    assert "repeated" in by_line[8] and "first on line 1" in by_line[8]
    assert "found 5" in by_line[9]
    assert "between 0 and 4" in by_line[10]
    _nothing_written(version)


def test_jsonl_file_upload(api, world):
    lines = [
        {"qid": "q1", "docno": "d1", "grade": 3, "note": "explained"},
        {"qid": "q2", "docno": "d3", "grade": 1, "abstain_probability": 0.5},
    ]
    text = "\n".join(json.dumps(line) for line in lines) + "\n"
    response = _upload(api("judy"), "labels.JSONL", text)
    assert response.status_code == 201, response.json()
    assert Judgment.objects.get(document__external_id="d3").abstain_probability == 0.5


def test_jsonl_errors_carry_line_numbers(api, world):
    version = _version()
    text = "\n".join(
        [
            json.dumps({"qid": "q1", "docno": "d1", "grade": 3}),
            "{not json",
            json.dumps({"qid": "q1", "docno": "d2", "grade": 9}),
            json.dumps(["q1", "d2", 1]),
            json.dumps({"qid": "q1", "docno": "d1", "grade": 1}),
        ]
    )
    response = _upload(api("judy"), "labels.jsonl", text)
    assert response.status_code == 400
    assert [e["line"] for e in errors_of(response)] == [2, 3, 4, 5]
    _nothing_written(version)


def test_file_must_be_utf8(api, world):
    response = _upload(api("judy"), "x.qrels", b"q1 0 d1 2\nq1 0 d\xff2 1\n")
    assert response.status_code == 400
    assert errors_of(response) == [{"line": 2, "message": "the file is not valid UTF-8 (byte 17)"}]


def test_empty_file_is_refused(api, world):
    response = _upload(api("judy"), "x.qrels", "\n\n")
    assert response.status_code == 400
    assert errors_of(response) == [{"message": "No judgments given."}]


def test_file_import_as_llm_judge(api, world):
    llm = Judge.objects.create(kind="llm", name="gpt", model="gpt-x")
    llm.collections.add(world.coll)
    refused = _upload(api("judy"), "x.qrels", "q1 0 d1 2\n", judge=llm.pk)
    assert refused.status_code == 403
    assert not Judgment.objects.exists()
    response = _upload(api("cora"), "x.qrels", "q1 0 d1 2\n", judge=llm.pk)
    assert response.status_code == 201
    assert Judgment.objects.get().judge == llm
    assert JudgmentEvent.objects.get().actor == world.users["cora"]
