"""Issue 45 item 6: a background import whose worker was killed says so, and can be retried.

Before, such an import showed ``running`` until someone requeued it by hand. Now the
worker says it is alive every ``GRADED_IMPORT_HEARTBEAT_SECONDS`` (a thread of its own:
the row and the cache); a running import silent for ``GRADED_IMPORT_STALE_SECONDS`` is
shown as *interrupted* on its page and in REST, with a retry for coordinators. The
import and its outcome are one transaction, so a killed worker wrote nothing, and only
the latest attempt may write: a retry completes the import exactly once.
"""

from __future__ import annotations

import datetime
import threading
import time

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from judging.imports import services as services_files
from judging.models import FileImport, Judgment, JudgmentEvent, Membership
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db

QRELS = b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 4\n"


@pytest.fixture
def setup(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 1
    coll = factories.collection("bg")
    for qid in ("q1", "q2"):
        factories.query(coll, qid)
    for docno in ("d1", "d2"):
        factories.document(coll, docno)
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    judy = factories.user("judy")
    factories.member(coll, judy, Membership.Role.JUDGE)
    cache.clear()
    return coll, cora, judy


def _queued(coll, cora) -> FileImport:
    """Keep the upload and queue its import; no worker takes it (nothing is committed)."""
    return services_files.file_import_start(
        collection=coll,
        uploads={"judgments": SimpleUploadedFile("j.qrels", QRELS)},
        options={"judge_name": "trec", "judge_kind": "human", "judgments_format": "qrels"},
        actor=cora,
    )


def _killed(job: FileImport, minutes_ago: float = 10) -> FileImport:
    """Make ``job`` look like a worker took it and was killed ``minutes_ago``."""
    then = timezone.now() - datetime.timedelta(minutes=minutes_ago)
    FileImport.objects.filter(pk=job.pk).update(
        status=FileImport.Status.RUNNING, started_at=then, heartbeat_at=then, attempts=1
    )
    return FileImport.objects.get(pk=job.pk)


def _urls(coll, job):
    api = f"/api/v1/collections/{coll.slug}/imports/{job.pk}/"
    return api, api + "retry/", reverse("judging:file_import_detail", args=[coll.slug, job.pk])


def test_a_silent_running_import_is_interrupted_on_its_page_and_in_rest(setup, client):
    coll, cora, _ = setup
    job = _killed(_queued(coll, cora))
    api, _, page = _urls(coll, job)
    body = client_for(cora).get(api).json()
    assert body["status"] == "interrupted"
    assert body["attempts"] == 1 and body["heartbeat_at"] is not None
    client.force_login(cora)
    html = client.get(page).content.decode()
    assert f"Import {job.pk}: Interrupted" in html
    assert "data-import-interrupted" in html and "Retry the import" in html
    assert 'http-equiv="refresh"' not in html  # nothing left to wait for


def test_a_running_import_that_beats_is_running(setup, client, settings):
    coll, cora, _ = setup
    job = _killed(_queued(coll, cora), minutes_ago=10)
    cache.set(job.heartbeat_key, timezone.now())  # its heartbeat thread wrote the cache
    api = _urls(coll, job)[0]
    assert client_for(cora).get(api).json()["status"] == "running"
    fresh = _killed(_queued(coll, cora), minutes_ago=0.5)  # silent, but not for long
    assert client_for(cora).get(_urls(coll, fresh)[0]).json()["status"] == "running"
    settings.GRADED_IMPORT_STALE_SECONDS = 10
    assert client_for(cora).get(_urls(coll, fresh)[0]).json()["status"] == "interrupted"


def test_a_retry_over_rest_completes_the_import_exactly_once(
    setup, django_capture_on_commit_callbacks
):
    coll, cora, _ = setup
    job = _killed(_queued(coll, cora))
    api, retry, _ = _urls(coll, job)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(cora).post(retry)
    assert response.status_code == 202, response.json()
    assert response["Location"].endswith(api)
    assert response.json()["status"] == "queued"  # the worker runs after the commit
    body = client_for(cora).get(api).json()
    assert (body["status"], body["attempts"]) == ("done", 2)
    assert body["report"] == ["judgments: 3 new, 0 changed, 0 unchanged"]
    assert Judgment.objects.filter(collection=coll).count() == 3
    assert JudgmentEvent.objects.filter(collection=coll).count() == 3
    again = client_for(cora).post(retry)
    assert again.status_code == 400
    assert "this one is done" in errors_of(again)[0]["message"]
    assert Judgment.objects.filter(collection=coll).count() == 3


def test_a_retry_on_the_page_completes_it(setup, client, django_capture_on_commit_callbacks):
    coll, cora, _ = setup
    job = _killed(_queued(coll, cora))
    client.force_login(cora)
    url = reverse("judging:file_import_retry", args=[coll.slug, job.pk])
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(url)
    assert response.status_code == 303
    page = client.get(response["Location"]).content.decode()
    assert f"Import {job.pk}: Done" in page and "is queued again" in page
    assert Judgment.objects.filter(collection=coll).count() == 3


def test_only_an_interrupted_import_can_be_retried_and_only_by_a_coordinator(setup, client):
    coll, cora, judy = setup
    queued = _queued(coll, cora)
    response = client_for(cora).post(_urls(coll, queued)[1])
    assert response.status_code == 400 and "this one is queued" in errors_of(response)[0]["message"]
    killed = _killed(_queued(coll, cora))
    assert client_for(judy).post(_urls(coll, killed)[1]).status_code in (403, 404)
    client.force_login(judy)
    url = reverse("judging:file_import_retry", args=[coll.slug, killed.pk])
    assert client.post(url).status_code in (403, 404)
    assert FileImport.objects.get(pk=killed.pk).status == FileImport.Status.RUNNING


def test_an_interrupted_import_whose_files_are_gone_fails_saying_so(setup):
    coll, cora, _ = setup
    job = _killed(_queued(coll, cora))
    (services_files.imports_dir() / str(job.pk) / "judgments").unlink()
    response = client_for(cora).post(_urls(coll, job)[1])
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "failed" and "files are gone (judgments)" in body["problems"][0]
    assert not Judgment.objects.exists()


def test_a_worker_killed_mid_import_writes_nothing_and_the_retry_does_it_once(
    setup, monkeypatch, settings, django_capture_on_commit_callbacks
):
    """The worker dies after writing half the labels (a signal: no ``except`` runs)."""
    coll, cora, _ = setup
    job = _queued(coll, cora)
    real = services_files.collection_files_import

    def dies_halfway(**kwargs):
        real(**kwargs)  # every label written (in the import's transaction) ...
        assert Judgment.objects.filter(collection=coll).count() == 3
        raise KeyboardInterrupt  # ... then the process is killed

    monkeypatch.setattr(services_files, "collection_files_import", dies_halfway)
    with pytest.raises(KeyboardInterrupt):
        services_files.file_import_run(import_id=job.pk)
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()
    job.refresh_from_db()
    assert (job.status, job.attempts, job.finished_at) == ("running", 1, None)
    assert (services_files.imports_dir() / str(job.pk) / "judgments").is_file()

    monkeypatch.setattr(services_files, "collection_files_import", real)
    settings.GRADED_IMPORT_STALE_SECONDS = 0  # time passes: no heartbeat since
    cache.delete(job.heartbeat_key)
    FileImport.objects.filter(pk=job.pk).update(
        heartbeat_at=timezone.now() - datetime.timedelta(seconds=5),
        started_at=timezone.now() - datetime.timedelta(seconds=5),
    )
    assert client_for(cora).get(_urls(coll, job)[0]).json()["status"] == "interrupted"
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(cora).post(_urls(coll, job)[1])
    assert response.status_code == 202
    assert client_for(cora).get(_urls(coll, job)[0]).json()["status"] == "done"
    assert Judgment.objects.filter(collection=coll).count() == 3
    assert not (services_files.imports_dir() / str(job.pk)).exists()


def test_a_superseded_worker_writes_nothing(setup, monkeypatch):
    """The silent worker was alive after all: a retry started attempt 2 while it ran."""
    coll, cora, _ = setup
    job = _queued(coll, cora)
    real = services_files.collection_files_import

    def taken_over(**kwargs):
        result = real(**kwargs)
        FileImport.objects.filter(pk=job.pk).update(attempts=2)  # retried and claimed again
        return result

    monkeypatch.setattr(services_files, "collection_files_import", taken_over)
    services_files.file_import_run(import_id=job.pk)
    job.refresh_from_db()
    # One connection here, so the takeover rolled back with the import; a real retry is
    # committed by another request, and attempt 2's worker then owns the row.
    assert (job.status, job.attempts, job.finished_at) == ("running", 1, None)
    assert not Judgment.objects.exists() and not JudgmentEvent.objects.exists()
    assert (services_files.imports_dir() / str(job.pk) / "judgments").is_file()  # attempt 2's


def test_the_worker_beats_while_it_imports(setup, monkeypatch, settings):
    coll, cora, _ = setup
    settings.GRADED_IMPORT_HEARTBEAT_SECONDS = 0.02
    job = _queued(coll, cora)
    real = services_files.collection_files_import
    seen: list[datetime.datetime] = []

    def slow(**kwargs):
        start = timezone.now()
        time.sleep(0.3)
        seen.append(cache.get(job.heartbeat_key))
        assert seen[-1] is not None and seen[-1] > start
        assert any(t.name.endswith("-heartbeat") for t in threading.enumerate())
        return real(**kwargs)

    monkeypatch.setattr(services_files, "collection_files_import", slow)
    done = services_files.file_import_run(import_id=job.pk)
    assert done.status == "done" and seen
    assert cache.get(job.heartbeat_key) is None  # cleared once the outcome is stored
    assert not any(t.name.endswith("-heartbeat") for t in threading.enumerate())
