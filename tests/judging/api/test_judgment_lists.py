"""Judgment lists in and out over REST: formats, streaming, versions, permissions, imports."""

from __future__ import annotations

import csv
import gzip
import io
import json
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.http import StreamingHttpResponse

from judging import services
from judging.lists import exports
from judging.lists.formats import MAX_REPORTED
from judging.models import Collection, Document, Judge, Judgment, LiveGrade, Query
from tests import factories
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/qrels/"
TRICKY = 'lawn, "moss" and\nweeds'


def _body(response) -> bytes:
    assert isinstance(response, StreamingHttpResponse)
    return b"".join(response.streaming_content)


def _grade(world, name, qid, docno, grade, **kwargs):
    judge = services.judge_for_user(user=world.users[name])
    return services.judgment_record(
        judge=judge, query=world.queries[qid], document=world.docs[docno], grade=grade, **kwargs
    )


@pytest.fixture
def graded(world):
    """q1 (text with a comma, quotes and a newline) and q2 graded by judy, jim and an LLM."""
    Query.objects.filter(pk=world.queries["q1"].pk).update(text=TRICKY)
    _grade(world, "judy", "q1", "d1", 3)
    _grade(world, "jim", "q1", "d1", 1)
    _grade(world, "judy", "q1", "d2", 0, note="off, topic")
    llm = factories.llm_judge()
    services.judgment_record(
        judge=llm, query=world.queries["q2"], document=world.docs["d3"], grade=4
    )
    _grade(world, "jim", "q2", "d3", None, status="cannot_judge", note="broken page")
    world.llm = llm
    return world


def test_every_format_of_the_live_list(api, graded):
    cora = api("cora")
    assert _body(cora.get(URL)) == b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 4\n"
    text = _body(cora.get(URL, {"format": "csv"})).decode()
    assert text == f'query,docid,rating\n"{TRICKY.replace(chr(34), 2 * chr(34))}",d1,1\n' + (
        f'"{TRICKY.replace(chr(34), 2 * chr(34))}",d2,0\nquery q2,d3,4\n'
    )
    assert list(csv.reader(io.StringIO(text)))[1] == [TRICKY, "d1", "1"]
    lines = _body(cora.get(URL, {"format": "jsonl"})).decode().splitlines()
    assert json.loads(lines[0]) == {
        "query": "q1",
        "document": "d1",
        "grade": 1,
        "humans": 2,
        "llms": 0,
    }
    assert json.loads(_body(cora.get(URL, {"format": "json"})))[2]["llms"] == 1
    ranklib = _body(cora.get(URL, {"format": "ranklib"})).decode().splitlines()
    q1, q2 = graded.queries["q1"].pk, graded.queries["q2"].pk
    assert ranklib == [
        f"# qid:{q1} = q1",
        f"# qid:{q2} = q2",
        f"1 qid:{q1} # d1",
        f"0 qid:{q1} # d2",
        f"4 qid:{q2} # d3",
    ]


def test_raw_labels_list_every_judge(api, graded):
    response = api("cora").get(URL, {"format": "csv", "labels": "raw"})
    records = list(csv.reader(io.StringIO(_body(response).decode())))
    judy = Judge.objects.get(user=graded.users["judy"])
    assert records[0][:8] == [
        "qid", "query", "docid", "judge_id", "judge_name", "judge_kind", "status", "rating"
    ]  # fmt: skip
    assert len(records) == 1 + 5
    off = next(r for r in records if r[2] == "d2")
    expected = ["q1", TRICKY, "d2", str(judy.pk), "judy", "human", "graded", "0", "off, topic"]
    assert off[:9] == expected
    raw = _body(api("cora").get(URL, {"format": "jsonl", "labels": "raw"}))
    rows = [json.loads(x) for x in raw.splitlines()]
    cannot = next(r for r in rows if r["status"] == "cannot_judge")
    assert cannot["grade"] is None and cannot["note"] == "broken page"
    assert {r["judge_kind"] for r in rows} == {"human", "llm"}
    bad = api("cora").get(URL, {"format": "qrels", "labels": "raw"})
    assert bad.status_code == 400 and errors_of(bad)[0]["field"] == "format"


def test_filters(api, graded):
    cora = api("cora")

    def qrels(**params):
        return _body(cora.get(URL, params)).decode().splitlines()

    assert qrels(query="q2") == ["q2 0 d3 4"]
    assert qrels(kind="llm") == ["q2 0 d3 4"]
    assert qrels(kind="human") == ["q1 0 d1 1", "q1 0 d2 0"]
    assert qrels(min_judges=2) == ["q1 0 d1 1"]
    jim = Judge.objects.get(user=graded.users["jim"])
    assert qrels(judge=jim.pk) == ["q1 0 d1 1"]  # jim's cannot_judge on q2/d3 is no grade
    version = Collection.objects.get(pk=graded.coll.pk).judgments_version
    assert qrels(since_version=version) == []
    _grade(graded, "judy", "q1", "d2", 2)
    assert qrels(since_version=version) == ["q1 0 d2 2"]
    raw = _body(cora.get(URL, {"format": "jsonl", "labels": "raw", "judge": jim.pk}))
    assert {json.loads(x)["judge_id"] for x in raw.splitlines()} == {jim.pk}
    for name, value in (("kind", "robot"), ("min_judges", "0"), ("since_version", "x")):
        response = cora.get(URL, {name: value})
        assert response.status_code == 400 and errors_of(response)[0]["field"] == name


def test_version_etag_304_and_file_name(api, graded):
    cora = api("cora")
    first = cora.get(URL, {"format": "csv"})
    version = Collection.objects.get(pk=graded.coll.pk).judgments_version
    assert first["X-Judgment-List-Version"] == str(version)
    assert first["Content-Disposition"] == f'attachment; filename="demo-v{version}.csv"'
    etag = first["ETag"]
    assert f"-v{version}-" in etag
    again = cora.get(URL, {"format": "csv"}, HTTP_IF_NONE_MATCH=etag)
    assert again.status_code == 304 and again["ETag"] == etag and not again.content
    # Another format or filter is another representation.
    assert cora.get(URL, {"format": "jsonl"}, HTTP_IF_NONE_MATCH=etag).status_code == 200
    _grade(graded, "judy", "q2", "d3", 1)
    changed = cora.get(URL, {"format": "csv"}, HTTP_IF_NONE_MATCH=etag)
    assert changed.status_code == 200 and changed["ETag"] != etag
    assert changed["X-Judgment-List-Version"] == str(version + 1)
    assert _body(changed)


def test_gzip_when_accepted(api, graded):
    plain = _body(api("cora").get(URL, {"format": "jsonl"}))
    response = api("cora").get(URL, {"format": "jsonl"}, HTTP_ACCEPT_ENCODING="br, gzip")
    assert response["Content-Encoding"] == "gzip" and "Accept-Encoding" in response["Vary"]
    assert gzip.decompress(_body(response)) == plain
    refused = api("cora").get(URL, {"format": "jsonl"}, HTTP_ACCEPT_ENCODING="gzip;q=0")
    assert not refused.has_header("Content-Encoding") and _body(refused) == plain


def test_who_may_export(api, graded):
    def status(name, **params):
        return api(name).get(URL, params).status_code

    assert status("cora") == 200
    assert status(None) == 401
    assert status("olga") == 404 and status("otto") == 404  # members of another collection
    assert status("judy") == 403  # judges never
    assert status("tess") == 403  # not published yet
    Collection.objects.filter(pk=graded.coll.pk).update(judgments_published=True)
    assert status("tess") == 200
    assert status("tess", format="csv", labels="raw") == 403  # raw labels: coordinators
    assert status("judy") == 403  # still never for judges
    factories.member(graded.coll, graded.users["judy"], "team")
    assert status("judy") == 403  # a judge who is also on a team is still a judge
    response = api("tess").get(URL, {"format": "csv", "labels": "raw"})
    assert "coordinators" in errors_of(response)[0]["message"]


def _bulk_list(coll, n_queries, n_docs):
    queries = Query.objects.bulk_create(
        [Query(collection=coll, external_id=f"q{i:03d}", text=f"t{i}") for i in range(n_queries)]
    )
    docs = Document.objects.bulk_create(
        [Document(collection=coll, external_id=f"doc-{i:07d}-" + "x" * 30) for i in range(n_docs)]
    )
    LiveGrade.objects.bulk_create(
        [
            LiveGrade(collection=coll, query=q, document=d, grade=(i + j) % 5, human_count=1)
            for i, q in enumerate(queries)
            for j, d in enumerate(docs)
        ],
        batch_size=5000,
    )


def _peak(consume) -> tuple[int, object]:
    """Return the peak traced memory of ``consume()`` and its result."""
    tracemalloc.start()
    try:
        result = consume()
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, result


def test_export_is_streamed_with_bounded_memory(api, world):
    _bulk_list(world.coll, 4, 15_000)  # 60,000 live grades, about 3 MB of qrels
    response = api("cora").get(URL)
    assert isinstance(response, StreamingHttpResponse)

    def consume():
        size = lines = 0
        for chunk in response.streaming_content:
            size += len(chunk)
            lines += chunk.count(b"\n")
        return size, lines

    streamed, (size, lines) = _peak(consume)
    assert lines == 60_000 and size > 3_000_000
    # What holding the rows would cost: the export must stay far below it.
    spec = exports.ExportSpec()
    held, rows = _peak(lambda: list(exports.live_rows(collection=world.coll, spec=spec)))
    assert len(rows) == 60_000
    assert streamed < held / 3, (streamed, held)


def _import(client, data, url=URL):
    return client.post(url, data, format="multipart")


def _file(text, name="labels.txt"):
    return SimpleUploadedFile(name, text.encode())


@pytest.mark.parametrize("fmt", ["qrels", "csv", "jsonl", "json", "ranklib"])
def test_round_trip_is_byte_identical(api, graded, fmt):
    cora = api("cora")
    before = _body(cora.get(URL, {"format": fmt}))
    # Replace every grade by the exported list, imported as one judge.
    for judgment in list(Judgment.objects.filter(collection=graded.coll)):
        services.judgment_delete(judgment=judgment)
    assert not LiveGrade.objects.filter(collection=graded.coll).exists()
    response = _import(
        cora, {"file": _file(before.decode()), "format": fmt, "judge_name": "Round trip"}
    )
    assert response.status_code == 201, response.json()
    assert response.json()["created"] == 3
    after = _body(cora.get(URL, {"format": fmt}))
    if fmt in ("jsonl", "json"):  # the grades are now one judge's, not several judges'
        before = before.replace(b'"humans": 2, "llms": 0', b'"humans": 1, "llms": 0')
        before = before.replace(b'"humans": 0, "llms": 1', b'"humans": 1, "llms": 0')
    assert after == before


def test_import_maps_scales_and_creates_an_imported_judge(api, world):
    cora = api("cora")
    qrels = "q1 0 d1 3\nq1 0 d2 2\nq2 0 d3 1\n"  # TREC DL 0–3
    response = _import(cora, {"file": _file(qrels), "judge_name": "NIST", "scale": "0-3"})
    assert response.status_code == 201
    body = response.json()
    assert body["created"] == 3 and body["dry_run"] is False
    judge = Judge.objects.get(pk=body["judge"])
    assert judge.kind == "human" and judge.name == "NIST" and not judge.user.is_active
    assert not judge.user.has_usable_password()
    grades = dict(
        Judgment.objects.filter(judge=judge).values_list("document__external_id", "grade")
    )
    assert grades == {"d1": 4, "d2": 3, "d3": 1}
    # The same name is the same judge; an LLM kind gives an LLM judge.
    again = _import(cora, {"file": _file(qrels), "judge_name": "NIST", "scale": "0-3"})
    assert again.status_code == 200 and again.json()["unchanged"] == 3
    assert again.json()["judge"] == judge.pk
    csv_text = "query,docid,rating\nquery q1,d1,5\nq2,d3,1\n"  # query by text or by id
    llm = _import(
        cora,
        {
            "file": _file(csv_text, "x.csv"),
            "judge_name": "gpt",
            "judge_kind": "llm",
            "scale": "1-5",
        },
    )
    assert llm.status_code == 201
    llm_judge = Judge.objects.get(pk=llm.json()["judge"])
    assert llm_judge.kind == "llm"
    assert dict(
        Judgment.objects.filter(judge=llm_judge).values_list("query__external_id", "grade")
    ) == {"q1": 4, "q2": 0}


def test_import_dry_run_writes_nothing(api, world):
    version = world.coll.judgments_version
    response = _import(
        api("cora"), {"file": _file("q1 0 d1 2\n"), "judge_name": "Dry", "dry_run": "true"}
    )
    assert response.status_code == 200
    assert response.json()["created"] == 1 and response.json()["dry_run"] is True
    assert not Judgment.objects.exists()
    assert Collection.objects.get(pk=world.coll.pk).judgments_version == version


def test_a_refused_or_dry_run_import_creates_no_judge(api, world, tmp_path):
    """Issue 34, item 7: the judge an import names is created inside its transaction."""
    from django.core.management import call_command
    from django.core.management.base import CommandError

    judges = Judge.objects.count()
    dry = _import(
        api("cora"), {"file": _file("q1 0 d1 2\n"), "judge_name": "Dry", "dry_run": "true"}
    )
    assert dry.status_code == 200 and dry.json()["created"] == 1
    refused = _import(api("cora"), {"file": _file("q1 0 d1 9\n"), "judge_name": "Refused"})
    assert refused.status_code == 400
    path = tmp_path / "labels.qrels"
    path.write_text("q1 0 d1 2\n")
    call_command("import_judgments", world.coll.slug, str(path), "--judge", "Cmd", "--dry-run")
    path.write_text("q1 0 nope 2\n")
    with pytest.raises(CommandError, match="unknown document id 'nope'"):
        call_command("import_judgments", world.coll.slug, str(path), "--judge", "Cmd")
    assert Judge.objects.count() == judges
    assert not Judgment.objects.exists()


def test_an_import_naming_a_judge_of_the_collection_records_as_that_judge(api, world):
    """A judge name that a judge of the collection answers to is that judge, not a new one."""
    judy = services.judge_for_user(user=world.users["judy"])
    judges = Judge.objects.count()
    response = _import(api("cora"), {"file": _file("q1 0 d1 3\n"), "judge_name": "judy"})
    assert response.status_code == 201 and response.json()["judge"] == judy.pk
    assert Judge.objects.count() == judges
    # A name of another kind is refused, naming the judge, and writes nothing.
    llm = _import(
        api("cora"),
        {"file": _file("q1 0 d2 3\n"), "judge_name": "judy", "judge_kind": "llm"},
    )
    assert llm.status_code == 400
    assert errors_of(llm)[0]["field"] == "judge_name"
    assert f"is the Human judge {judy.pk} of this collection" in errors_of(llm)[0]["message"]
    assert Judgment.objects.count() == 1


def test_import_errors_name_every_line_and_write_nothing(api, world):
    text = "q1 0 d1 2\nq1 0 d2 9\nq9 0 d1 1\nq1 0 nope 1\nq1 0 d1\nq1 0 d1 3\n"
    response = _import(api("cora"), {"file": _file(text), "judge_name": "Bad"})
    assert response.status_code == 400
    errors = errors_of(response)
    # Every problem in one round: grade, unknown query, unknown document, columns, repeat.
    assert [e.get("line") for e in errors] == [2, 3, 4, 5, 6]
    assert "unknown query id" in errors[1]["message"] and "first on line 1" in errors[4]["message"]
    assert not Judgment.objects.exists()
    text = "q1 0 d1 2\nq9 0 d1 1\nq1 0 nope 1\nq1 0 d1 3\n"
    errors = errors_of(_import(api("cora"), {"file": _file(text), "judge_name": "Bad"}))
    assert [e["line"] for e in errors] == [2, 3, 4]
    assert "unknown query" in errors[0]["message"] and "repeated" in errors[2]["message"]
    assert not Judgment.objects.exists()
    many = "".join(f"q1 0 d1 {i}x\n" for i in range(MAX_REPORTED + 20))
    errors = errors_of(_import(api("cora"), {"file": _file(many), "judge_name": "Bad"}))
    assert len(errors) == MAX_REPORTED + 1
    assert errors[-1]["message"].startswith("... and possibly more problems (reading stopped")


def test_import_csv_query_text_must_be_unambiguous(api, world):
    factories.query(world.coll, "q3", text="query q1")  # same text as q1
    text = "query,docid,rating\nquery q1,d1,2\n"
    errors = errors_of(_import(api("cora"), {"file": _file(text, "a.csv"), "judge_name": "x"}))
    assert errors[0]["line"] == 2 and "matches 2 queries" in errors[0]["message"]


def test_who_may_import(api, world):
    data = {"file": _file("q1 0 d1 2\n"), "judge_name": "x"}
    assert _import(api("judy"), data).status_code == 403
    assert _import(api("tess"), {"file": _file("q1 0 d1 2\n")}).status_code == 403
    assert _import(api(None), {"file": _file("q1 0 d1 2\n")}).status_code == 401
    both = _import(api("cora"), {"file": _file("q1 0 d1 2\n"), "judge": 1, "judge_name": "x"})
    assert both.status_code == 400
    # Without a judge, the coordinator's own labels.
    own = _import(api("cora"), {"file": _file("q1 0 d1 2\n")})
    assert own.status_code == 201
    assert Judgment.objects.get().judge.user == world.users["cora"]


# --- collections, queries and documents over REST ----------------------------------------


def test_create_a_collection_and_fill_it_over_rest(api, world):
    cora = api("cora")
    created = cora.post("/api/v1/collections/", {"slug": "fresh", "name": "Fresh"}, format="json")
    assert created.status_code == 201 and created.json()["roles"] == ["coordinator"]
    base = "/api/v1/collections/fresh/"
    topics = cora.post(
        base + "queries/",
        {"queries": [{"qid": "1", "text": "a", "narrative": "n"}, {"qid": "2", "text": "b"}]},
        format="json",
    )
    assert topics.status_code == 201 and topics.json() == {
        "created": 2,
        "updated": 0,
        "dry_run": False,
    }
    trec = "<top>\n<num> Number: 3\n<title> c\n</top>\n<top><num>1</num><title>a2</title></top>"
    response = _import(
        cora, {"file": _file(trec, "topics.txt"), "format": "trec"}, base + "queries/"
    )
    assert response.json() == {"created": 1, "updated": 1, "dry_run": False}
    docs = "d1\tfirst body\nd2\thttp://x.test/\tTitle\tsecond\n"
    response = _import(cora, {"file": _file(docs, "docs.tsv")}, base + "documents/")
    assert response.status_code == 201 and response.json()["created"] == 2
    coll = Collection.objects.get(slug="fresh")
    assert coll.documents.get(external_id="d2").title == "Title"
    assert coll.queries.get(external_id="1").text == "a2"
    batch = cora.post(base + "documents/", [{"docno": "d3", "body": "x"}], format="json")
    assert batch.status_code == 201
    listed = cora.get(base + "documents/").json()
    assert [d["external_id"] for d in listed["results"]] == ["d1", "d2", "d3"]


def test_bulk_errors_are_item_numbered_and_nothing_is_written(api, world):
    cora = api("cora")
    url = "/api/v1/collections/demo/queries/"
    items = [{"qid": "n1", "text": "ok"}, {"qid": "n2"}, "nope", {"qid": "n1", "text": "again"}]
    errors = errors_of(cora.post(url, items, format="json"))
    assert [e["line"] for e in errors] == [2, 3, 4]  # the repeat too, in the same round
    errors = errors_of(cora.post(url, [items[0], items[3]], format="json"))
    assert errors[0]["line"] == 2 and "repeated" in errors[0]["message"]
    assert not Query.objects.filter(external_id__startswith="n").exists()
    docs = "a\tone\nb\ttwo\na\tthree\n"
    response = _import(cora, {"file": _file(docs, "d.tsv")}, "/api/v1/collections/demo/documents/")
    assert errors_of(response) == [
        {"line": 3, "message": "document id 'a' repeated (first on line 1)"}
    ]
    assert not Document.objects.filter(external_id__in=["a", "b"]).exists()
    dry = cora.post(url + "?dry_run=1", [{"qid": "n9", "text": "t"}], format="json")
    assert dry.status_code == 200 and dry.json()["dry_run"] is True
    assert not Query.objects.filter(external_id="n9").exists()


def test_documents_are_imported_in_batches_across_which_repeats_are_found(world):
    from judging.lists import services as services_lists

    lines = "".join(f"x{i}\tbody {i}\n" for i in range(25)) + "x3\tagain\n"
    with pytest.raises(services_lists.ImportRefused) as refused:
        services_lists.documents_import(
            collection=world.coll, source=lines.encode(), format="tsv", batch_size=4
        )
    assert refused.value.problems.as_dicts() == [
        {"line": 26, "message": "document id repeated (first on line 4)"}
    ]
    assert not Document.objects.filter(external_id__startswith="x").exists()
    done = services_lists.documents_import(
        collection=world.coll, source=lines[: lines.rindex("x3")].encode(), format="tsv",
        batch_size=4,
    )  # fmt: skip
    assert done.created == 25


def test_documents_into_an_empty_collection_are_inserted_in_batches(db):
    from judging.lists import services as services_lists

    coll = factories.collection("empty")
    lines = "".join(f"x{i}\tbody {i}\n" for i in range(25))
    with pytest.raises(services_lists.ImportRefused) as refused:
        services_lists.documents_import(
            collection=coll, source=(lines + "x3\tagain\n").encode(), format="tsv",
            batch_size=4,
        )  # fmt: skip
    assert refused.value.problems.as_dicts() == [
        {"line": 26, "message": "document id repeated (first on line 4)"}
    ]
    assert not coll.documents.exists()
    with pytest.raises(services_lists.ImportRefused) as refused:
        services_lists.documents_import(
            collection=coll, source=b'{"docno": "a b"}\n', format="jsonl"
        )
    assert refused.value.problems.as_dicts()[0]["line"] == 1
    done = services_lists.documents_import(
        collection=coll, source=lines.encode(), format="tsv", batch_size=4
    )
    assert done.created == 25 and coll.documents.get(external_id="x7").body == "body 7"


def test_who_may_create_and_fill(api, world):
    assert api("judy").post("/api/v1/collections/", {"slug": "x", "name": "X"}).status_code == 403
    url = "/api/v1/collections/demo/queries/"
    assert api("judy").post(url, [{"qid": "z", "text": "t"}], format="json").status_code == 403
    assert api("tess").post(url, [{"qid": "z", "text": "t"}], format="json").status_code == 403
    taken = api("cora").post("/api/v1/collections/", {"slug": "demo", "name": "X"})
    assert taken.status_code == 400 and errors_of(taken)[0]["field"] == "slug"


def test_csv_exports_neutralise_formulas_and_qrels_stay_exact(api, graded):
    Query.objects.filter(pk=graded.queries["q2"].pk).update(text='=HYPERLINK("http://x","y")')
    _grade(graded, "judy", "q2", "d3", 2, note="@SUM(1+1)")
    cora = api("cora")
    live = list(csv.reader(io.StringIO(_body(cora.get(URL, {"format": "csv"})).decode())))
    assert ['\'=HYPERLINK("http://x","y")', "d3", "2"] in live  # judy's 2 outranks the LLM
    raw = _body(cora.get(URL, {"format": "csv", "labels": "raw"})).decode()
    cells = [cell for record in csv.reader(io.StringIO(raw)) for cell in record]
    assert "'@SUM(1+1)" in cells and "@SUM(1+1)" not in cells
    assert not any(c.startswith(("=", "+", "@")) for c in cells)
    assert _body(cora.get(URL)) == b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
    jsonl = _body(cora.get(URL, {"format": "jsonl", "labels": "raw"})).decode()
    assert '"note": "@SUM(1+1)"' in jsonl
