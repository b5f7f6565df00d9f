"""The five-run recipe of issue 32: can a team read unpublished grades off its scores?

A team submits five runs of one document each, all for one query. Each run's nDCG for
that query is the document's gain over the query's ideal DCG, so the five scores stand in
the ratio of the five grades (4, 1, 2, 1, 0 here). Under the default score visibility
(hidden) and under the aggregate mode the team sees nothing that tells the documents
apart, over REST or on any page; under the public/private split it can on a public query
(the documented trade-off, docs/security.md) and cannot on a private one.
"""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from judging import services as judging_services
from judging.models import Membership
from metrics.live import scoring
from metrics.models import Run
from metrics.visibility.models import ScoreVisibility
from metrics.visibility.selectors import is_public
from metrics.visibility.services import score_visibility_update
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
Role = Membership.Role
NDCG = scoring.canonical_names(["nDCG@10"])[0]
#: The recipe's five documents and their (unpublished) grades.
RECIPE = {"da": 4, "db": 1, "dc": 2, "dd": 1, "de": 0}
#: Queries with live grades besides the recipe's, so that means run over many queries.
OTHER_QUERIES = 12


class World:
    """A collection whose split seed puts ``public`` and ``private`` on either side."""

    def __init__(self) -> None:
        self.coll = factories.collection("infer")
        self.cora = factories.user("cora")
        self.alice = factories.user("alice")
        factories.member(self.coll, self.cora, Role.COORDINATOR)
        metrics_factories.team(self.coll, "Alpha", [self.alice])
        seed = score_visibility_update(collection=self.coll).split_seed  # defaults, stored
        candidates = [f"t{i}" for i in range(64)]
        self.public = next(q for q in candidates if is_public(seed=seed, qid=q, share=0.5))
        self.private = next(q for q in candidates if not is_public(seed=seed, qid=q, share=0.5))
        judge = factories.human_judge(self.cora)
        for qid in (self.public, self.private):
            query = factories.query(self.coll, qid)
            for docno, grade in RECIPE.items():
                document = factories.document(self.coll, f"{qid}-{docno}")
                judging_services.judgment_record(
                    judge=judge, query=query, document=document, grade=grade
                )
        for i in range(OTHER_QUERIES):
            query = factories.query(self.coll, f"o{i}")
            document = factories.document(self.coll, f"o{i}-d")
            judging_services.judgment_record(judge=judge, query=query, document=document, grade=1)
        self.coll.refresh_from_db()

    def api(self, user) -> Client:
        return client_for(user)

    def page(self, user) -> Client:
        client = Client()
        client.force_login(user)
        return client

    def submit_recipe(self, qid: str) -> dict[str, int]:
        """Submit the five one-document runs for ``qid`` as alice; return run ids by docno."""
        ids = {}
        for docno in RECIPE:
            tag = f"{qid}-{docno}"
            response = self.api(self.alice).post(
                f"/api/v1/collections/{self.coll.slug}/runs/",
                {"tag": tag, "file": _upload(f"{qid} Q0 {qid}-{docno} 1 1.0 {tag}\n")},
                format="multipart",
            )
            assert response.status_code == 201, response.json()
            ids[docno] = response.json()["id"]
        return ids

    def team_means(self, ids: dict[str, int]) -> dict[str, float | None]:
        """Return the nDCG mean the team sees of each run (REST run detail)."""
        api = self.api(self.alice)
        return {
            docno: api.get(f"/api/v1/collections/{self.coll.slug}/runs/{pk}/").json()["scores"][
                NDCG
            ]
            for docno, pk in ids.items()
        }


def _upload(text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile("run.txt", text.encode())


@pytest.fixture
def world(settings, tmp_path) -> World:
    settings.MEDIA_ROOT = tmp_path
    return World()


def _score_cells(html: str) -> list[str]:
    return re.findall(r'<td class="num score[^"]*"[^>]*>(.*?)</td>', html, re.S)


def assert_team_learns_nothing(world: World, ids: dict[str, int], qid: str) -> None:
    """Assert every place a team reads scores shows no value for the recipe's runs."""
    slug = world.coll.slug
    api = world.api(world.alice)
    # REST: the run list, each run, its scores, the leaderboard, the query explained.
    for item in api.get(f"/api/v1/collections/{slug}/runs/").json()["results"]:
        assert set(item["scores"].values()) == {None}, item
    for pk in ids.values():
        detail = api.get(f"/api/v1/collections/{slug}/runs/{pk}/").json()
        assert set(detail["scores"].values()) == {None}
        scores = api.get(f"/api/v1/collections/{slug}/runs/{pk}/scores/").json()
        assert set(scores["aggregate"].values()) == {None} and scores["per_query"] == {}
        explained = api.get(f"/api/v1/collections/{slug}/runs/{pk}/queries/{qid}/").json()
        assert (explained["ndcg"], explained["stored_score"], explained["dcg"]) == (None,) * 3
        assert explained["judged_in_top"] is None and explained["ideal"] == []
        assert {(d["grade"], d["gain"], d["contribution"]) for d in explained["ranked"]} == {
            (None, None, None)
        }
    board = api.get(f"/api/v1/collections/{slug}/leaderboard/").json()
    assert len(board["rows"]) == len(ids)
    for row in board["rows"]:
        assert set(row["scores"].values()) | set(row["judged"].values()) == {None}
        assert row["interval"] is None
    pks = list(ids.values())
    compare = api.get(
        f"/api/v1/collections/{slug}/compare/",
        {"baseline": pks[0], "runs": ",".join(map(str, pks[1:]))},
    )
    assert compare.status_code == 403
    assert api.get(f"/api/v1/collections/{slug}/difficulty/").status_code == 403
    # Pages: the leaderboard, each run, its ranked list for the query; compare, difficulty.
    page = world.page(world.alice)
    html = page.get(reverse("metrics:leaderboard", args=[slug])).content.decode()
    cells = _score_cells(html)
    assert cells and all("–" in cell and not re.search(r"\d", cell) for cell in cells)
    assert "data-low-coverage" not in html and "data-interval" not in html
    query_pk = world.coll.queries.get(external_id=qid).pk
    for pk in pks:
        html = page.get(reverse("metrics:run_detail", args=[slug, pk])).content.decode()
        assert all(not re.search(r"\d", cell) for cell in _score_cells(html))
        assert "data-query=" not in html and "<svg" not in html
        html = page.get(reverse("metrics:run_query", args=[slug, pk, query_pk])).content.decode()
        assert 'data-field="ndcg">–<' in html and 'data-field="judged">–<' in html
        assert "data-grades-hidden" in html
    html = page.get(
        reverse("metrics:compare", args=[slug]),
        {"baseline": pks[0], "runs": pks[1:], "measure": "nDCG@10"},
    ).content.decode()
    assert "comparison" not in re.sub(r"<(form|nav)\b.*?</\1>", "", html, flags=re.S).lower()
    html = page.get(reverse("metrics:difficulty", args=[slug])).content.decode()
    assert "data-query=" not in html


def test_default_visibility_gives_the_recipe_nothing(world):
    ScoreVisibility.objects.filter(collection=world.coll).delete()  # no settings: defaults
    ids = world.submit_recipe(world.public)
    # The coordinator's scores do stand in the ratio of the grades (what the team is after).
    cora = world.api(world.cora)
    means = {
        docno: cora.get(f"/api/v1/collections/{world.coll.slug}/runs/{pk}/").json()["scores"][NDCG]
        for docno, pk in ids.items()
    }
    assert means["da"] == pytest.approx(2 * means["dc"]) and means["dc"] == pytest.approx(
        2 * means["db"]
    )
    assert means["db"] == pytest.approx(means["dd"]) and means["de"] == 0.0
    # ... and the pages show them to the coordinator in the markup checked below.
    page, slug = world.page(world.cora), world.coll.slug
    html = page.get(reverse("metrics:leaderboard", args=[slug])).content.decode()
    assert any(re.search(r"\d", cell) for cell in _score_cells(html))
    html = page.get(reverse("metrics:run_detail", args=[slug, ids["da"]])).content.decode()
    assert "<svg" in html  # the chart's tab; the per-query table is the next one
    detail = reverse("metrics:run_detail", args=[slug, ids["da"]])
    assert "data-query=" in page.get(detail + "?tab=queries").content.decode()
    query_pk = world.coll.queries.get(external_id=world.public).pk
    html = page.get(reverse("metrics:run_query", args=[slug, ids["da"], query_pk])).content.decode()
    assert 'data-field="ndcg">0.' in html
    assert_team_learns_nothing(world, ids, world.public)


def test_aggregate_mode_gives_the_recipe_nothing(world):
    score_visibility_update(collection=world.coll, mode="aggregate", min_queries=5)
    ids = world.submit_recipe(world.public)
    assert_team_learns_nothing(world, ids, world.public)
    # A run ranking enough judged queries does show a rounded mean, and nothing per query.
    lines = "".join(f"o{i} Q0 o{i}-d 1 1.0 wide\n" for i in range(OTHER_QUERIES))
    ScoreVisibility.objects.filter(collection=world.coll).update(runs_per_day=6)
    response = world.api(world.alice).post(
        f"/api/v1/collections/{world.coll.slug}/runs/",
        {"tag": "wide", "file": _upload(lines)},
        format="multipart",
    )
    assert response.status_code == 201, response.json()
    shown = response.json()["scores"][NDCG]
    full = Run.objects.get(tag="wide").scores[NDCG]
    assert shown == round(full, 2) and shown != full


def test_split_mode_shows_a_public_query_and_hides_a_private_one(world):
    score_visibility_update(collection=world.coll, mode="split", runs_per_day=10)
    public_ids = world.submit_recipe(world.public)
    private_ids = world.submit_recipe(world.private)
    # Public query: the team's means stand in the ratio of the grades (the trade-off).
    seen = world.team_means(public_ids)
    assert seen["da"] == pytest.approx(2 * seen["dc"]) and seen["dc"] == pytest.approx(
        2 * seen["db"]
    )
    assert seen["db"] == pytest.approx(seen["dd"]) and seen["de"] == 0.0 and seen["da"] > 0
    # Private query: every run shows the same mean (the other public queries' zeros).
    hidden = world.team_means(private_ids)
    assert set(hidden.values()) == {0.0}
    # Nothing per query, nor which queries are private.
    scores = world.api(world.alice).get(
        f"/api/v1/collections/{world.coll.slug}/runs/{private_ids['da']}/scores/"
    )
    assert scores.json()["per_query"] == {} and scores.json()["visibility"] == "public"
    # After publication the final board uses the private share.
    world.coll.judgments_published = True
    world.coll.save(update_fields=["judgments_published"])
    final = world.team_means(private_ids)
    assert final["da"] == pytest.approx(2 * final["dc"]) and final["da"] > 0
    assert set(world.team_means(public_ids).values()) == {0.0}
    # Coordinators see every score throughout: the full mean, over all queries.
    full = world.api(world.cora).get(
        f"/api/v1/collections/{world.coll.slug}/runs/{public_ids['da']}/"
    )
    assert full.json()["scores"][NDCG] == pytest.approx(seen["da"] * _share(world) / _live(world))


def _live(world: World) -> int:
    return 2 + OTHER_QUERIES


def _share(world: World) -> int:
    seed = ScoreVisibility.objects.get(collection=world.coll).split_seed
    qids = world.coll.queries.values_list("external_id", flat=True)
    return sum(is_public(seed=seed, qid=q, share=0.5) for q in qids)


def test_live_mode_shows_the_team_every_score_the_trade_off_of_an_internal_evaluation(world):
    score_visibility_update(collection=world.coll, mode="live", runs_per_day=None)
    ids = world.submit_recipe(world.public)  # five runs in a row: no daily limit
    cora = world.api(world.cora)
    coordinator = {
        docno: cora.get(f"/api/v1/collections/{world.coll.slug}/runs/{pk}/").json()["scores"][NDCG]
        for docno, pk in ids.items()
    }
    team = world.team_means(ids)
    assert team == coordinator  # the team sees what the coordinator sees ...
    assert team["da"] == pytest.approx(2 * team["dc"])  # ... so it can read the grades off
    html = world.page(world.alice).get(reverse("metrics:leaderboard", args=[world.coll.slug]))
    assert any(re.search(r"\d", cell) for cell in _score_cells(html.content.decode()))
