"""LLM judges over REST: configuration, jobs, native labels on every path, no key leaks."""

from __future__ import annotations

import logging

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging import services
from judging.llm.models import LLMJob, LLMOutput
from judging.models import Judge, Judgment, JudgmentEvent
from tests import factories
from tests.api_client import errors_of
from tests.judging.llm import conftest as llm_fixtures
from tests.judging.llm.fake_server import Reply

KEY, KEY_ENV = llm_fixtures.KEY, llm_fixtures.KEY_ENV
fake = llm_fixtures.fake
api_key = llm_fixtures.api_key
provider = llm_fixtures.provider

pytestmark = pytest.mark.django_db
JOBS = "/api/v1/collections/demo/llm-jobs/"
JUDGMENTS = "/api/v1/collections/demo/judgments/"


def _register(api, fake, **extra):
    if "llm_provider" not in extra:
        from judging.models import LLMProvider

        if not LLMProvider.objects.filter(name="fake").exists():
            factories.llm_provider(fake.url, name="fake", api_key_env=KEY_ENV)
    payload = {
        "name": "umbrela",
        "provider": "local",
        "model": "fake-model",
        "llm_provider": "fake",
        "decoding": {"temperature": 0},
        **extra,
    }
    response = api("cora").post("/api/v1/judges/", payload, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def test_register_runnable_judge_gets_default_prompt_and_scale(api, world, fake, api_key):
    body = _register(api, fake)
    assert body["llm_provider"] == "fake"
    assert "endpoint" not in body and "api_key_env" not in body
    assert "##final score: N" in body["prompt_template"]
    assert body["system_prompt"]
    assert body["native_scale"] == ["0", "1", "2", "3"]
    assert body["scale_mapping"] == {"0": 0, "1": 1, "2": 3, "3": 4}
    assert KEY not in str(body)


@pytest.mark.parametrize(
    ("extra", "field", "text"),
    [
        ({"prompt_template": "Q {query} D {passage}"}, "prompt_template", "{passage}"),
        ({"llm_provider": "sk-abc-123"}, "llm_provider", "No provider has that name"),
        ({"answer_pattern": "(a)(b)"}, "answer_pattern", "capturing group"),
        ({"model": "not-allowed"}, "model", "does not allow"),
        ({"max_attempts": 0}, "max_attempts", ""),
    ],
)
def test_bad_configuration_is_a_400_naming_the_field(api, world, fake, extra, field, text):
    factories.llm_provider(fake.url, name="fake", models=("m",))
    payload = {"name": "x", "model": "m", "llm_provider": "fake", **extra}
    response = api("cora").post("/api/v1/judges/", payload, format="json")
    assert response.status_code == 400
    errors = errors_of(response)
    assert [e["field"] for e in errors] == [field]
    assert text in errors[0]["message"]
    assert "sk-abc-123" not in response.content.decode()


def test_job_runs_and_reports_progress(
    api, world, fake, api_key, django_capture_on_commit_callbacks, caplog
):
    judge = _register(api, fake)
    with caplog.at_level(logging.DEBUG), django_capture_on_commit_callbacks(execute=True):
        response = api("cora").post(JOBS, {"judge": judge["id"], "concurrency": 2}, format="json")
    assert response.status_code == 202, response.json()
    assert response.json()["status"] == "queued"
    job_id = response.json()["id"]
    detail = api("cora").get(f"{JOBS}{job_id}/")
    assert detail.status_code == 200
    body = detail.json()
    # q1×{d1, d2} and q2×{d3} have text; q1×dx is id-only and skipped
    assert (body["status"], body["total"], body["done"], body["failed"], body["skipped"]) == (
        "done",
        3,
        3,
        0,
        1,
    )
    assert body["percent"] == 100 and body["failure_groups"] == []
    assert "failures" not in body  # paged apart, at failures_url
    assert body["prompt_tokens"] == 300
    listing = api("cora").get(JOBS)
    assert [j["id"] for j in listing.json()["results"]] == [job_id]
    assert set(JudgmentEvent.objects.values_list("channel", flat=True)) == {"llm"}
    for text in (response.content, detail.content, listing.content):
        assert KEY.encode() not in text
    assert KEY not in caplog.text
    assert fake.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"


def test_job_failures_are_grouped_and_paged_apart(
    api, world, fake, api_key, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    judge = _register(api, fake, max_attempts=1)
    fake.script = lambda body, n: Reply(content="##final score: 9")
    with django_capture_on_commit_callbacks(execute=True):
        response = api("cora").post(JOBS, {"judge": judge["id"], "limit": 2}, format="json")
    job_id = response.json()["id"]
    body = api("cora").get(f"{JOBS}{job_id}/").json()
    assert (body["done"], body["failed"]) == (0, 2)
    # One group for the two pairs that failed the same way, not one row per pair.
    (group,) = body["failure_groups"]
    assert group["count"] == 2 and "not on the scale" in group["reason"]
    assert group["example"] == "##final score: 9"
    assert body["failures_url"] == f"http://testserver{JOBS}{job_id}/failures/"
    assert group["failures_url"].startswith(body["failures_url"] + "?reason=")
    # The pairs themselves: paged, by query then document id; ?reason= keeps one group.
    cora = api("cora")
    page = cora.get(body["failures_url"], {"limit": 1}).json()
    assert page["count"] == 2 and page["next"]
    assert [(f["query"], f["document"]) for f in page["results"]] == [("q1", "d1")]
    assert page["results"][0]["raw_answer"] == "##final score: 9"
    assert page["results"][0]["attempts"] == 1
    same = cora.get(group["failures_url"]).json()
    assert [(f["query"], f["document"]) for f in same["results"]] == [("q1", "d1"), ("q1", "d2")]
    assert cora.get(body["failures_url"], {"reason": "something else"}).json()["count"] == 0
    assert cora.get(body["failures_url"], {"reson": "x"}).status_code == 400
    assert cora.get(f"{JOBS}{job_id + 999}/failures/").status_code == 404
    assert not Judgment.objects.exists()


def test_job_detail_groups_many_failures_in_few_queries(
    api, world, fake, api_key, django_capture_on_commit_callbacks, django_assert_max_num_queries
):
    """Three reasons over many failures: three groups with their counts, commonest first."""
    from judging.llm.models import LLMFailure

    judge = _register(api, fake, max_attempts=1)
    fake.script = lambda body, n: Reply(content="##final score: 9")
    with django_capture_on_commit_callbacks(execute=True):
        response = api("cora").post(JOBS, {"judge": judge["id"], "limit": 1}, format="json")
    job = LLMJob.objects.get(pk=response.json()["id"])
    coll = job.collection
    q = coll.queries.order_by("pk").first()
    docs = [factories.document(coll, f"extra-{i}") for i in range(30)]
    LLMFailure.objects.bulk_create(
        LLMFailure(
            job=job,
            query=q,
            document=d,
            reason=("HTTP 404" if i < 20 else "HTTP 500" if i < 27 else "timed out"),
            raw_answer="",
            attempts=1,
        )
        for i, d in enumerate(docs)
    )
    cora = api("cora")
    with django_assert_max_num_queries(12):
        body = cora.get(f"{JOBS}{job.pk}/").json()
    counts = [(g["reason"], g["count"]) for g in body["failure_groups"]]
    assert counts[:3] == [("HTTP 404", 20), ("HTTP 500", 7), ("timed out", 3)]
    assert sum(c for _, c in counts) == LLMFailure.objects.filter(job=job).count() == 31
    assert cora.get(body["failure_groups"][0]["failures_url"]).json()["count"] == 20


def test_missing_key_variable_is_a_400_before_any_request(api, world, fake, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)
    judge = _register(api, fake)
    response = api("cora").post(JOBS, {"judge": judge["id"]}, format="json")
    assert response.status_code == 400
    assert errors_of(response) == [
        {
            "field": "llm_provider",
            "message": f"The provider fake has no key: the operator must set {KEY_ENV} where "
            "Graded runs.",
        }
    ]
    assert fake.requests == [] and not LLMJob.objects.exists()


@pytest.mark.parametrize(
    ("user", "code"), [("judy", 403), ("tess", 403), ("otto", 404), (None, 401)]
)
def test_jobs_are_for_coordinators(api, world, fake, api_key, user, code):
    judge = Judge.objects.create(
        kind="llm", name="j", model="m", llm_provider=factories.llm_provider(fake.url)
    )
    assert api(user).post(JOBS, {"judge": judge.pk}, format="json").status_code == code
    assert api(user).get(JOBS).status_code == code


def test_judge_of_other_collections_cannot_be_run_here(api, world, fake, api_key):
    judge = Judge.objects.create(
        kind="llm",
        name="elsewhere",
        model="m",
        llm_provider=factories.llm_provider(fake.url, api_key_env=KEY_ENV),
    )
    response = api("cora").post(JOBS, {"judge": judge.pk}, format="json")
    assert response.status_code == 400
    assert errors_of(response) == [
        {"field": "judge", "message": f"LLM judge {judge.pk} is not assigned to this collection."}
    ]
    assert not LLMJob.objects.exists()


def test_human_judge_cannot_be_run(api, world):
    human = services.judge_for_user(user=world.users["cora"])
    response = api("cora").post(JOBS, {"judge": human.pk}, format="json")
    assert response.status_code == 400
    assert errors_of(response)[0]["field"] == "judge"


@pytest.fixture
def mapped(world):
    judge = Judge.objects.create(
        kind="llm",
        name="mapped",
        model="m",
        native_scale=["0", "1", "2", "3"],
        scale_mapping={"0": 0, "1": 1, "2": 3, "3": 4},
    )
    judge.collections.add(world.coll)  # LLM judges record only where they are assigned
    return judge


def test_single_posted_native_label_is_mapped_and_raw_output_kept(api, world, mapped):
    payload = {
        "query": "q1",
        "document": "d1",
        "grade": 2,
        "judge": mapped.pk,
        "raw_output": "reasoning... ##final score: 2",
    }
    response = api("cora").post(JUDGMENTS, payload, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["grade"] == 3
    output = LLMOutput.objects.get()
    assert (output.native_label, output.raw_output) == ("2", payload["raw_output"])
    off = api("cora").post(JUDGMENTS, {**payload, "grade": 4}, format="json")
    assert off.status_code == 400
    assert errors_of(off)[0]["field"] == "grade"
    assert Judgment.objects.get().grade == 3


def test_batch_native_labels_are_mapped_all_or_nothing(api, world, mapped):
    items = [
        {"query": "q1", "document": "d1", "grade": 3, "raw_output": "a"},
        {"query": "q1", "document": "d2", "grade": "1"},
    ]
    response = api("cora").post(JUDGMENTS, {"judge": mapped.pk, "judgments": items}, format="json")
    assert response.status_code == 201, response.json()
    assert dict(Judgment.objects.values_list("document__external_id", "grade")) == {
        "d1": 4,
        "d2": 1,
    }
    assert dict(
        LLMOutput.objects.values_list("judgment__document__external_id", "native_label")
    ) == {
        "d1": "3",
        "d2": "1",
    }
    bad = [
        {"query": "q2", "document": "d3", "grade": 0},
        {"query": "q1", "document": "d1", "grade": 7},
    ]
    response = api("cora").post(JUDGMENTS, {"judge": mapped.pk, "judgments": bad}, format="json")
    assert response.status_code == 400
    assert [e["line"] for e in errors_of(response)] == [2]
    assert not Judgment.objects.filter(document__external_id="d3").exists()


def test_file_native_labels_are_mapped(api, world, mapped):
    upload = SimpleUploadedFile("llm.qrels", b"q1 0 d1 2\nq2 0 d3 3\n")
    response = api("cora").post(JUDGMENTS, {"judge": mapped.pk, "file": upload})
    assert response.status_code == 201, response.json()
    assert dict(Judgment.objects.values_list("document__external_id", "grade")) == {
        "d1": 3,
        "d3": 4,
    }
    assert set(LLMOutput.objects.values_list("native_label", flat=True)) == {"2", "3"}
    upload = SimpleUploadedFile("llm.qrels", b"q1 0 d2 4\n")
    response = api("cora").post(JUDGMENTS, {"judge": mapped.pk, "file": upload})
    assert response.status_code == 400
    assert errors_of(response)[0]["line"] == 1
