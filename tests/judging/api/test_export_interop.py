"""Exports other tools read (issue 20 item 9): unjudged pairs as -1 and a provenance comment.

trec_eval reads a negative grade as "in the pool, not judged" (``RELVALUE_UNJUDGED``), and
skips one ``#`` line; both are checked against the C trec_eval where it is built.
"""

from __future__ import annotations

import json

import pytest
from django.http import StreamingHttpResponse

from judging import services
from judging.lists.exports import graded_version
from tests import factories
from tests.api_client import errors_of
from tests.engine.conftest import trec_eval_bin
from tests.engine.test_trec_eval_diff import run_engine, run_trec_eval

__all__ = ["trec_eval_bin"]

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/qrels/"


def _body(response) -> str:
    assert isinstance(response, StreamingHttpResponse), getattr(response, "content", b"")
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def graded(world):
    """q1×d1 graded 2 by judy; q1×d2, q1×dx and q2×d3 pooled and not graded."""
    judge = services.judge_for_user(user=world.users["judy"])
    services.judgment_record(
        judge=judge, query=world.queries["q1"], document=world.docs["d1"], grade=2
    )
    return world


def test_unjudged_pairs_come_as_minus_one_in_order(api, graded):
    cora = api("cora")
    assert _body(cora.get(URL)) == "q1 0 d1 2\n"
    assert _body(cora.get(URL, {"unjudged": "1"})) == (
        "q1 0 d1 2\nq1 0 d2 -1\nq1 0 dx -1\nq2 0 d3 -1\n"
    )
    assert _body(cora.get(URL, {"unjudged": "1", "query": "q2"})) == "q2 0 d3 -1\n"
    items = json.loads(_body(cora.get(URL, {"unjudged": "true", "format": "json"})))
    assert [(i["document"], i["grade"], i["humans"]) for i in items] == [
        ("d1", 2, 1),
        ("d2", -1, 0),
        ("dx", -1, 0),
        ("d3", -1, 0),
    ]
    csv_text = _body(cora.get(URL, {"unjudged": "1", "format": "csv"}))
    assert csv_text.splitlines()[-1] == "query q2,d3,-1"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"unjudged": "1", "labels": "raw", "format": "csv"}, "unjudged"),
        ({"unjudged": "1", "min_judges": "1"}, "unjudged"),
        ({"unjudged": "1", "provenance": "human"}, "unjudged"),
        ({"unjudged": "maybe"}, "unjudged"),
        ({"metadata": "1", "format": "csv"}, "metadata"),
    ],
)
def test_unjudged_and_metadata_refuse_what_they_cannot_mean(api, graded, params, field):
    response = api("cora").get(URL, params)
    assert response.status_code == 400 and errors_of(response)[0]["field"] == field


def test_a_provenance_comment_starts_qrels_and_ranklib_on_request(api, graded):
    cora = api("cora")
    lines = _body(cora.get(URL, {"metadata": "1", "unjudged": "1"})).splitlines()
    assert lines[0].startswith("# ir_metadata {") and lines[1:] == [
        "q1 0 d1 2",
        "q1 0 d2 -1",
        "q1 0 dx -1",
        "q2 0 d3 -1",
    ]
    meta = json.loads(lines[0].removeprefix("# ir_metadata "))
    graded.coll.refresh_from_db()
    assert meta["collection"] == "demo"
    assert meta["judgment_list_version"] == graded.coll.judgments_version
    assert meta["aggregation_policy"] == graded.coll.aggregation_policy
    assert meta["labels"] == "live" and meta["unjudged"] == -1
    assert meta["software"] == f"Graded {graded_version()}" and meta["exported_at"].endswith("Z")
    ranklib = _body(cora.get(URL, {"metadata": "1", "format": "ranklib"})).splitlines()
    assert ranklib[0].startswith("# ir_metadata {") and ranklib[1].startswith("# qid:")


def test_trec_eval_and_our_engine_read_the_file_alike(api, graded, tmp_path, trec_eval_bin):
    qrels = tmp_path / "q.qrels"
    qrels.write_text(_body(api("cora").get(URL, {"metadata": "1", "unjudged": "1"})))
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d2 1 3 r\nq1 Q0 d1 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d3 1 1 r\n")
    measures = ["bpref", "num_nonrel_judged_ret", "P.2", "ndcg", "num_rel"]
    theirs = run_trec_eval(trec_eval_bin, [], measures, qrels, run)
    ours = run_engine([], measures, qrels, run)
    assert theirs and set(ours) == set(theirs)
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key


# --- Quepid books ------------------------------------------------------------------------


@pytest.fixture
def rated(world):
    """q1×d1 graded by judy (3) and jim (1); q1×d2 by judy (0, a note); q2×d3 cannot judge."""
    judy = services.judge_for_user(user=world.users["judy"])
    jim = services.judge_for_user(user=world.users["jim"])
    record = services.judgment_record
    record(judge=judy, query=world.queries["q1"], document=world.docs["d1"], grade=3)
    record(judge=jim, query=world.queries["q1"], document=world.docs["d1"], grade=1)
    record(judge=judy, query=world.queries["q1"], document=world.docs["d2"], grade=0, note="off")
    record(
        judge=jim,
        query=world.queries["q2"],
        document=world.docs["d3"],
        grade=None,
        status="cannot_judge",
    )
    world.users["judy"].email = "judy@example.org"
    world.users["judy"].save()
    return world


def test_a_quepid_book_holds_every_judges_judgements(api, rated):
    response = api("cora").get(URL, {"format": "quepid", "labels": "raw"})
    assert response["Content-Type"].startswith("application/json")
    assert response["Content-Disposition"].endswith('-raw.quepid-book.json"')
    book = json.loads(_body(response))
    assert book["name"] == rated.coll.name and book["scale"] == [0, 1, 2, 3, 4]
    assert book["scale_with_labels"]["0"] == rated.coll.grade_names[0]
    pairs = {(p["query_text"], p["doc_id"]): p["judgements"] for p in book["query_doc_pairs"]}
    q1 = rated.queries["q1"].text
    assert sorted(pairs) == [(q1, "d1"), (q1, "d2"), (rated.queries["q2"].text, "d3")]
    assert sorted((j["user_email"], j["rating"]) for j in pairs[(q1, "d1")]) == [
        ("jim", 1),
        ("judy@example.org", 3),
    ]
    assert pairs[(q1, "d2")][0]["explanation"] == "off"
    (cannot,) = pairs[(rated.queries["q2"].text, "d3")]
    assert cannot["unrateable"] is True and cannot["rating"] is None


def test_a_quepid_book_csv_has_a_column_per_judge(api, rated):
    text = _body(api("cora").get(URL, {"format": "quepid_csv", "labels": "raw"}))
    q1 = rated.queries["q1"].text
    assert text.splitlines() == ["query,docid,judy,jim", f"{q1},d1,3,1", f"{q1},d2,0,"]


def test_books_need_raw_labels_and_a_coordinator(api, rated):
    team = api("cora").get(URL, {"format": "quepid"})
    assert team.status_code == 400 and errors_of(team)[0]["field"] == "format"


@pytest.mark.parametrize("fmt", ["quepid", "quepid_csv"])
def test_a_quepid_book_imports_back_onto_the_judges_who_gave_the_labels(api, rated, fmt):
    """Re-importing an exported book maps each rater to the collection's judge of that name.

    The book names judy by her e-mail (JSON) or her name (csv); either way no second
    "judy" or "jim" is created, so agreement never counts their labels twice.
    """
    from django.core.files.uploadedfile import SimpleUploadedFile

    from judging.agreement import selectors as agreement
    from judging.models import Judge, Judgment

    cora = api("cora")
    before = agreement.agreement_report(collection=rated.coll)
    judges_before = Judge.objects.count()
    exported = _body(cora.get(URL, {"format": fmt, "labels": "raw"})).encode()
    name = f"demo.quepid-book.{'csv' if fmt == 'quepid_csv' else 'json'}"
    response = cora.post(
        URL,
        {"file": SimpleUploadedFile(name, exported), "judge_name": "quepid raters"},
        format="multipart",
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    judy = services.judge_for_user(user=rated.users["judy"])
    jim = services.judge_for_user(user=rated.users["jim"])
    assert sorted(body["judges"]) == sorted([judy.pk, jim.pk])
    assert Judge.objects.count() == judges_before
    if fmt == "quepid":  # every label comes back as it was
        assert (body["created"], body["changed"], body["unchanged"]) == (0, 0, 4)
    else:  # grades only: no "cannot judge", and judy's note on q1/d2 is not in the csv
        assert (body["created"], body["changed"], body["unchanged"]) == (0, 1, 2)
        assert Judgment.objects.get(judge=judy, document=rated.docs["d2"]).note == ""
    assert Judgment.objects.count() == 4
    after = agreement.agreement_report(collection=rated.coll)
    counted = [(s.judge.judge_id, s.grades) for s in after.judges]
    assert counted == [(s.judge.judge_id, s.grades) for s in before.judges]
    assert sorted(counted) == sorted([(judy.pk, 2), (jim.pk, 1)])
    assert [g.pairs for g in after.overall] == [g.pairs for g in before.overall]


def test_a_rater_naming_two_judges_of_the_collection_is_refused(api, rated):
    """A name two judges of the collection answer to is an error; nothing is written."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    from judging.models import Judge, Judgment

    other = factories.user("jim2")
    factories.member(rated.coll, other, "judge")
    twin = services.judge_for_user(user=other)
    Judge.objects.filter(pk=twin.pk).update(name="jim")
    judges, labels = Judge.objects.count(), Judgment.objects.count()
    cora = api("cora")
    exported = _body(cora.get(URL, {"format": "quepid_csv", "labels": "raw"})).encode()
    response = cora.post(
        URL,
        {"file": SimpleUploadedFile("b.quepid-book.csv", exported), "judge_name": "raters"},
        format="multipart",
    )
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["message"].startswith("rater 'jim': 'jim' names 2 judges of this collection")
    assert "give the judge's id" in error["message"]
    assert (Judge.objects.count(), Judgment.objects.count()) == (judges, labels)


def test_a_bad_quepid_book_names_pair_and_judgement(api, rated):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from judging.models import Judge

    before = Judge.objects.count()
    book = {
        "name": "b",
        "query_doc_pairs": [
            {
                "query_text": "q1",
                "doc_id": "d1",
                "judgements": [{"rating": 2, "user_email": "a@x"}],
            },
            {
                "query_text": "q1",
                "doc_id": "d2",
                "judgements": [{"rating": 7, "user_email": "b@x"}],
            },
            {"query_text": "q9", "doc_id": "d1", "judgements": [{"user_email": "a@x"}]},
            {
                "query_text": "q2",
                "doc_id": "d3",
                "judgements": [{"rating": 1, "user_email": "a@x"}],
            },
            {
                "query_text": "q2",
                "doc_id": "d3",
                "judgements": [{"rating": 2, "user_email": "a@x"}],
            },
        ],
    }
    response = api("cora").post(
        URL,
        {
            "file": SimpleUploadedFile("book_1_export.json", json.dumps(book).encode()),
            "judge_name": "x",
        },
        format="multipart",
    )
    assert response.status_code == 400
    assert errors_of(response) == [
        {"message": "grade 7 is outside the scale 0–4", "item": 2, "field": "grade"},
        {
            "message": "is required (or unrateable / judge_later)",
            "item": 3,
            "field": "judgements[0].rating",
        },
        {"message": "query 'q2' document 'd3' repeated (first on item 4)", "item": 5},
    ]
    assert Judge.objects.count() == before  # a refused book creates no judge at all
