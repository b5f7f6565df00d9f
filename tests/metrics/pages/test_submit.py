"""Submitting a run through the upload form: the real service, errors by line, access."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from judging.models import PoolEntry
from metrics.models import Run
from tests import factories
from tests.metrics import pages_factories as pf

pytestmark = pytest.mark.django_db

GOOD = b"q1 Q0 d1 1 2.0 new-run\nq1 Q0 d2 2 1.0 new-run\nq2 Q0 d3 1 1.0 new-run\n"


@pytest.fixture
def graded(world, settings, tmp_path):
    """Give q1 and q2 documents with live grades, so that submitted runs get scores."""
    settings.MEDIA_ROOT = tmp_path
    docs = {name: factories.document(world.coll, name) for name in ("d1", "d2", "d3")}
    pf.live_grades(world.coll, world.queries[0], {docs["d1"]: 2.0, docs["d2"]: 0.0})
    pf.live_grades(world.coll, world.queries[1], {docs["d3"]: 1.0})
    return docs


def url(world) -> str:
    return reverse("metrics:run_create", args=[world.coll.slug])


def upload(content: bytes, name: str = "run.txt") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="text/plain")


def test_form_for_a_one_team_member(world):
    response = world.client("alice").get(url(world))
    assert response.status_code == 200
    html = response.content.decode()
    assert "Submitting for team <strong>Team A</strong>" in html
    assert 'name="team"' not in html
    assert 'enctype="multipart/form-data"' in html
    assert "data-drop-zone" in html and "metrics/upload.js" in html
    assert "<progress" in html


def test_form_offers_a_choice_of_teams(world):
    world.team_b.members.add(world.users["alice"])
    html = world.client("alice").get(url(world)).content.decode()
    assert '<select name="team"' in html
    assert "Team A" in html and "Team B" in html


@pytest.mark.parametrize(("who", "status"), [("judy", 403), ("stranger", 404)])
def test_only_team_members_may_submit(world, who, status):
    assert world.client(who).get(url(world)).status_code == status


def test_a_coordinator_without_a_team_is_told_how_to_submit_and_cannot(world):
    """No debug 404 (issue 41): the page says who submits runs; a POST writes nothing."""
    client = world.client("coord")
    response = client.get(url(world))
    assert response.status_code == 200
    html = response.content.decode()
    assert "data-no-team" in html and "you are not in a team of this collection" in html
    assert 'type="file"' not in html
    response = client.post(url(world), {"tag": "sneaky", "file": upload(GOOD)})
    assert response.status_code == 403
    assert not Run.objects.filter(tag="sneaky").exists()


def test_successful_upload_redirects_to_the_scored_run(world, graded):
    client = world.client("alice")
    response = client.post(
        url(world), {"tag": "new-run", "description": "BM25", "file": upload(GOOD)}
    )
    run = Run.objects.get(tag="new-run")
    assert response.status_code == 303
    assert response["Location"] == reverse("metrics:run_detail", args=[world.coll.slug, run.pk])
    assert run.team == world.team_a
    assert run.submitted_by == world.users["alice"]
    assert run.description == "BM25"
    assert run.status == Run.Status.SCORED
    assert run.scores[pf.NDCG10] is not None
    page = client.get(response["Location"]).content.decode()
    assert "Run new-run was submitted and scored." in page
    # Every document of its top 10 has a live grade: nothing joined the pool.
    assert "It added 0 new pairs to the judges&#x27; pool" in page
    assert not PoolEntry.objects.filter(collection=world.coll).exists()
    other = client.post(url(world), {"tag": "other", "file": upload(b"q1 Q0 d9 1 1 x\n")})
    assert (
        "It added 1 new pair to the judges&#x27; pool"
        in client.get(other["Location"]).content.decode()
    )
    assert PoolEntry.objects.filter(collection=world.coll).count() == 1
    board = client.get(reverse("metrics:leaderboard", args=[world.coll.slug])).content.decode()
    assert 'data-run="new-run"' in board


def test_xhr_upload_answers_201_with_the_run_page(world, graded):
    response = world.client("alice").post(
        url(world),
        {"tag": "xhr-run", "file": upload(GOOD)},
        headers={"X-Requested-With": "XMLHttpRequest"},
    )
    run = Run.objects.get(tag="xhr-run")
    assert response.status_code == 201
    assert response["Location"] == reverse("metrics:run_detail", args=[world.coll.slug, run.pk])


def test_chosen_team_is_used(world, graded):
    world.team_b.members.add(world.users["alice"])
    response = world.client("alice").post(
        url(world), {"tag": "for-b", "team": world.team_b.pk, "file": upload(GOOD)}
    )
    assert response.status_code == 303
    assert Run.objects.get(tag="for-b").team == world.team_b
    foreign = pf.team(world.coll, "Team C")
    response = world.client("alice").post(
        url(world), {"tag": "for-c", "team": foreign.pk, "file": upload(GOOD)}
    )
    assert response.status_code == 400
    assert "Select a valid choice" in response.content.decode()


def test_rejected_run_lists_problems_with_line_numbers(world, graded):
    bad = b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\nq1 Q0 d3\nq2 Q0 d1 1 x r\n"
    response = world.client("alice").post(url(world), {"tag": "bad", "file": upload(bad)})
    assert response.status_code == 400
    html = response.content.decode()
    assert "The run was not accepted" in html
    assert "Line 3: expected 6 columns" in html
    assert "Line 4: score &#x27;x&#x27; is not a number" in html
    assert not Run.objects.filter(tag="bad").exists()


def test_a_json_array_repeating_a_pair_names_the_item(world, graded):
    content = b'[{"qid":"q1","docno":"d1","score":1},{"qid":"q1","docno":"d1","score":2}]'
    response = world.client("alice").post(url(world), {"tag": "js", "file": upload(content)})
    assert response.status_code == 400
    assert "Item 2 (line 1): docno d1 repeated for query q1 (first as item 1)" in (
        response.content.decode()
    )
    assert not Run.objects.filter(tag="js").exists()


def test_unknown_query_is_reported_with_its_line(world, graded):
    content = b"q1 Q0 d1 1 2.0 r\nq99 Q0 d1 1 1.0 r\n"
    response = world.client("alice").post(url(world), {"tag": "unk", "file": upload(content)})
    assert response.status_code == 400
    assert "Line 2: query &#x27;q99&#x27; is not in the collection" in response.content.decode()


def test_tag_reuse_is_refused_on_the_tag_field(world, graded):
    response = world.client("alice").post(url(world), {"tag": "a-bm25", "file": upload(GOOD)})
    assert response.status_code == 400
    assert "Tag: Tag &#x27;a-bm25&#x27; is already used" in response.content.decode()


def test_missing_file_and_tag(world):
    response = world.client("alice").post(url(world), {})
    assert response.status_code == 400
    html = response.content.decode()
    assert html.count("This field is required.") == 2


@override_settings(GRADED_RUN_MAX_BYTES=10)
def test_file_over_the_limit(world, graded):
    response = world.client("alice").post(url(world), {"tag": "big", "file": upload(GOOD)})
    assert response.status_code == 400
    assert "the limit is 10" in response.content.decode()


def test_every_problem_of_a_file_in_one_round(world, graded):
    """Format errors, unknown queries (on readable lines) and a used tag come together."""
    bad = (
        b"q1 Q0 d1 1 2.0 r\n"
        b"q1 Q0 d3\n"  # line 2: columns
        b"q98 Q0 d1 1 1.0 r\n"  # line 3: unknown query
        b"q2 Q0 d1 1 x r\n"  # line 4: score
        b"q99 Q0 d2 1 1.0 r\n"  # line 5: unknown query
    )
    response = world.client("alice").post(url(world), {"tag": "a-bm25", "file": upload(bad)})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Tag &#x27;a-bm25&#x27; is already used" in html
    found = [
        html.index(text)
        for text in (
            "Line 2: expected 6 columns",
            "Line 3: query &#x27;q98&#x27; is not in the collection",
            "Line 4: score &#x27;x&#x27; is not a number",
            "Line 5: query &#x27;q99&#x27; is not in the collection",
        )
    ]
    assert found == sorted(found)
    assert html.count("is not in the collection") == 2  # malformed line 2 is not misread
    assert Run.objects.filter(tag="a-bm25").count() == 1


def test_json_lines_unknown_queries_reported_with_format_errors(world, graded):
    bad = (
        b'{"qid": "q1", "docno": "d1", "score": 1}\n'
        b'{"qid": "q77", "docno": "d1", "score": 1}\n'
        b'{"qid": "q1"\n'
    )
    response = world.client("alice").post(url(world), {"tag": "jsonl", "file": upload(bad)})
    assert response.status_code == 400
    html = response.content.decode()
    assert "Line 2: query &#x27;q77&#x27; is not in the collection" in html
    assert "Line 3:" in html
