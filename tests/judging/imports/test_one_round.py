"""Imports in one round (issue 20 item 3).

Topics, documents and judgments uploaded together are all checked before anything is
written: every problem of every file — format, references, duplicates — is listed in
one answer, naming the file and the line (or the element, in a JSON array). A refused
try keeps its files on the server, so the next try only replaces the wrong one. Topics
and documents are accepted as csv with a header too.
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from judging.imports import services as services_files
from judging.lists import services as services_lists
from judging.lists.formats import collections as cf
from judging.lists.formats import iter_lines
from judging.models import Document, Judge, Judgment, Membership, Query
from tests import factories

BAD_TOPICS = b"q1\tone\nq2\nq3\tthree\nq1\tagain\nq4\n"
BAD_DOCUMENTS = b'{"docno": "d1"}\n{"nodoc": 1}\n{"docno": "d1"}\n'
BAD_QRELS = b"q1 0 d1 2\nq9 0 d1 1\nq3 0 d7 1\nq1 0 d1 x\n"


@pytest.fixture
def page(client, db, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("round")
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    client.force_login(cora)
    return coll, client, reverse("judging:collection_import", args=[coll.slug]), tmp_path


def _errors(response) -> list[str]:
    return list(response.context["form"].non_field_errors())


def test_every_problem_of_every_file_is_listed_at_once_naming_file_and_line(page):
    coll, client, url, _ = page
    response = client.post(
        url,
        {
            "topics": SimpleUploadedFile("t.tsv", BAD_TOPICS),
            "documents": SimpleUploadedFile("d.jsonl", BAD_DOCUMENTS),
            "judgments": SimpleUploadedFile("j.qrels", BAD_QRELS),
            "judge_name": "panel",
            "judge_kind": "human",
        },
    )
    assert response.status_code == 400
    assert _errors(response) == [
        "topics file 't.tsv': line 2: expected 'qid<TAB>text'",
        "topics file 't.tsv': line 4: query id 'q1' repeated (first on line 1)",
        "topics file 't.tsv': line 5: expected 'qid<TAB>text'",
        "documents file 'd.jsonl': line 2: needs a document id (docno/doc_id/docid/id/_id/pid)",
        "documents file 'd.jsonl': line 3: document id 'd1' repeated (first on line 1)",
        # q1, q3 and d1 are in the files above, so only truly unknown ids are named.
        "judgments file 'j.qrels': line 2: unknown query id 'q9'",
        "judgments file 'j.qrels': line 3: unknown document id 'd7'",
        "judgments file 'j.qrels': line 4: grade: must be a whole number, not 'x'",
    ]
    assert not Query.objects.filter(collection=coll).exists()
    assert not Document.objects.filter(collection=coll).exists()
    assert not Judgment.objects.filter(collection=coll).exists()
    assert not Judge.objects.filter(name="panel").exists()


def test_a_repeated_trec_topic_is_reported_with_the_other_files_problems(page):
    _, client, url, _ = page
    topics = b"".join(
        b"<top><num> %s <title> %s\n</top>\n" % pair
        for pair in ((b"1", b"a"), (b"2", b"b"), (b"1", b"c"))
    )
    response = client.post(
        url,
        {
            "topics": SimpleUploadedFile("topics.txt", topics),
            "documents": SimpleUploadedFile("d.tsv", b"d1\tbody\nd2\n"),
            "judge_kind": "human",
        },
    )
    assert _errors(response) == [
        "topics file 'topics.txt': line 5: query id '1' repeated (first on line 1)",
        "documents file 'd.tsv': line 2: expected 'docno<TAB>text' or "
        "'docno<TAB>url<TAB>title<TAB>body', found 1 columns",
    ]


def test_a_refused_try_keeps_the_files_that_passed_and_the_next_try_needs_only_the_wrong_one(
    page,
):
    coll, client, url, media = page
    first = client.post(
        url,
        {
            "topics": SimpleUploadedFile("t.tsv", b"q1\tone\nq2\n"),
            "documents": SimpleUploadedFile("d.tsv", b"d1\tbody one\nd2\tbody two\n"),
            "judgments": SimpleUploadedFile("j.qrels", b"q1 0 d1 2\nq1 0 d2 1\n"),
            "judge_name": "panel",
            "judge_kind": "human",
        },
    )
    assert first.status_code == 400
    assert _errors(first) == ["topics file 't.tsv': line 2: expected 'qid<TAB>text'"]
    html = first.content.decode()
    # The files that passed are listed as kept; the one with problems is not kept.
    for name in ("d.tsv", "j.qrels"):
        assert f"Kept from your last try: {name} (it passed its checks)." in html
    assert "Not kept: t.tsv had the problems listed above." in html
    assert 'name="forget_documents"' in html and 'name="forget_topics"' not in html
    kept = list((media / "imports" / "kept").iterdir())
    assert len(kept) == 1 and sorted(p.name for p in kept[0].iterdir()) == [
        "documents",
        "judgments",
    ]
    # Only the topics are chosen again; the kept documents and judgments come along.
    second = client.post(
        url,
        {
            "topics": SimpleUploadedFile("t2.tsv", b"q1\tone\nq2\ttwo\n"),
            "judge_name": "panel",
            "judge_kind": "human",
        },
    )
    assert second.status_code == 303, _errors(second) if second.status_code == 400 else ""
    assert Query.objects.filter(collection=coll).count() == 2
    assert Document.objects.get(collection=coll, external_id="d2").body == "body two"
    assert sorted(
        Judgment.objects.filter(collection=coll).values_list("document__external_id", "grade")
    ) == [("d1", 2), ("d2", 1)]
    assert not kept[0].exists()  # deleted once imported
    assert "Kept from" not in client.get(url).content.decode()


def test_a_new_file_after_a_refused_try_shows_only_its_own_errors(page):
    """Issue 34, item 3: a kept file is never re-checked into the new file's errors.

    The first try's bad documents are not kept; the second try brings corrected
    documents and a bad judgments file: its errors are the only ones, and a kept file that
    fails because of the new one says it was kept.
    """
    coll, client, url, _ = page
    client.post(
        url,
        {
            "topics": SimpleUploadedFile("t.tsv", b"q1\tone\n"),
            "documents": SimpleUploadedFile("d.jsonl", BAD_DOCUMENTS),
            "judge_kind": "human",
        },
    )
    second = client.post(
        url,
        {
            "documents": SimpleUploadedFile("d2.tsv", b"d1\tbody\n"),
            "judgments": SimpleUploadedFile("j.qrels", b"q1 0 d1 2\nq1 0 d9 1\n"),
            "judge_name": "panel",
            "judge_kind": "human",
        },
    )
    assert _errors(second) == ["judgments file 'j.qrels': line 2: unknown document id 'd9'"]
    third = client.post(
        url,
        {
            "topics": SimpleUploadedFile("t3.tsv", b"q2\ttwo\n"),  # q1 is gone from the topics
            "judgments": SimpleUploadedFile("j2.qrels", b"q2 0 d1 1\n"),
            "judge_name": "panel",
            "judge_kind": "human",
            "forget_documents": "on",
        },
    )
    assert _errors(third) == ["judgments file 'j2.qrels': line 1: unknown document id 'd1'"]
    fourth = client.post(
        url,
        {
            "documents": SimpleUploadedFile("d4.tsv", b"d1\tbody\n"),
            "judgments": SimpleUploadedFile("j4.qrels", b"q1 0 d1 1\n"),
            "judge_name": "panel",
            "judge_kind": "human",
        },
    )
    # The kept topics (t3.tsv) passed before; the new judgments name q1, which they lack.
    assert _errors(fourth) == ["judgments file 'j4.qrels': line 1: unknown query id 'q1'"]
    assert "Kept from your last try: t3.tsv" in fourth.content.decode()
    assert not Query.objects.filter(collection=coll).exists()


def test_a_kept_file_can_be_left_out_and_is_replaced_by_a_new_one(page):
    coll, client, url, _ = page
    client.post(
        url,
        {
            "topics": SimpleUploadedFile("t.tsv", b"q1\tone\n"),
            "documents": SimpleUploadedFile("d.tsv", b"d1\tbody\n"),
            "judgments": SimpleUploadedFile("j.qrels", b"q1 0 d1 7\n"),
            "judge_name": "panel",
            "judge_kind": "human",
        },
    )
    # Leave out the kept documents: only the kept topics are imported.
    done = client.post(url, {"forget_documents": "on", "judge_kind": "human"})
    assert done.status_code == 303
    assert list(Query.objects.filter(collection=coll).values_list("external_id", flat=True)) == [
        "q1"
    ]
    assert not Document.objects.filter(collection=coll).exists()
    # With nothing kept and nothing chosen, the form asks for a file.
    empty = client.post(url, {"judge_kind": "human"})
    assert empty.status_code == 400 and "Choose at least one file." in _errors(empty)


def test_a_missing_judge_name_and_the_files_errors_show_together(page):
    """Issue 34, item 3: the form's error does not hide the files' (all come in one try)."""
    coll, client, url, _ = page
    response = client.post(
        url,
        {
            "topics": SimpleUploadedFile("t.tsv", BAD_TOPICS),
            "documents": SimpleUploadedFile("d.jsonl", BAD_DOCUMENTS),
            "judgments": SimpleUploadedFile("j.qrels", BAD_QRELS),
            "judge_kind": "human",
        },
    )
    assert response.status_code == 400
    form = response.context["form"]
    assert form.errors["judge_name"] == ["Say whose judgments these are."]
    assert len(_errors(response)) == 8  # the files' problems, as when a judge is named
    assert (
        _errors(response)[-1]
        == "judgments file 'j.qrels': line 4: grade: must be a whole number, not 'x'"
    )
    assert not Query.objects.filter(collection=coll).exists()
    assert not Judge.objects.exists()  # the files were checked under no judge at all


def test_a_refused_form_keeps_files_that_passed(page):
    coll, client, url, _ = page
    missing_judge = client.post(
        url,
        {
            "topics": SimpleUploadedFile("t.tsv", b"q1\tone\n"),
            "documents": SimpleUploadedFile("d.tsv", b"d1\tbody\n"),
            "judgments": SimpleUploadedFile("j.qrels", b"q1 0 d1 2\n"),
            "judge_kind": "human",
        },
    )
    assert missing_judge.status_code == 400
    assert _errors(missing_judge) == []  # the files are fine; only the name is missing
    assert "Kept from your last try: j.qrels" in missing_judge.content.decode()
    assert missing_judge.context["form"].errors["judge_name"] == ["Say whose judgments these are."]
    done = client.post(url, {"judge_name": "panel", "judge_kind": "human"})
    assert done.status_code == 303
    assert Judgment.objects.get(collection=coll).judge.name == "panel"


def test_topics_and_documents_in_csv_with_a_header(page):
    coll, client, url, _ = page
    topics = (
        b"qid,text,narrative\n"
        b'7,"clay, soil","relevant: any\nsoil type"\n'
        b"8,'=sand,\n"  # the formula guard of csv exports is removed again
    )
    documents = (
        b'docno,title,body,url,lang\nd1,Clay,"heavy, wet",https://e.org/d1,en\nd2,,light,,\n'
    )
    response = client.post(
        url,
        {
            "topics": SimpleUploadedFile("topics.csv", topics),
            "documents": SimpleUploadedFile("docs.csv", documents),
            "judge_kind": "human",
        },
    )
    assert response.status_code == 303
    seven, eight = Query.objects.filter(collection=coll).order_by("external_id")
    assert (seven.text, seven.narrative) == ("clay, soil", "relevant: any\nsoil type")
    assert eight.text == "=sand"
    d1 = Document.objects.get(collection=coll, external_id="d1")
    assert (d1.title, d1.body, d1.url, d1.extra) == (
        "Clay",
        "heavy, wet",
        "https://e.org/d1",
        {"lang": "en"},
    )
    assert Document.objects.get(collection=coll, external_id="d2").extra == {}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"qid,text\n1,a\n2\n", ["line 3: expected 2 columns, found 1"]),
        (b"qid,qid\n1,a\n", ["line 1: the header needs one distinct name per column"]),
        (
            b"number,body\n1,a\n",
            ["line 2: needs a query id (qid/query_id/id/number) and a text (text/query/title)"],
        ),
        (b'qid,text\n1,"a\n', ["line 2: not valid csv: unexpected end of data"]),
        (b"", ["line 1: no header line naming the columns"]),
    ],
)
def test_csv_topic_problems_name_their_lines(data, expected):
    problems = [
        str(item)
        for item in cf.read_topics("csv", iter_lines(data))
        if not isinstance(item, cf.TopicIn)
    ]
    assert problems == expected


def test_guessing_takes_csv_by_its_name():
    assert cf.guess_topic_format("topics.csv", b"qid,text\n") == "csv"
    assert cf.guess_document_format("docs.CSV", b"docno,body\n") == "csv"


def test_json_array_problems_name_the_element_not_a_line(db):
    coll = factories.collection("arr")
    factories.query(coll, "q1")
    factories.document(coll, "d1")
    judge = Judge.objects.create(kind=Judge.Kind.LLM, name="m", model="m")
    array = json.dumps(
        [
            {"query": "q1", "document": "d1", "grade": 2},
            {"query": "q1", "document": "d1", "grade": 9},
            {"query": "q9", "document": "d1", "grade": 1},
        ],
        indent=2,
    ).encode()
    with pytest.raises(services_lists.ImportRefused) as refused:
        services_lists.judgment_list_import(
            collection=coll, judge=judge, source=io.BytesIO(array), format="json"
        )
    assert refused.value.problems.messages() == [
        "item 2: grade: grade 9 is outside the scale 0–4",
        "item 3: unknown query id 'q9'",
    ]
    assert refused.value.problems.as_dicts()[0] == {
        "message": "grade 9 is outside the scale 0–4",
        "item": 2,
        "field": "grade",
    }
    # A syntax error is a line of the text.
    with pytest.raises(services_lists.ImportRefused) as broken:
        services_lists.judgment_list_import(
            collection=coll, judge=judge, source=b'[\n{"query": "q1",\n', format="json"
        )
    assert broken.value.problems.messages()[0].startswith("line ")


def test_the_service_names_part_and_file_for_the_api(db):
    coll = factories.collection("api")
    files = services_files.CollectionFiles(
        topics=SimpleUploadedFile("t.tsv", b"q1\n"),
        pairs=SimpleUploadedFile("p.txt", b"q1 d1\nq2\n"),
    )
    with pytest.raises(services_lists.ImportRefused) as refused:
        services_files.collection_files_import(collection=coll, files=files)
    assert refused.value.problems.as_dicts() == [
        {"message": "expected 'qid<TAB>text'", "line": 1, "part": "topics", "file": "t.tsv"},
        {"message": "unknown query id 'q1'", "line": 1, "part": "pairs", "file": "p.txt"},
        {
            "message": "expected two fields “query-id document-id”, got 1",
            "line": 2,
            "part": "pairs",
            "file": "p.txt",
        },
    ]
