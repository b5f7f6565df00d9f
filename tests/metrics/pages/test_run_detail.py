"""The run page: metadata, flavour-labelled means, per-query table and chart, downloads."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from django.urls import reverse

from tests import factories
from tests.metrics import pages_factories as pf

pytestmark = pytest.mark.django_db


def url(world, tag: str, **params) -> str:
    base = reverse("metrics:run_detail", args=[world.coll.slug, world.runs[tag].pk])
    return base + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def test_run_page_shows_scores_queries_and_chart(world):
    response = world.client("coord").get(url(world, "a-thin"))
    assert response.status_code == 200
    # One tab at a time: the chart first; the queries, the measures and the run's particulars
    # each on a tab of their own.
    chart_html = response.content.decode()
    html = world.client("coord").get(url(world, "a-thin", tab="about")).content.decode()
    assert "Team A" in html
    html = world.client("coord").get(url(world, "a-thin", tab="measures")).content.decode()
    assert f'<code class="canonical">{pf.NDCG10}</code>' in html
    assert "ndcg_cut.10" in html
    html = world.client("coord").get(url(world, "a-thin", tab="queries")).content.decode()
    for q in world.queries:
        assert f'data-query="{q.external_id}"' in html
        assert q.text in html
    # Per-query values and low-coverage marks (Judged@10 0.5, 0.6 and 0.4 < 0.9).
    low = re.findall(r'<tr class="is-low-coverage[^"]*" data-query="([^"]+)"', html)
    assert low == ["q1", "q2", "q4"]
    assert "3 marked for low coverage" in html
    svg = re.search(r"<svg.*?</svg>", chart_html, re.S).group(0)
    root = ET.fromstring(svg)
    bars = root.findall(".//{http://www.w3.org/2000/svg}rect")
    assert len(bars) == 4
    assert sum("chart-bar-flagged" in b.get("class") for b in bars) == 3
    assert "nDCG@10 per query" in svg


def test_measure_can_be_chosen_for_the_chart(world):
    html = world.client("coord").get(url(world, "a-bm25", measure="P@10")).content.decode()
    assert "<title>P@10 per query — a-bm25</title>" in html
    assert '<option value="P@10" selected>' in html
    # An unknown measure falls back to the first one.
    html = world.client("coord").get(url(world, "a-bm25", measure="nope")).content.decode()
    assert "<title>nDCG@10 per query — a-bm25</title>" in html


def test_stale_run_is_marked(world):
    html = world.client("coord").get(url(world, "b-old")).content.decode()
    assert "Recomputing — these scores are from judgment-list version 3" in html


def test_download_link_for_owners_and_coordinators_only(world):
    link = reverse("metrics:run_file", args=[world.coll.slug, world.runs["a-bm25"].pk])
    assert link in world.client("alice").get(url(world, "a-bm25")).content.decode()
    assert link in world.client("coord").get(url(world, "a-bm25")).content.decode()
    world.coll.leaderboard_published = True
    world.coll.save()
    other = world.client("bob")
    assert other.get(url(world, "a-bm25")).status_code == 200
    assert link not in other.get(url(world, "a-bm25")).content.decode()
    assert other.get(link).status_code == 404
    response = world.client("alice").get(link)
    assert response.status_code == 200
    assert b"".join(response.streaming_content) == b"q1 Q0 d1 1 1.0 a-bm25\n"
    assert "attachment" in response["Content-Disposition"]


def test_run_without_file_has_no_download(world):
    link = reverse("metrics:run_file", args=[world.coll.slug, world.runs["a-thin"].pk])
    assert link not in world.client("alice").get(url(world, "a-thin")).content.decode()
    assert world.client("alice").get(link).status_code == 404


@pytest.mark.parametrize(
    ("who", "published", "status"),
    [
        ("alice", False, 200),
        ("bob", False, 404),
        ("bob", True, 200),
        ("judy", True, 403),
        ("stranger", True, 404),
    ],
)
def test_run_page_visibility(world, who, published, status):
    world.coll.leaderboard_published = published
    world.coll.save()
    assert world.client(who).get(url(world, "a-bm25")).status_code == status


def test_query_count_is_constant(world, django_assert_num_queries):
    client = world.client("coord")
    client.get(url(world, "a-bm25"))
    # 7, the live token, the scoreboard (the means), the query columns (per-query values)
    # and the collection's score visibility (the note telling coordinators what teams see)
    with django_assert_num_queries(11):
        assert client.get(url(world, "a-bm25")).status_code == 200
    more = [factories.query(world.coll, f"x{i}") for i in range(60)]
    big = pf.run(
        world.coll,
        world.team_a,
        "big",
        per_query={q: {"nDCG@10": 0.5, "Judged@10": 0.95} for q in [*world.queries, *more]},
    )
    # 7, the live token, the scoreboard (the means), the query columns (per-query values)
    # and the collection's score visibility (the note telling coordinators what teams see)
    with django_assert_num_queries(11):
        response = client.get(reverse("metrics:run_detail", args=[world.coll.slug, big.pk]))
    assert 'data-query="' not in response.content.decode()  # the chart's tab
    response = client.get(
        reverse("metrics:run_detail", args=[world.coll.slug, big.pk]) + "?tab=queries"
    )
    assert response.content.decode().count("data-query=") == 64
