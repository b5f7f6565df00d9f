"""Human checks of LLM grades: assisted or blind on the card, recorded, and their agreement."""

from __future__ import annotations

import math

import numpy as np
import pytest
from django.urls import reverse

from judging import services
from judging.agreement import checks
from judging.agreement.coefficients import cohen_kappa
from judging.agreement.selectors import llm_checks
from judging.models import Judgment, Membership
from judging.selectors import pair_ref
from judging.selectors_card import llm_hint_due
from tests import factories
from tests.api_client import client_for, errors_of


def test_figures_and_their_accumulation():
    human = np.array([0, 1, 2, 3, 4, 0, 1, 2, 3, 4], dtype=float)
    llm = np.array([0, 1, 2, 3, 4, 1, 2, 3, 4, 4], dtype=float)
    got = checks.check_figures(human, llm, label="all")
    assert (got.checks, got.exact) == (10, 0.6)
    assert got.kappa == pytest.approx(cohen_kappa(human, llm, weights="quadratic"))
    curve = checks.accumulation(human, llm, points=2)
    assert [(p.label, p.checks, p.exact) for p in curve] == [
        ("first 5", 5, 1.0),
        ("first 10", 10, 0.6),
    ]
    assert curve[0].kappa == 1.0
    empty = checks.check_figures([], [], label="none")
    assert empty.checks == 0 and math.isnan(empty.exact) and math.isnan(empty.kappa)
    assert checks.accumulation([], []) == []
    same = checks.check_figures([2, 2], [2, 2], label="one grade")
    assert same.exact == 1.0 and math.isnan(same.kappa)  # chance agreement 1: κ undefined


@pytest.fixture
def setup(db):
    coll = factories.collection("hint", judges_per_pair=2)
    query = factories.query(coll, "q1")
    docs = [factories.document(coll, f"d{i}") for i in range(4)]
    entries = [factories.pool_entry(coll, query, d) for d in docs]
    llm = factories.llm_judge()
    for doc, grade in zip(docs, (0, 1, 3, 4), strict=True):
        services.judgment_record(judge=llm, query=query, document=doc, grade=grade)
    user = factories.user("jay")
    factories.member(coll, user, Membership.Role.JUDGE)
    return coll, query, docs, entries, user


def _card(client, coll, entry) -> str:
    return client.get(
        reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)])
    ).content.decode()


def _grade(client, coll, entry, grade, shown):
    url = reverse("judging:judge_pair", args=[coll.slug, pair_ref(entry.pk)])
    response = client.post(url, {"grade": grade, "llm_shown": shown})
    assert response.status_code == 303, response.content[:300]


def test_hidden_by_default_and_recorded_blind(setup, client):
    coll, _query, _docs, entries, user = setup
    client.force_login(user)
    page = _card(client, coll, entries[2])
    assert "data-llm-hint" not in page and 'name="llm_shown" value="0"' in page
    _grade(client, coll, entries[2], 3, "0")
    assert Judgment.objects.get(judge__user=user).saw_llm_grade is False


def test_shown_when_asked_and_recorded_assisted(setup, client):
    coll, _query, _docs, entries, user = setup
    coll.llm_hint = "shown"
    coll.save()
    client.force_login(user)
    page = _card(client, coll, entries[2])
    assert "data-llm-hint" in page and "3 · " in page and 'name="llm_shown" value="1"' in page
    _grade(client, coll, entries[2], 2, "1")
    judgment = Judgment.objects.get(judge__user=user)
    assert judgment.saw_llm_grade is True
    # a later change from the edit page (no hint there) keeps it assisted
    services.judgment_record(
        judge=judgment.judge, query=judgment.query, document=judgment.document, grade=1
    )
    judgment.refresh_from_db()
    assert (judgment.grade, judgment.saw_llm_grade) == (1, True)


def test_a_card_cannot_claim_a_hint_the_rule_hides(setup, client):
    coll, _query, _docs, entries, user = setup
    client.force_login(user)
    _grade(client, coll, entries[0], 0, "1")  # forged: the collection hides LLM grades
    assert Judgment.objects.get(judge__user=user).saw_llm_grade is False


def test_half_shows_a_fixed_half_per_judge(setup):
    coll, query, _docs, _entries, user = setup
    coll.llm_hint = "half"
    coll.save()
    judge = factories.human_judge(user)
    more = [factories.document(coll, f"x{i}") for i in range(200)]
    entries = [factories.pool_entry(coll, query, d) for d in more]
    due = [llm_hint_due(collection=coll, judge=judge, entry=e) for e in entries]
    assert 70 <= sum(due) <= 130  # about half of 200
    again = [llm_hint_due(collection=coll, judge=judge, entry=e) for e in entries]
    assert due == again  # stable across calls


def test_agreement_on_the_checked_pairs_by_provenance(setup):
    coll, query, docs, _entries, user = setup
    other = factories.user("kim")
    factories.member(coll, other, Membership.Role.JUDGE)
    jay, kim = factories.human_judge(user), factories.human_judge(other)
    # LLM grades 0 1 3 4; jay (assisted) agrees on all four, kim (blind) on d0 only
    for doc, grade in zip(docs, (0, 1, 3, 4), strict=True):
        services.judgment_record(
            judge=jay, query=query, document=doc, grade=grade, saw_llm_grade=True
        )
    for doc, grade in zip(docs, (0, 3, 1, 2), strict=True):
        services.judgment_record(
            judge=kim, query=query, document=doc, grade=grade, saw_llm_grade=False
        )
    unchecked = factories.document(coll, "solo")  # humans only: not a check
    services.judgment_record(judge=jay, query=query, document=unchecked, grade=2)
    report = llm_checks(collection=coll)
    figures = {g.label: (g.checks, g.exact) for g in report.groups}
    assert {k: v for k, v in figures.items() if k != "not recorded"} == {
        "all checks": (8, 5 / 8),
        "assisted": (4, 1.0),
        "blind": (4, 0.25),
    }
    assert figures["not recorded"][0] == 0 and math.isnan(figures["not recorded"][1])
    assert report.curve[-1].checks == 8 and report.curve[0].checks == 1
    assert report.curve[3].exact == 1.0  # the first four checks were jay's


def test_settings_take_the_hint_rule_and_name_a_bad_one(setup):
    coll, *_ = setup
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    api = client_for(cora)
    url = f"/api/v1/collections/{coll.slug}/aggregation/"
    assert api.get(url).json()["llm_hint"] == "hidden"
    assert api.patch(url, {"llm_hint": "half"}, format="json").json()["llm_hint"] == "half"
    bad = api.patch(url, {"llm_hint": "peek"}, format="json")
    assert bad.status_code == 400 and "llm_hint" in str(errors_of(bad))
    coll.refresh_from_db()
    assert coll.llm_hint == "half"
    report = api.get(f"/api/v1/collections/{coll.slug}/agreement/llm/").json()
    assert report["checks"]["groups"][0] == {
        "label": "all checks",
        "checks": 0,
        "exact": None,
        "kappa": None,
    }


def test_audit_draws_are_fixed_uniform_and_independent_of_the_seed():
    from scipy import stats

    q = np.repeat(np.arange(1, 201), 100)
    d = np.tile(np.arange(5000, 5100), 200)
    draws = checks.audit_draws(q, d, seed=3)
    assert draws.min() >= 0 and draws.max() < 1
    assert np.array_equal(draws, checks.audit_draws(q, d, seed=3))  # fixed
    assert np.array_equal(draws[::-1], checks.audit_draws(q[::-1], d[::-1], seed=3))
    assert stats.kstest(draws, "uniform").pvalue > 0.001  # 20,000 draws look uniform
    assert abs((draws < 0.1).mean() - 0.1) < 0.01
    other = checks.audit_draws(q, d, seed=4)
    assert abs(np.corrcoef(draws, other)[0, 1]) < 0.03  # another seed, another sample
    swapped = checks.audit_draws(d, q, seed=3)  # (q, d) and (d, q) are different pairs
    assert abs(np.corrcoef(draws, swapped)[0, 1]) < 0.03


def test_the_audit_samples_queries_and_every_pair_gets_its_querys_draw():
    from scipy import stats

    queries = np.arange(1, 2001)
    per_query = checks.query_audit_draws(queries, seed=3)
    # the query's draw is the hash of (query, document 0), spelled out once here
    assert np.array_equal(per_query, checks.audit_draws(queries, np.zeros(2000), seed=3))
    assert stats.kstest(per_query, "uniform").pvalue > 0.001  # 2,000 queries look uniform
    q = np.repeat(queries[:200], 100)
    d = np.tile(np.arange(5000, 5100), 200)
    pairs = checks.pair_audit_draws(q, d, seed=3)
    assert np.array_equal(pairs, np.repeat(per_query[:200], 100))  # one draw per query
    audit = checks.Audit(seed=3, share=0.1)
    inside = audit.contains(q, d).reshape(200, 100)
    assert (inside.all(axis=1) | ~inside.any(axis=1)).all()  # a query's pairs: all or none
    assert np.array_equal(inside[:, 0], audit.sampled(queries[:200]))
    assert np.array_equal(audit.sampled(queries), per_query < 0.1)
    assert abs(audit.sampled(queries).mean() - 0.1) < 0.025
    shuffled = np.random.default_rng(0).permutation(q.size)  # order does not matter
    assert np.array_equal(
        checks.pair_audit_draws(q[shuffled], d[shuffled], seed=3), pairs[shuffled]
    )
    with pytest.raises(ValueError, match="lengths"):
        checks.pair_audit_draws([1, 2], [1], seed=3)


def test_the_random_audit_group_counts_only_the_sampled_queries_pairs(setup):
    coll, _query, _docs, _entries, user = setup
    queries = [factories.query(coll, f"a{i:02d}") for i in range(10)]
    more = [factories.document(coll, f"a{i}") for i in range(4)]
    llm = factories.llm_judge("llm-audit")
    jay = factories.human_judge(user)
    pairs = [(q, d) for q in queries for d in more]
    for i, (q, doc) in enumerate(pairs):  # the human agrees with the LLM on every third pair
        services.judgment_record(judge=llm, query=q, document=doc, grade=2)
        services.judgment_record(judge=jay, query=q, document=doc, grade=2 if i % 3 == 0 else 0)
    ids = [q.pk for q in queries]
    # query pks differ between databases: find a seed that samples some queries, not all
    seed = next(
        s for s in range(1000) if 0 < (checks.audit_draws(ids, [0] * 10, seed=s) < 0.3).sum() < 10
    )
    audit = checks.Audit(seed=seed, share=0.3)
    draws = checks.audit_draws(ids, [0] * 10, seed=seed)
    drawn = {q for q, x in zip(ids, draws, strict=True) if x < 0.3}
    sampled = np.array([q.pk in drawn for q, _d in pairs])
    report = llm_checks(collection=coll, audit=audit)
    figures = {g.label: g for g in report.groups}
    agree = np.array([i % 3 == 0 for i in range(len(pairs))])
    assert figures["random audit"].checks == 4 * len(drawn) == sampled.sum()
    assert figures["random audit"].exact == pytest.approx(agree[sampled].mean())
    assert figures["all checks"].checks == len(pairs)
    assert "random audit" not in {g.label for g in llm_checks(collection=coll).groups}
