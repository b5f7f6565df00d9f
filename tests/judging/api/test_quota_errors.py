"""A judge's quota refusal says it is a quota, which one, what is left, and that it never
resets — over REST (one label, a batch, a file, a background import) and on the pages
(the card, its "done" state, the edit page, undo) (issue 45, item 7).
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from judging import services
from judging.adjudication import services as services_adjudication
from judging.models import Judgment, PoolEntry
from judging.selectors import pair_ref
from tests.api_client import errors_of

C = "/api/v1/collections/demo/"


def _quota(world, name: str, quota: int | None):
    judge = services.judge_for_user(user=world.users[name])
    services_adjudication.judge_quota_set(collection=world.coll, judge=judge, quota=quota)
    return judge


def _says_quota(message: str, *, limit: int, judged: int, left: int, asked: int) -> None:
    """The message names the quota, its collection, its numbers and that it does not reset."""
    assert message.startswith("Quota reached: judy's judging quota in Demo is ")
    assert f"is {limit} pair" in message and f"{judged} pair" in message
    assert f"{left} left" in message and f"would add {asked}" in message
    assert "does not reset" in message and "raise the quota" in message


def _error(response, *, limit: int, judged: int, left: int, asked: int) -> dict:
    assert response.status_code == 403, response.content
    (error,) = errors_of(response)
    assert error["code"] == "quota_reached"
    assert error["quota"] == {
        "name": "judge",
        "limit": limit,
        "judged": judged,
        "left": left,
        "asked": asked,
        "resets_at": None,
    }
    _says_quota(error["message"], limit=limit, judged=judged, left=left, asked=asked)
    return error


@pytest.mark.django_db
def test_one_label_past_the_quota(api, world):
    judy = _quota(world, "judy", 1)
    one = {"query": "q1", "document": "d1", "grade": 2}
    assert api("judy").post(C + "judgments/", one, format="json").status_code == 201
    refused = api("judy").post(C + "judgments/", {**one, "document": "d2"}, format="json")
    _error(refused, limit=1, judged=1, left=0, asked=1)
    assert not Judgment.objects.filter(judge=judy, document__external_id="d2").exists()


@pytest.mark.django_db
def test_a_batch_and_a_file_past_the_quota_say_how_many_are_left(api, world):
    judy = _quota(world, "judy", 2)
    api("judy").post(C + "judgments/", {"query": "q1", "document": "d1", "grade": 2}, format="json")
    items = [{"query": "q1", "document": d, "grade": 1} for d in ("d2", "dx")]
    items.append({"query": "q2", "document": "d3", "grade": 0})
    batch = api("judy").post(C + "judgments/", {"judgments": items}, format="json")
    _error(batch, limit=2, judged=1, left=1, asked=3)
    upload = SimpleUploadedFile("mine.qrels", b"q1 0 d2 1\nq2 0 d3 0\n")
    filed = api("judy").post(C + "judgments/", {"file": upload}, format="multipart")
    _error(filed, limit=2, judged=1, left=1, asked=2)
    assert Judgment.objects.filter(judge=judy).count() == 1


@pytest.mark.django_db
def test_a_coordinator_importing_as_the_judge_gets_the_same_answer(api, world):
    judy = _quota(world, "judy", 0)
    upload = SimpleUploadedFile("judy.qrels", b"q1 0 d1 1\n")
    response = api("cora").post(
        C + "qrels/", {"file": upload, "judge": judy.pk}, format="multipart"
    )
    _error(response, limit=0, judged=0, left=0, asked=1)


@pytest.mark.django_db(transaction=True)
def test_a_background_import_past_the_quota_is_refused_saying_so(api, world, settings, tmp_path):
    settings.GRADED_BACKGROUND_IMPORT_BYTES = 10
    settings.MEDIA_ROOT = tmp_path
    _quota(world, "judy", 1)
    upload = SimpleUploadedFile("mine.qrels", b"q1 0 d1 2\nq2 0 d3 4\n")
    response = api("judy").post(C + "judgments/", {"file": upload}, format="multipart")
    assert response.status_code == 202
    job = api("judy").get(response["Location"]).json()
    assert job["status"] == "refused", job  # not "failed ... unexpectedly"
    (error,) = job["errors"]
    assert error["code"] == "quota_reached" and error["quota"]["asked"] == 2
    _says_quota(error["message"], limit=1, judged=0, left=1, asked=2)
    assert job["problems"] == [error["message"]]
    assert not Judgment.objects.exists()


def _page(world, name: str) -> Client:
    client = Client()
    client.force_login(world.users[name])
    return client


@pytest.mark.django_db
def test_the_card_says_the_quota_is_reached_instead_of_all_done(world):
    judy = _quota(world, "judy", 1)
    page = _page(world, "judy")
    entry = PoolEntry.objects.get(query__external_id="q1", document__external_id="d1")
    saved = page.post(f"/c/demo/judge/{pair_ref(entry.pk)}/", {"grade": "2"})
    assert saved.status_code == 303
    done = page.get("/c/demo/judge/").content.decode()
    assert "Quota reached" in done and "All done" not in done
    assert "judged 1 pair in Demo" in done and "quota here is 1" in done
    assert "does not reset" in done
    # Without a quota the same state is "All done".
    _quota(world, "judy", None)
    for other in PoolEntry.objects.exclude(pk=entry.pk):
        services.judgment_record(judge=judy, query=other.query, document=other.document, grade=1)
    assert "All done" in page.get("/c/demo/judge/").content.decode()


@pytest.mark.django_db
def test_a_card_posted_past_the_quota_is_a_403_that_says_so(world):
    judy = _quota(world, "judy", 1)
    services.judgment_record(
        judge=judy, query=world.queries["q1"], document=world.docs["d1"], grade=2
    )
    entry = PoolEntry.objects.get(query__external_id="q1", document__external_id="d2")
    response = _page(world, "judy").post(f"/c/demo/judge/{pair_ref(entry.pk)}/", {"grade": "3"})
    assert response.status_code == 403
    html = response.content.decode()
    assert "Quota reached: judy&#x27;s judging quota in Demo is 1 pair" in html
    assert "Not for your role" not in html  # the card, with the reason, not the role page
    assert not Judgment.objects.filter(judge=judy, document=world.docs["d2"]).exists()


@pytest.mark.django_db
def test_the_edit_page_and_undo_say_so_too(world):
    judy = _quota(world, "judy", None)
    page = _page(world, "judy")
    later = services.judgment_record(
        judge=judy, query=world.queries["q1"], document=world.docs["d1"], status="later"
    )
    services.judgment_record(
        judge=judy, query=world.queries["q2"], document=world.docs["d3"], grade=1
    )
    _quota(world, "judy", 1)
    edit = page.post(f"/c/demo/judgments/{later.pk}/edit/", {"status": "graded", "grade": "3"})
    assert edit.status_code == 400
    assert "Quota reached" in edit.content.decode()
    later.refresh_from_db()
    assert later.status == "later"
    # Undo: judy's last browser change took a final label back to "later"; undoing it
    # would make it final again, past the quota.
    _quota(world, "judy", None)
    entry = PoolEntry.objects.get(query__external_id="q2", document__external_id="d3")
    page.post(f"/c/demo/judge/{pair_ref(entry.pk)}/", {"status": "later"})
    _quota(world, "judy", 0)
    undone = page.post("/c/demo/judge/undo/", follow=True)
    assert "Not undone. Quota reached" in undone.content.decode()
    assert Judgment.objects.get(judge=judy, document=world.docs["d3"]).status == "later"


@pytest.mark.django_db
def test_the_schema_documents_the_code_and_the_numbers(api, world):
    schema = api("cora").get("/api/v1/schema/", {"format": "json"}).json()
    item = schema["components"]["schemas"]["ErrorItem"]["properties"]
    assert "quota_reached" in item["code"]["description"]
    quota = schema["components"]["schemas"]["QuotaError"]["properties"]
    assert set(quota) == {"name", "limit", "judged", "left", "asked", "resets_at"}
