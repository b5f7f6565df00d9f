"""Two snapshots compared query by query: what entered, left or moved, and the measure.

The per-query scores and the overall comparison must be the runs' own (the same numbers
as the compare page, from the live list), and move when a judge grades.
"""

from __future__ import annotations

import pytest
import pytrec_eval
from django.test import Client

from judging import services as judging_services
from judging.models import LiveGrade
from metrics.analysis.compare import compare_runs
from metrics.live.scoring import measure_labels
from metrics.search import presets, selectors, services
from tests import factories
from tests.api_client import client_for, errors_of
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.test_engines import configure, snapshot

pytestmark = pytest.mark.django_db
BASE = "/api/v1/collections/search"
NDCG = measure_labels(["nDCG@10"])[0].canonical  # trec_eval's ndcg_cut.10


@pytest.fixture
def two(setup, engine):
    """Snapshot v1 (the query text) and v2 (the text and "batteries"), both runs."""
    coll, team, boss = setup
    coll.measures = ["nDCG@10"]
    coll.save(update_fields=["measures"])
    endpoint = endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    configuration = configure(coll, team, boss, endpoint)
    first = snapshot(configuration, boss, tag="v1")
    services.configuration_change(
        configuration=configuration,
        fields=services.VersionFields(
            endpoint=endpoint,
            path="/docs/_search",
            template={"size": "{{k}}", "query": {"match": {"body": "{{query_text}} batteries"}}},
            depth=10,
        ),
        user=boss,
    )
    second = snapshot(configuration, boss, tag="v2")
    judge = factories.human_judge(factories.user("jo"))
    factories.member(coll, judge.user)
    for qid, docno, grade in (("q1", "d1", 3), ("q1", "d5", 2), ("q2", "d2", 3), ("q3", "d3", 1)):
        judging_services.judgment_record(
            judge=judge,
            query=coll.queries.get(external_id=qid),
            document=coll.documents.get(external_id=docno),
            grade=grade,
        )
    first.refresh_from_db()
    second.refresh_from_db()
    return coll, boss, first, second


def _hits(snap, qid):
    return [h["docno"] for h in snap.queries.get(query__external_id=qid).hits]


def test_each_query_says_what_entered_left_and_moved_with_its_live_grades(two):
    coll, _boss, first, second = two
    diff = selectors.snapshot_diff(a=first, b=second, measure=NDCG, k=3)
    by_query = {q.query.external_id: q for q in diff.queries}
    assert set(by_query) == {"q1", "q2", "q3"}
    q1 = by_query["q1"]
    before, after = _hits(first, "q1")[:3], _hits(second, "q1")[:3]
    assert [p.docno for p, _ in q1.entered] == [d for d in after if d not in before]
    assert [p.docno for p, _ in q1.left] == [d for d in before if d not in after]
    assert "d5" in [p.docno for p, _ in q1.entered]  # "batteries" brought it in
    grades = {p.docno: g for p, g in q1.entered + q1.left + q1.moved}
    assert grades["d5"] == 2 and all(g is None for d, g in grades.items() if d not in ("d1", "d5"))
    # The measure per query is trec_eval's on the live list (pytrec_eval, the reference);
    # the overall test is Compare's.
    qrels: dict[str, dict[str, int]] = {}
    for qid, docno, grade in LiveGrade.objects.filter(collection=coll).values_list(
        "query__external_id", "document__external_id", "grade"
    ):
        qrels.setdefault(qid, {})[docno] = int(grade)  # the default policy: whole grades
    for snap, side in ((first, "before"), (second, "after")):
        run = {
            r.query.external_id: {h["docno"]: float(h["score"]) for h in r.hits}
            for r in snap.queries.select_related("query")
        }
        want = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
        for q in diff.queries:
            got = getattr(q, side)
            assert got == pytest.approx(want[q.query.external_id]["ndcg_cut_10"], abs=1e-12), q
    expected = compare_runs(baseline=first.run, runs=[second.run], measure=NDCG).rows[0]
    got = diff.comparison.rows[0]
    assert got.result.mean_diff == pytest.approx(expected.result.mean_diff, abs=1e-15)
    assert got.result.t_p_value == expected.result.t_p_value
    deltas = [abs(q.delta) for q in diff.queries if q.delta is not None]
    assert deltas == sorted(deltas, reverse=True)  # largest change first


def test_a_new_grade_moves_the_diff_at_once(two):
    coll, _boss, first, second = two
    before = selectors.snapshot_diff(a=first, b=second, measure=NDCG)
    judge = factories.human_judge(factories.user("ann"))
    factories.member(coll, judge.user)
    q1 = coll.queries.get(external_id="q1")
    judging_services.judgment_record(
        judge=judge, query=q1, document=coll.documents.get(external_id="d4"), grade=4
    )
    after = selectors.snapshot_diff(a=first, b=second, measure=NDCG)
    old = next(q for q in before.queries if q.query.external_id == "q1")
    new = next(q for q in after.queries if q.query.external_id == "q1")
    assert (old.before, old.after) != (new.before, new.after)


def test_the_page_and_rest_show_the_same_numbers_and_refuse_bad_choices(two):
    coll, boss, first, second = two
    page = Client()
    page.force_login(boss)
    html = page.get(f"/c/{coll.slug}/search/diff/").content.decode()  # the two newest
    assert '<span class="mono">v2</span> against <span class="mono">v1</span>' in html
    assert html.count("<tr data-query=") == 3 and "unjudged" in html and "grade 2<" in html
    api = client_for(boss)
    body = api.get(f"{BASE}/search-diffs/", {"a": first.pk, "b": second.pk, "k": 3}).json()
    diff = selectors.snapshot_diff(a=first, b=second, measure=NDCG, k=3)
    assert body["overall"]["mean_diff"] == diff.comparison.rows[0].result.mean_diff
    assert (
        f'data-value="{diff.comparison.rows[0].result.mean_diff!r}"'
        in page.get(
            f"/c/{coll.slug}/search/diff/", {"a": first.pk, "b": second.pk, "measure": "nDCG@10"}
        ).content.decode()
    )
    assert [q["query_id"] for q in body["queries"]] == [q.query.external_id for q in diff.queries]
    q1 = next(q for q in body["queries"] if q["query_id"] == "q1")
    assert {"docno": "d5", "before": None, "after": q1["entered"][0]["after"], "grade": 2} in q1[
        "entered"
    ]
    for params, field in (
        ({"a": first.pk}, "b"),
        ({"a": first.pk, "b": first.pk}, "b"),
        ({"a": "x", "b": second.pk}, "a"),
        ({"a": first.pk, "b": second.pk, "k": 0}, "k"),
        ({"a": first.pk, "b": second.pk, "k": "²"}, "k"),  # a digit to isdigit, not to int
        ({"a": "²", "b": second.pk}, "a"),
        ({"a": first.pk, "b": second.pk, "measure": "nope"}, "measure"),
        ({"a": first.pk, "b": second.pk, "colour": "red"}, "colour"),
    ):
        refused = api.get(f"{BASE}/search-diffs/", params)
        assert refused.status_code == 400, (params, refused.json())
        assert field in str(errors_of(refused)), (params, refused.json())
    assert (
        page.get(f"/c/{coll.slug}/search/diff/", {"a": first.pk, "b": first.pk}).status_code == 400
    )
    judge = factories.user("judy2")
    factories.member(coll, judge)
    assert client_for(judge).get(f"{BASE}/search-diffs/", {"a": 1, "b": 2}).status_code == 403
