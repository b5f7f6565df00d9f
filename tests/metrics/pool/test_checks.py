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
def test_llm_check_queues_every_pair_of_a_sampled_query_and_only_checks_of_the_others(
    django_capture_on_commit_callbacks,
):
    """The audit draws queries: all of a sampled query's pairs go to humans, together.

    16 queries; those the audit draws (each query's draw ``audit_draws([q], [0], seed)``
    below 25%, worked out here apart from the code under test) get 3 documents, the
    others 8. With room in the plan for every audit pair, the plan holds every pair of
    the sampled queries, by query in the order of their draws, and of the other queries
    exactly the ordinary checks: the plan without an audit, less the audit's pairs.
    """
    from judging.agreement.checks import Audit, audit_draws
    from metrics.analysis.ppi import prediction_powered_means
    from metrics.live.scoring import canonical_names

    coll = factories.collection("audit", pool_depth=100, judges_per_pair=2, measures=["P_3"])
    queries = [factories.query(coll, f"q{i:02d}") for i in range(16)]
    ids = np.array([q.pk for q in queries])
    # query pks differ between databases: a seed that draws three to five of the 16
    seed = next(
        s for s in range(10_000) if 3 <= (audit_draws(ids, np.zeros(16), seed=s) < 0.25).sum() <= 5
    )
    draws = audit_draws(ids, np.zeros(16), seed=seed)
    sampled = [q for q, x in zip(queries, draws, strict=True) if x < 0.25]
    by_draw = [q.external_id for _, q in sorted(zip(draws, queries, strict=True)) if q in sampled]
    docs = {
        q: [
            factories.document(coll, f"{q.external_id}-d{j}")
            for j in range(3 if q in sampled else 8)
        ]
        for q in queries
    }
    team = metrics_factories.team(coll)
    run = metrics_factories.run(
        coll, team, "A", rankings={q: [d.pk for d in ds] for q, ds in docs.items()}
    )
    metrics_services.pool_from_run(run=run, depth=100)
    llm = factories.llm_judge()
    for i, q in enumerate(queries):  # sure of every pair but two of the fourth query
        for j, d in enumerate(docs[q]):
            judging_services.judgment_record(
                judge=llm,
                query=q,
                document=d,
                grade=4 if (i + j) % 2 else 0,
                abstain_probability=0.9 if i == 3 and j < 2 else 0.0,
            )
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    coll.refresh_from_db()
    audit_pairs = {(q.external_id, d.external_id) for q in sampled for d in docs[q]}
    total = sum(len(ds) for ds in docs.values())
    horizon = 4 * len(audit_pairs) + 4  # the audit's quarter of the slots holds them all

    def plan(**policy):
        with django_capture_on_commit_callbacks(execute=True):
            services.pooling_policy_set(
                collection=coll, actor=cora, strategy="llm-check", wave_size=1, **policy
            )
        return [
            (e.query.external_id, e.document.external_id)
            for e in pool_selectors.pool_plan(collection=coll)
        ]

    ordinary = plan(horizon=total, audit_percent=0, seed=seed)
    assert len(ordinary) == total
    unsure = {(queries[3].external_id, d.external_id) for d in docs[queries[3]][:2]}
    assert set(ordinary[:2]) == unsure  # the ordinary checks start with the unsure pairs
    got = plan(horizon=horizon, audit_percent=25, seed=seed)
    assert len(got) == horizon < total
    assert audit_pairs <= set(got)  # every pair of every sampled query is queued
    audited_order = [q for q, d in got if (q, d) in audit_pairs]
    assert list(dict.fromkeys(audited_order)) == by_draw  # a query's pairs together, by draw
    others = [p for p in got if p not in audit_pairs]
    # of the other queries, the ordinary checks alone, in their order
    assert others == [p for p in ordinary if p not in audit_pairs][: horizon - len(audit_pairs)]
    assert pool_selectors.audit_sample(collection=coll) == Audit(seed=seed, share=0.25)
    # People grade what the audit queued: the sampled queries become the audited ones.
    jay = factories.user("jay")
    factories.member(coll, jay, Membership.Role.JUDGE)
    human = factories.human_judge(jay)
    by_name = {(q.external_id, d.external_id): (q, d) for q, ds in docs.items() for d in ds}
    for pair in got:
        if pair in audit_pairs:
            q, d = by_name[pair]
            judging_services.judgment_record(judge=human, query=q, document=d, grade=4)
    coll.refresh_from_db()
    ppi = prediction_powered_means(collection=coll, runs=[run], measures=canonical_names(["P_3"]))
    assert (ppi.queries, ppi.sampled, ppi.audited) == (16, len(sampled), len(sampled))
