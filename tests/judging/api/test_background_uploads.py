"""Large judgment files posted over REST are imported in the background (issue 32, item 8).

A file of at least ``GRADED_BACKGROUND_IMPORT_BYTES`` posted to ``.../judgments/`` or
``.../qrels/`` is kept and imported by a worker (Celery; inline in the tests, after
commit): 202 with the import and a ``Location`` to follow, then the counts the request
would have answered, or every refused line, with nothing written. Smaller files stay in
the request. Only who may import into the collection sees an import: its coordinators,
and the judge who posted it.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from judging.imports import services as services_files
from judging.llm import native_labels
from judging.models import (
    Collection,
    FileImport,
    Judge,
    Judgment,
    JudgmentEvent,
    LiveGrade,
)
from tests.api_client import errors_of
from tests.security.test_parser_fuzz import HOSTILE

JUDGMENTS = "/api/v1/collections/demo/judgments/"
QRELS = "/api/v1/collections/demo/qrels/"
IMPORTS = "/api/v1/collections/demo/imports/"
REFUSED_JSONL = (
    b'{"qid": "q1", "docno": "d1", "grade": 2}\n'
    b'{"qid": "q9", "docno": "d1", "grade": 2}\n'
    b'{"qid": "q1", "docno": "d2", "grade": "high"}\n'
    b"not json\n"
)


@pytest.fixture
def large(settings, tmp_path):
    """Send every file of 10 bytes or more to the worker; keep the files in ``tmp_path``."""
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 10
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


def _version() -> int:
    return Collection.objects.get(slug="demo").judgments_version


def _nothing_written(version_before: int) -> None:
    assert not Judgment.objects.exists()
    assert not JudgmentEvent.objects.exists()
    assert not LiveGrade.objects.exists()
    assert _version() == version_before


def _post(client, url, name, data, **fields):
    return client.post(url, {"file": SimpleUploadedFile(name, data), **fields}, format="multipart")


@pytest.mark.django_db(transaction=True)
def test_a_large_file_posted_to_judgments_is_imported_by_a_worker(api, world, large):
    qrels = b"q1 0 d1 2\nq2 0 d3 4\n"
    response = _post(api("judy"), JUDGMENTS, "mine.qrels", qrels)
    assert response.status_code == 202, response.json()
    body = response.json()
    job = FileImport.objects.get()
    assert response["Location"] == f"http://testserver{IMPORTS}{job.pk}/"
    judge = Judge.objects.get(user=world.users["judy"])
    # No broker in the tests: the worker ran after commit, before the answer.
    assert body["kind"] == "judgments" and body["status"] == "done"
    assert body["result"] == {
        "created": 2,
        "changed": 0,
        "unchanged": 0,
        "version": _version(),
        "judge": judge.pk,
    }
    assert body["report"] == ["judgments: 2 new, 0 changed, 0 unchanged"]
    assert body["errors"] == [] and body["files"] == {"judgments": "mine.qrels"}
    followed = api("judy").get(response["Location"])
    assert followed.status_code == 200
    assert followed.json()["bytes_read"] == followed.json()["bytes_total"] == len(qrels)
    assert Judgment.objects.filter(judge=judge).count() == 2
    assert set(JudgmentEvent.objects.values_list("channel", "actor__username")) == {("api", "judy")}
    assert not any((large / "imports" / str(job.pk)).glob("*"))  # the file is gone


@pytest.mark.django_db(transaction=True)
def test_small_files_stay_in_the_request(api, world, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 10_000
    response = _post(api("judy"), JUDGMENTS, "mine.qrels", b"q1 0 d1 2\n")
    assert response.status_code == 201
    assert response.json() == {"created": 1, "changed": 0, "unchanged": 0, "version": _version()}
    listed = _post(api("cora"), QRELS, "list.qrels", b"q1 0 d2 3\n", judge_name="trec")
    assert listed.status_code == 201 and listed.json()["created"] == 1
    assert not FileImport.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_refused_background_upload_names_every_line_as_the_request_would(
    api, world, large, settings
):
    version = _version()
    response = _post(api("judy"), JUDGMENTS, "mine.jsonl", REFUSED_JSONL)
    assert response.status_code == 202
    job = response.json()
    assert job["status"] == "refused" and job["result"] == {}
    assert [(e.get("line"), e["message"][:22]) for e in job["errors"]] == [
        (2, "unknown query id 'q9'"),
        (3, "grade: must be a whole"),
        (4, "not valid JSON (Expect"),
    ]
    assert job["problems"][0] == "line 2: unknown query id 'q9'"
    _nothing_written(version)
    # The same file in the request: the same errors, in a 400.
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 10_000
    at_once = _post(api("judy"), JUDGMENTS, "mine.jsonl", REFUSED_JSONL)
    assert at_once.status_code == 400
    assert errors_of(at_once) == job["errors"]
    _nothing_written(version)


@pytest.mark.django_db(transaction=True)
def test_a_large_judgment_list_posted_to_qrels_is_imported_by_a_worker(api, world, large):
    cora = api("cora")
    response = _post(cora, QRELS, "trec.qrels", b"q1 0 d1 1\nq1 0 d2 0\n", judge_name="TREC")
    assert response.status_code == 202
    body = response.json()
    judge = Judge.objects.get(name="TREC")
    assert body["kind"] == "qrels" and body["status"] == "done"
    assert body["result"] == {
        "created": 2,
        "changed": 0,
        "unchanged": 0,
        "version": _version(),
        "judge": judge.pk,
        "judges": [judge.pk],
        "gold": 0,
        "dry_run": False,
    }
    scaled = _post(
        cora, QRELS, "again.qrels", b"q1 0 d1 1\nq1 0 d2 1\n", judge_name="TREC", scale="0-1"
    )
    assert scaled.status_code == 202, scaled.json()
    assert scaled.json()["result"]["changed"] == 2
    assert sorted(Judgment.objects.values_list("grade", flat=True)) == [4, 4]
    dry = _post(cora, QRELS, "dry.qrels", b"q2 0 d3 2\n", judge_name="Dry", dry_run="true")
    assert dry.json()["status"] == "done" and dry.json()["result"]["created"] == 1
    assert dry.json()["report"][0].startswith("Dry run")
    assert not Judge.objects.filter(name="Dry").exists()  # the worker's judge went too
    assert Judgment.objects.count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_refused_judgment_list_writes_nothing_not_even_its_judge(api, world, large):
    version = _version()
    qrels = b"q1 0 d1 1\nq1 0 nope 2\nq1 0 d2 9 extra\n"
    body = _post(api("cora"), QRELS, "bad.qrels", qrels, judge_name="New judge").json()
    assert body["status"] == "refused"
    assert [(e["line"], e["message"]) for e in body["errors"]] == [
        (2, "unknown document id 'nope'"),
        (3, "expected 4 columns (qid iter docno grade), found 5"),
    ]
    assert not Judge.objects.filter(name="New judge").exists()
    _nothing_written(version)


@pytest.mark.django_db(transaction=True)
def test_what_the_worker_cannot_ask_about_is_checked_in_the_request(api, world, large):
    cora = api("cora")
    scale = _post(cora, QRELS, "s.qrels", b"q1 0 d1 1\n", judge_name="x", scale="zero to one")
    assert scale.status_code == 400 and errors_of(scale)[0]["field"] == "scale"
    jim = Judge.objects.create(user=world.users["jim"], kind=Judge.Kind.HUMAN, name="jim")
    as_jim = _post(api("judy"), JUDGMENTS, "j.qrels", b"q1 0 d1 1\n", judge=jim.pk)
    assert as_jim.status_code == 403  # a judge records as nobody else, large file or not
    team = _post(api("tess"), JUDGMENTS, "j.qrels", b"q1 0 d1 1\n")
    assert team.status_code == 403
    assert not FileImport.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_an_import_that_fails_midway_writes_nothing(api, world, large, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("disk gone")

    version = _version()
    monkeypatch.setattr(native_labels, "store_outputs", broken)  # after the labels were written
    body = _post(api("judy"), JUDGMENTS, "mine.qrels", b"q1 0 d1 2\nq2 0 d3 4\n").json()
    assert body["status"] == "failed"
    assert body["errors"] == [{"message": body["problems"][0]}]
    assert "nothing was written" in body["problems"][0]
    _nothing_written(version)


@pytest.mark.django_db(transaction=True)
def test_only_who_may_import_into_the_collection_sees_an_import(api, world, large):
    judys = _post(api("judy"), JUDGMENTS, "mine.qrels", b"q1 0 d1 2\n").json()["id"]
    coras = _post(api("cora"), QRELS, "list.qrels", b"q1 0 d2 2\n", judge_name="T").json()["id"]
    expected = {
        # name: (judy's import, cora's import)
        None: (401, 401),
        "judy": (200, 404),  # her own upload only
        "jim": (404, 404),  # a judge too, but not his
        "tess": (403, 403),  # a team member may not import
        "cora": (200, 200),  # the coordinator sees every import
        "olga": (404, 404),  # a judge of another collection
        "otto": (404, 404),  # a coordinator of another collection
    }
    for name, codes in expected.items():
        got = tuple(api(name).get(f"{IMPORTS}{pk}/").status_code for pk in (judys, coras))
        assert got == codes, name


@pytest.mark.django_db
def test_a_queued_import_is_followed_until_the_worker_ran(
    api, world, large, django_capture_on_commit_callbacks
):
    cora = api("cora")
    qrels = b"q1 0 d1 2\nq2 0 d3 4\n"
    with django_capture_on_commit_callbacks() as queued:  # no worker has it yet
        response = _post(cora, JUDGMENTS, "mine.qrels", qrels)
    assert response.status_code == 202
    body = response.json()
    assert (body["status"], body["bytes_read"], body["bytes_total"]) == ("queued", 0, len(qrels))
    assert cora.get(response["Location"]).json()["status"] == "queued"
    assert not Judgment.objects.exists()
    for run in queued:  # the worker
        run()
    done = cora.get(response["Location"]).json()
    assert done["status"] == "done" and done["result"]["created"] == 2
    assert done["started_at"] and done["finished_at"]


FUZZ = settings(
    max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), database=None
)


@pytest.mark.django_db
@FUZZ
@given(
    data=HOSTILE,
    name=st.sampled_from(["f.qrels", "f.jsonl"]),
    kind=st.sampled_from(["judgments", "qrels"]),
)
def test_hostile_files_give_line_errors_in_the_background_too(world, large, data, name, kind):
    from django.core.files.uploadedfile import SimpleUploadedFile as Upload

    before = Judgment.objects.count()
    judge = Judge.objects.get_or_create(name="fuzz", kind=Judge.Kind.LLM, model="fuzz")[0]
    job = services_files.file_import_start(
        collection=world.coll,
        uploads={"judgments": Upload(name, data)},
        options={"judge": judge.pk},
        actor=world.users["cora"],
        kind=kind,
    )
    job = services_files.file_import_run(import_id=job.pk)
    assert job.status in ("done", "refused"), job.problems
    if job.status == "refused":
        assert job.errors and len(job.errors) <= 101
        assert Judgment.objects.count() == before
        for error in job.errors:
            assert error["message"] and len(error["message"]) < 1000
            assert error.get("line", 1) >= 1 and error.get("item", 1) >= 1
    else:
        assert job.result["created"] + job.result["changed"] + job.result["unchanged"] >= 1


def test_the_schema_describes_the_202_and_the_import_resource():
    from tests.api_client import clean_schema

    schema = clean_schema("judging.api.urls")
    paths = schema["paths"]
    for path in ("/api/v1/collections/{slug}/judgments/", "/api/v1/collections/{slug}/qrels/"):
        accepted = paths[path]["post"]["responses"]["202"]
        assert accepted["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/FileImport"
        }
        assert "GRADED_BACKGROUND_IMPORT_BYTES" in paths[path]["post"]["description"]
    followed = paths["/api/v1/collections/{slug}/imports/{id}/"]["get"]["responses"]["200"]
    assert followed["content"]["application/json"]["schema"]["$ref"].endswith("/FileImport")
    resource = schema["components"]["schemas"]["FileImport"]["properties"]
    assert {"kind", "status", "bytes_read", "bytes_total", "errors", "result"} <= set(resource)
    error = schema["components"]["schemas"]["ImportError"]["properties"]
    assert error["line"]["type"] == "integer"
