"""Topic difficulty from stored rows: the Gienapp et al. worked example, and the page."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from django.urls import reverse

from metrics.analysis.difficulty import topic_difficulty
from metrics.engine.standardized import rndcg
from metrics.models import Run, RunQuery, ranking_bytes
from tests import factories
from tests.metrics import pages_factories as pf

pytestmark = pytest.mark.django_db

POOL = {"a": 3, "b": 2, "c": 2, "d": 1, "e": 0, "f": 0, "g": 0, "h": 0}
RUNS = {"ideal": "abcde", "mixed": "eafbg", "poor": "efghd"}
EXPECTED = {"ideal": 1.0, "mixed": -0.0708, "poor": -0.9335}


@pytest.fixture
def example(world):
    """Add the paper's worked example as query q9 with three runs, plus a document pool."""
    coll = world.coll
    query = factories.query(coll, "q9", text="worked example")
    docs = {name: factories.document(coll, name) for name in "abcdefghxyz"}
    pf.live_grades(coll, query, {docs[n]: float(g) for n, g in POOL.items()})
    runs = [
        pf.run(coll, world.team_a, tag, rankings={query: [docs[n] for n in order]})
        for tag, order in RUNS.items()
    ]
    return {"query": query, "docs": docs, "runs": runs}


def test_worked_example_from_stored_rows(world, example, django_assert_num_queries):
    with django_assert_num_queries(3):
        report = topic_difficulty(collection=world.coll, runs=example["runs"], k=5)
    assert [t.query.external_id for t in report.topics] == ["q9"]
    topic = report.topics[0]
    assert topic.sndcg.tolist() == pytest.approx(list(EXPECTED.values()), abs=1e-4)
    assert topic.difficulty == pytest.approx(1 / 3)
    assert topic.beating_random == 1
    assert topic.pool_size == 8
    assert topic.rndcg == pytest.approx(rndcg([np.array(list(POOL.values()), float)], 5)[0])


def test_unjudged_and_missing_rankings(world, example):
    docs, query = example["docs"], example["query"]
    # Unjudged documents (x, y, z) count as gain 0, like e..h; ranks beyond k are ignored.
    same_as_poor = pf.run(
        world.coll, world.team_b, "unjudged", rankings={query: [docs[n] for n in "xyzhd"]}
    )
    # A run with no ranking for q9 scores sNDCG 0 there: it does not beat random.
    other_query = world.queries[0]
    absent = pf.run(world.coll, world.team_b, "absent", rankings={other_query: [docs["a"]]})
    report = topic_difficulty(
        collection=world.coll, runs=[*example["runs"], same_as_poor, absent], k=5
    )
    topic = report.topics[0]
    assert topic.sndcg[3] == pytest.approx(EXPECTED["poor"], abs=1e-4)
    assert topic.sndcg[4] == 0.0
    assert topic.difficulty == pytest.approx(1 / 5)


def test_query_without_spread_is_undefined(world, example):
    flat = factories.query(world.coll, "q10", text="all equal")
    pf.live_grades(world.coll, flat, {example["docs"]["a"]: 1.0, example["docs"]["b"]: 1.0})
    report = topic_difficulty(collection=world.coll, runs=example["runs"], k=5)
    by_id = {t.query.external_id: t for t in report.topics}
    assert math.isnan(by_id["q10"].difficulty)
    assert by_id["q10"].difficulty_class is None


def test_difficulty_page(world, example):
    url = reverse("metrics:difficulty", args=[world.coll.slug])
    response = world.client("coord").get(url)
    assert response.status_code == 200
    html = response.content.decode()
    assert re.search(r'data-query="q9"', html)
    row = re.search(r'data-query="q9"[^>]*>(.*?)</tr>', html, re.S).group(1)
    k10 = topic_difficulty(collection=world.coll, runs=_visible(world), k=10).topics[0]
    assert f"{k10.difficulty:.2f}" in row
    assert f"{k10.rndcg:.4f}" in row
    assert 'class="chart chart-boxes"' not in html  # the box plot is the other tab
    html = world.client("coord").get(url + "?tab=chart").content.decode()
    assert 'class="chart chart-boxes"' in html
    assert 'class="chart-zero"' in html
    assert "over 7 runs" in html


def _visible(world):
    return list(Run.objects.filter(collection=world.coll).order_by("tag"))


def test_difficulty_page_sorts(world, example):
    easy = factories.query(world.coll, "q0", text="easy one")
    docs = example["docs"]
    pf.live_grades(world.coll, easy, {docs["x"]: 2.0, docs["y"]: 0.0})
    for run in example["runs"]:
        RunQuery.objects.create(
            run=run, query=easy, ranking=ranking_bytes([docs["x"].pk]), retrieved=1
        )
    url = reverse("metrics:difficulty", args=[world.coll.slug])
    order = re.findall(r'<tr data-query="([^"]+)"', world.client("coord").get(url).content.decode())
    assert order == ["q9", "q0"]  # hardest first
    html = world.client("coord").get(url + "?sort=-difficulty").content.decode()
    assert re.findall(r'<tr data-query="([^"]+)"', html) == ["q0", "q9"]
    html = world.client("coord").get(url + "?sort=query").content.decode()
    assert re.findall(r'<tr data-query="([^"]+)"', html) == ["q0", "q9"]


def test_team_members_see_difficulty_over_their_own_runs(world, example):
    url = reverse("metrics:difficulty", args=[world.coll.slug])
    # Per-query scores of every run, and each pool's grades: nothing before publication.
    html = world.client("bob").get(url).content.decode()
    assert "over 0 runs of your team" in html and 'data-query="q9"' not in html
    assert 'data-score-visibility="none"' in html
    world.coll.judgments_published = True
    world.coll.save(update_fields=["judgments_published"])
    html = world.client("bob").get(url).content.decode()
    assert "over 2 runs of your team" in html
    assert world.client("judy").get(url).status_code == 403


def test_thin_queries_are_greyed_out_and_explained(world, example):
    # q9's pool has 8 judged documents: fewer than THIN_POOL_SIZE = 10.
    url = reverse("metrics:difficulty", args=[world.coll.slug])
    html = world.client("coord").get(url).content.decode()
    row = re.search(r'<tr data-query="q9"([^>]*)>(.*?)</tr>', html, re.S)
    assert "is-thin" in row.group(1)
    assert "only 8 judged documents (fewer than 10)" in row.group(2)
    assert "not rated" in row.group(2)
    assert "1 of 1 query is too thin to standardize against" in html
    html = world.client("coord").get(url + "?tab=chart").content.decode()  # the box plot's tab
    assert "1 of 1 query is too thin to standardize against" in html
    assert html.index("data-thin-note") < html.index('class="chart chart-boxes"')
    assert 'class="chart-box is-thin"' in html


def test_judged_at_k_beside_each_query(world):
    coll = world.coll
    query = factories.query(coll, "q20", text="well judged")
    judged = [factories.document(coll, f"j{i}") for i in range(12)]
    unjudged = [factories.document(coll, f"u{i}") for i in range(6)]
    pf.live_grades(coll, query, {d: float(i % 3) for i, d in enumerate(judged)})
    full = pf.run(coll, world.team_a, "full", rankings={query: judged[:10]})
    part = pf.run(coll, world.team_a, "part", rankings={query: judged[:4] + unjudged})
    only_full = topic_difficulty(collection=coll, runs=[full], k=10).topics[0]
    assert (only_full.pool_size, only_full.judged) == (12, 1.0)
    assert only_full.thin_reason is None
    only_part = topic_difficulty(collection=coll, runs=[part], k=10).topics[0]
    assert only_part.judged == pytest.approx(0.4)
    assert only_part.thin_reason == "the runs' top documents are 40% judged (under 50%)"
    both = topic_difficulty(collection=coll, runs=[full, part], k=10).topics[0]
    assert both.judged == pytest.approx(0.7) and both.thin_reason is None


def test_difficulty_over_rest_matches_the_page(world, example):
    from tests.api_client import client_for, errors_of

    url = f"/api/v1/collections/{world.coll.slug}/difficulty/"
    body = client_for(world.users["coord"]).get(url).json()
    runs = _visible(world)
    assert [r["tag"] for r in body["runs"]] == [run.tag for run in runs]
    assert body["k"] == 10 and body["judgments_version"] == world.coll.judgments_version
    k10 = {
        t.query.external_id: t
        for t in topic_difficulty(collection=world.coll, runs=runs, k=10).topics
    }
    q9 = next(t for t in body["topics"] if t["query"] == "q9")
    assert q9["difficulty"] == pytest.approx(k10["q9"].difficulty)
    assert q9["rndcg"] == pytest.approx(k10["q9"].rndcg)
    assert q9["pool_size"] == 8 and q9["thin_reason"].startswith("only 8 judged documents")
    expected = [None if math.isnan(v) else pytest.approx(v) for v in k10["q9"].sndcg]
    assert q9["sndcg"] == expected
    # Teams: nothing before publication; then over their own runs only; bad sort: 400
    # naming the field.
    refused = client_for(world.users["bob"]).get(url)
    assert refused.status_code == 403 and "published" in errors_of(refused)[0]["message"]
    world.coll.judgments_published = True
    world.coll.save(update_fields=["judgments_published"])
    mine = client_for(world.users["bob"]).get(url).json()
    assert {r["tag"] for r in mine["runs"]} == {r.tag for r in runs if r.team_id == world.team_b.pk}
    response = client_for(world.users["coord"]).get(url + "?sort=loudest")
    assert response.status_code == 400 and errors_of(response)[0]["field"] == "sort"
    order = client_for(world.users["coord"]).get(url + "?sort=query").json()["topics"]
    assert [t["query"] for t in order] == sorted(t["query"] for t in order)
