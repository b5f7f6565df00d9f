"""The live judgment list and one judge's labels as TREC qrels."""

from __future__ import annotations

import json

import pytest

from judging import services
from judging.models import Collection, Judge, LiveGrade
from tests import factories
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/qrels/"


def _grade(world, name, qid, docno, grade):
    judge = services.judge_for_user(user=world.users[name])
    services.judgment_record(
        judge=judge, query=world.queries[qid], document=world.docs[docno], grade=grade
    )


def _body(response):
    """Return the whole body of a (streamed) response."""
    return b"".join(response.streaming_content) if response.streaming else response.content


def _live_lines(coll):
    rows = LiveGrade.objects.filter(collection=coll).values_list(
        "query__external_id", "document__external_id", "grade"
    )
    return sorted(rows)


def test_qrels_text_matches_the_live_list(api, world):
    _grade(world, "judy", "q1", "d1", 1)
    _grade(world, "jim", "q1", "d1", 3)  # lower median of 1 and 3 → 1
    llm = Judge.objects.create(kind="llm", name="gpt", model="gpt-x")
    services.judgment_record(
        judge=llm, query=world.queries["q2"], document=world.docs["d3"], grade=4
    )
    _grade(world, "judy", "q1", "d2", 0)
    q10 = factories.query(world.coll, "q10")
    services.judgment_record(judge=llm, query=q10, document=world.docs["d1"], grade=2)

    response = api("cora").get(URL)
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    text = _body(response).decode()
    assert text == "q1 0 d1 1\nq1 0 d2 0\nq10 0 d1 2\nq2 0 d3 4\n"
    parsed = [
        (qid, docno, float(grade))
        for qid, _, docno, grade in (line.split() for line in text.splitlines())
    ]
    assert parsed == _live_lines(world.coll)

    rows = json.loads(_body(api("cora").get(URL, {"format": "json"})))
    assert rows[0] == {"query": "q1", "document": "d1", "grade": 1.0, "humans": 2, "llms": 0}
    assert rows[3] == {"query": "q2", "document": "d3", "grade": 4.0, "humans": 0, "llms": 1}
    assert [(r["query"], r["document"], r["grade"]) for r in rows] == _live_lines(world.coll)


def test_fractional_grades_keep_six_decimals(api, world):
    Collection.objects.filter(pk=world.coll.pk).update(aggregation_policy="mean_human_then_llm")
    for name, grade in (("judy", 1), ("jim", 2), ("cora", 4)):
        _grade(world, name, "q1", "d1", grade)
    _grade(world, "judy", "q1", "d2", 1)
    _grade(world, "jim", "q1", "d2", 2)
    text = _body(api("cora").get(URL)).decode()
    assert text == "q1 0 d1 2.333333\nq1 0 d2 1.5\n"


def test_empty_live_list(api, world):
    response = api("cora").get(URL)
    assert response.status_code == 200 and _body(response) == b""
    assert _body(api("cora").get(URL, {"format": "json"})) == b"[]\n"


def test_qrels_errors_are_json(api, world):
    response = api("judy").get(URL)
    assert response.status_code == 403
    assert response["Content-Type"] == "application/json"
    errors_of(response)


def test_one_judges_labels_as_qrels(api, world):
    _grade(world, "jim", "q2", "d3", 2)
    _grade(world, "jim", "q1", "d2", 4)
    _grade(world, "judy", "q1", "d1", 1)
    jim = Judge.objects.get(user=world.users["jim"])
    url = "/api/v1/collections/demo/judgments/"
    response = api("cora").get(url, {"format": "qrels", "judge": jim.pk})
    assert response.status_code == 200
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response.content.decode() == "q1 0 d2 4\nq2 0 d3 2\n"
    missing = api("cora").get(url, {"format": "qrels"})
    assert missing.status_code == 400
    assert missing["Content-Type"] == "application/json"
    assert errors_of(missing)[0]["field"] == "judge"
    own = api("judy").get(url, {"format": "qrels"})
    assert own.content.decode() == "q1 0 d1 1\n"
    # A judge naming someone else still gets only their own labels.
    assert api("judy").get(url, {"format": "qrels", "judge": jim.pk}).content == b""
