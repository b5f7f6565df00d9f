"""Issue 45 item 6: a byte-order mark is accepted on every text input path, end to end.

The audit: a run starting with a UTF-8 mark was refused with misleading errors (JSON read
as TREC: "expected 6 columns ... found 1"; TREC: "query '\\ufeff101' is not in the
collection") while judgment imports took it. Each path below goes through the one
decoding point (:mod:`graded.textpolicy`), and each is tried with a UTF-8 mark and with
UTF-16 (which a mark makes unambiguous, so it is decoded, not refused).
"""

from __future__ import annotations

import codecs
import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse

from judging.models import Document, FileImport, Judgment, PoolEntry, Query
from metrics.models import Run, Team
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db
C = "/api/v1/collections/demo/"

ENCODINGS = {
    "utf-8 BOM": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16-le BOM": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
}
RUNS = {
    "trec": ("run.txt", "q1 Q0 d1 1 2.0 bm25\nq1 Q0 d2 2 1.0 bm25\nq2 Q0 d3 1 1.5 bm25\n"),
    "json": (
        "run.json",
        '[{"qid": "q1", "docno": "d1", "score": 2}, {"qid": "q2", "docno": "d3", "score": 1}]',
    ),
    "jsonl": (
        "run.jsonl",
        '{"qid": "q1", "docno": "d1", "score": 2}\n{"qid": "q2", "docno": "d3", "score": 1}\n',
    ),
}
QRELS = "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 4\n"


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> Path:
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"


def _upload(name: str, data: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type="application/octet-stream")


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("fmt", list(RUNS))
def test_a_run_with_a_mark_is_accepted_over_rest(arena, fmt, encoding):
    name, text = RUNS[fmt]
    response = arena.client("tess").post(
        C + "runs/",
        {"file": _upload(name, ENCODINGS[encoding](text)), "tag": f"{fmt}-marked"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["query_count"] == 2
    assert body["source_format"] == ("trec" if fmt == "trec" else "json")
    assert body["unknown_document_count"] == 0
    assert not Document.objects.filter(external_id__startswith="\ufeff").exists()


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("fmt", list(RUNS))
def test_a_run_with_a_mark_is_accepted_on_the_upload_page(arena, client, fmt, encoding):
    name, text = RUNS[fmt]
    client.force_login(arena.users["tess"])
    url = reverse("metrics:run_create", args=["demo"])
    data = ENCODINGS[encoding](text)
    response = client.post(url, {"tag": "page", "file": _upload(name, data)})
    assert response.status_code == 303, response.content.decode()[:2000]
    assert Run.objects.get(tag="page").query_count == 2


def test_a_mark_in_the_middle_of_a_run_is_named_with_its_line(arena, media):
    """Not stripped: it is part of that line's qid, which the collection lacks."""
    text = RUNS["trec"][1].replace("q2 Q0", "\ufeffq2 Q0")
    response = arena.client("tess").post(
        C + "runs/", {"file": _upload("r.txt", text.encode()), "tag": "mid"}, format="multipart"
    )
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["line"] == 3 and "'\\ufeffq2' is not in the collection" in error["message"]
    assert not Run.objects.filter(tag="mid").exists()


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("fmt", ["qrels", "csv", "jsonl"])
def test_a_judgment_file_with_a_mark_is_imported_over_rest(arena, fmt, encoding):
    text = {
        "qrels": QRELS,
        "csv": "query,docid,rating\nq1,d1,2\nq1,d2,0\nq2,d3,4\n",
        "jsonl": "".join(
            json.dumps({"qid": q, "docno": d, "grade": int(g)}) + "\n"
            for q, _, d, g in (line.split() for line in QRELS.splitlines())
        ),
    }[fmt]
    response = arena.client("cora").post(
        C + "qrels/",
        {"file": _upload(f"j.{fmt}", ENCODINGS[encoding](text)), "judge_name": "NIST"},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    assert response.json()["created"] == 3


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_topics_and_documents_with_a_mark_are_imported_over_rest(arena, encoding):
    cora = arena.client("cora")
    topics = ENCODINGS[encoding]('{"qid": "q7", "text": "clay soil"}\n')
    response = cora.post(C + "queries/", {"file": _upload("t.jsonl", topics)}, format="multipart")
    assert response.status_code in (200, 201), response.json()
    assert Query.objects.get(external_id="q7").text == "clay soil"
    docs = ENCODINGS[encoding]('{"docno": "d7", "title": "Clay", "body": "heavy"}\n')
    response = cora.post(C + "documents/", {"file": _upload("d.jsonl", docs)}, format="multipart")
    assert response.status_code in (200, 201), response.json()
    assert Document.objects.get(external_id="d7").title == "Clay"


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("background", [False, True], ids=["in the request", "background"])
def test_the_import_files_page_takes_marked_files(
    arena, client, settings, django_capture_on_commit_callbacks, encoding, background
):
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 10 if background else 10**9
    client.force_login(arena.users["cora"])
    files = {
        "topics": _upload("t.tsv", ENCODINGS[encoding]("q8\tsand\n")),
        "documents": _upload("d.jsonl", ENCODINGS[encoding]('{"docno": "d8", "title": "S"}\n')),
        "judgments": _upload("j.qrels", ENCODINGS[encoding]("q8 0 d8 3\n")),
    }
    url = reverse("judging:collection_import", args=["demo"])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url, {"judge_name": "trec", "judge_kind": "human", **files})
    assert response.status_code in (200, 303), response.content.decode()[:3000]
    if background:
        assert FileImport.objects.get().status == FileImport.Status.DONE
    assert Query.objects.get(external_id="q8").text == "sand"
    assert Judgment.objects.get(query__external_id="q8").grade == 3


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_a_background_rest_import_takes_marked_files(
    arena, settings, django_capture_on_commit_callbacks, encoding
):
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 10
    with django_capture_on_commit_callbacks(execute=True):
        response = arena.client("cora").post(
            C + "imports/",
            {"judgments": _upload("j.qrels", ENCODINGS[encoding](QRELS)), "judge_name": "bg"},
            format="multipart",
        )
    assert response.status_code == 202, response.json()
    job = FileImport.objects.get()
    assert (job.status, job.errors) == (FileImport.Status.DONE, [])
    assert Judgment.objects.filter(judge__name="bg").count() == 3


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_the_pool_and_document_pages_take_marked_files(arena, client, encoding):
    client.force_login(arena.users["cora"])
    pairs = _upload("p.txt", ENCODINGS[encoding]("q2 d1\n"))
    response = client.post(reverse("judging:poolentry_create", args=["demo"]), {"file": pairs})
    assert response.status_code in (200, 302, 303), response.content.decode()[:2000]
    assert PoolEntry.objects.filter(query__external_id="q2", document__external_id="d1").exists()
    docs = _upload("d.jsonl", ENCODINGS[encoding]('{"docno": "d9", "title": "T"}\n'))
    response = client.post(reverse("judging:document_import", args=["demo"]), {"file": docs})
    assert response.status_code in (200, 302, 303), response.content.decode()[:2000]
    assert Document.objects.get(external_id="d9").title == "T"


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_request_bodies_with_a_mark_are_read(arena, encoding):
    """JSON and form bodies lose their mark; a multipart body's falls in the preamble."""
    cora = arena.client("cora")
    body = ENCODINGS[encoding](json.dumps({"name": "t-json"}))
    response = cora.generic("POST", C + "teams/", body, content_type="application/json")
    assert response.status_code == 201, response.content[:500]
    form = ENCODINGS[encoding]("name=t-form")
    response = cora.generic(
        "POST", C + "teams/", form, content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 201, response.content[:500]
    boundary = "XyZ"
    multipart = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nt-multi\r\n'
        f"--{boundary}--\r\n"
    )
    response = cora.generic(
        "POST",
        C + "teams/",
        codecs.BOM_UTF8 + multipart.encode(),
        content_type=f"multipart/form-data; boundary={boundary}",
    )
    assert response.status_code == 201, response.content[:500]
    assert set(Team.objects.values_list("name", flat=True)) >= {"t-json", "t-form", "t-multi"}


def test_a_json_body_with_a_mark_inside_is_a_clear_400(arena):
    body = b'{"name": "\xef\xbb\xbfx", "members": \xef\xbb\xbf[]}'
    response = arena.client("cora").generic(
        "POST", C + "teams/", body, content_type="application/json"
    )
    assert response.status_code == 400
    assert "JSON" in errors_of(response)[0]["message"]


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_the_commands_read_marked_files(arena, tmp_path, encoding):
    qrels = tmp_path / "qrels.txt"
    qrels.write_bytes(ENCODINGS[encoding](QRELS))
    out = io.StringIO()
    call_command("import_judgments", "demo", str(qrels), "--judge", "cmd", stdout=out)
    assert Judgment.objects.filter(judge__name="cmd").count() == 3
    run = tmp_path / "run.txt"
    run.write_bytes(ENCODINGS[encoding](RUNS["trec"][1]))
    marked = io.StringIO()
    call_command("evaluate", str(qrels), str(run), "-m", "P.1", "-q", stdout=marked)
    (tmp_path / "plain_q").write_text(QRELS)
    (tmp_path / "plain_r").write_text(RUNS["trec"][1])
    plain = io.StringIO()
    call_command(
        "evaluate",
        str(tmp_path / "plain_q"),
        str(tmp_path / "plain_r"),
        "-m",
        "P.1",
        "-q",
        stdout=plain,
    )
    assert marked.getvalue() == plain.getvalue()
    assert "\ufeff" not in marked.getvalue() and "q1" in marked.getvalue()
