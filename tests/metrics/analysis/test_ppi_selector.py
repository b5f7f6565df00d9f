"""Prediction-powered run means from stored data (metrics.analysis.ppi), worked by hand.

Four queries, two documents each; run A ranks d1 d2, run B d2 d1. An LLM judge grades
every pair; humans grade both pairs of q1 and q2 only. With the audit at 100% every query
is sampled, and q1, q2 (all pairs human) are the audited ones.

    LLM grades   q1: 1 1   q2: 0 1   q3: 1 0   q4: 1 1     (d1 d2)
    human        q1: 1 0   q2: 0 1

P@1 of A (d1): f = 1 0 1 1 (mean 0.75); h on q1, q2 = 1 0: rectifiers h − f = 0 0, so
the estimate is 0.75 with a point interval. P@1 of B (d2): f = 1 1 0 1 (0.75); h = 0 1,
rectifiers −1 0: 0.75 − 0.5 = 0.25; S² = 0.5, variance (1/2 − 1/4)·0.5 = 0.125.
P@2 of both: f = 1 0.5 0.5 1 (0.75); h = 0.5 0.5, rectifiers −0.5 0: 0.5, S² = 0.125,
variance 0.03125. Two audited queries: λ is not tuned (plain PPI, λ = 1) and t has one
degree of freedom (12.7062).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from judging import services
from judging.agreement.checks import audit_draws
from judging.models import Membership
from metrics.analysis.ppi import prediction_powered_means
from metrics.live.scoring import canonical_names
from metrics.pool import services as pool_services
from tests import factories
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
T1 = 12.706204736174698
LLM = {"q1": (1, 1), "q2": (0, 1), "q3": (1, 0), "q4": (1, 1)}
HUMAN = {"q1": (1, 0), "q2": (0, 1)}


@pytest.fixture
def world(db):
    coll = factories.collection("ppi", measures=["P_1", "P_2"])
    queries = {name: factories.query(coll, name) for name in LLM}
    docs = {
        q: (factories.document(coll, f"{q}-d1"), factories.document(coll, f"{q}-d2")) for q in LLM
    }
    team = metrics_factories.team(coll)
    runs = {}
    for tag, flip in (("A", False), ("B", True)):
        rankings = {queries[q]: [d.pk for d in (docs[q][::-1] if flip else docs[q])] for q in LLM}
        runs[tag] = metrics_factories.run(coll, team, tag, rankings=rankings)
    llm = factories.llm_judge()
    for q, grades in LLM.items():
        for doc, grade in zip(docs[q], grades, strict=True):
            services.judgment_record(judge=llm, query=queries[q], document=doc, grade=grade)
    user = factories.user("hana")
    factories.member(coll, user, Membership.Role.JUDGE)
    human = factories.human_judge(user)
    for q, grades in HUMAN.items():
        for doc, grade in zip(docs[q], grades, strict=True):
            services.judgment_record(judge=human, query=queries[q], document=doc, grade=grade)
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    coll.refresh_from_db()
    return coll, cora, runs, queries


def _set_audit(coll, cora, percent, seed=0):
    pool_services.pooling_policy_set(
        collection=coll, actor=cora, strategy="llm-check", audit_percent=percent, seed=seed
    )


def test_hand_worked_estimates_and_intervals(world):
    coll, cora, runs, _queries = world
    _set_audit(coll, cora, 100)
    p1, p2 = canonical_names(coll.measures)
    got = prediction_powered_means(collection=coll, runs=[runs["A"], runs["B"]], measures=[p1, p2])
    assert got.available and got.reason == ""
    assert (got.queries, got.sampled, got.audited, got.llm_filled) == (4, 4, 2, True)
    a1 = got.runs[runs["A"].pk][p1]
    assert (a1.estimate, a1.low, a1.high) == pytest.approx((0.75, 0.75, 0.75))
    assert (a1.lam, a1.llm_mean, a1.audited, a1.queries) == (1.0, 0.75, 2, 4)
    b1 = got.runs[runs["B"].pk][p1]
    assert b1.estimate == pytest.approx(0.25)
    assert b1.std_error == pytest.approx(math.sqrt(0.125))
    # 0.25 ± T1·√0.125 (±4.49) reaches past P@k's range: the interval is clipped to [0, 1]
    # (metrics.engine.ppi's bounds; T1 is 12.7 with one degree of freedom).
    assert 0.25 - T1 * math.sqrt(0.125) < 0 < 1 < 0.25 + T1 * math.sqrt(0.125)
    assert (b1.low, b1.high) == (0.0, 1.0)
    for tag in "AB":
        both = got.runs[runs[tag].pk][p2]
        assert both.estimate == pytest.approx(0.5)
        assert both.std_error == pytest.approx(math.sqrt(0.03125))
        assert both.llm_mean == pytest.approx(0.75)


def test_the_topics_target_adds_the_sampling_of_queries(world):
    coll, cora, runs, _queries = world
    _set_audit(coll, cora, 100)
    p1 = canonical_names(coll.measures)[0]
    got = prediction_powered_means(
        collection=coll, runs=[runs["B"]], measures=[p1], target="topics"
    )
    # h of B on q1, q2 = 0 1: S²(h) = 0.5, so 0.125 + 0.5/4
    assert got.runs[runs["B"].pk][p1].std_error == pytest.approx(math.sqrt(0.25))


def test_only_sampled_queries_count(world):
    coll, cora, runs, queries = world
    ids = [queries[q].pk for q in sorted(LLM)]
    complete = {queries["q1"].pk, queries["q2"].pk}
    # Query pks differ between databases: find a seed whose 50% sample holds q2 alone of
    # the complete queries, and at least one of the others. (With q1, the audited
    # estimate 0.75 − 1 would be clipped to P@1's range, a case of its own.)
    for seed in range(1000):
        draws = audit_draws(ids, np.zeros(4, dtype=np.int64), seed=seed)
        sampled = {q for q, x in zip(ids, draws.tolist(), strict=True) if x < 0.5}
        if sampled & complete == {queries["q2"].pk} and sampled - complete:
            break
    else:
        pytest.fail("no seed samples the queries as wanted")
    _set_audit(coll, cora, 50, seed=seed)
    p1 = canonical_names(coll.measures)[0]
    got = prediction_powered_means(collection=coll, runs=[runs["B"]], measures=[p1])
    assert (got.sampled, got.audited) == (len(sampled), 1)
    assert (got.audit_share, got.seed) == (0.5, seed)
    b1 = got.runs[runs["B"].pk][p1]
    # one audited query of four: plain PPI, no finite interval. B's P@1 f = 1 1 0 1;
    # rectifier h − f = 0 on q2, the audited query.
    assert b1.estimate == pytest.approx(0.75)
    assert (b1.low, b1.high, b1.audited, b1.queries) == (-math.inf, math.inf, 1, 4)


def test_nothing_without_an_audit_or_before_a_sampled_query_is_complete(world):
    coll, cora, runs, queries = world
    p1 = canonical_names(coll.measures)[0]
    got = prediction_powered_means(collection=coll, runs=[runs["A"]], measures=[p1])
    assert not got.available and "random audit" in got.reason
    assert got.runs == {runs["A"].pk: {p1: None}}
    _set_audit(coll, cora, 0)
    assert not prediction_powered_means(collection=coll, runs=[runs["A"]], measures=[p1]).available
    # sample only q3 and q4's ... by making q1, q2 incomplete: an LLM-only pair in each
    _set_audit(coll, cora, 100)
    extra = factories.llm_judge("other")
    for q in ("q1", "q2"):
        doc = factories.document(coll, f"{q}-d3")
        services.judgment_record(judge=extra, query=queries[q], document=doc, grade=1)
    got = prediction_powered_means(collection=coll, runs=[runs["A"]], measures=[p1])
    assert not got.available and "no sampled query" in got.reason
    assert (got.sampled, got.audited) == (4, 0)


def test_bad_arguments_are_refused(world):
    coll, _cora, runs, _queries = world
    p1 = canonical_names(coll.measures)[0]
    with pytest.raises(ValueError, match="target"):
        prediction_powered_means(collection=coll, runs=[runs["A"]], measures=[p1], target="x")
    with pytest.raises(ValueError, match="confidence"):
        prediction_powered_means(collection=coll, runs=[runs["A"]], measures=[p1], confidence=1)


def test_a_pooled_pair_nobody_graded_keeps_a_sampled_query_unaudited(world):
    coll, cora, runs, queries = world
    _set_audit(coll, cora, 100)
    p1 = canonical_names(coll.measures)[0]
    before = prediction_powered_means(collection=coll, runs=[runs["A"]], measures=[p1])
    assert before.audited == 2
    factories.pool_entry(coll, queries["q1"], factories.document(coll, "q1-d9"))  # no grade
    after = prediction_powered_means(collection=coll, runs=[runs["A"]], measures=[p1])
    assert (after.queries, after.sampled, after.audited) == (4, 4, 1)
