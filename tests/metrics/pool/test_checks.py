"""LLM first, humans check: the check score's parts worked out by hand, and the live plan."""

from __future__ import annotations

import numpy as np
import pytest

from judging import services as judging_services
from judging.models import Membership
from metrics import services as metrics_services
from metrics.pool import checks, services
from metrics.pool import selectors as pool_selectors
from tests import factories
from tests.metrics import factories as metrics_factories


def test_uncertainty_takes_the_largest_of_its_three_parts():
    mean = np.array([np.nan, 0.5, 1.0, 0.0, 3.0, 4.0, 4.0, 4.0])
    spread = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0, 3.0, 0.0])
    abstain = np.array([np.nan, np.nan, np.nan, 0.2, np.nan, np.nan, np.nan, 0.7])
    got = checks.llm_uncertainty(mean, spread, abstain, rel_level=1)
    # no LLM grade 1; on the cut (0.5) 1; next to it (1, 0) 0.5 (0.2 abstain is less);
    # 3 and 4 far from the cut 0; spread 1 -> 0.5, spread 3 -> 1; abstain 0.7
    assert got.tolist() == [1.0, 1.0, 0.5, 0.5, 0.0, 0.5, 1.0, 0.7]
    # the cut moves with the relevance level: with rel_level 3, grade 2 and 3 are next to it
    at3 = checks.llm_uncertainty(np.array([2.0, 3.0, 0.0]), np.zeros(3), np.zeros(3), rel_level=3)
    assert at3.tolist() == [0.5, 0.5, 0.0]


def test_scores_scale_impact_by_the_largest_and_order_the_eligible_pairs():
    unsure = [np.array([0.0, 1.0, 0.5]), np.array([0.5, 0.0])]
    impact = [np.array([4.0, 0.0, 2.0]), np.array([0.0, np.nan])]
    scores = checks.check_scores(unsure, impact)
    assert [s.tolist() for s in scores] == [[1.0, 1.0, 1.0], [0.5, 0.0]]
    eligible = [np.array([True, True, False]), np.array([True, True])]
    # ties by query then document; the ineligible (0, 2) is left out
    assert checks.check_order(scores, eligible, 10) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert checks.check_order(scores, eligible, 2) == [(0, 0), (0, 1)]
    assert checks.check_order(scores, eligible, 0) == []
    flat = checks.check_scores(unsure, [np.zeros(3), np.zeros(2)])  # nothing can move
    assert [s.tolist() for s in flat] == [u.tolist() for u in unsure]


@pytest.mark.django_db
def test_humans_get_the_pairs_the_llm_is_unsure_of_first(django_capture_on_commit_callbacks):
    """Two runs rank the same four documents in the same order: no pair can reorder them.

    The LLM grades d1 4 (sure), d2 1 next to the cut, d3 2 but with abstention 0.9, and
    leaves d4 ungraded. With impact 0 everywhere, humans get d4 (1), d3 (0.9), d2 (0.5)
    and d1 (0) last.
    """
    coll = factories.collection("check", pool_depth=10, judges_per_pair=2)
    query = factories.query(coll, "q1")
    docs = {f"d{i}": factories.document(coll, f"d{i}") for i in range(1, 5)}
    team = metrics_factories.team(coll)
    for tag in ("A", "B"):
        run = metrics_factories.run(
            coll, team, tag, rankings={query: [docs[f"d{i}"].pk for i in range(1, 5)]}
        )
        metrics_services.pool_from_run(run=run, depth=10)
    llm = factories.llm_judge()
    llm.collections.add(coll)
    for name, grade, p in (("d1", 4, 0.0), ("d2", 1, None), ("d3", 2, 0.9)):
        judging_services.judgment_record(
            judge=llm, query=query, document=docs[name], grade=grade, abstain_probability=p
        )
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    coll.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        policy = services.pooling_policy_set(
            collection=coll,
            actor=cora,
            strategy="llm-check",
            wave_size=1,
            horizon=10,
            audit_percent=0,  # the targeted order alone (the audit is tested below)
        )
    plan = [e.document.external_id for e in pool_selectors.pool_plan(collection=coll)]
    assert plan == ["d4", "d3", "d2", "d1"]
    assert policy.planned_pairs == 4
    # a human checks d3: it still needs nothing more (LLM + human = 2), so it leaves the plan
    user = factories.user("jay")
    factories.member(coll, user, Membership.Role.JUDGE)
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgment_record(
            judge=factories.human_judge(user), query=query, document=docs["d3"], grade=2
        )
    plan = [e.document.external_id for e in pool_selectors.pool_plan(collection=coll)]
    assert plan == ["d4", "d2", "d1"]


@pytest.mark.django_db
def test_when_the_llm_is_sure_the_pairs_that_can_reorder_runs_come_first(
    django_capture_on_commit_callbacks,
):
    """Run A ranks d1 d2 d3, run B d1 d3 d2; the LLM grades all three 3, sure of each.

    Only d2 and d3 sit at different ranks in the two runs, so only their grades can
    reorder A and B: they come before d1 (first by code, so a plan that ignored impact
    would put it first), whose grade moves both runs alike.
    """
    coll = factories.collection("impact", pool_depth=10, judges_per_pair=2)
    query = factories.query(coll, "q1")
    docs = {f"d{i}": factories.document(coll, f"d{i}") for i in range(1, 4)}
    team = metrics_factories.team(coll)
    for tag, names in (("A", ["d1", "d2", "d3"]), ("B", ["d1", "d3", "d2"])):
        run = metrics_factories.run(coll, team, tag, rankings={query: [docs[n].pk for n in names]})
        metrics_services.pool_from_run(run=run, depth=10)
    llm = factories.llm_judge()
    for name in docs:
        judging_services.judgment_record(
            judge=llm, query=query, document=docs[name], grade=3, abstain_probability=0.0
        )
    coll.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        services.pooling_policy_set(
            collection=coll,
            actor=None,
            strategy="llm-check",
            wave_size=1,
            horizon=10,
            audit_percent=0,
        )
    plan = [e.document.external_id for e in pool_selectors.pool_plan(collection=coll)]
    assert sorted(plan[:2]) == ["d2", "d3"] and plan[2] == "d1"


def test_the_audit_takes_its_share_of_slots_in_the_order_of_its_draws():
    scores = [np.array([0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2])]
    draws = [np.array([0.5, 0.02, 0.9, 0.15, 0.6, 0.01, 0.7, 0.8])]
    eligible = [np.ones(8, dtype=bool)]
    # audit at share 0.2: d1 (0.02), d3 (0.15), d5 (0.01); drawn order d5, d1, d3
    got = checks.check_order(scores, eligible, 8, draws=draws, audit_share=0.2)
    assert [d for _, d in got] == [5, 0, 2, 4, 6, 1, 7, 3]
    # slot k goes to the audit while it has had fewer than 0.2 k of them: 1, 6, then the rest
    assert sorted(got) == [(0, d) for d in range(8)]  # every pair once
    assert checks.check_order(scores, eligible, 8, draws=draws, audit_share=0) == [
        (0, d) for d in range(8)
    ]
    assert checks.check_order(scores, eligible, 8) == [(0, d) for d in range(8)]
    closed = [np.array([True, False, True, True, True, False, True, True])]
    got = checks.check_order(scores, closed, 3, draws=draws, audit_share=0.2)
    assert got == [(0, 3), (0, 0), (0, 2)]  # d1 and d5 are not open: d3 is the audit's first
    every = checks.check_order(scores, eligible, 8, draws=draws, audit_share=1.0)
    assert [d for _, d in every] == [5, 1, 3, 0, 4, 6, 7, 2]  # all audit: by draw


@pytest.mark.django_db
def test_llm_check_spends_the_audit_share_on_random_pairs(django_capture_on_commit_callbacks):
    """Under llm-check with a 25 % audit, about a quarter of the planned checks are random."""
    from judging.agreement.checks import Audit, audit_draws

    coll = factories.collection("audit", pool_depth=100, judges_per_pair=2)
    query = factories.query(coll, "q1")
    docs = [factories.document(coll, f"d{i:03d}") for i in range(80)]
    team = metrics_factories.team(coll)
    run = metrics_factories.run(coll, team, "A", rankings={query: [d.pk for d in docs]})
    metrics_services.pool_from_run(run=run, depth=100)
    llm = factories.llm_judge()
    for i, doc in enumerate(docs):  # the LLM is sure of every pair but the last ten
        judging_services.judgment_record(
            judge=llm,
            query=query,
            document=doc,
            grade=4 if i % 2 else 0,
            abstain_probability=0.9 if i >= 70 else 0.0,
        )
    coll.refresh_from_db()
    with django_capture_on_commit_callbacks(execute=True):
        services.pooling_policy_set(
            collection=coll,
            actor=None,
            strategy="llm-check",
            wave_size=1,
            horizon=20,
            audit_percent=25,
            seed=7,
        )
    planned = [e.document for e in pool_selectors.pool_plan(collection=coll)]
    audit = Audit(seed=7, share=0.25)
    draws = audit_draws([query.pk] * len(docs), [d.pk for d in docs], seed=7)
    members = sorted((r, d.external_id) for r, d in zip(draws, docs, strict=True) if r < 0.25)
    assert 10 <= len(members) <= 30  # a quarter of 80, give or take
    sampled = audit.contains([query.pk] * len(planned), [d.pk for d in planned])
    assert sampled.sum() == 5  # a quarter of the 20 slots, first the smallest draws
    assert [d.external_id for d, a in zip(planned, sampled, strict=True) if a] == [
        name for _, name in members[:5]
    ]
    in_audit = {name for _, name in members}
    unsure = {d.external_id for d in docs[70:]} - in_audit  # abstention 0.9: checked first
    targeted = [d.external_id for d, a in zip(planned, sampled, strict=True) if not a]
    assert set(targeted[: len(unsure)]) == unsure
    assert not set(targeted) & in_audit
    assert pool_selectors.audit_sample(collection=coll) == audit
