"""List endpoints cost a constant number of SQL queries, however many rows they show."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging import services
from judging.models import Judge, PoolEntry
from tests import factories

pytestmark = pytest.mark.django_db
C = "/api/v1/collections/demo/"


def _fill(world, n):
    """Give the collection ``n`` judgments from a mix of human and LLM judges."""
    queries = [factories.query(world.coll, f"fill{n}-q{i}") for i in range(5)]
    docs = [factories.document(world.coll, f"fill{n}-d{i}") for i in range(n // 5 + 1)]
    PoolEntry.objects.bulk_create(
        [PoolEntry(collection=world.coll, query=q, document=d) for q in queries for d in docs]
    )
    judges = [
        services.judge_for_user(user=world.users["judy"]),
        Judge.objects.create(kind="llm", name=f"llm{n}", model="m"),
    ]
    pairs = [(q, d) for q in queries for d in docs][:n]
    for i, judge in enumerate(judges):
        rows = [
            services.JudgmentRow(k + 1, q.external_id, d.external_id, grade=k % 5)
            for k, (q, d) in enumerate(pairs)
            if k % 2 == i
        ]
        services.judgments_import(
            collection=world.coll, judge=judge, rows=rows, actor=world.users["cora"]
        )


def _queries(client, url):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries), response


@pytest.mark.parametrize(
    "path",
    ["judgments/", "events/", "pool/", "documents/", "queries/", "judgments/?format=qrels&judge=1"],
)
def test_list_query_count_is_constant(api, world, path):
    client = api("cora")
    url = C + path
    if "format=qrels" in url:
        url = url.replace(
            "judge=1", f"judge={services.judge_for_user(user=world.users['judy']).pk}"
        )
    _fill(world, 5)
    small, response = _queries(client, url)
    _fill(world, 45)
    large, response = _queries(client, url)
    assert small == large
    if path == "judgments/":
        assert response.json()["count"] == 50


def test_judge_view_of_judgments_is_constant_too(api, world):
    client = api("judy")
    _fill(world, 5)
    small, _ = _queries(client, C + "judgments/")
    _fill(world, 45)
    large, response = _queries(client, C + "judgments/")
    assert small == large
    assert {r["judge"]["name"] for r in response.json()["results"]} == {"judy"}


def test_collection_list_is_constant(api, world):
    client = api("cora")
    small, _ = _queries(client, "/api/v1/collections/")
    for i in range(10):
        factories.member(factories.collection(f"extra{i}"), world.users["cora"], "coordinator")
    large, response = _queries(client, "/api/v1/collections/")
    assert small == large and response.json()["count"] == 11
