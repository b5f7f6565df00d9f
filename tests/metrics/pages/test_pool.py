"""The coordinators' pool page: filters (query, judged count, source run, unjudged) and pages."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from judging.models import PoolEntry
from metrics.pool.views import POOL_PAGE_SIZE
from tests import factories
from tests.metrics import pages_factories as pf

pytestmark = pytest.mark.django_db


@pytest.fixture
def pool(world):
    """Pool q1 × d0..d59 and q2 × d0..d2; q1's first two pairs judged by 1 and 2 judges."""
    docs = [factories.document(world.coll, f"d{i}", title=f"Title {i}") for i in range(60)]
    for i, doc in enumerate(docs):
        PoolEntry.objects.create(
            collection=world.coll,
            query=world.queries[0],
            document=doc,
            graded_count=2 if i == 0 else 1 if i == 1 else 0,
        )
    for doc in docs[:3]:
        PoolEntry.objects.create(
            collection=world.coll, query=world.queries[1], document=doc, source="run"
        )
    return docs


def url(world) -> str:
    return reverse("metrics:pool", args=[world.coll.slug])


def pairs(response) -> list[str]:
    html = response.content.decode()
    return [chunk.split('"', 1)[0] for chunk in html.split('data-pair="')[1:]]


def test_only_coordinators(world, pool):
    for who, status in (("alice", 403), ("judy", 403), ("stranger", 404)):
        assert world.client(who).get(url(world)).status_code == status


def test_pages_and_filters(world, pool, django_assert_max_num_queries):
    client = world.client("coord")
    with django_assert_max_num_queries(9):  # one more: the key numbers, in one query
        first = client.get(url(world))
    assert first.status_code == 200
    assert len(pairs(first)) == POOL_PAGE_SIZE == 25
    html = first.content.decode()
    assert "63 pooled pairs, page 1 of 3" in html
    # Key numbers over the whole pool: 63 pairs, 58 + 3 unjudged, and complete those that
    # as many judges graded as the collection asks per pair (q1/d0 by 2, q1/d1 by 1).
    numbers = dict(re.findall(r"<dt>([^<]+)</dt><dd>([^<]+)</dd>", html))
    assert numbers["Pairs"] == "63" and numbers["Unjudged"] == "61"
    complete = sum(graded >= world.coll.judges_per_pair for graded in (2, 1))
    assert numbers["Complete"] == str(complete)
    assert len(pairs(client.get(url(world), {"page": 2}))) == POOL_PAGE_SIZE
    assert len(pairs(client.get(url(world), {"page": 3}))) == 63 - 2 * POOL_PAGE_SIZE
    assert pairs(client.get(url(world), {"query": "q2"})) == ["q2/d0", "q2/d1", "q2/d2"]
    assert pairs(client.get(url(world), {"graded": 2})) == ["q1/d0"]
    assert pairs(client.get(url(world), {"graded": 1})) == ["q1/d1"]
    unjudged = client.get(url(world), {"unjudged": "on", "query": "q1"})
    assert "58 pooled pairs" in unjudged.content.decode()
    assert "q1/d0" not in pairs(unjudged)
    # The source run: the pairs of its top pool_depth.
    run = pf.run(
        world.coll,
        world.team_a,
        "pooler",
        rankings={world.queries[1]: [pool[2], pool[1]], world.queries[0]: [pool[59]]},
    )
    assert pairs(client.get(url(world), {"run": run.pk})) == ["q1/d59", "q2/d1", "q2/d2"]
    bad = client.get(url(world), {"graded": "-1"})
    assert bad.status_code == 200 and "greater than or equal to 0" in bad.content.decode()


def test_collection_page_links_to_pool_and_settings(world):
    html = (
        world.client("coord")
        .get(reverse("judging:collection_detail", args=[world.coll.slug]))
        .content.decode()
    )
    assert reverse("metrics:pool", args=[world.coll.slug]) in html
    assert reverse("metrics:collection_update", args=[world.coll.slug]) in html


def test_coverage_per_query_shows_the_query_text(world, pool):
    html = (
        world.client("coord")
        .get(reverse("judging:collection_agreement", args=[world.coll.slug]), {"tab": "coverage"})
        .content.decode()
    )
    row = html.split('data-query="q1"', 1)[1].split("</tr>", 1)[0]
    assert 'data-field="text">query text 1<' in row
