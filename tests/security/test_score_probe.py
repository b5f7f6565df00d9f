"""Unpublished scores (issue 32, item 3): no API route and no page shows a team a score.

Scores give grades away (docs/security.md, "Grade inference from scores"). With the
leaderboard published and the judgment list not, under the default score visibility
(hidden), every GET route of the API (from the route matrix, which names every route)
and every collection page is read as both teams: no JSON answer may carry a number under
a score-bearing field, and no page a number in a score cell, a per-query row, an
interval or a chart. The coordinator reading the same answers does see numbers, so the
probe is known to look where scores are.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.security.conftest import Arena
from tests.security.test_route_matrix import MATRIX, PAGES, _read_as, page_url, url_for

pytestmark = pytest.mark.django_db

#: JSON fields that hold scores or figures made of per-query scores; a number anywhere
#: inside one (null, empty or a count elsewhere is fine) is a score shown.
SCORE_FIELDS = {
    "scores",
    "judged",
    "aggregate",
    "per_query",
    "ndcg",
    "stored_score",
    "judged_in_top",
    "interval",
    "human_only",
    "mean",
    "mean_diff",
    "baseline_mean",
    "deltas",
    "sndcg",
    "rndcg",
    "median_sndcg",
    "difficulty",
    "topics",
}
#: Page markup that only a shown score produces.
PAGE_MARKS = ("data-interval", "data-query=", "chart-bars", "chart-boxes", "data-seed")


def _numbers_inside(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return True
    if isinstance(value, dict):
        return any(_numbers_inside(v) for v in value.values())
    if isinstance(value, list):
        return any(_numbers_inside(v) for v in value)
    return False


def score_fields(value: Any, path: str = "") -> list[str]:
    """Return the JSON paths of score-bearing fields that hold a number."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in SCORE_FIELDS and _numbers_inside(item):
                found.append(f"{path}.{key}")
            else:
                found.extend(score_fields(item, f"{path}.{key}"))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found.extend(score_fields(item, f"{path}[{i}]"))
    return found


def page_scores(html: str) -> list[str]:
    """Return what on a page shows a score: numeric score cells and score-only markup."""
    cells = re.findall(r'<td class="num score">(.*?)</td>', html, re.S)
    found = [cell for cell in cells if re.search(r"\d", re.sub(r"<[^>]*>", "", cell))]
    found += [mark for mark in PAGE_MARKS if mark in html]
    found += re.findall(r'data-field="(?:ndcg|judged)">[^<–]*\d', html)
    return found


@pytest.fixture
def scored(arena) -> Arena:
    """Publish the leaderboard, not the judgment list; give the team two scored runs."""
    arena.second_run()
    arena.coll.leaderboard_published = True
    arena.coll.judgments_published = False
    arena.coll.save(update_fields=["leaderboard_published", "judgments_published"])
    return arena


GET_ROUTES = sorted({r for m, r in MATRIX if m == "GET"})


def test_the_probe_finds_the_coordinators_scores(scored):
    cora = scored.client("cora")
    found = set()
    for route in GET_ROUTES:
        response = cora.get(url_for(route, scored))
        json = response["Content-Type"].startswith("application/json")
        if response.status_code == 200 and json and score_fields(response.json()):
            found.add(route)
    assert {
        "collections/<slug:slug>/leaderboard/",
        "collections/<slug:slug>/runs/",
        "collections/<slug:slug>/runs/<int:pk>/scores/",
        "collections/<slug:slug>/runs/<int:pk>/queries/<str:qid>/",
        "collections/<slug:slug>/compare/",
        "collections/<slug:slug>/compare/pairs/",
        "collections/<slug:slug>/difficulty/",
    } <= found
    for route in ("leaderboard/", "runs/<int:pk>/", "compare/", "difficulty/"):
        url = page_url(route, scored)
        if route == "compare/":
            url += f"?a={scored.run.pk}&b={scored.second_run().pk}"
        assert page_scores(_read_as(scored, "cora", url).content.decode()), route


@pytest.mark.parametrize("role", ["tess", "toby"])
@pytest.mark.parametrize("route", GET_ROUTES)
def test_unpublished_scores_reach_no_team_over_the_api(scored, route, role):
    response = scored.client(role).get(url_for(route, scored))
    assert response.status_code < 500
    if response.status_code == 200 and response["Content-Type"].startswith("application/json"):
        assert score_fields(response.json()) == [], route


@pytest.mark.parametrize("role", ["tess", "toby"])
@pytest.mark.parametrize("route", sorted(PAGES))
def test_unpublished_scores_reach_no_team_on_a_page(scored, route, role):
    url = page_url(route, scored)
    if route == "compare/":
        url += f"?a={scored.run.pk}&b={scored.second_run().pk}"
    response = _read_as(scored, role, url)
    assert response.status_code < 500
    if response.status_code == 200 and response["Content-Type"].startswith("text/html"):
        assert page_scores(response.content.decode()) == [], route
