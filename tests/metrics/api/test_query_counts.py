"""Run list, leaderboard, teams and scores cost a constant number of SQL queries.

Counts include the token look-up of every request (1 query).
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from metrics.models import RunQuery
from metrics.visibility.services import score_visibility_update
from tests import factories
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
NDCG = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"

# token, collection, roles, viewer roles, viewer teams, count, page, scoreboard (and, for a
# team, the collection's score visibility)
RUN_LIST_QUERIES = 8
# token, collection, roles, viewer roles, viewer teams, runs with teams, scoreboard, whether
# any live grade is LLM-filled (provenance) (and, for a team, the score visibility)
LEADERBOARD_QUERIES = 9  # 8, plus the per-query scores of the bootstrap intervals (uncached)
# token, collection, roles, viewer roles, viewer teams, teams, members
TEAM_LIST_QUERIES = 7
# token, collection, roles, viewer roles, viewer teams, run, scoreboard, per-query scores,
# whether any live grade is LLM-only (the bias-corrected means need LLM-only grades;
# tests/metrics/test_ppi_leaderboard.py counts the queries when they are there)
SCORES_QUERIES = 9
#: A team's requests read the collection's score visibility too (coordinators' do not).
TEAM_EXTRA = {"cora": 0, "alice": 1}
# A team before publication, in aggregate mode: no intervals nor provenance; one query
# counts the queries each run ranks. In split mode: the query columns instead.
LIMITED_QUERIES = {
    ("run-list", "aggregate"): RUN_LIST_QUERIES + 2,
    ("leaderboard", "aggregate"): LEADERBOARD_QUERIES + 1,  # + whether any grade is LLM-only
    ("run-list", "split"): RUN_LIST_QUERIES + 2,
    ("leaderboard", "split"): LEADERBOARD_QUERIES + 1,
}


def _fill(world, n: int) -> None:
    """Give both teams ``n`` runs in all, each ranking every query."""
    for i in range(n):
        owner = world.alpha if i % 2 else world.beta
        metrics_factories.run(
            world.coll,
            owner,
            f"fill-{n}-{i}",
            scores={NDCG: i / n, "Judged@10": 1.0},
            per_query={q: {NDCG: i / n} for q in world.queries.values()},
            submitted_by=world.users["bob"],
        )


def _count(client, url: str) -> tuple[int, dict]:
    cache.clear()  # the leaderboard's intervals are cached: count the uncached read
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200, response.json()
    return len(ctx.captured_queries), response.json()


def _runs_in(body) -> int:
    return len(body["results"]) if "results" in body else len(body["rows"])


@pytest.mark.parametrize(
    ("name", "expected"),
    [("run-list", RUN_LIST_QUERIES), ("leaderboard", LEADERBOARD_QUERIES)],
)
@pytest.mark.parametrize("user", ["cora", "alice"])
def test_constant_for_2_and_20_runs(world, api, name, expected, user):
    world.coll.leaderboard_published = True
    world.coll.judgments_published = True  # teams see every score, as coordinators do
    world.coll.save(update_fields=["leaderboard_published", "judgments_published"])
    client = api(user)
    url = reverse(f"metrics-api:{name}", args=[world.coll.slug])
    _fill(world, 2)
    small, body = _count(client, url)
    assert _runs_in(body) == 2
    _fill(world, 18)
    large, body = _count(client, url)
    assert _runs_in(body) == 20
    assert small == large == expected + TEAM_EXTRA[user]


@pytest.mark.parametrize(("name", "mode"), list(LIMITED_QUERIES))
def test_constant_for_2_and_20_runs_under_limited_visibility(world, api, name, mode):
    world.coll.leaderboard_published = True
    world.coll.save(update_fields=["leaderboard_published"])
    score_visibility_update(collection=world.coll, mode=mode, min_queries=1)
    client = api("alice")
    url = reverse(f"metrics-api:{name}", args=[world.coll.slug])
    _fill(world, 2)
    small, body = _count(client, url)
    assert _runs_in(body) == 2
    _fill(world, 18)
    large, body = _count(client, url)
    assert _runs_in(body) == 20
    assert small == large == LIMITED_QUERIES[name, mode]


def test_team_list_is_constant(world, api):
    client = api("cora")
    url = reverse("metrics-api:team-list", args=[world.coll.slug])
    small, body = _count(client, url)
    assert len(body) == 2
    for i in range(10):
        metrics_factories.team(world.coll, f"extra{i}", [factories.user() for _ in range(3)])
    large, body = _count(client, url)
    assert len(body) == 12
    assert small == large == TEAM_LIST_QUERIES


def test_scores_do_not_grow_with_queries(world, api):
    client = api("cora")
    owner_run = metrics_factories.run(
        world.coll, world.alpha, per_query={q: {NDCG: 0.5} for q in world.queries.values()}
    )
    url = reverse("metrics-api:run-scores", args=[world.coll.slug, owner_run.pk])
    small, _ = _count(client, url)
    more = [factories.query(world.coll, f"extra{i}") for i in range(20)]
    metrics_factories.run(world.coll, world.alpha)  # another run changes nothing
    RunQuery.objects.bulk_create(
        RunQuery(run=owner_run, query=q, ranking=b"\0" * 8, retrieved=1) for q in more
    )
    metrics_factories.store_scores(
        world.coll, owner_run, means={NDCG: 0.5}, per_query={q: {NDCG: 0.1} for q in more}
    )
    large, body = _count(client, url)
    assert len(body["per_query"]) == 23
    assert small == large == SCORES_QUERIES
