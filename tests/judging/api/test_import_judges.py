"""A judge created by an import is a judge of its collection on every path (issue 45, item 7).

``manage.py import_judgments --judge NAME`` (and a REST import with ``judge_name``)
creates an *imported* judge. Adding labels to it afterwards over REST, by its id or by
its name, as a file or as judgments, records onto that same judge.
"""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from judging.lists import services as services_lists
from judging.models import Judge, Judgment
from tests import factories

pytestmark = pytest.mark.django_db
C = "/api/v1/collections/demo/"


def _command(world, tmp_path, text: str, *args: str) -> Judge:
    path = tmp_path / "labels.qrels"
    path.write_text(text)
    before = set(Judge.objects.values_list("pk", flat=True))
    call_command("import_judgments", world.coll.slug, str(path), *args)
    (made,) = Judge.objects.exclude(pk__in=before)
    return made


def _upload(api, **data):
    data["file"] = SimpleUploadedFile("more.qrels", data.pop("text").encode())
    return api("cora").post(C + "qrels/", data, format="multipart")


def _labels(judge: Judge) -> set[tuple[str, str, int]]:
    return set(
        Judgment.objects.filter(judge=judge).values_list(
            "query__external_id", "document__external_id", "grade"
        )
    )


@pytest.mark.parametrize("kind", ["human", "llm"])
def test_rest_adds_labels_to_a_judge_the_command_created(api, world, tmp_path, kind):
    judge = _command(
        world, tmp_path, "q1 0 d1 2\n", "--judge", "TREC assessors", "--judge-kind", kind
    )
    assert services_lists.is_imported_judge(judge) and judge.kind == kind
    judges = Judge.objects.count()

    by_id = _upload(api, text="q1 0 d2 3\n", judge=judge.pk)
    assert by_id.status_code == 201, by_id.content
    assert by_id.json()["judge"] == judge.pk
    by_name = _upload(api, text="q2 0 d3 1\n", judge_name="TREC assessors", judge_kind=kind)
    assert by_name.status_code == 201, by_name.content
    assert by_name.json()["judge"] == judge.pk
    one = api("cora").post(
        C + "judgments/",
        {"judge": judge.pk, "query": "q1", "document": "dx", "grade": 0},
        format="json",
    )
    assert one.status_code == 201, one.content
    batch = api("cora").post(
        C + "judgments/",
        {"judge": judge.pk, "judgments": [{"query": "q1", "document": "d1", "grade": 4}]},
        format="json",
    )
    assert batch.status_code == 200, batch.content  # changes the command's label
    assert batch.json()["changed"] == 1

    assert Judge.objects.count() == judges  # no look-alike judge
    assert _labels(judge) == {("q1", "d1", 4), ("q1", "d2", 3), ("q2", "d3", 1), ("q1", "dx", 0)}


@pytest.mark.parametrize("kind", ["human", "llm"])
def test_the_command_adds_labels_to_a_judge_rest_created(api, world, tmp_path, kind):
    made = _upload(api, text="q1 0 d1 2\n", judge_name="Offline run", judge_kind=kind)
    assert made.status_code == 201, made.content
    judge = Judge.objects.get(pk=made.json()["judge"])
    path = tmp_path / "more.qrels"
    path.write_text("q1 0 d2 1\n")
    call_command(
        "import_judgments", world.coll.slug, str(path), "--judge", "Offline run",
        "--judge-kind", kind,
    )  # fmt: skip
    call_command("import_judgments", world.coll.slug, str(path), "--judge", str(judge.pk))
    assert _labels(judge) == {("q1", "d1", 2), ("q1", "d2", 1)}
    by_id = _upload(api, text="q2 0 d3 4\n", judge=judge.pk)
    assert by_id.status_code == 201, by_id.content
    assert _labels(judge) == {("q1", "d1", 2), ("q1", "d2", 1), ("q2", "d3", 4)}


def test_an_imported_llm_judge_works_for_the_collection_it_was_imported_into(api, world, tmp_path):
    judge = _command(
        world, tmp_path, "q1 0 d1 2\n", "--judge", "gpt-offline", "--judge-kind", "llm"
    )
    assert list(judge.collections.values_list("slug", flat=True)) == ["demo"]
    listed = api("cora").get("/api/v1/judges/", {"kind": "llm"}).json()["results"]
    assert [(j["name"], j["collections"]) for j in listed] == [("gpt-offline", ["demo"])]


def test_an_imported_judge_of_another_collection_stays_refused(api, world, tmp_path):
    """Otto's collection imported 'TREC assessors': cora cannot record as it in hers."""
    path = tmp_path / "o.qrels"
    coll = factories.collection("other-c")
    query, document = factories.query(coll, "oq"), factories.document(coll, "od")
    factories.pool_entry(coll, query, document)
    path.write_text("oq 0 od 1\n")
    call_command(
        "import_judgments", coll.slug, str(path), "--judge", "Far away", "--judge-kind", "llm"
    )
    other = Judge.objects.get(name="Far away")
    refused = _upload(api, text="q1 0 d1 2\n", judge=other.pk)
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["field"] == "judge"
    assert not Judgment.objects.filter(judge=other, collection=world.coll).exists()
