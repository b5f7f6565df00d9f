"""Who may see and change runs, scores, the leaderboard and teams."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from metrics.models import Run
from metrics.visibility.services import score_visibility_update
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db


def urls_of(world, run) -> dict[str, str]:
    slug = world.coll.slug
    return {
        "detail": reverse("metrics-api:run-detail", args=[slug, run.pk]),
        "scores": reverse("metrics-api:run-scores", args=[slug, run.pk]),
    }


def collection_urls(world) -> list[str]:
    slug = world.coll.slug
    return [
        reverse("metrics-api:run-list", args=[slug]),
        reverse("metrics-api:leaderboard", args=[slug]),
        reverse("metrics-api:team-list", args=[slug]),
    ]


def publish(world) -> None:
    world.coll.leaderboard_published = True
    world.coll.save(update_fields=["leaderboard_published"])


def tags_listed(client, world) -> set[str]:
    body = client.get(reverse("metrics-api:run-list", args=[world.coll.slug])).json()
    return {r["tag"] for r in body["results"]}


def leaderboard_tags(client, world) -> list[str]:
    body = client.get(reverse("metrics-api:leaderboard", args=[world.coll.slug])).json()
    return [row["run"] for row in body["rows"]]


# --- teams among themselves --------------------------------------------------------------


def test_unpublished_other_teams_runs_are_404(world, api, runs):
    alice = api("alice")
    urls = urls_of(world, runs["beta"])
    for url in urls.values():
        response = alice.get(url)
        assert response.status_code == 404, url
        errors_of(response)
    assert alice.patch(urls["detail"], {"tag": "x"}, format="json").status_code == 404
    assert alice.delete(urls["detail"]).status_code == 404
    assert Run.objects.get(pk=runs["beta"].pk).tag == "beta-dense"
    assert tags_listed(alice, world) == {"alpha-bm25"}
    assert leaderboard_tags(alice, world) == ["alpha-bm25"]


def test_team_mates_share_their_runs(world, api, runs):
    amy = api("amy")
    urls = urls_of(world, runs["alpha"])
    assert amy.get(urls["detail"]).status_code == 200
    assert amy.get(urls["scores"]).status_code == 200
    assert amy.patch(urls["detail"], {"description": "x"}, format="json").status_code == 200


def test_published_runs_are_readable_but_not_changeable_by_other_teams(world, api, runs):
    publish(world)
    # Means for teams before the judgments are published, so the board has an order.
    score_visibility_update(collection=world.coll, mode="aggregate", min_queries=1)
    alice = api("alice")
    urls = urls_of(world, runs["beta"])
    assert alice.get(urls["detail"]).status_code == 200
    assert alice.get(urls["scores"]).status_code == 200
    assert tags_listed(alice, world) == {"alpha-bm25", "beta-dense"}
    assert leaderboard_tags(alice, world) == ["alpha-bm25", "beta-dense"]
    response = alice.patch(urls["detail"], {"tag": "stolen"}, format="json")
    assert response.status_code == 404
    errors_of(response)
    assert alice.delete(urls["detail"]).status_code == 404
    beta = Run.objects.get(pk=runs["beta"].pk)
    assert beta.tag == "beta-dense"


def test_team_role_without_a_team_sees_nothing(world, api, runs):
    publish(world)
    tess = api("tess")
    assert tags_listed(tess, world) == set()
    assert leaderboard_tags(tess, world) == []
    assert tess.get(urls_of(world, runs["alpha"])["detail"]).status_code == 404
    assert tess.get(reverse("metrics-api:team-list", args=[world.coll.slug])).json() == []


# --- judges, outsiders, anonymous --------------------------------------------------------


@pytest.mark.parametrize("published", [False, True])
def test_judges_see_no_runs_and_no_leaderboard(world, api, runs, published):
    if published:
        publish(world)
    judy = api("judy")
    for url in [*collection_urls(world), *urls_of(world, runs["alpha"]).values()]:
        response = judy.get(url)
        assert response.status_code == 403, url
        errors_of(response)
    response = judy.delete(urls_of(world, runs["alpha"])["detail"])
    assert response.status_code == 403
    assert Run.objects.filter(pk=runs["alpha"].pk).exists()


def test_non_members_get_404(world, api, runs):
    otto = api("otto")
    for url in [*collection_urls(world), *urls_of(world, runs["alpha"]).values()]:
        response = otto.get(url)
        assert response.status_code == 404, url
        errors_of(response)


def test_anonymous_gets_401(world, api, runs):
    anonymous = api(None)
    for url in [*collection_urls(world), *urls_of(world, runs["alpha"]).values()]:
        response = anonymous.get(url)
        assert response.status_code == 401, url
        assert errors_of(response)[0]["message"]
    response = anonymous.post(reverse("metrics-api:run-list", args=[world.coll.slug]), {"tag": "x"})
    assert response.status_code == 401


def test_bad_token_gets_401(world, runs):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    response = client.get(reverse("metrics-api:run-list", args=[world.coll.slug]))
    assert response.status_code == 401
    errors_of(response)


# --- coordinators ------------------------------------------------------------------------


def test_coordinators_see_and_manage_every_run(world, api, runs):
    cora = api("cora")
    assert tags_listed(cora, world) == {"alpha-bm25", "beta-dense"}
    assert leaderboard_tags(cora, world) == ["alpha-bm25", "beta-dense"]
    urls = urls_of(world, runs["beta"])
    assert cora.get(urls["scores"]).status_code == 200
    response = cora.patch(urls["detail"], {"tag": "beta-renamed"}, format="json")
    assert response.status_code == 200
    assert cora.delete(urls_of(world, runs["alpha"])["detail"]).status_code == 204
    assert list(Run.objects.values_list("tag", flat=True)) == ["beta-renamed"]


def test_superusers_act_as_coordinators(world, runs):
    root = factories.user("root", is_superuser=True, is_staff=True)
    client = client_for(root)
    assert tags_listed(client, world) == {"alpha-bm25", "beta-dense"}
