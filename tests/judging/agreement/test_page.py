"""Coverage and agreement for coordinators: selector, page and API.

The selector's numbers must equal the pure functions of
``judging.agreement.coefficients`` applied by
hand to the same grades; only ``graded`` judgments count.
"""

from __future__ import annotations

import itertools
import re
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pytest
from django.conf import settings
from django.urls import reverse
from django.utils.html import escape

from judging.agreement import selectors as selectors_agreement
from judging.agreement.coefficients import (
    AgreementUndefinedWarning,
    cohen_kappa,
    fleiss_counts,
    fleiss_kappa,
    krippendorff_alpha,
    pairwise_agreement,
)
from judging.models import Judge, Judgment, Membership, PoolEntry
from tests import factories
from tests.api_client import client_for

pytestmark = pytest.mark.django_db
Role = Membership.Role
Status = Judgment.Status

HUMANS = ("alice", "bob", "carol")
JUDGES = (*HUMANS, "gpt")
# (qid, docno) -> {judge: grade}: graded judgments only.
GRADES: dict[tuple[str, str], dict[str, int]] = {
    ("q1", "d1"): {"alice": 3, "bob": 3, "carol": 2},
    ("q1", "d2"): {"alice": 0, "bob": 1, "gpt": 0},
    ("q1", "d3"): {"alice": 2, "bob": 2, "gpt": 4},
    ("q1", "d4"): {"alice": 4, "gpt": 3},
    ("q2", "d1"): {"bob": 1, "gpt": 1},
    ("q2", "d2"): {"alice": 1, "carol": 1},
    ("q2", "d3"): {"carol": 3},  # graded by one judge only
    ("q2", "d4"): {},  # only a "later": not graded
    ("q10", "d1"): {"alice": 2, "bob": 3, "carol": 3, "gpt": 3},
    ("q10", "d2"): {"gpt": 0},
    ("q3", "d1"): {"alice": 1, "gpt": 1},  # not pooled: agreement only
}
# Labels that are no grades.
OTHER_LABELS = [
    ("q2", "d1", "carol", Status.CANNOT_JUDGE),
    ("q2", "d3", "bob", Status.CANNOT_JUDGE),
    ("q2", "d4", "alice", Status.LATER),
    ("q10", "d2", "bob", Status.LATER),
]
POOLED = [pair for pair in GRADES if pair[0] != "q3"]


def seconds_for(judge: str, grade: int) -> float | None:
    """Return the time a human judge took (LLMs record none)."""
    return None if judge == "gpt" else 5.0 + 2 * grade + len(judge)


@dataclass
class Setup:
    coll: Any
    users: dict[str, Any]
    judges: dict[str, Judge]


@pytest.fixture
def setup(db) -> Setup:
    """Build the collection: 3 human judges, 1 LLM judge, 10 pooled pairs, 2 per pair."""
    coll = factories.collection("agree", name="Agreement demo", judges_per_pair=2)
    queries = {qid: factories.query(coll, qid) for qid in ("q1", "q2", "q3", "q10")}
    docs = {docno: factories.document(coll, docno) for docno in ("d1", "d2", "d3", "d4")}
    PoolEntry.objects.bulk_create(
        [PoolEntry(collection=coll, query=queries[q], document=docs[d]) for q, d in POOLED]
    )
    users = {
        name: factories.user(name)
        for name in (*HUMANS, "cora", "tess", "olga", "root_user", "otto")
    }
    for name in HUMANS:
        factories.member(coll, users[name], Role.JUDGE)
    factories.member(coll, users["cora"], Role.COORDINATOR)
    factories.member(coll, users["tess"], Role.TEAM)
    other = factories.collection("other")
    factories.member(other, users["olga"], Role.JUDGE)
    factories.member(other, users["otto"], Role.COORDINATOR)
    users["root_user"].is_superuser = True
    users["root_user"].save()
    judges = {name: factories.human_judge(users[name]) for name in HUMANS}
    judges["gpt"] = factories.llm_judge("gpt")
    rows = [
        Judgment(
            judge=judges[name],
            query=queries[q],
            document=docs[d],
            collection=coll,
            grade=grade,
            seconds=seconds_for(name, grade),
        )
        for (q, d), grades in GRADES.items()
        for name, grade in grades.items()
    ]
    rows += [
        Judgment(
            judge=judges[name],
            query=queries[q],
            document=docs[d],
            collection=coll,
            status=label,
            seconds=100.0,
        )
        for q, d, name, label in OTHER_LABELS
    ]
    Judgment.objects.bulk_create(rows)
    return Setup(coll=coll, users=users, judges=judges)


def matrix(judges: tuple[str, ...]) -> np.ndarray:
    """Return the items × judges matrix of GRADES for ``judges`` (NaN: no grade)."""
    return np.array(
        [[grades.get(name, np.nan) for name in judges] for grades in GRADES.values()],
        dtype=float,
    )


def by_hand(compute, *args, **kwargs) -> tuple[float | None, str | None]:
    """Apply a pure function; return (value, None) or (None, warning text)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AgreementUndefinedWarning)
        value = compute(*args, **kwargs)
    if np.isnan(value):
        return None, str(caught[-1].message)
    return value, None


def assert_coefficient(coefficient, expected: tuple[float | None, str | None]) -> None:
    value, reason = expected
    if value is None:
        assert coefficient.value is None and coefficient.reason == reason
    else:
        assert coefficient.value == pytest.approx(value, abs=1e-12)
        assert coefficient.reason is None


# --- selector ------------------------------------------------------------------------------


def test_coverage_counts_only_graded_judgments_of_pooled_pairs(setup):
    coverage = selectors_agreement.agreement_report(collection=setup.coll).coverage
    assert coverage.judges_per_pair == 2
    assert coverage.pool_pairs == 10
    # q2/d4 has only a "later" label, so 9 pairs are graded; q2/d3 (1 grade, 1 cannot
    # judge) and q10/d2 (1 grade, 1 later) are not complete.
    assert coverage.graded_pairs == 9
    assert coverage.complete_pairs == 7
    assert coverage.share_complete == pytest.approx(0.7)
    assert coverage.ungraded_pairs == 1 and coverage.percent_complete == 70
    assert [q.external_id for q in coverage.queries] == ["q1", "q2", "q3", "q10"]
    per_query = {q.external_id: (q.pooled, q.graded, q.complete) for q in coverage.queries}
    assert per_query == {"q1": (4, 4, 4), "q2": (4, 3, 2), "q3": (0, 0, 0), "q10": (2, 2, 1)}


def test_a_pair_with_only_cannot_judge_or_later_is_not_graded(setup):
    coll = setup.coll
    PoolEntry.objects.create(
        collection=coll,
        query=coll.queries.get(external_id="q3"),
        document=coll.documents.get(external_id="d2"),
    )
    PoolEntry.objects.create(
        collection=coll,
        query=coll.queries.get(external_id="q3"),
        document=coll.documents.get(external_id="d3"),
    )
    for docno, label in (("d2", Status.CANNOT_JUDGE), ("d3", Status.LATER)):
        Judgment.objects.create(
            judge=setup.judges["alice"],
            query=coll.queries.get(external_id="q3"),
            document=coll.documents.get(external_id=docno),
            collection=coll,
            status=label,
        )
    coverage = selectors_agreement.agreement_report(collection=coll).coverage
    q3 = next(q for q in coverage.queries if q.external_id == "q3")
    assert (q3.pooled, q3.graded, q3.complete) == (2, 0, 0)
    assert (coverage.pool_pairs, coverage.graded_pairs) == (12, 9)


def test_judge_statistics(setup):
    stats = selectors_agreement.agreement_report(collection=setup.coll).judges
    assert [(s.judge.name, s.judge.kind) for s in stats] == [
        ("alice", "human"),
        ("bob", "human"),
        ("carol", "human"),
        ("gpt", "llm"),
    ]
    for s in stats:
        grades = [g[s.judge.name] for g in GRADES.values() if s.judge.name in g]
        assert s.grades == len(grades)
        assert s.distribution == tuple(grades.count(g) for g in range(5))
        assert s.judge.judge_id == setup.judges[s.judge.name].pk
        if s.judge.kind == "llm":
            assert s.mean_seconds is None
        else:  # the 100 s of "cannot judge" and "later" labels do not count
            times = [seconds_for(s.judge.name, g) for g in grades]
            assert s.mean_seconds == pytest.approx(sum(times) / len(times))
    assert stats[0].distribution == (1, 2, 2, 1, 1)


def test_overall_agreement_equals_the_pure_functions(setup):
    overall = selectors_agreement.agreement_report(collection=setup.coll).overall
    assert [g.group for g in overall] == ["human", "llm", "all"]
    humans, llms, everyone = overall

    for group, judges, pairs in ((humans, HUMANS, 5), (everyone, JUDGES, 8)):
        ratings = matrix(judges)
        assert group.judges == len(judges)
        assert group.pairs == pairs == int(((~np.isnan(ratings)).sum(axis=1) >= 2).sum())
        assert_coefficient(group.fleiss_kappa, by_hand(fleiss_kappa, fleiss_counts(ratings)))
        assert_coefficient(
            group.alpha_ordinal, by_hand(krippendorff_alpha, ratings.T, level="ordinal")
        )
        assert_coefficient(
            group.alpha_interval, by_hand(krippendorff_alpha, ratings.T, level="interval")
        )
        assert group.fleiss_kappa.defined and group.alpha_ordinal.defined

    # One LLM judge: nothing to agree with.
    assert (llms.judges, llms.pairs) == (1, 0)
    for coefficient in (llms.fleiss_kappa, llms.alpha_ordinal, llms.alpha_interval):
        assert coefficient.value is None and "Fewer than two LLM judges" in coefficient.reason


def test_pairwise_agreement_equals_the_pure_functions(setup):
    pairwise = selectors_agreement.agreement_report(collection=setup.coll).pairwise
    names = [(p.a.name, p.b.name) for p in pairwise]
    assert names == [
        ("alice", "gpt"),
        ("bob", "gpt"),
        ("carol", "gpt"),
        ("alice", "bob"),
        ("alice", "carol"),
        ("bob", "carol"),
    ]
    assert [p.is_human_llm for p in pairwise] == [True] * 3 + [False] * 3
    ratings = matrix(JUDGES)
    raw = pairwise_agreement(ratings)
    for p in pairwise:
        r, s = JUDGES.index(p.a.name), JUDGES.index(p.b.name)
        assert p.common == raw.overlap[r, s]
        assert p.raw_agreement == pytest.approx(raw.agreement[r, s])
        x, y = ratings[:, r], ratings[:, s]
        assert_coefficient(p.cohen_kappa, by_hand(cohen_kappa, x, y))
        assert_coefficient(p.cohen_kappa_quadratic, by_hand(cohen_kappa, x, y, weights="quadratic"))
    common = {(p.a.name, p.b.name): p.common for p in pairwise}
    assert common == {
        ("alice", "gpt"): 5,
        ("bob", "gpt"): 4,
        ("carol", "gpt"): 1,
        ("alice", "bob"): 4,
        ("alice", "carol"): 3,
        ("bob", "carol"): 2,
    }
    # Carol and gpt share one pair, both grading it 3: kappa is 0/0.
    carol_gpt = pairwise[2]
    assert carol_gpt.raw_agreement == 1.0
    assert carol_gpt.cohen_kappa.value is None
    assert "one and the same category" in carol_gpt.cohen_kappa.reason


def test_selector_silences_the_undefined_warnings(setup):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        report = selectors_agreement.agreement_report(collection=setup.coll)
    assert report.overall[1].fleiss_kappa.reason


def test_empty_collection_has_an_empty_report(db):
    coll = factories.collection("empty")
    report = selectors_agreement.agreement_report(collection=coll)
    assert report.coverage.pool_pairs == 0 and report.coverage.share_complete is None
    assert report.judges == () and report.pairwise == ()
    assert all(g.pairs == 0 and not g.fleiss_kappa.defined for g in report.overall)
    assert all(g.fleiss_kappa.reason for g in report.overall)


def test_coverage_sorts(setup):
    queries = selectors_agreement.agreement_report(collection=setup.coll).coverage.queries

    def order(sort):
        rows, used = selectors_agreement.sorted_query_coverage(queries, sort)
        return [q.external_id for q in rows], used

    assert order(None) == (["q2", "q10", "q1", "q3"], "coverage")
    assert order("nonsense") == (["q2", "q10", "q1", "q3"], "coverage")
    # Equal shares complete (q2, q10: 1/2) are ordered by the share graded.
    assert order("-coverage") == (["q1", "q10", "q2", "q3"], "-coverage")
    assert order("graded")[0] == ["q2", "q10", "q1", "q3"]
    assert order("query")[0] == ["q1", "q2", "q3", "q10"]
    assert order("-query")[0] == ["q10", "q3", "q2", "q1"]
    assert order("-pooled")[0] == ["q1", "q2", "q10", "q3"]
    assert order("pooled")[0] == ["q3", "q10", "q1", "q2"]


# --- page ----------------------------------------------------------------------------------


def page_url(setup) -> str:
    return reverse("judging:collection_agreement", args=[setup.coll.slug])


def api_url(setup) -> str:
    return f"/api/v1/collections/{setup.coll.slug}/agreement/"


def test_page_shows_coverage_judges_and_agreement(client, setup):
    client.force_login(setup.users["cora"])
    html = ""
    tabs = [{"tab": tab} for tab in ("judges", "coverage", "agreement")]
    for params in tabs:  # a section per tab
        response = client.get(page_url(setup), params)
        assert response.status_code == 200
        assert '<progress class="progress" value="7" max="10"' in response.content.decode()
        html += response.content.decode()
    rows = re.findall(r'<tr data-query="([^"]+)"', html)
    assert rows == ["q2", "q10", "q1", "q3"]
    assert f'data-judge="{setup.judges["gpt"].pk}"' in html
    assert html.count("<tr data-group=") == 3
    assert html.count("<tr data-pair=") == 6
    assert html.count('class="is-human-llm"') == 3
    report = selectors_agreement.agreement_report(collection=setup.coll)
    humans = report.overall[0]
    assert f"{humans.fleiss_kappa.value:.3f}" in html
    carol_gpt = report.pairwise[2]
    assert f'title="{escape(carol_gpt.cohen_kappa.reason)}"' in html
    assert 'title="Fewer than two LLM judges have graded pairs in this collection."' in html
    assert not re.search(r"\sstyle=", html), "no inline styles (CSP)"
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", html), "no inline script (CSP)"


def test_page_sorts_per_query_coverage(client, setup):
    client.force_login(setup.users["cora"])
    html = client.get(page_url(setup), {"sort": "query"}).content.decode()
    assert re.findall(r'<tr data-query="([^"]+)"', html) == ["q1", "q2", "q3", "q10"]
    assert 'aria-sort="ascending"><a href="?sort=-query"' in html


def test_collection_page_links_coordinators_to_the_agreement_page(client, setup):
    detail = reverse("judging:collection_detail", args=[setup.coll.slug])
    client.force_login(setup.users["cora"])
    assert page_url(setup) in client.get(detail).content.decode()
    client.force_login(setup.users["alice"])
    assert page_url(setup) not in client.get(detail).content.decode()


@pytest.mark.parametrize("name", ["alice", "tess", "olga", "otto"])
def test_page_is_404_for_everyone_but_coordinators(client, setup, name):
    """Strangers get 404; members in another role 403 naming the role the page needs."""
    client.force_login(setup.users[name])
    response = client.get(page_url(setup))
    member = setup.coll.memberships.filter(user=setup.users[name]).exists()
    assert response.status_code == (403 if member else 404)
    if member:
        assert "for the collection&#x27;s coordinators" in response.content.decode()


def test_superusers_see_the_page(client, setup):
    client.force_login(setup.users["root_user"])
    assert client.get(page_url(setup)).status_code == 200


def test_anonymous_users_are_sent_to_login(client, setup):
    response = client.get(page_url(setup))
    assert response.status_code == 302
    assert response["Location"].startswith(f"{reverse(settings.LOGIN_URL)}?next=")


# --- API -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "status"), [("alice", 403), ("tess", 403), ("olga", 404), ("otto", 404)]
)
def test_api_refuses_everyone_but_coordinators(setup, name, status):
    response = client_for(setup.users[name]).get(api_url(setup))
    assert response.status_code == status
    assert set(response.json()) == {"errors"}


def test_api_needs_credentials(setup):
    response = client_for(None).get(api_url(setup))
    assert response.status_code == 401
    assert set(response.json()) == {"errors"}


def coefficient_json(c) -> dict[str, Any]:
    return {"value": c.value, "reason": c.reason}


def judge_json(j) -> dict[str, Any]:
    return {"id": j.judge_id, "name": j.name, "kind": j.kind}


def expected_json(coll, report) -> dict[str, Any]:
    """Build the API body expected for ``report`` by hand."""
    c = report.coverage
    return {
        "collection": coll.slug,
        "judgments_version": coll.judgments_version,
        "guidelines_version": None,
        "coverage": {
            "judges_per_pair": c.judges_per_pair,
            "pool_pairs": c.pool_pairs,
            "graded_pairs": c.graded_pairs,
            "complete_pairs": c.complete_pairs,
            "share_complete": c.share_complete,
            "queries": [
                {
                    "query": q.external_id,
                    "pooled": q.pooled,
                    "graded": q.graded,
                    "complete": q.complete,
                    "share_complete": q.share_complete,
                }
                for q in c.queries
            ],
        },
        "judges": [
            {
                "judge": judge_json(s.judge),
                "grades": s.grades,
                "distribution": list(s.distribution),
                "mean_seconds": s.mean_seconds,
            }
            for s in report.judges
        ],
        "overall": [
            {
                "group": g.group,
                "judges": g.judges,
                "pairs": g.pairs,
                "fleiss_kappa": coefficient_json(g.fleiss_kappa),
                "alpha_ordinal": coefficient_json(g.alpha_ordinal),
                "alpha_interval": coefficient_json(g.alpha_interval),
                "alpha_nominal": coefficient_json(g.alpha_nominal),
                "alpha_ratio": coefficient_json(g.alpha_ratio),
                "gwet_ac1": coefficient_json(g.gwet_ac1),
                "gwet_ac2": coefficient_json(g.gwet_ac2),
            }
            for g in report.overall
        ],
        "pairwise": [
            {
                "judge_a": judge_json(p.a),
                "judge_b": judge_json(p.b),
                "common_pairs": p.common,
                "raw_agreement": p.raw_agreement,
                "cohen_kappa": coefficient_json(p.cohen_kappa),
                "cohen_kappa_quadratic": coefficient_json(p.cohen_kappa_quadratic),
                "cohen_kappa_linear": coefficient_json(p.cohen_kappa_linear),
            }
            for p in report.pairwise
        ],
    }


@pytest.mark.parametrize("name", ["cora", "root_user"])
def test_api_json_matches_the_selector(setup, name):
    response = client_for(setup.users[name]).get(api_url(setup))
    assert response.status_code == 200
    assert "NaN" not in response.content.decode()
    body = response.json()
    report = selectors_agreement.agreement_report(collection=setup.coll)
    assert body == expected_json(setup.coll, report)
    assert body["coverage"]["complete_pairs"] == 7
    assert body["overall"][1]["fleiss_kappa"]["value"] is None
    assert body["overall"][1]["fleiss_kappa"]["reason"].startswith("Fewer than two")
    assert body["pairwise"][2]["cohen_kappa"] == {
        "value": None,
        "reason": report.pairwise[2].cohen_kappa.reason,
    }
    assert body["judges"][3]["mean_seconds"] is None


def test_api_is_documented_and_the_schema_validates():
    from tests.api_client import clean_schema

    schema = clean_schema("judging.api.urls")
    operation = schema["paths"]["/api/v1/collections/{slug}/agreement/"]["get"]
    assert set(operation["responses"]) == {"200", "400", "401", "403", "404", "429", "503"}
    assert "AgreementReport" in schema["components"]["schemas"]


# --- query counts --------------------------------------------------------------------------

# session, user, collection (coordinator check), coverage, judge statistics, grades; then
# per tab (only the chosen one is computed): the per-judge figures (labels, adjudications,
# queries) on Judges and Agreement, and on Agreement the confusion matrix of two judges
# beside the pairwise table; an old link to the Pictures tab opens Agreement
PAGE_QUERIES = {"judges": 9, "coverage": 6, "agreement": 10, "pictures": 10}
# token with user, collection, roles, coverage, judge statistics, grades
API_QUERIES = 6


def grow(setup, n_queries: int, n_docs: int, n_llms: int) -> None:
    """Add pooled pairs graded by the three humans and ``n_llms`` more LLM judges."""
    queries = [factories.query(setup.coll, f"grow-q{i}") for i in range(n_queries)]
    docs = [factories.document(setup.coll, f"grow-d{i}") for i in range(n_docs)]
    entries = PoolEntry.objects.bulk_create(
        [PoolEntry(collection=setup.coll, query=q, document=d) for q in queries for d in docs]
    )
    judges = [setup.judges[name] for name in JUDGES]
    judges += [factories.llm_judge(f"llm-{i}") for i in range(n_llms)]
    grades = itertools.cycle([0, 1, 2, 2, 3, 4, 1])
    rows = [
        Judgment(
            judge=judge,
            query_id=entry.query_id,
            document_id=entry.document_id,
            collection=setup.coll,
            grade=next(grades),
            seconds=3.0,
        )
        for i, judge in enumerate(judges)
        for entry in entries[i % 3 :: 2]
    ]
    Judgment.objects.bulk_create(rows, batch_size=1000)


SIZES = [pytest.param((0, 0, 0), id="small"), pytest.param((12, 25, 4), id="larger")]


@pytest.mark.parametrize("size", SIZES)
def test_page_query_count_is_constant(client, setup, size, django_assert_num_queries):
    grow(setup, *size)
    client.force_login(setup.users["cora"])
    for tab, queries in PAGE_QUERIES.items():
        with django_assert_num_queries(queries):
            response = client.get(page_url(setup), {"tab": tab})
        assert response.status_code == 200


@pytest.mark.parametrize("size", SIZES)
def test_api_query_count_is_constant(setup, size, django_assert_num_queries):
    grow(setup, *size)
    client = client_for(setup.users["cora"])
    with django_assert_num_queries(API_QUERIES):
        response = client.get(api_url(setup))
    assert response.status_code == 200


def test_larger_collection_really_is_larger(setup):
    grow(setup, 12, 25, 4)
    report = selectors_agreement.agreement_report(collection=setup.coll)
    assert report.coverage.pool_pairs == 310
    # Judges 0, 2, 3, 5, 6 grade even entries, judges 1, 4, 7 odd ones: pairs of judges
    # without a common pair are left out (10 + 3 + 3 from the base data, not 28).
    assert len(report.judges) == 8 and len(report.pairwise) == 16
    names = {frozenset((p.a.name, p.b.name)) for p in report.pairwise}
    assert frozenset(("llm-0", "llm-1")) not in names  # judges 4 and 5
    assert {frozenset(("llm-0", "llm-3")), frozenset(("llm-1", "llm-2"))} <= names
    assert Judgment.objects.filter(collection=setup.coll).count() > 1000


def test_the_agreement_tab_shows_its_three_tables_together(client, setup):
    """Overall, every two judges and each query on one page (issue 41), no tabs inside it.

    A low overall figure is read with the pairs and queries that explain it; an older
    link naming one table (``?part=``) opens the tab.
    """
    client.force_login(setup.users["cora"])
    html = client.get(page_url(setup), {"tab": "agreement"}).content.decode()
    overall, pairs, queries = (
        html.index(f'id="{table}"')
        for table in ("overall-agreement", "pairwise-agreement", "query-agreement")
    )
    assert overall < pairs < queries
    assert 'aria-label="Agreement"><ul class="tabs' not in html  # no second row of tabs
    assert "part=" not in html
    older = client.get(page_url(setup), {"part": "pairs"}).content.decode()
    assert 'id="pairwise-agreement"' in older and 'id="overall-agreement"' in older
