"""Graded's own Quepid book, with human and LLM raters, imports back (issue 45, item 7).

A book exported from a collection whose labels come from two people and an LLM judge is
imported into a fresh collection: every label comes back as it was, each on the judge who
gave it when that judge serves the fresh collection, else on an imported judge of the
same name and kind (the LLM rater an LLM judge, not a person). Into the same collection,
both the JSON book and its csv import back onto the same judges with nothing changed.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from judging import services
from judging.lists import services as services_lists
from judging.models import Judge, Judgment, Membership
from tests import factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def rated(world):
    """demo: labels of judy (with an e-mail), jim and the LLM judge gpt (with explanations)."""
    world.users["judy"].email = "judy@example.org"
    world.users["judy"].save()
    gpt = factories.llm_judge("gpt")
    gpt.collections.add(world.coll)
    judy = services.judge_for_user(user=world.users["judy"])
    jim = services.judge_for_user(user=world.users["jim"])
    q, d = world.queries, world.docs
    for judge, qid, docno, grade, note in [
        (judy, "q1", "d1", 3, ""),
        (jim, "q1", "d1", 1, "only the title matches"),
        (gpt, "q1", "d1", 2, "Partly answers the need."),
        (gpt, "q1", "d2", 0, "Off topic."),
        (judy, "q2", "d3", 4, ""),
    ]:
        services.judgment_record(
            judge=judge, query=q[qid], document=d[docno], grade=grade, note=note
        )
    services.judgment_record(
        judge=jim, query=q["q2"], document=d["d3"], grade=None, status="cannot_judge"
    )
    world.judges = {"judy": judy, "jim": jim, "gpt": gpt}
    return world


def _export(api, slug: str, fmt: str) -> bytes:
    response = api("cora").get(
        f"/api/v1/collections/{slug}/qrels/", {"format": fmt, "labels": "raw"}
    )
    assert response.status_code == 200
    return b"".join(response.streaming_content)


def _import(api, slug: str, book: bytes, fmt: str):
    name = "demo.quepid-book." + ("csv" if fmt == "quepid_csv" else "json")
    return api("cora").post(
        f"/api/v1/collections/{slug}/qrels/",
        {"file": SimpleUploadedFile(name, book), "judge_name": "quepid raters"},
        format="multipart",
    )


def _labels(slug: str) -> set[tuple]:
    """Every label of a collection: pair, judge (name, kind), grade, status, note."""
    return set(
        Judgment.objects.filter(collection__slug=slug).values_list(
            "query__external_id",
            "document__external_id",
            "judge__name",
            "judge__kind",
            "grade",
            "status",
            "note",
        )
    )


def _fresh(world, *, serve: bool):
    """A collection with demo's queries and documents; ``serve``: the same judges work there."""
    fresh = factories.collection("fresh")
    for qid, query in world.queries.items():
        factories.query(fresh, qid, text=query.text)
    for docno in world.docs:
        factories.document(fresh, docno)
    factories.member(fresh, world.users["cora"], Role.COORDINATOR)
    if serve:
        factories.member(fresh, world.users["judy"], Role.JUDGE)
        factories.member(fresh, world.users["jim"], Role.JUDGE)
        world.judges["gpt"].collections.add(fresh)
    return fresh


def test_the_book_says_which_raters_are_llm_judges(api, rated):
    book = json.loads(_export(api, "demo", "quepid"))
    assert book["graded_raters"] == {
        "gpt": {"kind": "llm"},
        "jim": {"kind": "human"},
        "judy@example.org": {"kind": "human"},
    }
    assert set(book) >= {"name", "scale", "scale_with_labels", "query_doc_pairs"}


def test_into_a_fresh_collection_served_by_the_same_judges(api, rated):
    _fresh(rated, serve=True)
    judges = Judge.objects.count()
    response = _import(api, "fresh", _export(api, "demo", "quepid"), "quepid")
    assert response.status_code == 201, response.content
    assert sorted(response.json()["judges"]) == sorted(j.pk for j in rated.judges.values())
    assert Judge.objects.count() == judges  # no look-alike
    assert _labels("fresh") == _labels("demo")
    by_judge = {
        (judge_id, kind)
        for judge_id, kind in Judgment.objects.filter(collection__slug="fresh").values_list(
            "judge_id", "judge__kind"
        )
    }
    assert by_judge == {(j.pk, j.kind) for j in rated.judges.values()}


def test_into_a_fresh_collection_nobody_serves_the_llm_rater_stays_an_llm(api, rated):
    _fresh(rated, serve=False)
    response = _import(api, "fresh", _export(api, "demo", "quepid"), "quepid")
    assert response.status_code == 201, response.content
    made = Judge.objects.filter(pk__in=response.json()["judges"])
    assert sorted((j.name, j.kind) for j in made) == [
        ("gpt", "llm"),
        ("jim", "human"),
        ("judy@example.org", "human"),
    ]
    assert all(services_lists.is_imported_judge(j) for j in made)
    rename = {"judy@example.org": "judy"}
    got = {(q, d, rename.get(n, n), k, g, s, note) for q, d, n, k, g, s, note in _labels("fresh")}
    assert got == _labels("demo")
    # The imported LLM judge works for the fresh collection (and can take more labels by id).
    gpt = made.get(name="gpt")
    assert list(gpt.collections.values_list("slug", flat=True)) == ["fresh"]


@pytest.mark.parametrize("fmt", ["quepid", "quepid_csv"])
def test_into_the_same_collection_nothing_changes(api, rated, fmt):
    before, judges = _labels("demo"), Judge.objects.count()
    response = _import(api, "demo", _export(api, "demo", fmt), fmt)
    assert response.status_code == 200, response.content
    body = response.json()
    assert sorted(body["judges"]) == sorted(j.pk for j in rated.judges.values())
    if fmt == "quepid":
        assert (body["created"], body["changed"], body["unchanged"]) == (0, 0, 6)
        assert _labels("demo") == before
    else:  # a csv holds grades only: notes are cleared, "cannot judge" is not in it
        assert (body["created"], body["unchanged"]) == (0, 5 - body["changed"])
    assert Judge.objects.count() == judges


def test_a_book_kind_that_contradicts_the_collection_is_refused(api, rated):
    book = json.loads(_export(api, "demo", "quepid"))
    book["graded_raters"]["gpt"] = {"kind": "human"}
    response = _import(api, "demo", json.dumps(book).encode(), "quepid")
    assert response.status_code == 400
    assert "gpt" in response.json()["errors"][0]["message"]
    book["graded_raters"]["gpt"] = {"kind": "robot"}
    response = _import(api, "demo", json.dumps(book).encode(), "quepid")
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["field"] == "graded_raters.gpt.kind"
