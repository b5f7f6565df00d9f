"""REST: one query of a run explained (grades, NDCG terms, ideal, pooled) and run comparison."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats as sps

from judging.models import Collection
from metrics import services
from metrics.visibility.services import score_visibility_update
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
NDCG = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"
# q1's live grades: d1 = 3, d2 = 0, d3 = 1; d6 has none.
RUN = b"q1 Q0 d2 1 9 r\nq1 Q0 d1 2 8 r\nq1 Q0 d6 3 7 r\nq1 Q0 d3 4 6 r\nq2 Q0 d4 1 5 r\n"


@pytest.fixture
def submitted(world, settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return services.run_submit(
        collection=world.coll,
        team=world.alpha,
        tag="explained",
        content=RUN,
        filename="r.txt",
        user=world.users["alice"],
    )


def url(world, run, qid: str) -> str:
    return reverse("metrics-api:run-query", args=[world.coll.slug, run.pk, qid])


def _publish(world) -> None:
    Collection.objects.filter(pk=world.coll.pk).update(judgments_published=True)


def test_query_of_a_run_explained(world, api, submitted):
    _publish(world)
    response = api("alice").get(url(world, submitted, "q1"))
    assert response.status_code == 200, response.json()
    body = response.json()
    dcg = 3 / math.log2(3) + 1 / math.log2(5)
    ideal = 3 + 1 / math.log2(3)
    assert body["measure"] == NDCG
    assert body["cutoff"] == 10 and body["retrieved"] == 4
    assert body["dcg"] == pytest.approx(dcg)
    assert body["ideal_dcg"] == pytest.approx(ideal)
    assert body["ndcg"] == pytest.approx(dcg / ideal)
    # The stored score, computed by the scoring service, agrees with the explanation.
    stored = metrics_factories.query_scores(submitted)[world.queries["q1"].pk][NDCG]
    assert body["stored_score"] == pytest.approx(stored) == pytest.approx(dcg / ideal)
    ranked = body["ranked"]
    assert [d["docno"] for d in ranked] == ["d2", "d1", "d6", "d3"]
    assert [d["grade"] for d in ranked] == [0.0, 3.0, None, 1.0]
    assert [d["gain"] for d in ranked] == [0, 3, 0, 1]
    assert ranked[1]["contribution"] == pytest.approx(3 / math.log2(3))
    # Only d6 was unjudged in the run's top pool_depth, so only d6 was pooled by the run.
    assert [d["pooled"] for d in ranked] == [False, False, True, False]
    assert body["judged_in_top"] == 3
    assert [(d["docno"], d["grade"], d["run_rank"]) for d in body["ideal"]] == [
        ("d1", 3.0, 2),
        ("d3", 1.0, 4),
    ]
    assert body["grades_shown"] is True


def test_a_team_sees_no_grade_and_no_score_while_the_list_is_unpublished(world, api, submitted):
    # A per-query score is the grades in disguise (docs/security.md): under the default
    # score visibility (hidden) a team sees neither, only its own ranking.
    body = api("alice").get(url(world, submitted, "q1")).json()
    assert body["grades_shown"] is False and body["scores_shown"] is False
    assert body["ndcg"] is None and body["stored_score"] is None
    assert body["stored_version"] is None and body["judged_in_top"] is None
    assert body["dcg"] is None and body["ideal_dcg"] is None and body["ideal"] == []
    assert [d["docno"] for d in body["ranked"]] == ["d2", "d1", "d6", "d3"]
    assert {(d["grade"], d["gain"], d["contribution"]) for d in body["ranked"]} == {
        (None, None, None)
    }
    # The coordinator still sees everything.
    full = api("cora").get(url(world, submitted, "q1")).json()
    assert full["ideal"] != [] and full["scores_shown"] is True
    assert full["ndcg"] == pytest.approx(
        (3 / math.log2(3) + 1 / math.log2(5)) / (3 + 1 / math.log2(3))
    )


@pytest.mark.parametrize("mode", ["aggregate", "split"])
def test_no_per_query_score_for_a_team_in_any_mode_before_publication(world, api, submitted, mode):
    score_visibility_update(collection=world.coll, mode=mode, min_queries=1, public_share=1.0)
    body = api("alice").get(url(world, submitted, "q1")).json()
    assert body["scores_shown"] is False
    assert (body["ndcg"], body["stored_score"], body["judged_in_top"]) == (None, None, None)


def test_query_explained_errors_and_visibility(world, api, submitted):
    assert api("alice").get(url(world, submitted, "nope")).status_code == 404
    assert api("bob").get(url(world, submitted, "q1")).status_code == 404  # other team
    assert api("judy").get(url(world, submitted, "q1")).status_code == 403
    assert api("cora").get(url(world, submitted, "q1")).status_code == 200
    bad = api("alice").get(url(world, submitted, "q1"), {"measure": "P@10"})
    assert bad.status_code == 400
    assert bad.json()["errors"][0]["field"] == "measure"
    # A query the run left out: empty ranking, the ideal still shown (list published).
    _publish(world)
    body = api("alice").get(url(world, submitted, "q3")).json()
    assert body["ranked"] == [] and body["ndcg"] == 0.0
    assert [d["docno"] for d in body["ideal"]] == ["d5"]


@pytest.fixture
def three_runs(world):
    qs = [world.queries[q] for q in ("q1", "q2", "q3")]
    values = {
        "base": [0.2, 0.5, 0.4],
        "better": [0.6, 0.7, 0.5],
        "mixed": [0.1, 0.9, 0.4],
    }
    return {
        tag: metrics_factories.run(
            world.coll,
            world.alpha,
            tag,
            per_query={q: {NDCG: v} for q, v in zip(qs, vals, strict=True)},
        )
        for tag, vals in values.items()
    }


def test_compare_over_rest(world, api, three_runs):
    base, better, mixed = three_runs["base"], three_runs["better"], three_runs["mixed"]
    compare = reverse("metrics-api:compare", args=[world.coll.slug])
    query = {"baseline": base.pk, "runs": f"{better.pk},{mixed.pk}"}
    # Per-query deltas are per-query scores: refused to a team until publication.
    refused = api("alice").get(compare, query)
    assert refused.status_code == 403
    assert "published" in refused.json()["errors"][0]["message"]
    assert api("cora").get(compare, query).status_code == 200
    _publish(world)
    response = api("alice").get(compare, query)
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["baseline"] == "base" and body["measure"] == NDCG
    assert body["queries"] == ["q1", "q2", "q3"] and body["holm"] is True
    first = body["runs"][0]
    assert first["run"] == "better"
    assert first["deltas"] == pytest.approx({"q1": 0.4, "q2": 0.2, "q3": 0.1})
    assert first["mean_diff"] == pytest.approx(0.7 / 3)
    assert (first["wins"], first["losses"], first["ties"]) == (3, 0, 0)
    t = sps.ttest_rel([0.6, 0.7, 0.5], [0.2, 0.5, 0.4])
    assert first["t_statistic"] == pytest.approx(t.statistic)
    assert first["p_values"]["t"] == pytest.approx(t.pvalue)
    assert first["ci_low"] <= first["mean_diff"] <= first["ci_high"]
    # Holm with two comparisons: the smaller p doubles, the larger is max(2 p_min, p).
    p = sorted([r["p_values"]["t"] for r in body["runs"]])
    adjusted = sorted(r["p_values_adjusted"]["t"] for r in body["runs"])
    assert adjusted == pytest.approx([min(1, 2 * p[0]), min(1, max(2 * p[0], p[1]))])
    assert np.isclose(body["baseline_mean"], np.mean([0.2, 0.5, 0.4]))


def test_compare_errors(world, api, three_runs):
    _publish(world)
    compare = reverse("metrics-api:compare", args=[world.coll.slug])
    client = api("alice")
    response = client.get(compare, {"baseline": "x", "measure": "nDCG@zz"})
    assert response.status_code == 400
    fields = {e.get("field") for e in response.json()["errors"]}
    assert fields == {"baseline", "runs", "measure"}
    other = metrics_factories.run(world.coll, world.beta, "hidden")
    hidden = client.get(compare, {"baseline": three_runs["base"].pk, "runs": other.pk})
    assert hidden.status_code == 404
    assert api("judy").get(compare, {"baseline": 1, "runs": 2}).status_code == 403
