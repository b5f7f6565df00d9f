"""Issue 45 item 6: a run file reports every problem in one round, ranks and tags included.

trec_eval ignores the rank column and keeps the tag of the last line; a submission is
stricter (docs/judging.md, "Run submission rules"): a rank must be a whole number (0 or
more) and one file holds one run, so one tag. Both are reported with their lines in the
same round as the reader's problems and the queries the collection lacks, capped as
every other list of problems is, and nothing is stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from graded.textpolicy import MAX_ERRORS
from judging.models import Document, PoolEntry
from metrics.models import Run, RunQuery
from tests.api_client import errors_of

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> Path:
    """Keep stored run files in a fresh directory."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"


def submit(client, world, content: bytes, tag: str = "r1", name: str = "run.txt"):
    upload = SimpleUploadedFile(name, content, content_type="application/octet-stream")
    url = reverse("metrics-api:run-list", args=[world.coll.slug])
    return client.post(url, {"file": upload, "tag": tag}, format="multipart")


def stored() -> tuple[int, int, int, int]:
    return (
        Run.objects.count(),
        RunQuery.objects.count(),
        Document.objects.count(),
        PoolEntry.objects.count(),
    )


def files_in(media: Path) -> list[Path]:
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


#: The audit's file: six planted problems, one per line 2-7 (line 1 is good).
SIX_PROBLEMS = (
    b"q1 Q0 d1 1 9.0 bm25\n"
    b"q1 Q0 d2 2\n"  # 2: four columns
    b"q1 Q0 d3 3 abc bm25\n"  # 3: a score that is not a number
    b"q1 Q0 d1 4 6.0 bm25\n"  # 4: d1 again for q1
    b"q9 Q0 d4 1 5.0 bm25\n"  # 5: a query the collection lacks
    b"q2 Q0 d4 five 4.0 bm25\n"  # 6: a rank that is not a number
    b"q2 Q0 d5 2 3.0 rm3\n"  # 7: a second run tag
)


def test_a_file_with_six_planted_problems_reports_all_six(world, api, media):
    before = stored()
    response = submit(api("alice"), world, SIX_PROBLEMS)
    assert response.status_code == 400, response.json()
    errors = errors_of(response)
    assert [e.get("line") for e in errors] == [2, 3, 4, 5, 6, 7], errors
    by_line = {e["line"]: e["message"] for e in errors}
    assert "expected 6 columns" in by_line[2]
    assert "'abc' is not a number" in by_line[3]
    assert "d1 repeated for query q1" in by_line[4]
    assert "'q9' is not in the collection" in by_line[5]
    assert "rank 'five' is not a whole number" in by_line[6]
    assert "'rm3'" in by_line[7] and "'bm25'" in by_line[7] and "line 1" in by_line[7]
    assert stored() == before and files_in(media) == []


@pytest.mark.parametrize("rank", ["five", "1.5", "-1", "+1", "1e3", "0x10", "１"])
def test_a_rank_that_is_not_a_whole_number_is_refused_naming_line_and_field(world, api, rank):
    content = f"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 {rank} 1.0 t\n".encode()
    response = submit(api("alice"), world, content)
    assert response.status_code == 400, response.json()
    (error,) = errors_of(response)
    assert error["line"] == 2
    assert f"rank {rank!r} is not a whole number" in error["message"]
    assert not Run.objects.exists()


@pytest.mark.parametrize(
    "ranks", [("0", "1"), ("1", "1"), ("7", "3"), ("007", "12345678901234567890")]
)
def test_whole_number_ranks_are_accepted_and_ignored(world, api, ranks):
    """The rank column is ignored as trec_eval ignores it: the order is by score."""
    content = f"q1 Q0 d1 {ranks[0]} 1.0 t\nq1 Q0 d2 {ranks[1]} 2.0 t\n".encode()
    response = submit(api("alice"), world, content)
    assert response.status_code == 201, response.json()
    ranking = RunQuery.objects.get(run_id=response.json()["id"], query__external_id="q1")
    docs = dict(Document.objects.values_list("pk", "external_id"))
    assert [docs[pk] for pk in ranking.document_ids.tolist()] == ["d2", "d1"]


def test_several_tags_are_refused_naming_the_first_line_of_each(world, api, media):
    lines = [f"q1 Q0 d{i} {i} {10 - i}.0 {tag}" for i, tag in enumerate("aabbcb", start=1)]
    response = submit(api("alice"), world, ("\n".join(lines) + "\n").encode())
    assert response.status_code == 400
    errors = errors_of(response)
    assert [e["line"] for e in errors] == [3, 5]
    assert "'b'" in errors[0]["message"] and "3 lines" in errors[0]["message"]
    assert "'c'" in errors[1]["message"] and "1 line" in errors[1]["message"]
    assert all("'a'" in e["message"] and "line 1" in e["message"] for e in errors)
    assert not Run.objects.exists() and files_in(media) == []


def test_json_lines_ranks_and_tags_follow_the_same_rules(world, api):
    items = [
        {"qid": "q1", "docno": "d1", "score": 2, "tag": "a", "rank": 1},
        {"qid": "q1", "docno": "d2", "score": 1, "tag": "a", "rank": "2"},
        {"qid": "q1", "docno": "d3", "score": 0.5, "tag": "b"},
        {"qid": "q2", "docno": "d4", "score": 1, "rank": 1.5},
    ]
    content = "\n".join(json.dumps(i) for i in items).encode()
    response = submit(api("alice"), world, content, name="run.jsonl")
    assert response.status_code == 400
    errors = errors_of(response)
    assert [e["line"] for e in errors] == [2, 3, 4], errors
    assert "rank '2' is not a whole number" in errors[0]["message"]
    assert "'b'" in errors[1]["message"] and "'a'" in errors[1]["message"]
    assert "rank 1.5 is not a whole number" in errors[2]["message"]


def test_a_json_array_names_the_item(world, api):
    content = (
        b'[{"qid":"q1","docno":"d1","score":2,"run":"a"},'
        b'{"qid":"q1","docno":"d2","score":1,"run":"b","rank":-1}]'
    )
    response = submit(api("alice"), world, content, name="run.json")
    assert response.status_code == 400
    errors = errors_of(response)
    assert [(e["line"], e["item"]) for e in errors] == [(1, 2), (1, 2)], errors
    assert {"rank" in e["message"] for e in errors} == {True, False}


def test_a_json_run_without_tags_or_ranks_is_accepted(world, api):
    content = b'[{"qid":"q1","docno":"d1","score":2},{"qid":"q1","docno":"d2","score":1}]'
    assert submit(api("alice"), world, content, name="run.json").status_code == 201


def test_bad_ranks_stop_at_the_cap_with_a_count(world, api):
    lines = [f"q1 Q0 d{i} r{i} {i}.0 t" for i in range(1, 301)]
    response = submit(api("alice"), world, ("\n".join(lines) + "\n").encode())
    assert response.status_code == 400
    errors = errors_of(response)
    assert len(errors) == MAX_ERRORS + 1
    assert [e["line"] for e in errors[:MAX_ERRORS]] == list(range(1, MAX_ERRORS + 1))
    assert "more problems" in errors[-1]["message"]


def test_the_upload_page_lists_the_same_six_problems(world, client, media):
    """The browser path goes through the same service and names the same lines."""
    client.force_login(world.users["alice"])
    url = reverse("metrics:run_create", args=[world.coll.slug])
    upload = SimpleUploadedFile("run.txt", SIX_PROBLEMS, content_type="text/plain")
    response = client.post(url, {"tag": "six", "file": upload})
    assert response.status_code == 400
    html = response.content.decode()
    for line in range(2, 8):
        assert f"Line {line}: " in html
    assert "rank &#x27;five&#x27; is not a whole number" in html
    assert not Run.objects.exists()
