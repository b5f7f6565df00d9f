"""Hostile input over HTTP: 4xx with the line, nothing written; links, limits, settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, override_settings

from graded import textpolicy
from judging.lists import importers
from judging.models import Collection, Document, Judgment, JudgmentEvent
from judging.templatetags.safe_links import safe_link_filter
from metrics.models import Run
from tests.api_client import errors_of
from tests.security.conftest import Arena

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]
C = "/api/v1/collections/demo/"


def _submit(arena: Arena, content: bytes, tag: str = "new"):
    upload = SimpleUploadedFile("r.txt", content)
    return arena.client("tess").post(C + "runs/", {"tag": tag, "file": upload}, format="multipart")


def _nothing_written(arena: Arena, runs: int = 1, documents: int = 3) -> None:
    assert Run.objects.count() == runs
    assert Document.objects.filter(collection=arena.coll).count() == documents


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b"q1 Q0 d1 1 2 t\nq1 Q0 d\xff\xfe 2 1 t\n", 2),  # docno not UTF-8
        (b"q1 Q0 d1 1 2 t\nq2 Q0 " + b"x" * 600 + b" 1 1 t\n", 2),  # docno too long
        (b'[{"qid": "q1", "docno": "d1", "score": ' + b"1" * 5000 + b"}]", 1),
        (b'[{"qid": "q1", "docno": "\\ud800", "score": 1}]', 1),
        (b"[" * 100_000, 1),
        (b'[{"qid": "q1", "docno": "d1", "score": 1' + b"0" * 400 + b"}]", 1),
    ],
)
def test_hostile_runs_are_400_with_the_line(arena, content, line):
    response = _submit(arena, content)
    assert response.status_code == 400, response.content[:300]
    errors = errors_of(response)
    assert errors[0]["line"] == line
    assert len(response.content) < 2000
    _nothing_written(arena)


def test_long_ids_up_to_the_limit_are_stored(arena):
    docno = "d" * textpolicy.MAX_ID_LENGTH
    response = _submit(arena, f"q1 Q0 {docno} 1 2 t\n".encode())
    assert response.status_code == 201, response.content[:300]
    assert Document.objects.filter(external_id=docno).exists()


def test_unknown_long_qids_are_not_echoed_in_full(arena):
    response = _submit(arena, b"q" * 400 + b" Q0 d1 1 2 t\n")
    assert response.status_code == 400
    assert len(response.content) < 1000 and errors_of(response)[0]["line"] == 1


def test_same_tag_again_is_the_400_of_sequential_duplicates(arena):
    response = _submit(arena, b"q1 Q0 d1 1 2 t\n", tag="bm25")
    assert response.status_code == 400
    assert errors_of(response) == [
        {"field": "tag", "message": "Tag 'bm25' is already used in this collection."}
    ]


@pytest.mark.parametrize(
    "body",
    [
        '{"judgments": [{"query": "q1", "document": "d2", "grade": 1, "note": "a\\u0000b"}]}',
        '{"judgments": [{"query": "q1", "document": "d2", "grade": 1, "note": "\\ud800"}]}',
        '{"judgments": [{"query": "q1", "document": "d2", "grade": 1, "seconds": 1'
        + "0" * 400
        + "}]}",
        '{"judgments": [{"query": "q1", "document": "d2", "grade": 1e400}]}',
        '{"judgments": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"query": "q1\\u0000", "document": "d2", "grade": 1}',
    ],
)
def test_hostile_judgment_bodies_are_400(arena, body):
    before = (Judgment.objects.count(), JudgmentEvent.objects.count())
    response = arena.client("judy").post(C + "judgments/", body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    errors_of(response)
    assert (Judgment.objects.count(), JudgmentEvent.objects.count()) == before


@pytest.mark.parametrize(
    ("content", "line"),
    [
        (b'{"qid": "q1", "docno": "d2", "grade": 1}\n{"qid": "q1", "docno": "d1\\u0000"}\n', 2),
        (b'{"qid": "q1", "docno": "d2", "grade": 1, "seconds": 1' + b"0" * 400 + b"}\n", 1),
        (b"q1 0 d2 1\nq1 0 d1 " + b"7" * 5000 + b"\n", 2),
        (b"q1 0 d2 1\nq1 0 d1\x00 1\n", 2),
    ],
)
def test_hostile_judgment_files_are_400_with_the_line(arena, content, line):
    before = Judgment.objects.count()
    name = "x.jsonl" if content.startswith(b"{") else "x.qrels"
    response = arena.client("judy").post(
        C + "judgments/", {"file": SimpleUploadedFile(name, content)}, format="multipart"
    )
    assert response.status_code == 400, response.content[:300]
    assert errors_of(response)[0]["line"] == line
    assert Judgment.objects.count() == before


@pytest.mark.parametrize("path", ["documents/", "pool/", "judgments/"])
def test_nul_in_list_filters_is_400(arena, path):
    response = arena.client("cora").get(C + path + "?query=%00")
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "query"


def test_non_integer_ids_get_the_json_404(arena):
    for path in ("/api/v1/judges/abc/", C + "judgments/1.5/", C + "runs/x/scores/"):
        response = arena.client("cora").get(path)
        assert response.status_code == 404
        assert response["Content-Type"] == "application/json"
        assert errors_of(response) == [{"message": "Not found."}]
    assert "text/html" in Client().get("/no/such/page/")["Content-Type"]


def test_empty_qrels_have_a_content_type(arena):
    Judgment.objects.all().delete()
    from judging.models import LiveGrade

    LiveGrade.objects.all().delete()
    response = arena.client("cora").get(C + "qrels/")
    body = b"".join(response.streaming_content) if response.streaming else response.content
    assert response.status_code == 200 and body == b""
    assert response["Content-Type"].startswith("text/plain")


def test_other_collections_llm_judge_cannot_be_used_or_read(arena):
    from tests import factories

    other_doc = factories.document(arena.users["otto"].memberships.get().collection, "d1")
    factories.query(other_doc.collection, "q1")
    response = arena.client("otto").post(
        "/api/v1/collections/other/judgments/",
        {"query": "q1", "document": "d1", "grade": 1, "judge": arena.llm.pk},
        format="json",
    )
    assert response.status_code == 400
    assert errors_of(response) == [
        {"field": "judge", "message": f"Unknown judge id {arena.llm.pk}."}
    ]
    assert arena.client("otto").get(f"/api/v1/judges/{arena.llm.pk}/").status_code == 404


# --- links ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    ["javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,x", "vbscript:x", "//evil"],
)
def test_only_http_urls_are_imported_or_linked(url):
    line = f'{{"docno": "d1", "url": "{url}"}}\n'.encode()
    with pytest.raises(importers.ValidationError) as exc:
        importers.parse_documents(line)
    assert exc.value.messages[0].startswith("line 1: url")
    assert safe_link_filter(url) == ""
    assert safe_link_filter("https://example.org/a?b=c") == "https://example.org/a?b=c"


def test_judging_card_never_links_another_scheme(arena, client):
    Document.objects.filter(external_id="d1").update(url="javascript:alert(1)")
    client.force_login(arena.users["judy"])
    template = (ROOT / "templates/judging/judgment_create.html").read_text()
    assert 'href="{{ link }}"' in template and "document.url|safe_link" in template
    assert 'href="{{ document.url' not in template


# --- rate limits ----------------------------------------------------------------------

RATES = {"anon": None, "user": None, "token_failure": "3/min", "login": "3/min", "login_ip": None}


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_bad_tokens_are_throttled_with_retry_after(arena):
    cache.clear()
    bad = Client(HTTP_AUTHORIZATION="Token " + "0" * 40)
    assert [bad.get("/api/v1/collections/").status_code for _ in range(3)] == [401] * 3
    response = bad.get("/api/v1/collections/")
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    errors_of(response)
    cache.clear()


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_login_failures_are_throttled_per_user_and_address(arena):
    cache.clear()
    client = Client()
    form = {"username": "judy", "password": "wrong"}
    assert [client.post("/accounts/login/", form).status_code for _ in range(3)] == [200] * 3
    refused = client.post("/accounts/login/", {"username": "judy", "password": "pw"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    other = client.post("/accounts/login/", {"username": "jim", "password": "pw"})
    assert other.status_code == 302  # another account from the same address is not locked
    cache.clear()


@override_settings(
    GRADED_THROTTLE_RATES={**RATES, "user": "2/min", "token_failure": None, "login": None}
)
def test_api_requests_are_throttled_per_user(arena):
    cache.clear()
    client = arena.client("cora")
    assert [client.get("/api/v1/collections/").status_code for _ in range(2)] == [200, 200]
    response = client.get("/api/v1/collections/")
    assert response.status_code == 429 and "Retry-After" in response
    cache.clear()


# --- settings -------------------------------------------------------------------------


REDIS_CACHE = "redis://127.0.0.1:6379/1"


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess:
    keep = ("PATH", "HOME", "LANG", "DATABASE_URL")
    full = {k: v for k, v in os.environ.items() if k in keep}  # nothing else leaks in
    full.update(env)
    return subprocess.run(
        [sys.executable, "manage.py", *args], capture_output=True, text=True, cwd=ROOT, env=full
    )


KEY = "k7#Qx9!vL2@pR5$wZ8%nB3^mT6&yH4*cJ1(dF0)gS-eA_uN+iO="


def test_check_deploy_is_clean_under_production_settings():
    out = _manage(
        "check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=KEY, CACHE_URL=REDIS_CACHE
    )
    assert out.returncode == 0, out.stderr
    assert "no issues" in out.stdout


def test_check_deploy_warns_when_the_rate_limit_counters_are_per_process():
    out = _manage("check", "--deploy", "--fail-level", "WARNING", SECRET_KEY=KEY)
    assert out.returncode != 0
    assert "graded.W001" in out.stderr and "CACHE_URL" in out.stderr


@pytest.mark.parametrize(
    "key", ["", "short", "django-insecure-" + "a1b2c3d4e5" * 5, "dev-only-insecure-key-" * 3]
)
def test_production_refuses_weak_keys_by_default(key):
    out = _manage("check", SECRET_KEY=key)
    assert out.returncode != 0
    assert "SECRET_KEY" in out.stderr and "ImproperlyConfigured" in out.stderr


def test_every_entry_point_defaults_to_production_settings():
    for name in ("manage.py", "config/celery.py", "config/wsgi.py", "config/asgi.py"):
        text = (ROOT / name).read_text()
        assert 'setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")' in text, name


# --- the list endpoints: judgment lists, queries, documents, new collections --------------


def _counts(arena: Arena) -> tuple[int, ...]:
    return (
        Judgment.objects.count(),
        JudgmentEvent.objects.count(),
        arena.coll.queries.count(),
        Document.objects.count(),
        Collection.objects.count(),
    )


def _refused_with(response, *, line: int | None = None, field: str | None = None) -> None:
    assert response.status_code == 400, response.content[:300]
    errors = errors_of(response)
    assert 1 <= len(errors) <= textpolicy.MAX_ERRORS + 1
    if line is not None:
        assert errors[0].get("line") == line, errors
    if field is not None:
        assert any(field in (e.get("field") or "") for e in errors), errors
    assert len(response.content) < 30_000  # 100 errors at most, echoes cut


@pytest.mark.parametrize(
    ("name", "content", "line", "field"),
    [
        ("x.qrels", b"q1 0 d1 1\nq1 0 d2 " + b"7" * 5000 + b"\n", 2, "grade"),
        ("x.qrels", b"q1 0 d1 1\nq1 0 d\x002 1\n", 2, None),
        ("x.qrels", b"q1 0 d1 1\nq1 0 d\xff\xfe 1\n", 2, None),
        ("x.qrels", b"q1 0 d1 1\nq1 0 " + b"d" * 600 + b" 1\n", 2, "document"),
        ("x.jsonl", b'{"query": "q1", "document": "d1", "grade": 1}\n' + b"[" * 100_000, 2, None),
        ("x.jsonl", b'{"query": "q1", "document": "d1", "grade": 1e400}\n', 1, None),
        ("x.jsonl", b'{"query": "q1", "document": "d1", "grade": 1' + b"0" * 5000 + b"}", 1, None),
        ("x.jsonl", b'{"query": "q1", "document": "d1\\ud800", "grade": 1}\n', 1, "document"),
        ("x.jsonl", b'{"query": "q1", "document": "d1", "note": "\\u0000"}\n', 1, "note"),
        (
            "x.jsonl",
            b'{"query": "q1", "document": "d1", "note": "' + b"n" * 5001 + b'"}',
            1,
            "note",
        ),
        ("x.json", b'[{"query": "q1", "document": "d1", "grade": 1},\n' + b"[" * 50_000, 1, None),
        ("x.csv", b"query,docid,rating\nq1,d1,1\n" + b"q" * 600 + b",d1,1\n", 3, "query"),
    ],
)
def test_hostile_judgment_list_imports_are_400_with_the_line(arena, name, content, line, field):
    before = _counts(arena)
    response = arena.client("cora").post(
        C + "qrels/",
        {"file": SimpleUploadedFile(name, content), "judge_name": "Hostile"},
        format="multipart",
    )
    _refused_with(response, line=line, field=field)
    assert _counts(arena) == before


def test_a_50000_line_garbage_judgment_list_stops_at_the_cap(
    arena, django_capture_on_commit_callbacks
):
    """50 MB: a background import (issue 32, item 8), refused with the capped errors."""
    before = _counts(arena)
    content = b"".join(b"q1 0 d1 " + b"x" * 1000 + b"\n" for _ in range(50_000))
    with django_capture_on_commit_callbacks(execute=True):
        response = arena.client("cora").post(
            C + "qrels/", {"file": SimpleUploadedFile("x.qrels", content)}, format="multipart"
        )
    assert response.status_code == 202, response.content[:300]
    followed = arena.client("cora").get(response["Location"])
    job = followed.json()
    assert job["status"] == "refused", job["status"]
    errors = job["errors"]
    assert 1 <= len(errors) <= textpolicy.MAX_ERRORS + 1
    assert errors[0].get("line") == 1 and "grade" in (errors[0].get("field") or "")
    assert "reading stopped" in errors[-1]["message"]
    assert b"x" * 100 not in followed.content  # echoes are cut
    assert len(followed.content) < 60_000  # the capped errors, as items and as lines
    assert _counts(arena) == before


@pytest.mark.parametrize(
    ("content", "line", "field"),
    [
        (b'{"qid": "n1", "text": "t"}\n{"qid": "n2\\u0000", "text": "t"}\n', 2, "qid"),
        (b'{"qid": "n1", "text": "t"}\n{"qid": "' + b"q" * 600 + b'", "text": "t"}\n', 2, "qid"),
        (b'{"qid": "n1", "text": "t"}\n{"qid": "n2", "text": "\\ud800"}\n', 2, "text"),
        (b'{"qid": "n1", "text": "t"}\n' + b"[" * 100_000 + b"\n", 2, None),
        (b'{"qid": "n1", "text": "t", "x": 1e400}\n', 1, None),
        (b"n1\tText\nn2\tT\xff\n", 2, None),
        (b"<top>\n<num> Number: n\x001\n<title> t\n</top>\n", 2, None),
    ],
)
def test_hostile_query_imports_are_400_with_the_line(arena, content, line, field):
    before = _counts(arena)
    response = arena.client("cora").post(
        C + "queries/", {"file": SimpleUploadedFile("t.jsonl", content)}, format="multipart"
    )
    _refused_with(response, line=line, field=field)
    assert _counts(arena) == before


@pytest.mark.parametrize(
    ("content", "line", "field"),
    [
        (b'{"docno": "n1"}\n{"docno": "n2", "url": "javascript:alert(1)"}\n', 2, "url"),
        (b'{"docno": "n1", "url": "data:text/html,<b>x</b>"}\n', 1, "url"),
        (b"n1\thttps://x.org/\tT\tB\nn2\tvbscript:msgbox\tT\tB\n", 2, "url"),
        (b'{"docno": "n1"}\n{"docno": "' + b"d" * 600 + b'"}\n', 2, "docno"),
        (b'{"docno": "n1", "meta": {"k": "\\u0000"}}\n', 1, None),
        (b'{"docno": "n1", "body": "\\udfff"}\n', 1, "body"),
        (b'{"docno": "n1", "n": 1' + b"0" * 5000 + b"}\n", 1, None),
        (b"n1\tok\nn2\tb\xc3\n", 2, None),
    ],
)
def test_hostile_document_imports_are_400_with_the_line(arena, content, line, field):
    before = _counts(arena)
    name = "d.tsv" if b"\t" in content else "d.jsonl"
    response = arena.client("cora").post(
        C + "documents/", {"file": SimpleUploadedFile(name, content)}, format="multipart"
    )
    _refused_with(response, line=line, field=field)
    assert _counts(arena) == before


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("queries/", b'[{"qid": "n1", "text": "t\\u0000"}]', None),
        ("queries/", b'{"queries": [{"qid": "n1", "text": "\\ud800"}]}', "queries"),
        ("queries/", b"[" * 100_000, None),
        ("documents/", b'[{"docno": "n1", "url": "javascript:alert(1)"}]', "url"),
        ("documents/", b'[{"docno": "n1", "n": 1e400}]', None),
        ("documents/", b'[{"docno": "n1", "n": ' + b"9" * 5000 + b"}]", None),
        ("documents/", b'{"documents": [{"docno": "n\\u0000"}]}', "documents"),
    ],
)
def test_hostile_json_batches_are_400(arena, path, body, field):
    before = _counts(arena)
    response = arena.client("cora").post(C + path, body, content_type="application/json")
    _refused_with(response, field=field)
    assert _counts(arena) == before


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (b'{"slug": "new", "name": "N\\u0000"}', "name"),
        (b'{"slug": "new", "name": "\\ud800"}', "name"),
        (b'{"slug": "new", "name": "N", "guidelines": "g\\u0000"}', "guidelines"),
        (b'{"slug": "new", "name": "' + b"n" * 300 + b'"}', "name"),
        (b'{"slug": "new", "name": "N", "judges_per_pair": 1' + b"0" * 5000 + b"}", None),
        (b'{"slug": "new", "name": "N", "judges_per_pair": 1e400}', None),
        (b"[" * 100_000, None),
    ],
)
def test_hostile_new_collections_are_400(arena, body, field):
    before = _counts(arena)
    response = arena.client("cora").post(
        "/api/v1/collections/", body, content_type="application/json"
    )
    _refused_with(response, field=field)
    assert _counts(arena) == before
