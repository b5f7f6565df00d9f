"""LLM judges against human judges: selector figures, page, API, permissions, query counts.

The fixture is small enough to work out by hand: 12 queries × 4 documents, two human
judges (alice grades everything, bob the first three queries), one LLM judge ``gpt``
grading everything and one (``tiny``) grading five pairs. Expected agreement figures are
literal numbers worked out in the comments; nDCG@10 is checked against an independent
few-line implementation of trec_eval's ``ndcg_cut.10`` and the rank correlations against
scipy and the literal τ_AP definition.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from django.urls import reverse
from scipy import stats

from judging import services as judging_services
from judging.agreement.coefficients import cohen_kappa, krippendorff_alpha
from judging.models import Judge, Judgment, Membership
from metrics.analysis import llm_agreement as sel
from tests import factories
from tests.api_client import client_for, errors_of
from tests.engine.test_rankcorr import tau_ap_by_definition
from tests.html import page_text
from tests.metrics import factories as mf

pytestmark = pytest.mark.django_db
Role = Membership.Role

QUERIES = [f"q{i}" for i in range(1, 13)]
DOCS = ["d1", "d2", "d3", "d4"]
ALICE = {"d1": 3, "d2": 2, "d3": 1, "d4": 0}  # every query
BOB = {"d1": 2, "d2": 2, "d3": 1, "d4": 0}  # q1-q3 only
GPT_EARLY = {"d1": 3, "d2": 2, "d3": 2, "d4": 0}  # q1-q6
GPT_LATE = {"d1": 4, "d2": 2, "d3": 1, "d4": 1}  # q7-q12
TINY = [("q1", "d1", 3), ("q1", "d2", 0), ("q2", "d1", 3), ("q2", "d3", 1), ("q5", "d4", 0)]
# Rankings of documents per run (same for every query), and the queries each run covers.
RUNS = {
    "ideal": (["d1", "d2", "d3", "d4"], QUERIES),
    "worst": (["d4", "d3", "d2", "d1"], QUERIES),
    "swap": (["d2", "d1", "d3", "d4"], QUERIES),
    "mid": (["d3", "d1", "d2"], QUERIES),
    "half": (["d1", "d2", "d3", "d4"], QUERIES[:6]),  # scores 0 on q7-q12
}


def gpt_grade(qid: str, docno: str) -> int:
    return (GPT_EARLY if QUERIES.index(qid) < 6 else GPT_LATE)[docno]


def consensus(qid: str, docno: str) -> int:
    # Lower median of alice and bob where both graded: the smaller grade.
    if QUERIES.index(qid) < 3:
        return min(ALICE[docno], BOB[docno])
    return ALICE[docno]


@dataclass
class World:
    coll: Any
    users: dict[str, Any]
    judges: dict[str, Judge]
    queries: dict[str, Any]
    docs: dict[str, Any]


@pytest.fixture
def world(db) -> World:
    return build_world()


def build_world() -> World:
    """Build the collection described in the module docstring (also for browser tests)."""
    coll = factories.collection("trust", name="Trust test")
    queries = {q: factories.query(coll, q) for q in QUERIES}
    docs = {d: factories.document(coll, d) for d in DOCS}
    users = {n: factories.user(n) for n in ("alice", "bob", "cora", "tess", "olga", "root")}
    factories.member(coll, users["alice"], Role.JUDGE)
    factories.member(coll, users["bob"], Role.JUDGE)
    factories.member(coll, users["cora"], Role.COORDINATOR)
    users["root"].is_superuser = True
    users["root"].save()
    judges = {n: factories.human_judge(users[n]) for n in ("alice", "bob")}
    judges["gpt"] = factories.llm_judge("gpt")
    judges["tiny"] = factories.llm_judge("tiny")
    rows = []
    for q in QUERIES:
        for d in DOCS:
            rows.append((judges["alice"], q, d, ALICE[d]))
            rows.append((judges["gpt"], q, d, gpt_grade(q, d)))
            if QUERIES.index(q) < 3:
                rows.append((judges["bob"], q, d, BOB[d]))
    rows += [(judges["tiny"], q, d, g) for q, d, g in TINY]
    Judgment.objects.bulk_create(
        Judgment(judge=j, query=queries[q], document=docs[d], collection=coll, grade=g)
        for j, q, d, g in rows
    )
    # A label that is no grade never counts.
    Judgment.objects.create(
        judge=judges["bob"],
        query=queries["q9"],
        document=docs["d1"],
        collection=coll,
        status=Judgment.Status.CANNOT_JUDGE,
    )
    team = mf.team(coll, "Blue", [users["tess"]])
    for tag, (order, covered) in RUNS.items():
        mf.run(
            coll,
            team,
            tag,
            rankings={queries[q]: [docs[d].pk for d in order] for q in covered},
        )
    other = factories.collection("other")
    factories.member(other, users["olga"], Role.COORDINATOR)
    return World(coll, users, judges, queries, docs)


def ndcg10(ranking: list[str], grades: dict[str, float]) -> float:
    """trec_eval's ndcg_cut.10: linear gain, log2(rank + 1) discount, ideal from the qrels."""
    dcg = sum(grades.get(d, 0.0) / math.log2(i + 2) for i, d in enumerate(ranking[:10]))
    ideal = sorted(grades.values(), reverse=True)[:10]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def oracle_scores(label) -> np.ndarray:
    """Return runs × queries nDCG@10 with ``label(qid, docno)`` grades (runs in RUNS order)."""
    return np.array(
        [
            [
                ndcg10(order, {d: label(q, d) for d in DOCS}) if q in covered else 0.0
                for q in QUERIES
            ]
            for order, covered in RUNS.values()
        ]
    )


def report_for(world) -> sel.LlmAgreementReport:
    return sel.llm_agreement_report(collection=world.coll)


def comparisons(report, judge: str) -> dict[str, sel.Comparison]:
    (llm,) = [j for j in report.judges if j.judge.name == judge]
    return {c.label: c for c in llm.comparisons}


# --- the selector ---------------------------------------------------------------------------


def test_report_lists_llm_judges_and_their_references(world):
    report = report_for(world)
    assert [j.judge.name for j in report.judges] == ["gpt", "tiny"]
    assert [j.grades for j in report.judges] == [48, 5]
    assert list(comparisons(report, "gpt")) == ["Human consensus", "alice", "bob"]
    assert (report.human_judges, report.consensus_pairs, report.runs) == (2, 48, 5)
    assert report.policy == "lower_median_human_then_llm" and not report.fractional_policy
    assert report.measure.startswith("nDCG(") and report.measure.endswith("@10")


def test_figures_against_the_consensus_by_hand(world):
    c = comparisons(report_for(world), "gpt")["Human consensus"]
    assert c.pairs == 48
    # Exact: q1-q3 two of four pairs, q4-q6 three, q7-q12 two: (6 + 9 + 12) / 48.
    assert c.exact.value == pytest.approx(27 / 48)
    assert c.within_one.value == pytest.approx(1.0)
    # LLM - human: +2 per query on q1-q3, +1 on q4-q6, +2 on q7-q12: 21 / 48 > 0.
    assert c.mean_signed_difference.value == pytest.approx(21 / 48)
    assert c.confusion == (
        (6, 6, 0, 0, 0),
        (0, 6, 6, 0, 0),
        (0, 0, 12, 3, 0),
        (0, 0, 0, 3, 6),
        (0, 0, 0, 0, 0),
    )
    human = [consensus(q, d) for q in QUERIES for d in DOCS]
    llm = [gpt_grade(q, d) for q in QUERIES for d in DOCS]
    assert c.cohen_kappa_quadratic.value == pytest.approx(
        cohen_kappa(human, llm, weights="quadratic")
    )
    assert c.alpha_ordinal.value == pytest.approx(
        krippendorff_alpha(np.array([human, llm], dtype=float), level="ordinal")
    )


def test_binary_cuts_gwet_and_per_query_tau_by_hand(world):
    c = comparisons(report_for(world), "gpt")["Human consensus"]
    # Worked out on paper from the grade tables above (rows: consensus, columns: gpt):
    # cut 1: po 42/48, pe 0.6875 -> 0.6; cut 2: po 42/48, pe 0.5 -> 0.75;
    # cut 3: po 45/48, pe 1512/2304 -> 9/11.
    assert [(k.cut, k.label) for k in c.binary_kappa] == [
        (1, "0 | 1–4"),
        (2, "0–1 | 2–4"),
        (3, "0–2 | 3–4"),
    ]
    assert [k.kappa.value for k in c.binary_kappa] == pytest.approx([0.6, 0.75, 9 / 11])
    from judging.agreement.coefficients import gwet_ac

    human = [consensus(q, d) for q in QUERIES for d in DOCS]
    llm = [gpt_grade(q, d) for q in QUERIES for d in DOCS]
    assert c.gwet_ac2.value == pytest.approx(
        gwet_ac(np.column_stack([human, llm]).astype(float), weights="quadratic")
    )
    taus = {t.query: t for t in c.query_tau}
    assert [t.query for t in c.query_tau] == QUERIES  # natural order
    for q in QUERIES:
        expected = stats.kendalltau(
            [consensus(q, d) for d in DOCS], [gpt_grade(q, d) for d in DOCS]
        ).statistic
        assert taus[q].pairs == 4 and taus[q].tau == pytest.approx(expected)
    assert c.mean_query_tau.value == pytest.approx(np.mean([t.tau for t in c.query_tau]))
    # Too few pairs: no figures, and the reason says so.
    tiny = comparisons(report_for(world), "tiny")["Human consensus"]
    assert all(k.kappa.value is None for k in tiny.binary_kappa)
    assert tiny.gwet_ac2.reason.startswith("Not enough data")


def test_figures_against_one_human_by_hand(world):
    by = comparisons(report_for(world), "gpt")
    alice = by["alice"]
    assert alice.reference.name == "alice" and alice.pairs == 48
    assert alice.exact.value == pytest.approx(30 / 48)
    assert alice.mean_signed_difference.value == pytest.approx(18 / 48)
    bob = by["bob"]
    assert bob.pairs == 12
    for figure in (bob.exact, bob.within_one, bob.mean_signed_difference):
        assert figure.value is None
        assert figure.reason == "Not enough data: 12 shared pairs; at least 30 are needed."
    assert bob.confusion is None and bob.confusion_reason.startswith("Not enough data")
    assert bob.ranking.query_tau_b.value is None
    assert "3 queries with shared pairs" in bob.ranking.query_tau_b.reason
    assert bob.ranking.systems == () and bob.ranking.per_query == ()


def test_ranking_checks_against_an_independent_ndcg(world):
    c = comparisons(report_for(world), "gpt")["Human consensus"]
    human, llm = oracle_scores(consensus), oracle_scores(gpt_grade)
    assert c.ranking.queries == 12 and c.ranking.runs == 5
    per_query = {s.query: (s.human, s.llm) for s in c.ranking.per_query}
    assert list(per_query) == QUERIES  # q2 before q10
    for j, q in enumerate(QUERIES):
        assert per_query[q] == pytest.approx((human[:, j].mean(), llm[:, j].mean()), abs=1e-12)
    systems = {s.tag: s for s in c.ranking.systems}
    for i, tag in enumerate(RUNS):
        assert systems[tag].human == pytest.approx(human[i].mean(), abs=1e-12)
        assert systems[tag].llm == pytest.approx(llm[i].mean(), abs=1e-12)
    assert c.ranking.systems[0].tag == "ideal"
    run_h, run_l = human.mean(axis=1), llm.mean(axis=1)
    for i, tag in enumerate(RUNS):  # 1 = best; "half" scores 0 on six queries: last
        assert systems[tag].human_rank == stats.rankdata(-run_h, method="min")[i]
        assert systems[tag].llm_rank == stats.rankdata(-run_l, method="min")[i]
    assert systems["half"].human_rank == 5
    assert c.ranking.system_tau_b.value == pytest.approx(
        stats.kendalltau(run_h, run_l, variant="b").statistic
    )
    assert c.ranking.system_tau_ap.value == pytest.approx(tau_ap_by_definition(run_l, run_h))
    assert c.ranking.query_tau_b.value == pytest.approx(
        stats.kendalltau(human.mean(axis=0), llm.mean(axis=0), variant="b").statistic
    )


def test_an_llm_with_too_few_pairs_shows_no_numbers(world):
    c, alice, bob = comparisons(report_for(world), "tiny").values()
    assert (c.pairs, alice.pairs, bob.pairs) == (5, 5, 4)  # bob graded q1-q3 only
    assert c.cohen_kappa_quadratic.value is None
    assert c.alpha_ordinal.reason.startswith("Not enough data: 5 shared pairs")
    assert c.ranking.system_tau_ap.value is None


def _grade_pairs(world, judge: Judge, pairs: list[tuple[str, str]]) -> None:
    for q, d in pairs:
        judging_services.judgment_record(
            judge=judge,
            query=world.queries[q],
            document=world.docs[d],
            grade=ALICE[d],
            channel="api",
        )


@pytest.mark.parametrize(
    ("n_queries", "n_pairs", "figures", "ranking"),
    [
        (10, 30, True, True),  # exactly at both thresholds
        (10, 29, False, True),  # one pair short: no agreement figures, ranking shown
        (9, 36, True, False),  # enough pairs on 9 queries: no ranking checks
    ],
)
def test_not_enough_data_thresholds(world, n_queries, n_pairs, figures, ranking):
    judge = factories.llm_judge("edge")
    per_query = -(-n_pairs // n_queries)  # ceil: 3 documents of 10 queries, 4 of 9
    pairs = [(q, d) for q in QUERIES[:n_queries] for d in DOCS[:per_query]][:n_pairs]
    assert len({q for q, _ in pairs}) == n_queries
    _grade_pairs(world, judge, pairs)  # through the judgment service
    c = comparisons(report_for(world), "edge")["Human consensus"]
    assert c.pairs == n_pairs
    assert (c.exact.value is not None) is figures
    assert (c.confusion is not None) is figures
    assert (c.ranking.system_tau_b.value is not None) is ranking
    assert bool(c.ranking.systems) is ranking
    if not ranking:
        assert c.ranking.system_tau_b.reason == (
            "Not enough data: 9 queries with shared pairs; the ranking checks need at least 10."
        )


def test_mean_policy_consensus_is_rounded_halves_down(world):
    world.coll.aggregation_policy = "mean_human_then_llm"
    world.coll.save()
    c = comparisons(report_for(world), "gpt")["Human consensus"]
    # Only q1-q3 d1 changes: mean(3, 2) = 2.5, rounded to 2 as under the lower median;
    # the signed difference uses 2.5: LLM 3 - 2.5 on three pairs instead of 3 - 2.
    assert c.exact.value == pytest.approx(27 / 48)
    assert c.mean_signed_difference.value == pytest.approx((21 - 3 * 0.5) / 48)
    assert report_for(world).fractional_policy


def test_no_runs_gives_a_reason(world):
    from metrics.models import Run

    Run.objects.all().delete()
    c = comparisons(report_for(world), "gpt")["Human consensus"]
    assert c.ranking.system_tau_b.value is None
    assert c.ranking.system_tau_b.reason.startswith("No runs")
    assert c.exact.value is not None


# --- page ----------------------------------------------------------------------------------


def page_url(world) -> str:
    return reverse("metrics:llm_agreement", args=[world.coll.slug])


def api_url(world) -> str:
    return f"/api/v1/collections/{world.coll.slug}/agreement/llm/"


def test_page_shows_figures_heatmap_and_scatter(client, world):
    client.force_login(world.users["cora"])
    response = client.get(page_url(world))
    assert response.status_code == 200
    html = page_text(response)
    assert 'class="chart chart-heatmap"' in html and 'class="chart chart-scatter"' in html
    assert "<desc>48 pairs; rows are the human grade" in html
    assert "Confusion matrix as a table" in html
    assert ">0.563<" in html  # exact agreement 27/48, three decimals
    assert ">+0.438<" in html  # mean signed difference 21/48: the LLM leans higher
    assert "not enough data" in html  # bob, tiny
    assert 'title="Not enough data: 12 shared pairs; at least 30 are needed."' in html
    assert "NaN" not in html and "nan" not in html.replace("nanum", "")
    # κ at each relevance cut (0.6, 0.75, 9/11) and the per-query grade τ table
    cuts = re.findall(r'data-cut="(\d)"><th scope="row">([^<]+)</th><td[^>]*>([^<]+)<', html)
    assert cuts[:3] == [
        ("1", "0 | 1–4", "0.600"),
        ("2", "0–1 | 2–4", "0.750"),
        ("3", "0–2 | 3–4", "0.818"),
    ]
    assert html.count('data-query-tau="q1"') >= 1


def test_agreement_page_links_to_it(client, world):
    client.force_login(world.users["cora"])
    html = client.get(reverse("judging:collection_agreement", args=[world.coll.slug])).content
    assert page_url(world).encode() in html


def test_page_without_llm_judges(client, db):
    coll = factories.collection("empty")
    cora = factories.user("cora2")
    factories.member(coll, cora, Role.COORDINATOR)
    client.force_login(cora)
    response = client.get(reverse("metrics:llm_agreement", args=["empty"]))
    assert response.status_code == 200
    assert b"No LLM judge has graded pairs" in response.content


@pytest.mark.parametrize(
    ("name", "status"),
    [("cora", 200), ("root", 200), ("alice", 403), ("tess", 403), ("olga", 404)],
)
def test_page_is_for_coordinators_only(client, world, name, status):
    client.force_login(world.users[name])
    assert client.get(page_url(world)).status_code == status


def test_page_asks_anonymous_users_to_log_in(client, world):
    response = client.get(page_url(world))
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# --- API -----------------------------------------------------------------------------------


def test_api_gives_the_figures_with_null_and_reason(world):
    response = client_for(world.users["cora"]).get(api_url(world))
    assert response.status_code == 200
    assert "NaN" not in response.content.decode()
    body = response.json()
    assert body["collection"] == "trust" and body["min_pairs"] == 30
    assert body["min_queries"] == 10
    gpt, tiny = body["llm_judges"]
    assert gpt["judge"] == {"id": world.judges["gpt"].pk, "name": "gpt", "kind": "llm"}
    consensus_, alice, bob = gpt["comparisons"]
    assert consensus_["reference"] == {
        "type": "consensus",
        "label": "Human consensus",
        "judge": None,
    }
    assert alice["reference"]["judge"]["id"] == world.judges["alice"].pk
    assert consensus_["pairs"] == 48
    assert consensus_["exact_agreement"] == {"value": pytest.approx(27 / 48), "reason": None}
    assert consensus_["mean_signed_difference"]["value"] == pytest.approx(21 / 48)
    assert consensus_["confusion_matrix"][2] == [0, 0, 12, 3, 0]
    ranking = consensus_["ranking"]
    assert ranking["queries"] == 12 and len(ranking["systems"]) == 5
    assert len(ranking["per_query"]) == 12
    assert ranking["system_kendall_tau_b"]["value"] is not None
    assert ranking["system_tau_ap"]["value"] is not None
    assert bob["exact_agreement"] == {
        "value": None,
        "reason": "Not enough data: 12 shared pairs; at least 30 are needed.",
    }
    assert bob["confusion_matrix"] is None
    assert tiny["comparisons"][0]["ranking"]["system_tau_ap"]["value"] is None


@pytest.mark.parametrize(
    ("name", "status"),
    [("cora", 200), ("root", 200), ("alice", 403), ("tess", 403), ("olga", 404), (None, 401)],
)
def test_api_permissions(world, name, status):
    response = client_for(None if name is None else world.users[name]).get(api_url(world))
    assert response.status_code == status
    if status != 200:
        errors_of(response)


def test_api_is_documented_and_validates():
    from tests.api_client import clean_schema

    schema = clean_schema("metrics.api.urls")
    operation = schema["paths"]["/api/v1/collections/{slug}/agreement/llm/"]["get"]
    assert set(operation["responses"]) == {"200", "400", "401", "403", "404", "429", "503"}
    assert "LlmAgreement" in schema["components"]["schemas"]


# --- query counts ----------------------------------------------------------------------------

# session, user, collection (coordinator check), judges, grades, runs, rankings, queries,
# the human checks' LLM grades and human grades, and the pooling policy (its random audit)
PAGE_QUERIES = 11
# token with user, collection, roles, judges, grades, runs, rankings, queries, checks (2),
# pooling policy
API_QUERIES = 11


def grow(world, n_queries: int, n_llms: int, n_runs: int) -> None:
    """Add queries graded by alice and more LLM judges, and more runs."""
    queries = [factories.query(world.coll, f"g{i}") for i in range(n_queries)]
    llms = [factories.llm_judge(f"llm-{i}") for i in range(n_llms)]
    rows = [
        Judgment(
            judge=judge,
            query=q,
            document=world.docs[d],
            collection=world.coll,
            grade=(i + k) % 5,
        )
        for k, judge in enumerate([world.judges["alice"], world.judges["gpt"], *llms])
        for q in queries
        for i, d in enumerate(DOCS)
    ]
    Judgment.objects.bulk_create(rows)
    team = mf.team(world.coll, "Green")
    for r in range(n_runs):
        order = [world.docs[d].pk for d in DOCS[r % 4 :] + DOCS[: r % 4]]
        mf.run(world.coll, team, f"extra{r}", rankings=dict.fromkeys(queries, order))


SIZES = [pytest.param((0, 0, 0), id="small"), pytest.param((8, 3, 4), id="larger")]


@pytest.mark.parametrize("size", SIZES)
def test_page_query_count_is_constant(client, world, size, django_assert_num_queries):
    grow(world, *size)
    client.force_login(world.users["cora"])
    with django_assert_num_queries(PAGE_QUERIES):
        response = client.get(page_url(world))
    assert response.status_code == 200


@pytest.mark.parametrize("size", SIZES)
def test_api_query_count_is_constant(world, size, django_assert_num_queries):
    grow(world, *size)
    client = client_for(world.users["cora"])
    with django_assert_num_queries(API_QUERIES):
        response = client.get(api_url(world))
    assert response.status_code == 200
    assert len(response.json()["llm_judges"]) == 2 + size[1]
