"""Judgments over REST name their guidelines version and judge version (issue 45, item 7).

Every judgment payload (list, detail, the answers of POST and PATCH, history events, the
pair view, raw-label exports) carries ``guidelines_version`` and ``judge_version``, and
reading them costs no query per judgment.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from judging import services
from judging.guidelines import services as guidelines_services
from judging.llm.judges import judge_version
from judging.models import Judge, PoolEntry
from tests import factories

pytestmark = pytest.mark.django_db
C = "/api/v1/collections/demo/"


@pytest.fixture
def llm(world) -> Judge:
    judge = factories.llm_judge("gpt")
    judge.collections.add(world.coll)
    return judge


def _new_guidelines(world, text: str) -> int:
    guidelines_services.guidelines_update(
        collection=world.coll, guidelines=text, actor=world.users["cora"]
    )
    world.coll.refresh_from_db()
    return world.coll.guidelines_version


def test_a_label_names_the_guidelines_it_was_written_under(api, world):
    first = api("judy").post(
        C + "judgments/", {"query": "q1", "document": "d1", "grade": 2}, format="json"
    )
    assert first.status_code == 201
    v1 = world.coll.guidelines_version
    assert first.json()["guidelines_version"] == v1
    assert first.json()["judge_version"] is None  # a human label
    v2 = _new_guidelines(world, "Grade 4 only for a perfect answer.")
    assert v2 != v1
    url = C + f"judgments/{first.json()['id']}/"
    assert api("judy").get(url).json()["guidelines_version"] == v1  # unchanged label
    changed = api("judy").patch(url, {"grade": 3}, format="json")
    assert changed.json()["guidelines_version"] == v2
    assert api("cora").get(url).json()["guidelines_version"] == v2
    listed = api("cora").get(C + "judgments/").json()["results"]
    assert [j["guidelines_version"] for j in listed] == [v2]
    history = api("judy").get(url + "history/").json()["results"]
    assert [e["after"]["guidelines_version"] for e in history] == [v1, v2]


def test_an_llm_label_names_the_judge_version_that_wrote_it(api, world, llm):
    body = {"judge": llm.pk, "query": "q1", "document": "d1", "grade": 1}
    first = api("cora").post(C + "judgments/", body, format="json").json()
    v1 = judge_version(llm)
    assert first["judge_version"] == v1
    assert (
        api("cora")
        .patch(f"/api/v1/judges/{llm.pk}/", {"prompt_version": "v2"}, format="json")
        .json()["version"]
        != v1
    )
    llm.refresh_from_db()
    v2 = judge_version(llm)
    batch = {"judge": llm.pk, "judgments": [{"query": "q1", "document": "d2", "grade": 3}]}
    assert api("cora").post(C + "judgments/", batch, format="json").status_code == 201
    listed = api("cora").get(C + "judgments/", {"judge": llm.pk}).json()["results"]
    assert {(j["docno"], j["judge_version"]) for j in listed} == {("d1", v1), ("d2", v2)}
    pair = api("cora").get(C + "pair/", {"query": "q1", "document": "d1"}).json()
    assert [label["judge_version"] for label in pair["labels"]] == [v1]
    assert pair["labels"][0]["guidelines_version"] == world.coll.guidelines_version


def test_the_pair_view_hides_the_judge_version_from_adjudicators(api, world, llm):
    from judging.models import Membership

    ada = factories.user("ada")
    factories.member(world.coll, ada, Membership.Role.ADJUDICATOR)
    services.judgment_record(
        judge=llm, query=world.queries["q1"], document=world.docs["d1"], grade=1
    )
    from tests.api_client import client_for

    pair = client_for(ada).get(C + "pair/", {"query": "q1", "document": "d1"}).json()
    assert [label["judge_version"] for label in pair["labels"]] == [None]


def test_raw_label_exports_carry_both_versions(api, world, llm):
    services.judgment_record(
        judge=llm, query=world.queries["q1"], document=world.docs["d1"], grade=1
    )
    services.judgment_record(
        judge=services.judge_for_user(user=world.users["judy"]),
        query=world.queries["q1"],
        document=world.docs["d1"],
        grade=2,
    )
    gv, jv = world.coll.guidelines_version, judge_version(llm)
    response = api("cora").get(C + "qrels/", {"format": "jsonl", "labels": "raw"})
    rows = [json.loads(x) for x in b"".join(response.streaming_content).splitlines()]
    got = {(r["judge_kind"], r["guidelines_version"], r["judge_version"]) for r in rows}
    assert got == {("llm", gv, jv), ("human", gv, None)}
    response = api("cora").get(C + "qrels/", {"format": "csv", "labels": "raw"})
    table = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    got = {(r["judge_kind"], r["guidelines_version"], r["judge_version"]) for r in table}
    assert got == {("llm", str(gv), jv), ("human", str(gv), "")}


def _fill(world, n: int, llm: Judge) -> None:
    """Add ``n`` labels, half human and half LLM, under two guidelines and judge versions."""
    queries = [factories.query(world.coll, f"f{n}-q{i}") for i in range(5)]
    docs = [factories.document(world.coll, f"f{n}-d{i}") for i in range(n // 5 + 1)]
    PoolEntry.objects.bulk_create(
        [PoolEntry(collection=world.coll, query=q, document=d) for q in queries for d in docs]
    )
    pairs = [(q, d) for q in queries for d in docs][:n]
    judy = services.judge_for_user(user=world.users["judy"])
    for k, (query, document) in enumerate(pairs):
        if k == n // 2:
            _new_guidelines(world, f"Version for {n}.")
            llm.prompt_version = f"p{n}"
            llm.save(update_fields=["prompt_version"])
        judge = judy if k % 2 else llm
        services.judgment_record(judge=judge, query=query, document=document, grade=k % 5)


def _count(client, url):
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(url)
    assert response.status_code == 200
    return len(ctx.captured_queries), response.json()


def test_reading_the_versions_costs_no_query_per_judgment(api, world, llm):
    client = api("cora")
    _fill(world, 6, llm)
    small, body = _count(client, C + "judgments/")
    _fill(world, 60, llm)
    large, body = _count(client, C + "judgments/")
    assert len(body["results"]) == 66
    assert large == small, (small, large)
    versions = {(j["judge"]["kind"], j["judge_version"]) for j in body["results"]}
    assert len({v for kind, v in versions if kind == "llm"}) >= 3  # several judge versions
    assert {v for kind, v in versions if kind == "human"} == {None}
    assert len({j["guidelines_version"] for j in body["results"]}) >= 3
    one = body["results"][0]
    detail_small, _ = _count(client, C + f"judgments/{one['id']}/")
    assert detail_small <= small


def test_the_schema_documents_both_fields(api, world):
    schema = api("cora").get("/api/v1/schema/", {"format": "json"}).json()
    props = schema["components"]["schemas"]["Judgment"]["properties"]
    for name in ("guidelines_version", "judge_version"):
        assert props[name]["readOnly"] and props[name]["nullable"], props[name]
        assert props[name]["description"]
