"""Leaderboards and exports by provenance: human grades only, or LLM-filled too.

One query; run A ranks d1 d2, run B d2 d1. A human grades d1 1; an LLM judge alone grades
d2 3. NDCG@10 on every grade (d1 = 1, d2 = 3): A (1 + 3/log2 3) / (3 + 1/log2 3) = 0.797,
B 1. On human grades alone (only d1 = 1): A 1, B 1/log2 3 = 0.631. So the order swaps.
"""

from __future__ import annotations

import math

import pytest
from django.urls import reverse

from judging import services
from judging.models import Membership
from metrics.live.scoring import canonical_names
from tests import factories
from tests.api_client import client_for, errors_of
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
L3 = 1 / math.log2(3)
ALL = {"A": (1 + 3 * L3) / (3 + L3), "B": 1.0}
HUMAN = {"A": 1.0, "B": L3}


@pytest.fixture
def world(db):
    coll = factories.collection("prov", measures=["ndcg_cut.10"])
    query = factories.query(coll, "q1")
    d1, d2 = factories.document(coll, "d1"), factories.document(coll, "d2")
    team = metrics_factories.team(coll)
    for tag, order in (("A", [d1, d2]), ("B", [d2, d1])):
        metrics_factories.run(coll, team, tag, rankings={query: [d.pk for d in order]})
    user = factories.user("jay")
    factories.member(coll, user, Membership.Role.JUDGE)
    services.judgment_record(judge=factories.human_judge(user), query=query, document=d1, grade=1)
    services.judgment_record(judge=factories.llm_judge(), query=query, document=d2, grade=3)
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    coll.refresh_from_db()
    return coll, cora


def _board(coll, cora, **params):
    response = client_for(cora).get(f"/api/v1/collections/{coll.slug}/leaderboard/", params)
    assert response.status_code == 200, response.content
    return response.json()


def test_the_leaderboard_shows_both_when_they_differ(world):
    coll, cora = world
    measure = canonical_names(coll.measures)[0]
    body = _board(coll, cora)
    assert (body["provenance"], body["llm_filled"], body["human_differs"]) == ("all", True, True)
    rows = {r["run"]: r for r in body["rows"]}
    assert [r["run"] for r in body["rows"]] == ["B", "A"]
    for tag in "AB":
        assert rows[tag]["scores"][measure] == pytest.approx(ALL[tag])
        assert rows[tag]["human_only"] == pytest.approx(HUMAN[tag])
    assert (rows["A"]["human_rank"], rows["B"]["human_rank"]) == (1, 2)


def test_human_only_scores_every_measure_on_human_grades(world):
    coll, cora = world
    measure = canonical_names(coll.measures)[0]
    body = _board(coll, cora, provenance="human")
    assert body["provenance"] == "human"
    assert [r["run"] for r in body["rows"]] == ["A", "B"]
    for row in body["rows"]:
        assert row["scores"][measure] == pytest.approx(HUMAN[row["run"]])
        assert row["interval"] is None and row["human_only"] is None
    bad = client_for(cora).get(
        f"/api/v1/collections/{coll.slug}/leaderboard/", {"provenance": "llm"}
    )
    assert bad.status_code == 400 and "provenance" in str(errors_of(bad))


def test_the_page_switches_provenance(world, client):
    coll, cora = world
    client.force_login(cora)
    url = reverse("metrics:leaderboard", args=[coll.slug])
    page = client.get(url).content.decode()
    assert "Human only (rank)" in page and "data-human-only" in page
    assert "provenance=human" in page
    human = client.get(url, {"provenance": "human"}).content.decode()
    assert 'data-provenance="human"' in human and "Human only (rank)" not in human
    assert human.index('data-run="A"') < human.index('data-run="B"')


def test_exports_leave_out_llm_only_pairs_on_request(world):
    coll, cora = world
    api = client_for(cora)
    url = f"/api/v1/collections/{coll.slug}/qrels/"

    def lines(**params):
        response = api.get(url, params)
        assert response.status_code == 200, response.content
        return sorted(b"".join(response.streaming_content).decode().split("\n")[:-1])

    assert lines() == ["q1 0 d1 1", "q1 0 d2 3"]
    assert lines(provenance="human") == ["q1 0 d1 1"]
    raw = lines(provenance="human", labels="raw", format="jsonl")
    assert len(raw) == 1 and '"d1"' in raw[0]
    bad = api.get(url, {"provenance": "mixed"})
    assert bad.status_code == 400 and "provenance" in str(errors_of(bad))
