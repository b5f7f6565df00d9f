"""The leaderboard: canonical measures, Judged@k apart, staleness, order and visibility."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging import services as judging_services
from metrics.analysis.ppi import NO_LLM_ONLY
from metrics.live import scoring
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
NDCG = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"


def board(client, world, **params) -> dict:
    response = client.get(reverse("metrics-api:leaderboard", args=[world.coll.slug]), params)
    assert response.status_code == 200, response.json()
    return response.json()


def test_shape(world, api, runs):
    body = board(api("cora"), world)
    assert body["measures"] == scoring.canonical_names(world.coll.measures)
    assert body["version"] == world.coll.judgments_version
    assert body["changed_at"] is not None
    assert body["coverage_threshold"] == world.coll.coverage_threshold
    first, second = body["rows"]
    interval, gap = first.pop("interval"), second.pop("interval")
    ppi = first.pop("ppi")  # no live grade is LLM-only: nothing to correct, and it says so
    assert set(ppi) == set(first["scores"])
    assert all(c["estimate"] is None and c["reason"] == NO_LLM_ONLY for c in ppi.values())
    assert (body["ppi_audit"]["available"], body["ppi_audit"]["reason"]) == (False, NO_LLM_ONLY)
    # Rank intervals hold the rank; the first run holds "a" (tier 1).
    ranks = [
        (row.pop("rank_interval"), row.pop("tier"), row.pop("groups"), row.pop("group_numbers"))
        for row in (first, second)
    ]
    assert ranks[0][0]["low"] == 1 <= ranks[0][0]["high"] and ranks[0][1:] == (1, "a", [1])
    assert ranks[1][0]["low"] <= 2 == ranks[1][0]["high"]
    assert ranks[1][1:] in ((1, "a", [1]), (2, "b", [2]))
    assert (interval["measure"], interval["confidence"], interval["above"]) == (NDCG, 0.95, None)
    assert interval["low"] <= interval["high"]
    assert gap["above"]["run"] == "alpha-bm25"
    assert set(gap["above"]) == {
        "run",
        "difference",
        "low",
        "high",
        "swap_share",
        "p_value",
        "may_swap",
    }
    assert first == {
        "run": "alpha-bm25",
        "run_id": runs["alpha"].pk,
        "team": "Alpha",
        "scores": {m: (0.8 if m == NDCG else None) for m in body["measures"] if m != "Judged@10"},
        "judged": {"Judged@10": 0.5},
        "stale": False,
        "human_only": None,  # no live grade comes from LLM judges alone
        "human_rank": None,
    }
    assert (body["provenance"], body["llm_filled"], body["human_differs"]) == (
        "all",
        False,
        False,
    )
    assert second["run"] == "beta-dense"
    assert second["judged"] == {"Judged@10": 0.3}


def test_sort_by_another_measure(world, api, runs):
    body = board(api("cora"), world, sort="Judged@10")
    assert [r["run"] for r in body["rows"]] == ["alpha-bm25", "beta-dense"]
    metrics_factories.run(world.coll, world.beta, "beta-wide", scores={NDCG: 0.1, "Judged@10": 0.9})
    body = board(api("cora"), world, sort="Judged@10")
    assert [r["run"] for r in body["rows"]] == ["beta-wide", "alpha-bm25", "beta-dense"]
    body = board(api("cora"), world)
    assert [r["run"] for r in body["rows"]] == ["alpha-bm25", "beta-dense", "beta-wide"]


def test_rows_turn_stale_after_a_bulk_judgment_change(world, api, runs):
    # A bulk change is rescored in the background after commit (never, inside this test's
    # transaction): until then every run is stale.
    judging_services.judgments_import(
        collection=world.coll,
        judge=world.users["cora"].judge,
        rows=[judging_services.JudgmentRow(1, "q3", "d6", grade=2)],
    )
    body = board(api("cora"), world)
    world.coll.refresh_from_db()
    assert body["version"] == world.coll.judgments_version
    assert all(row["stale"] for row in body["rows"])


def test_one_judgment_rescores_every_run_before_it_returns(world, api, runs):
    judging_services.judgment_record(
        judge=world.users["cora"].judge,
        query=world.queries["q3"],
        document=world.docs["d6"],
        grade=2,
    )
    body = board(api("cora"), world)
    world.coll.refresh_from_db()
    assert body["version"] == world.coll.judgments_version
    assert body["rows"] and not any(row["stale"] for row in body["rows"])


def test_custom_measures_split_judged(world, api, runs):
    world.coll.measures = ["Judged@5", "P@5", "Judged@10"]
    world.coll.save(update_fields=["measures"])
    body = board(api("cora"), world)
    assert body["measures"] == ["Judged@5", "P(rel=1)@5", "Judged@10"]
    row = body["rows"][0]
    assert set(row["scores"]) == {"P(rel=1)@5"}
    assert set(row["judged"]) == {"Judged@5", "Judged@10"}


def test_empty_leaderboard(world, api):
    body = board(api("alice"), world)
    assert body["rows"] == []
