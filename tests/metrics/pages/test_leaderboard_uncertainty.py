"""The leaderboard's bootstrap intervals, "may swap" marks and paired tests (page and API)."""

from __future__ import annotations

import numpy as np
import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse
from scipy.linalg import hadamard

from judging.models import Membership
from metrics.engine.ranks import leaderboard_ranks
from metrics.engine.uncertainty import leaderboard_uncertainty
from metrics.live import store
from metrics.models import RunQuery
from tests import factories
from tests.api_client import client_for
from tests.metrics import pages_factories as pf

pytestmark = pytest.mark.django_db
#: Per-query nDCG@10 of three runs over six queries: "top" is far ahead; "near" trails
#: "mid" by one query only, so their order rests on that query.
SCORES = {
    "top": [0.9, 0.8, 0.9, 0.85, 0.95, 0.9],
    "mid": [0.5, 0.4, 0.5, 0.45, 0.55, 0.6],
    "near": [0.5, 0.4, 0.5, 0.45, 0.55, 0.3],
}


@pytest.fixture
def board(db):
    coll = factories.collection("unc", measures=["nDCG@10", "Judged@10"])
    queries = [factories.query(coll, f"q{i}") for i in range(6)]
    coord = factories.user("coord")
    factories.member(coll, coord, role=Membership.Role.COORDINATOR)
    team = pf.team(coll, "T")
    runs = {
        tag: pf.run(
            coll,
            team,
            tag,
            per_query={
                q: {"nDCG@10": v, "Judged@10": 1.0} for q, v in zip(queries, values, strict=True)
            },
        )
        for tag, values in SCORES.items()
    }
    cache.clear()
    return coll, coord, runs


def test_the_api_gives_the_engines_intervals_and_gaps(board):
    coll, coord, _runs = board
    body = client_for(coord).get(reverse("metrics-api:leaderboard", args=[coll.slug])).json()
    assert [row["run"] for row in body["rows"]] == ["top", "mid", "near"]
    runs_, pairs = leaderboard_uncertainty(
        np.array(list(SCORES.values())), [0, 1, 2], resamples=1000, seed=coll.pk
    )
    for row, expected in zip(body["rows"], runs_, strict=True):
        assert (row["interval"]["low"], row["interval"]["high"]) == pytest.approx(
            (expected.low, expected.high), abs=1e-12
        )
        assert row["interval"]["queries"] == 6
    top, mid, near = body["rows"]
    assert top["interval"]["above"] is None
    assert mid["interval"]["above"]["run"] == "top"
    assert mid["interval"]["above"]["may_swap"] is False
    assert mid["interval"]["above"]["p_value"] == pytest.approx(pairs[0].p_value)
    assert near["interval"]["above"]["run"] == "mid"
    assert near["interval"]["above"]["may_swap"] is True  # the gap comes from one query
    assert near["interval"]["above"]["difference"] == pytest.approx(0.05)


def test_the_page_marks_the_pair_that_may_swap(board):
    coll, coord, _runs = board
    client = Client()
    client.force_login(coord)
    html = client.get(reverse("metrics:leaderboard", args=[coll.slug])).content.decode()
    assert "95% interval of nDCG@10" in html
    rows = html.split('data-run="')[1:]
    assert [r.split('"', 1)[0] for r in rows] == ["top", "mid", "near"]
    assert "data-may-swap" not in rows[1]
    assert "data-may-swap" in rows[2]


def test_intervals_follow_rescoring(board):
    coll, coord, runs = board
    api = client_for(coord)
    url = reverse("metrics-api:leaderboard", args=[coll.slug])
    before = api.get(url).json()["rows"][2]["interval"]
    # a rescore (as live rescoring writes it): the last query now favours "near" strongly
    near = runs["near"]
    q5 = RunQuery.objects.get(run=near, query__external_id="q5").query_id
    column = store.columns_read(coll.pk, [q5])[q5]
    board = store.board_read(coll.pk)
    values = column.lookup([near.pk], board.names)
    values[0, board.names.index(pf.NDCG10)] = 0.95
    store.columns_write(coll.pk, [store.apply(board, column, [near.pk], values)], version=0)
    store.board_write(board, version=near.scored_version + 1)
    rows = {r["run"]: r for r in api.get(url).json()["rows"]}
    assert rows["near"]["interval"] != before
    assert rows["near"]["interval"]["high"] > before["high"]


def test_rank_intervals_and_letters_are_the_engines(board):
    # top is ahead on every query (letter a, always first); mid and near are level on five
    # queries and apart on one (p = 0.36): they share letter b and ranks 2–3.
    coll, coord, _runs = board
    body = client_for(coord).get(reverse("metrics-api:leaderboard", args=[coll.slug])).json()
    got = [
        (r["run"], r["rank_interval"], r["groups"], r["group_numbers"], r["tier"])
        for r in body["rows"]
    ]
    assert got == [
        ("top", {"low": 1, "high": 1}, "a", [1], 1),
        ("mid", {"low": 2, "high": 3}, "b", [2], 2),
        ("near", {"low": 2, "high": 3}, "b", [2], 2),
    ]
    expected = leaderboard_ranks(np.array(list(SCORES.values())), [0, 1, 2], seed=coll.pk)
    assert [(r.low, r.high, r.groups) for r in expected] == [
        (g[1]["low"], g[1]["high"], tuple(n - 1 for n in g[3])) for g in got
    ]
    client = Client()
    client.force_login(coord)
    html = client.get(reverse("metrics:leaderboard", args=[coll.slug])).content.decode()
    rows = html.split('data-run="')[1:]
    # top differs from both others: a firmer line under it, none between mid and near.
    assert "lb-block-start" not in html.split('data-run="top"')[0].rsplit("<tr", 1)[1]
    assert "lb-block-start" in html.split('data-run="mid"')[0].rsplit("<tr", 1)[1]
    assert "lb-block-start" not in html.split('data-run="near"')[0].rsplit("<tr", 1)[1]
    assert [r.split('data-groups="', 1)[1].split('"', 1)[0] for r in rows] == ["a", "b", "b"]
    assert "data-groups-label" in rows[0] and "letters </span>b</span>" in rows[2]
    assert "data-rank-interval" in rows[1] and "2–3" in rows[1]
    # One cell per measure holds the score, its interval and the may-swap mark.
    primary = rows[2].split('lb-primary"', 1)[1].split("</td>", 1)[0]
    assert "data-interval" in primary and "data-may-swap" in primary and "p 0.363" in primary
    # The page's "?" explains the letters and links to the comparison of all pairs.
    explain = html.split('class="explain lb-explain"', 1)[1].split("</details>", 1)[0]
    assert "share a letter exactly when" in explain and "pairs=1" in explain


#: Per-query nDCG@10 of the issue's four-run board (tests/engine/test_letters.py): rows
#: 1–4 of the 8 × 8 Hadamard matrix, spread 0.035, 0.05 apart.
FOUR = np.array([0.4 + (3 - i) * 0.05 + 0.035 * row for i, row in enumerate(hadamard(8)[1:5])])


def test_the_four_run_board_of_the_issue_shows_overlapping_letters(db):
    coll = factories.collection("four", measures=["nDCG@10"])
    queries = [factories.query(coll, f"q{i}") for i in range(8)]
    coord = factories.user("coord4")
    factories.member(coll, coord, role=Membership.Role.COORDINATOR)
    team = pf.team(coll, "T")
    for i, values in enumerate(FOUR):
        pf.run(
            coll,
            team,
            f"run{i + 1}",
            per_query={q: {"nDCG@10": float(v)} for q, v in zip(queries, values, strict=True)},
        )
    cache.clear()
    body = client_for(coord).get(reverse("metrics-api:leaderboard", args=[coll.slug])).json()
    assert [(r["run"], r["groups"], r["tier"]) for r in body["rows"]] == [
        ("run1", "a", 1),
        ("run2", "ab", 1),
        ("run3", "bc", 2),
        ("run4", "c", 3),
    ]
    client = Client()
    client.force_login(coord)
    html = client.get(reverse("metrics:leaderboard", args=[coll.slug])).content.decode()
    assert "lb-block-start" not in html  # every line between rows is spanned by a letter


@pytest.mark.parametrize("published", [False, True])
def test_hidden_scores_leak_no_rank_information(board, published):
    coll, _coord, runs = board
    tess = factories.user("tess")
    runs["top"].team.members.add(tess)
    factories.member(coll, tess, role=Membership.Role.TEAM)
    coll.leaderboard_published = True
    coll.judgments_published = published  # unpublished: the default policy hides scores
    coll.save(update_fields=["leaderboard_published", "judgments_published"])
    body = client_for(tess).get(reverse("metrics-api:leaderboard", args=[coll.slug])).json()
    client = Client()
    client.force_login(tess)
    html = client.get(reverse("metrics:leaderboard", args=[coll.slug])).content.decode()
    if published:  # scores shown in full: so are the ranks' intervals and letters
        assert [(r["tier"], r["groups"]) for r in body["rows"]] == [(1, "a"), (2, "b"), (2, "b")]
        assert "data-rank-interval" in html and 'data-groups="b"' in html
    else:
        assert body["visibility"] == "none"
        for row in body["rows"]:
            assert row["rank_interval"] is None and row["tier"] is None
            assert row["groups"] is None and row["group_numbers"] is None
        assert "data-rank-interval" not in html and "data-groups" not in html
        assert "lb-explain" not in html and "data-interval" not in html
