"""Submitting runs over REST: round trips, every kind of malformed file, all or nothing.

Needs the scoring binding (``metrics.live.scoring.read_run``); skipped until it exists.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from judging.models import Document, PoolEntry
from metrics.live import scoring
from metrics.models import Run, RunQuery
from tests.api_client import errors_of

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.skipif(
        not hasattr(scoring, "read_run"), reason="the scoring binding has not landed yet"
    ),
]
NDCG = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"

#: A perfect run of the world's live list, plus one document the collection does not know.
PERFECT = b"""q1 Q0 d1 1 9.0 perfect
q1 Q0 d3 2 8.0 perfect
q1 Q0 d2 3 7.0 perfect
q1 Q0 dz 4 6.0 perfect
q2 Q0 d4 1 9.0 perfect
q2 Q0 d6 2 8.0 perfect
q3 Q0 d5 1 9.0 perfect
"""


@pytest.fixture(autouse=True)
def media(settings, tmp_path) -> Path:
    """Keep stored run files in a fresh directory."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"


def files_in(media: Path) -> list[Path]:
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


def url(world) -> str:
    return reverse("metrics-api:run-list", args=[world.coll.slug])


def submit(client, world, content: bytes, tag: str = "r1", name: str = "run.txt", **fields):
    upload = SimpleUploadedFile(name, content, content_type="application/octet-stream")
    return client.post(url(world), {"file": upload, "tag": tag, **fields}, format="multipart")


def snapshot() -> tuple[int, int, int, int]:
    return (
        Run.objects.count(),
        RunQuery.objects.count(),
        Document.objects.count(),
        PoolEntry.objects.count(),
    )


def assert_nothing_stored(before, media: Path) -> None:
    assert snapshot() == before
    assert not Run.objects.exists()
    assert not RunQuery.objects.exists()
    assert files_in(media) == []


# --- round trips -------------------------------------------------------------------------


def publish_judgments(world) -> None:
    """Publish the judgment list, so teams see every score (these tests check scoring)."""
    world.coll.judgments_published = True
    world.coll.save(update_fields=["judgments_published"])


def test_trec_round_trip(world, api, media):
    publish_judgments(world)
    alice = api("alice")
    response = submit(alice, world, PERFECT, tag="perfect", description="oracle")
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["tag"] == "perfect"
    assert run["team"] == {"id": world.alpha.pk, "name": "Alpha"}
    assert run["submitted_by"] == "alice"
    assert run["description"] == "oracle"
    assert run["status"] == "scored"
    assert run["source_format"] == "trec"
    assert (run["query_count"], run["line_count"], run["unknown_document_count"]) == (3, 7, 1)
    assert run["scores"][NDCG] == pytest.approx(1.0)
    assert set(run["scores"]) == set(scoring.canonical_names(world.coll.measures))
    assert run["scored_version"] == world.coll.judgments_version
    assert run["stale"] is False

    assert RunQuery.objects.filter(run_id=run["id"]).count() == 3
    assert Document.objects.get(collection=world.coll, external_id="dz").has_content is False
    assert PoolEntry.objects.filter(document__external_id__in=["dz", "d6"]).count() == 2
    assert run["pairs_pooled"] == PoolEntry.objects.count() == 2
    assert len(files_in(media)) == 1

    listed = alice.get(url(world)).json()["results"]
    assert [r["id"] for r in listed] == [run["id"]]
    board = alice.get(reverse("metrics-api:leaderboard", args=[world.coll.slug])).json()
    (row,) = board["rows"]
    assert (row["run"], row["run_id"], row["team"]) == ("perfect", run["id"], "Alpha")
    assert row["scores"][NDCG] == pytest.approx(1.0)
    assert set(row["judged"]) == {"Judged@10"}
    assert row["stale"] is False
    scores = alice.get(reverse("metrics-api:run-scores", args=[world.coll.slug, run["id"]]))
    per_query = scores.json()["per_query"]
    assert set(per_query) == {"q1", "q2", "q3"}
    assert all(v[NDCG] == pytest.approx(1.0) for v in per_query.values())


def test_jsonl_round_trip(world, api):
    publish_judgments(world)
    lines = [
        {"qid": "q1", "docno": "d2", "score": 3.0},
        {"qid": "q1", "docno": "d1", "score": 2.0},
        {"qid": "q2", "docno": "d4", "score": 1.5},
        {"qid": "q3", "docno": "d6", "score": 1.0},
    ]
    content = "\n".join(json.dumps(line) for line in lines).encode() + b"\n"
    response = submit(api("bob"), world, content, tag="dense", name="dense.jsonl")
    assert response.status_code == 201, response.json()
    run = response.json()
    assert run["team"]["name"] == "Beta"
    assert run["source_format"] != "trec"
    assert (run["query_count"], run["line_count"]) == (3, 4)
    assert 0 < run["scores"][NDCG] < 1
    board = api("bob").get(reverse("metrics-api:leaderboard", args=[world.coll.slug])).json()
    assert [r["run"] for r in board["rows"]] == ["dense"]


def test_run_missing_a_judged_query_is_scored(world, api):
    publish_judgments(world)
    content = b"q1 Q0 d1 1 2.0 t\nq2 Q0 d4 1 1.0 t\n"
    response = submit(api("alice"), world, content, tag="partial")
    assert response.status_code == 201, response.json()
    body = api("alice").get(
        reverse("metrics-api:run-scores", args=[world.coll.slug, response.json()["id"]])
    )
    assert body.json()["per_query"]["q3"][NDCG] == 0.0


def test_delete_removes_the_stored_file(world, api, media, django_capture_on_commit_callbacks):
    run = submit(api("alice"), world, PERFECT).json()
    assert len(files_in(media)) == 1
    detail = reverse("metrics-api:run-detail", args=[world.coll.slug, run["id"]])
    with django_capture_on_commit_callbacks(execute=True):
        assert api("alice").delete(detail).status_code == 204
    assert files_in(media) == []


# --- who submits for which team ----------------------------------------------------------


def test_coordinator_submits_for_a_named_team(world, api):
    response = submit(api("cora"), world, PERFECT, team=world.beta.pk)
    assert response.status_code == 201, response.json()
    assert response.json()["team"]["name"] == "Beta"
    assert response.json()["submitted_by"] == "cora"


def test_coordinator_must_name_a_team(world, api, media):
    before = snapshot()
    response = submit(api("cora"), world, PERFECT)
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "team"
    assert_nothing_stored(before, media)


def test_member_of_several_teams_names_one(world, api):
    world.beta.members.add(world.users["alice"])
    response = submit(api("alice"), world, PERFECT)
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "team"
    response = submit(api("alice"), world, PERFECT, team=world.beta.pk)
    assert response.status_code == 201
    assert response.json()["team"]["name"] == "Beta"


def test_member_cannot_submit_for_another_team(world, api, media):
    before = snapshot()
    response = submit(api("alice"), world, PERFECT, team=world.beta.pk)
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "team"
    assert_nothing_stored(before, media)


def test_unknown_team_for_coordinator(world, api):
    response = submit(api("cora"), world, PERFECT, team=999999)
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "team"


@pytest.mark.parametrize(("name", "status"), [("judy", 403), ("tess", 403), ("otto", 404)])
def test_others_cannot_submit(world, api, media, name, status):
    before = snapshot()
    response = submit(api(name), world, PERFECT)
    assert response.status_code == status
    errors_of(response)
    assert_nothing_stored(before, media)


def test_anonymous_cannot_submit(world, api, media):
    before = snapshot()
    assert submit(api(None), world, PERFECT).status_code == 401
    assert_nothing_stored(before, media)


# --- malformed requests and files --------------------------------------------------------


def test_missing_file_and_tag(world, api):
    response = api("alice").post(url(world), {}, format="multipart")
    assert response.status_code == 400
    assert {e["field"] for e in errors_of(response)} == {"file", "tag"}


def test_json_body_is_refused(world, api):
    response = api("alice").post(url(world), {"tag": "x"}, format="json")
    assert response.status_code == 415
    errors_of(response)


BAD_FILES = {
    "wrong column count": (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2\n", "run.txt", [(2, "columns")]),
    "non-numeric score": (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 abc t\n", "run.txt", [(2, "abc")]),
    "NaN score": (b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 nan t\n", "run.txt", [(2, "nan")]),
    "empty file": (b"", "run.txt", [(None, "empty")]),
    "duplicate docno": (
        b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2 1.0 t\nq1 Q0 d1 3 0.5 t\n",
        "run.txt",
        [(3, "d1")],
    ),
    "unknown query": (b"q1 Q0 d1 1 2.0 t\nq9 Q0 d2 1 1.0 t\n", "run.txt", [(2, "q9")]),
    "several problems": (
        b"q1 Q0 d1 1 2.0 t\nq1 Q0 d2 2\nq2 Q0 d4 1 1.0 t\nq2 Q0 d5 2 inf t\n",
        "run.txt",
        [(2, "columns"), (4, "inf")],
    ),
    "bad JSON line": (
        b'{"qid": "q1", "docno": "d1", "score": 1}\n{"qid": "q1", "docno": "d2", "score": "x"}\n',
        "run.jsonl",
        [(2, "x")],
    ),
}


@pytest.mark.parametrize("case", list(BAD_FILES))
def test_malformed_files_are_refused_with_line_numbers(world, api, media, case):
    content, name, expected = BAD_FILES[case]
    before = snapshot()
    response = submit(api("alice"), world, content + PERFECT[:0], name=name, tag=case)
    assert response.status_code == 400, response.json()
    errors = errors_of(response)
    for line, word in expected:
        matching = [e for e in errors if word in e["message"]]
        assert matching, (case, errors)
        if line is not None:
            assert matching[0].get("line") == line, (case, errors)
    assert_nothing_stored(before, media)


def test_a_json_array_repeating_a_pair_on_one_line_is_refused_naming_the_item(world, api, media):
    """The audit's file: accepted before, and the document counted twice."""
    content = (
        b'[{"qid":"q1","docno":"d1","score":1},{"qid":"q1","docno":"d2","score":3},'
        b'{"qid":"q1","docno":"d1","score":2}]'
    )
    before = snapshot()
    response = submit(api("alice"), world, content, name="run.json", tag="twice")
    assert response.status_code == 400, response.json()
    (error,) = errors_of(response)
    assert (error["line"], error["item"]) == (1, 3)
    assert "d1 repeated for query q1 (first as item 1)" in error["message"]
    assert_nothing_stored(before, media)


def test_unknown_documents_in_a_refused_run_are_not_created(world, api, media):
    before = snapshot()
    content = b"q1 Q0 dnew1 1 2.0 t\nq9 Q0 dnew2 1 1.0 t\n"
    response = submit(api("alice"), world, content)
    assert response.status_code == 400
    assert_nothing_stored(before, media)
    assert not Document.objects.filter(external_id__startswith="dnew").exists()


def test_reused_tag_is_refused(world, api, media):
    assert submit(api("alice"), world, PERFECT, tag="same").status_code == 201
    before = snapshot()
    stored = files_in(media)
    response = submit(api("bob"), world, PERFECT, tag="same")
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["field"] == "tag"
    assert snapshot() == before
    assert files_in(media) == stored


def test_file_over_the_size_limit_is_refused(world, api, media, settings):
    settings.GRADED_RUN_MAX_BYTES = 20
    before = snapshot()
    response = submit(api("alice"), world, PERFECT)
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["field"] == "file"
    assert "20" in error["message"]
    assert_nothing_stored(before, media)
