"""REST: every pair of runs compared, with the correction named (compare/pairs/)."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from judging import services as judging_services
from judging.models import Collection, LiveGrade
from metrics import engine, services
from metrics.engine.letters import letter_strings
from metrics.engine.pairs import all_pairs
from metrics.visibility.services import score_visibility_update
from tests import factories
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
NDCG = "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"
#: Per-query nDCG@10 over q1–q3: far-ahead "top", then "mid" and "low" close together.
VALUES = {
    "top": [0.9, 0.8, 0.85],
    "mid": [0.5, 0.35, 0.45],
    "low": [0.45, 0.3, 0.45],
    "flat": [0.3, 0.1, 0.2],
}


def url(world) -> str:
    return reverse("metrics-api:compare-pairs", args=[world.coll.slug])


@pytest.fixture
def four(world):
    qs = [world.queries[q] for q in ("q1", "q2", "q3")]
    return {
        tag: metrics_factories.run(
            world.coll,
            world.alpha,
            tag,
            scores={NDCG: float(np.mean(values))},
            per_query={q: {NDCG: v} for q, v in zip(qs, values, strict=True)},
        )
        for tag, values in VALUES.items()
    }


def _publish(world) -> None:
    Collection.objects.filter(pk=world.coll.pk).update(judgments_published=True)


def _holm(p: list[float]) -> np.ndarray:
    with mock.patch("gc.collect"):  # statsmodels' Holm collects garbage on every call
        return multipletests(p, method="holm")[1]


def test_every_pair_over_rest_with_holm(world, api, four):
    body = api("cora").get(url(world)).json()  # default: every visible scored run
    assert body["measure"] == NDCG and body["correction"] == "holm"
    assert body["correction_name"] == "Holm over all 6 pairs (paired t-test)"
    assert body["test"] == "paired t-test, two-sided"
    assert body["interval"] == "paired t interval of each pair, not adjusted"
    assert (body["alpha"], body["confidence"], body["df"]) == (0.05, 0.95, 2)
    assert body["critical_value"] == pytest.approx(sps.t.ppf(0.975, 2))
    assert body["residual_variance"] is None
    assert body["queries"] == ["q1", "q2", "q3"] and body["left_out"] == []
    assert [r["run"] for r in body["runs"]] == ["top", "mid", "low", "flat"]
    assert [r["rank"] for r in body["runs"]] == [1, 2, 3, 4]
    assert body["runs"][0]["mean"] == pytest.approx(np.mean(VALUES["top"]))
    pairs = list(itertools.combinations(["top", "mid", "low", "flat"], 2))
    assert [(p["a"], p["b"]) for p in body["pairs"]] == pairs
    raw = [sps.ttest_rel(VALUES[a], VALUES[b]) for a, b in pairs]
    corrected = _holm([r.pvalue for r in raw])
    for pair, (a, b), reference, adjusted in zip(body["pairs"], pairs, raw, corrected, strict=True):
        assert pair["a_id"] == four[a].pk and pair["b_id"] == four[b].pk
        assert pair["mean_diff"] == pytest.approx(np.mean(VALUES[a]) - np.mean(VALUES[b]))
        assert pair["t_statistic"] == pytest.approx(reference.statistic, rel=1e-12)
        assert pair["p_value"] == pytest.approx(reference.pvalue, rel=1e-12)
        assert pair["p_value_corrected"] == pytest.approx(adjusted, rel=1e-12)
        assert pair["significant"] == (adjusted <= 0.05)
        assert pair["q_statistic"] is None
        interval = reference.confidence_interval(0.95)
        assert (pair["ci_low"], pair["ci_high"]) == pytest.approx((interval.low, interval.high))
    assert body["significant_pairs"] == sum(p["significant"] for p in body["pairs"])
    # The letters are the compact display of those decisions (and the leaderboard's).
    expected = all_pairs(np.array(list(VALUES.values())))
    shown = letter_strings(list(expected.groups))
    assert [(r["groups"], r["group_numbers"]) for r in body["runs"]] == [
        (s, [g + 1 for g in groups]) for s, groups in zip(shown, expected.groups, strict=True)
    ]
    board = api("cora").get(reverse("metrics-api:leaderboard", args=[world.coll.slug])).json()
    assert [(r["run"], r["groups"]) for r in board["rows"]] == [
        (r["run"], r["groups"]) for r in body["runs"]
    ]


def test_every_pair_over_rest_with_tukey(world, api, four):
    chosen = [four[t].pk for t in ("flat", "top", "mid")]
    body = api("cora").get(url(world), {"runs": ",".join(map(str, chosen)), "correction": "tukey"})
    body = body.json()
    assert body["correction"] == "tukey"
    assert body["correction_name"] == "Tukey's HSD, topics as blocks (3 pairs)"
    assert body["interval"] == "Tukey's simultaneous interval (all pairs at once)"
    assert [r["run"] for r in body["runs"]] == ["top", "mid", "flat"]
    matrix = np.array([VALUES[t] for t in ("top", "mid", "flat")])
    residual = matrix - matrix.mean(axis=1, keepdims=True) - matrix.mean(axis=0) + matrix.mean()
    variance = float(np.sum(residual**2) / 4)  # (3 − 1)(3 − 1) degrees of freedom
    assert body["df"] == 4 and body["residual_variance"] == pytest.approx(variance)
    assert body["critical_value"] == pytest.approx(sps.studentized_range.ppf(0.95, 3, 4), rel=1e-9)
    error = np.sqrt(variance / 3)
    for pair in body["pairs"]:
        order = [r["run"] for r in body["runs"]]
        a, b = matrix[order.index(pair["a"])], matrix[order.index(pair["b"])]
        q = (a.mean() - b.mean()) / error
        assert pair["q_statistic"] == pytest.approx(q)
        assert pair["p_value_corrected"] == pytest.approx(
            sps.studentized_range.sf(q, 3, 4), abs=1e-10
        )
        assert pair["p_value"] == pytest.approx(sps.ttest_rel(a, b).pvalue)
        half = body["critical_value"] * error
        assert pair["ci_high"] - pair["mean_diff"] == pytest.approx(half)


def test_errors_are_named_and_unknown_parameters_refused(world, api, four):
    client = api("cora")
    unknown = client.get(url(world), {"baseline": four["top"].pk})
    assert unknown.status_code == 400
    (item,) = unknown.json()["errors"]
    assert item["field"] == "baseline" and set(item["known"]) == {"runs", "measure", "correction"}
    bad = client.get(url(world), {"runs": "x", "measure": "nDCG@zz", "correction": "bonferroni"})
    assert bad.status_code == 400
    assert {e["field"] for e in bad.json()["errors"]} == {"runs", "measure", "correction"}
    many = client.get(url(world), {"runs": ",".join(str(i) for i in range(1, 102))})
    assert many.status_code == 400 and "at most 100 runs" in many.json()["errors"][0]["message"]
    one = client.get(url(world), {"runs": four["top"].pk})
    assert one.status_code == 400
    assert "at least two runs" in one.json()["errors"][0]["message"]
    other = metrics_factories.run(world.coll, world.beta, "theirs")
    _publish(world)
    hidden = api("alice").get(url(world), {"runs": f"{four['top'].pk},{other.pk}"})
    assert hidden.status_code == 404  # another team's run before the leaderboard is published
    assert api("judy").get(url(world)).status_code == 403
    assert api("otto").get(url(world)).status_code == 404
    assert api(None).get(url(world)).status_code in (401, 403)


@pytest.mark.parametrize("mode", ["hidden", "aggregate", "split"])
def test_a_team_sees_no_pair_while_per_query_scores_are_hidden(world, api, four, mode):
    # The same ScorePolicy as compare/: per-query differences are per-query scores.
    score_visibility_update(collection=world.coll, mode=mode, min_queries=1)
    compare = reverse("metrics-api:compare", args=[world.coll.slug])
    ids = f"{four['top'].pk},{four['mid'].pk}"
    asked = [(url(world), {"runs": ids}), (compare, {"baseline": four["low"].pk, "runs": ids})]
    for endpoint, params in asked:
        refused = api("alice").get(endpoint, params)
        assert refused.status_code == 403, endpoint
        assert "published" in refused.json()["errors"][0]["message"]
    assert api("cora").get(url(world), {"runs": ids}).status_code == 200
    _publish(world)
    assert api("alice").get(url(world), {"runs": ids}).status_code == 200


def _count(client, address: str, params: dict) -> tuple[int, dict]:
    cache.clear()
    with CaptureQueriesContext(connection) as ctx:
        response = client.get(address, params)
    assert response.status_code == 200, response.json()
    return len(ctx.captured_queries), response.json()


#: token, collection, roles, viewer roles, viewer teams, runs, scoreboard (default runs),
#: the query columns, the queries.
PAIRS_QUERIES = 9


@pytest.mark.parametrize("explicit", [False, True])
def test_the_query_count_does_not_grow_with_the_runs(world, api, explicit):
    qs = list(world.queries.values())
    rng = np.random.default_rng(0)

    def fill(n: int) -> list[int]:
        return [
            metrics_factories.run(
                world.coll,
                world.alpha,
                f"fill-{n}-{i}",
                scores={NDCG: 0.5},
                per_query={q: {NDCG: float(rng.random())} for q in qs},
            ).pk
            for i in range(n)
        ]

    small_ids = fill(2)
    params = {"runs": ",".join(map(str, small_ids))} if explicit else {}
    small, body = _count(api("cora"), url(world), params)
    assert len(body["pairs"]) == 1
    large_ids = small_ids + fill(18)
    params = {"runs": ",".join(map(str, large_ids))} if explicit else {}
    large, body = _count(api("cora"), url(world), params)
    assert len(body["pairs"]) == 190
    assert small == large == PAIRS_QUERIES - explicit  # explicit runs: no scoreboard read


def _trec(tag: str, order: dict[str, list[str]]) -> bytes:
    return "".join(
        f"{qid} Q0 {docno} {rank} {10 - rank} {tag}\n"
        for qid, docnos in order.items()
        for rank, docno in enumerate(docnos, start=1)
    ).encode()


#: Four submitted runs over the world's live list (q1: d1–d3 graded, q2: d4, q3: d5).
RANKINGS = {
    "r-best": {"q1": ["d1", "d3", "d2"], "q2": ["d4", "d6"], "q3": ["d5"]},
    "r-good": {"q1": ["d3", "d1"], "q2": ["d6", "d4"], "q3": ["d5", "d6"]},
    "r-mixed": {"q1": ["d2", "d1"], "q2": ["d4"], "q3": ["d6", "d5"]},
    "r-poor": {"q1": ["d2", "d6"], "q2": ["d6"], "q3": ["d6", "d2", "d5"]},
}


def test_every_figure_equals_a_full_rescoring_of_the_live_list(
    world, api, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    for tag, order in RANKINGS.items():
        services.run_submit(
            collection=world.coll,
            team=world.alpha,
            tag=tag,
            content=_trec(tag, order),
            filename=f"{tag}.txt",
            user=world.users["alice"],
        )
    # A judgment after submission: live rescoring moves every run's q2 and q3 scores.
    judge = factories.human_judge(world.users["cora"])
    with django_capture_on_commit_callbacks(execute=True):
        for qid, docno, grade in (("q2", "d6", 3), ("q3", "d6", 1)):
            judging_services.judgment_record(
                judge=judge, query=world.queries[qid], document=world.docs[docno], grade=grade
            )
    qrels = "".join(
        f"{q} 0 {d} {g:g}\n"
        for q, d, g in LiveGrade.objects.filter(collection=world.coll).values_list(
            "query__external_id", "document__external_id", "grade"
        )
    ).encode()
    rows = []
    for tag, order in RANKINGS.items():
        result = engine.evaluate(
            engine.read_qrels(qrels, name="qrels"),
            engine.read_run(_trec(tag, order), name=tag),
            ["nDCG@10"],
        )
        by_qid = dict(zip(result.qids, result.per_query[NDCG].tolist(), strict=True))
        rows.append([by_qid[q] for q in ("q1", "q2", "q3")])
    matrix = np.array(rows)
    for correction in ("holm", "tukey"):
        body = api("cora").get(url(world), {"correction": correction}).json()
        assert body["queries"] == ["q1", "q2", "q3"]
        expected = all_pairs(matrix, correction=correction)
        tags = list(RANKINGS)
        assert [r["run"] for r in body["runs"]] == [tags[i] for i in expected.order]
        assert [r["mean"] for r in body["runs"]] == pytest.approx(
            [expected.means[i] for i in expected.order], abs=1e-12
        )
        for got, pair in zip(body["pairs"], expected.pairs, strict=True):
            assert (got["a"], got["b"]) == (tags[pair.upper], tags[pair.lower])
            assert got["mean_diff"] == pytest.approx(pair.difference, abs=1e-12)
            assert got["p_value"] == pytest.approx(pair.p_value, rel=1e-9, abs=1e-15)
            assert got["p_value_corrected"] == pytest.approx(pair.corrected, rel=1e-9, abs=1e-15)
            assert (got["ci_low"], got["ci_high"]) == pytest.approx(
                (pair.low, pair.high), abs=1e-12
            )
        assert [r["groups"] for r in body["runs"]] == letter_strings(list(expected.groups))
