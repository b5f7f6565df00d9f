"""The per-team submission budget: runs per day, deleted runs counted, browser and REST alike."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from judging.models import Membership
from metrics import services
from metrics.models import Run
from metrics.visibility.models import Submission
from metrics.visibility.services import BudgetExhausted, score_visibility_update
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def world(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("budget")
    factories.query(coll, "q1")
    factories.document(coll, "d1")
    users = {name: factories.user(name) for name in ("cora", "alice", "amy", "bob")}
    factories.member(coll, users["cora"], Role.COORDINATOR)
    alpha = metrics_factories.team(coll, "Alpha", [users["alice"], users["amy"]])
    beta = metrics_factories.team(coll, "Beta", [users["bob"]])
    return coll, users, alpha, beta


def post(coll, user, tag: str):
    return client_for(user).post(
        f"/api/v1/collections/{coll.slug}/runs/",
        {"tag": tag, "file": SimpleUploadedFile("r.txt", f"q1 Q0 d1 1 1.0 {tag}\n".encode())},
        format="multipart",
    )


def test_five_a_day_by_default_and_the_sixth_names_when(world):
    coll, users, alpha, _ = world
    for i in range(5):  # both members draw on their team's budget
        response = post(coll, users["alice" if i % 2 else "amy"], f"r{i}")
        assert response.status_code == 201, response.json()
    refused = post(coll, users["alice"], "r5")
    assert refused.status_code == 429
    (error,) = refused.json()["errors"]
    assert error["field"] == "budget"
    first = Submission.objects.filter(team=alpha).order_by("submitted_at").first()
    assert parse_datetime(error["next_allowed"]) == first.submitted_at + timedelta(days=1)
    assert "next submission is allowed at" in error["message"]
    assert 86_000 < int(refused["Retry-After"]) <= 86_400
    assert not Run.objects.filter(tag="r5").exists()


def test_deleted_runs_still_count(world):
    coll, users, alpha, _ = world
    score_visibility_update(collection=coll, runs_per_day=2)
    for tag in ("a", "b"):
        assert post(coll, users["alice"], tag).status_code == 201
    for run in Run.objects.filter(team=alpha):
        assert (
            client_for(users["alice"])
            .delete(f"/api/v1/collections/{coll.slug}/runs/{run.pk}/")
            .status_code
            == 204
        )
    assert not Run.objects.exists()
    assert post(coll, users["alice"], "c").status_code == 429
    # The record outlives the run (its link is cleared).
    assert list(Submission.objects.order_by("tag").values_list("tag", "run")) == [
        ("a", None),
        ("b", None),
    ]


def test_the_window_rolls_and_teams_have_their_own_budgets(world):
    coll, users, alpha, _ = world
    score_visibility_update(collection=coll, runs_per_day=1)
    assert post(coll, users["alice"], "a").status_code == 201
    assert post(coll, users["alice"], "b").status_code == 429
    assert post(coll, users["bob"], "beta").status_code == 201  # another team
    Submission.objects.filter(team=alpha).update(
        submitted_at=timezone.now() - timedelta(hours=24, seconds=1)
    )
    assert post(coll, users["alice"], "b").status_code == 201


def test_rejected_submissions_do_not_count(world):
    coll, users, _, _ = world
    score_visibility_update(collection=coll, runs_per_day=1)
    bad = client_for(users["alice"]).post(
        f"/api/v1/collections/{coll.slug}/runs/",
        {"tag": "bad", "file": SimpleUploadedFile("r.txt", b"nope Q0 d1 1 1.0 x\n")},
        format="multipart",
    )
    assert bad.status_code == 400
    assert not Submission.objects.exists()
    assert post(coll, users["alice"], "good").status_code == 201


def test_coordinators_and_scripts_submitting_for_a_team_are_not_counted(world):
    coll, users, alpha, _ = world
    score_visibility_update(collection=coll, runs_per_day=1)
    for tag, user in (("c1", users["cora"]), ("c2", users["cora"]), ("script", None)):
        run = services.run_submit(
            collection=coll,
            team=alpha,
            tag=tag,
            content=b"q1 Q0 d1 1 1.0 x\n",
            filename="r.txt",
            user=user,
        )
        assert run.pk
    assert Submission.objects.filter(counted=False).count() == 3
    assert post(coll, users["alice"], "own").status_code == 201


def test_zero_runs_per_day_stops_team_submissions(world):
    coll, users, alpha, _ = world
    score_visibility_update(collection=coll, runs_per_day=0)
    refused = post(coll, users["alice"], "a")
    assert refused.status_code == 429
    assert refused.json()["errors"][0]["next_allowed"] is None
    assert "Retry-After" not in refused
    with pytest.raises(BudgetExhausted):
        services.run_submit(
            collection=coll,
            team=alpha,
            tag="b",
            content=b"q1 Q0 d1 1 1.0 x\n",
            filename="r.txt",
            user=users["alice"],
        )


def test_the_page_refuses_with_429_and_says_when(world):
    coll, users, _, _ = world
    score_visibility_update(collection=coll, runs_per_day=1)
    client = Client()
    client.force_login(users["alice"])
    url = reverse("metrics:run_create", args=[coll.slug])

    def upload(tag: str):
        return client.post(
            url,
            {"tag": tag, "file": SimpleUploadedFile("r.txt", b"q1 Q0 d1 1 1.0 x\n")},
        )

    assert "1 of 1</strong> run left" in client.get(url).content.decode()
    assert upload("a").status_code == 303
    refused = upload("b")
    assert refused.status_code == 429
    html = refused.content.decode()
    assert "used its 1 run for the last 24 hours" in html
    assert "next submission is allowed at" in html
    assert "0 of 1</strong> run left" in html


def test_a_coordinator_without_a_team_is_told_who_submits_runs(world):
    """Not Django's 404: a page saying runs come from teams and how to submit one."""
    coll, users, _, _ = world
    client = Client()
    client.force_login(users["cora"])
    response = client.get(reverse("metrics:run_create", args=[coll.slug]))
    assert response.status_code == 200
    html = response.content.decode()
    assert "data-no-team" in html
    assert "Runs are submitted by teams" in html
    assert "This collection has 2 teams." in html
    assert 'name="file"' not in html
    # A POST changes nothing either.
    posted = client.post(
        reverse("metrics:run_create", args=[coll.slug]),
        {"tag": "x", "file": SimpleUploadedFile("r.txt", b"q1 Q0 d1 1 1.0 x\n")},
    )
    assert posted.status_code == 403 and Run.objects.count() == 0


def test_a_coordinator_in_a_team_gets_the_upload_form(world):
    coll, users, alpha, _ = world
    alpha.members.add(users["cora"])
    client = Client()
    client.force_login(users["cora"])
    response = client.get(reverse("metrics:run_create", args=[coll.slug]))
    assert response.status_code == 200 and 'name="file"' in response.content.decode()


def test_a_stranger_still_gets_404(world):
    coll, _, _, _ = world
    client = Client()
    client.force_login(factories.user("stranger"))
    assert client.get(reverse("metrics:run_create", args=[coll.slug])).status_code == 404
