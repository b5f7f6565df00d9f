"""Exports other tools read (issue 20 item 9): unjudged pairs as -1 and a provenance comment.

trec_eval reads a negative grade as "in the pool, not judged" (``RELVALUE_UNJUDGED``), and
skips one ``#`` line; both are checked against the C trec_eval where it is built.
"""

from __future__ import annotations

import json

import pytest
from django.http import StreamingHttpResponse

from judging import services
from judging.lists.exports import graded_version
from tests.api_client import errors_of
from tests.engine.conftest import trec_eval_bin
from tests.engine.test_trec_eval_diff import run_engine, run_trec_eval

__all__ = ["trec_eval_bin"]

pytestmark = pytest.mark.django_db
URL = "/api/v1/collections/demo/qrels/"


def _body(response) -> str:
    assert isinstance(response, StreamingHttpResponse), getattr(response, "content", b"")
    return b"".join(response.streaming_content).decode()


@pytest.fixture
def graded(world):
    """q1×d1 graded 2 by judy; q1×d2, q1×dx and q2×d3 pooled and not graded."""
    judge = services.judge_for_user(user=world.users["judy"])
    services.judgment_record(
        judge=judge, query=world.queries["q1"], document=world.docs["d1"], grade=2
    )
    return world


def test_unjudged_pairs_come_as_minus_one_in_order(api, graded):
    cora = api("cora")
    assert _body(cora.get(URL)) == "q1 0 d1 2\n"
    assert _body(cora.get(URL, {"unjudged": "1"})) == (
        "q1 0 d1 2\nq1 0 d2 -1\nq1 0 dx -1\nq2 0 d3 -1\n"
    )
    assert _body(cora.get(URL, {"unjudged": "1", "query": "q2"})) == "q2 0 d3 -1\n"
    items = json.loads(_body(cora.get(URL, {"unjudged": "true", "format": "json"})))
    assert [(i["document"], i["grade"], i["humans"]) for i in items] == [
        ("d1", 2, 1),
        ("d2", -1, 0),
        ("dx", -1, 0),
        ("d3", -1, 0),
    ]
    csv_text = _body(cora.get(URL, {"unjudged": "1", "format": "csv"}))
    assert csv_text.splitlines()[-1] == "query q2,d3,-1"


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"unjudged": "1", "labels": "raw", "format": "csv"}, "unjudged"),
        ({"unjudged": "1", "min_judges": "1"}, "unjudged"),
        ({"unjudged": "1", "provenance": "human"}, "unjudged"),
        ({"unjudged": "maybe"}, "unjudged"),
        ({"metadata": "1", "format": "csv"}, "metadata"),
    ],
)
def test_unjudged_and_metadata_refuse_what_they_cannot_mean(api, graded, params, field):
    response = api("cora").get(URL, params)
    assert response.status_code == 400 and errors_of(response)[0]["field"] == field


def test_a_provenance_comment_starts_qrels_and_ranklib_on_request(api, graded):
    cora = api("cora")
    lines = _body(cora.get(URL, {"metadata": "1", "unjudged": "1"})).splitlines()
    assert lines[0].startswith("# ir_metadata {") and lines[1:] == [
        "q1 0 d1 2",
        "q1 0 d2 -1",
        "q1 0 dx -1",
        "q2 0 d3 -1",
    ]
    meta = json.loads(lines[0].removeprefix("# ir_metadata "))
    graded.coll.refresh_from_db()
    assert meta["collection"] == "demo"
    assert meta["judgment_list_version"] == graded.coll.judgments_version
    assert meta["aggregation_policy"] == graded.coll.aggregation_policy
    assert meta["labels"] == "live" and meta["unjudged"] == -1
    assert meta["software"] == f"Graded {graded_version()}" and meta["exported_at"].endswith("Z")
    ranklib = _body(cora.get(URL, {"metadata": "1", "format": "ranklib"})).splitlines()
    assert ranklib[0].startswith("# ir_metadata {") and ranklib[1].startswith("# qid:")


def test_trec_eval_and_our_engine_read_the_file_alike(api, graded, tmp_path, trec_eval_bin):
    qrels = tmp_path / "q.qrels"
    qrels.write_text(_body(api("cora").get(URL, {"metadata": "1", "unjudged": "1"})))
    run = tmp_path / "r.run"
    run.write_text("q1 Q0 d2 1 3 r\nq1 Q0 d1 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d3 1 1 r\n")
    measures = ["bpref", "num_nonrel_judged_ret", "P.2", "ndcg", "num_rel"]
    theirs = run_trec_eval(trec_eval_bin, [], measures, qrels, run)
    ours = run_engine([], measures, qrels, run)
    assert theirs and set(ours) == set(theirs)
    for key, value in theirs.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key
