"""Gold pairs reach judges' queues blind, at the rate the coordinator sets."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from judging import selectors, services
from judging.models import Membership, PoolEntry
from judging.quality import services as gold_services
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def setup():
    """Two queries × five documents pooled; two pairs of them (and one unpooled) are gold."""
    coll = factories.collection("blind")
    queries = [factories.query(coll, f"q{i}") for i in range(2)]
    docs = [factories.document(coll, f"d{i}") for i in range(5)]
    services.pool_add_ids(
        collection=coll, pairs=[(q.pk, d.pk) for q in queries for d in docs[:4]], source="run"
    )
    boss, usr = factories.user("boss"), factories.user("ann")
    factories.member(coll, boss, Role.COORDINATOR)
    factories.member(coll, usr, Role.JUDGE)
    gold = [(queries[0], docs[1]), (queries[1], docs[4])]  # the second was not pooled
    for q, d in gold:
        gold_services.gold_set(query=q, document=d, grade=2, actor=boss)
    return coll, boss, factories.human_judge(usr), gold


def _pair(entry: PoolEntry) -> tuple[int, int]:
    return entry.query_id, entry.document_id


def test_marking_gold_pools_the_pair_without_saying_so(setup):
    coll, _boss, _judge, gold = setup
    entry = PoolEntry.objects.get(collection=coll, query=gold[1][0], document=gold[1][1])
    assert entry.source == PoolEntry.Source.MANUAL


def test_at_rate_one_every_gold_pair_comes_first_then_the_ordinary_queue(setup, monkeypatch):
    coll, _boss, judge, gold = setup
    gold_services.gold_rate_set(collection=coll, rate=1.0)
    wanted = {(q.pk, d.pk) for q, d in gold}
    served = []
    for _ in range(2):
        entry = selectors.next_pair(judge=judge, collection=coll)
        served.append(_pair(entry))
        services.judgment_record(judge=judge, query=entry.query, document=entry.document, grade=1)
    assert set(served) == wanted
    entry = selectors.next_pair(judge=judge, collection=coll)
    assert _pair(entry) not in wanted  # gold all graded: the ordinary order goes on


def test_the_rate_decides_each_time(setup, monkeypatch):
    coll, _boss, judge, gold = setup
    gold_services.gold_rate_set(collection=coll, rate=0.25)
    wanted = {(q.pk, d.pk) for q, d in gold}
    monkeypatch.setattr(selectors._random, "random", lambda: 0.2)  # below the rate
    assert _pair(selectors.next_pair(judge=judge, collection=coll)) in wanted
    monkeypatch.setattr(selectors._random, "random", lambda: 0.3)  # above it
    ordinary = selectors.next_pair(judge=judge, collection=coll)
    gold_services.gold_rate_set(collection=coll, rate=0.0)
    assert selectors.next_pair(judge=judge, collection=coll) == ordinary


def _shape(html: str) -> list[str]:
    """Return the page's tags with their attribute names, values and text left out."""
    tags = re.findall(r"<([a-zA-Z][\w-]*)([^>]*)>", html)
    return [name + " " + " ".join(sorted(re.findall(r"([\w-]+)=", attrs))) for name, attrs in tags]


def test_a_judge_cannot_tell_a_gold_pair_from_the_page_or_the_api(client, setup):
    coll, _boss, judge, gold = setup
    gold_entry = PoolEntry.objects.get(collection=coll, query=gold[0][0], document=gold[0][1])
    other = PoolEntry.objects.filter(collection=coll, query=gold[0][0]).exclude(pk=gold_entry.pk)[0]
    client.force_login(judge.user)
    pages = {}
    for name, entry in (("gold", gold_entry), ("other", other)):
        response = client.get(reverse("judging:judge_pair", args=[coll.slug, entry.pk]))
        assert response.status_code == 200
        pages[name] = response.content.decode()
        assert "gold" not in pages[name].lower()
    assert _shape(pages["gold"]) == _shape(pages["other"])
    api = client_for(judge.user)
    rows = api.get(f"/api/v1/collections/{coll.slug}/pool/").json()["results"]
    assert "gold" not in str(rows).lower()
    assert len({tuple(sorted(row)) for row in rows}) == 1  # the same fields for every pair
    for url in ("gold/", "gold/rate/", "judges/gold/"):
        assert api.get(f"/api/v1/collections/{coll.slug}/{url}").status_code == 403


def test_rate_over_rest_and_the_page(client, setup):
    coll, boss, _judge, _gold = setup
    api = client_for(boss)
    url = f"/api/v1/collections/{coll.slug}/gold/rate/"
    assert api.put(url, {"gold_rate": 0.1}, format="json").json() == {"gold_rate": 0.1}
    for bad in (-0.1, 1.5, "x", None):
        response = api.put(url, {"gold_rate": bad}, format="json")
        assert response.status_code == 400
        assert errors_of(response)[0]["field"] == "gold_rate"
    assert api.get(url).json() == {"gold_rate": 0.1}
    client.force_login(boss)
    page = reverse("judging:gold_list", args=[coll.slug])
    assert client.post(page, {"percent": "20"}).status_code == 303
    coll.refresh_from_db()
    assert coll.gold_rate == 0.2
    assert client.post(page, {"percent": "120"}).status_code == 400
