"""The hybrid pooling order and the incremental nDCG@k of the simulation (no database).

The hand-worked campaign has two runs and two queries, cut-off 2::

    q1: A = [p, a]   B = [p, b]
    q2: A = [s, t]   B = [s, w]

``p`` and ``s`` (rank 1 in both runs, best-rank band 0) and ``a``, ``b``, ``t``, ``w``
(rank 2 in one run of two, band 1; half the runs retrieve each) fall in two cells of the
grade estimate. Each cell starts with one count of each grade 0-4: mean 2, second
moment 6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.pool import simulation
from metrics.pool.strategies import Campaign, Hybrid, NdcgCut, make_strategy, plan

C2 = 1.0 / math.log2(3.0)  # the discount at rank 2


def _tiny() -> Campaign:
    return Campaign.from_rankings(
        {"A": {"q1": ["p", "a"], "q2": ["s", "t"]}, "B": {"q1": ["p", "b"], "q2": ["s", "w"]}}
    )


def _code(campaign: Campaign, q: str, docno: str) -> tuple[int, int]:
    qi = campaign.queries.index(q)
    return qi, campaign.docnos[qi].index(docno)


def _observe(strategy: Hybrid, grades: dict[tuple[str, str], float]) -> None:
    for (q, docno), grade in grades.items():
        strategy.observe(*_code(strategy.campaign, q, docno), grade)


def test_with_nothing_learnt_hybrid_starts_in_depth_order():
    # Mean 2 and variance 2 per cell: judging one document alone would unbalance the runs
    # more (mean^2 = 4) than it removes (variance 2), so nothing weighs: depth order.
    strategy = Hybrid(_tiny(), cutoff=2, explore=0.0, refresh=1)
    assert strategy.next_pair() == _code(strategy.campaign, "q1", "p")
    assert strategy.next_pair() == _code(strategy.campaign, "q2", "s")


def test_hybrid_weights_match_the_hand_computation():
    strategy = Hybrid(_tiny(), cutoff=2, explore=0.0, refresh=1)
    _observe(strategy, {("q1", "p"): 3, ("q2", "s"): 0, ("q2", "t"): 0, ("q2", "w"): 0})
    # Band-1 cell: 5 + 2 counts, sum 10, squares 30: mean 10/7, variance 110/49.
    # Ideal DCG: q1 3 (scale 1 / (3 * 2 queries)), q2 none (at least 1: scale 1/2).
    # Both runs score 0.5 so far: the pair is a tie, wrong = 1/2, times the top weight
    # 1/1 + 2/2 = 2. Both runs miss one band-1 document at rank 2: no bias.
    expected = (110 / 49 - (10 / 7) ** 2) * (1 / 6) ** 2 * 1.0 * C2**2
    weights = dict(zip(strategy._top.tolist(), strategy.weights().tolist(), strict=True))
    a, b = (strategy._offset[q] + d for q, d in (_code(strategy.campaign, "q1", x) for x in "ab"))
    assert weights[a] == pytest.approx(expected, rel=1e-12)
    assert weights[b] == pytest.approx(expected, rel=1e-12)
    assert sum(weights.values()) == pytest.approx(2 * expected, rel=1e-12)  # judged: 0

    # a judged non-relevant: band 1 now mean 10/8, variance 30/8 - (10/8)^2. Run B's
    # unjudged b is the expected missing part of the pair (bias -1.25 * C2 / 6 against
    # A), so b weighs 2 mu scale (C2 * 1.25 * C2 / 6) + (var - mu^2) scale^2 C2^2.
    _observe(strategy, {("q1", "a"): 0})
    mu, var = 10 / 8, 30 / 8 - (10 / 8) ** 2
    expected_b = 2 * mu / 6 * (C2 * mu * C2 / 6) + (var - mu**2) / 36 * C2**2
    weights = dict(zip(strategy._top.tolist(), strategy.weights().tolist(), strict=True))
    assert weights[b] == pytest.approx(expected_b, rel=1e-12)
    assert strategy.next_pair() == _code(strategy.campaign, "q1", "b")


def test_hybrid_first_covers_the_run_the_unjudged_part_underrates():
    # B has one document more than A within the cut-off: the unjudged part adds 2 * c4
    # more to B. B's document at rank k weighs c_k (3.45 - 2 c_k) (see the live test of
    # the same campaign), decreasing with k; A's weigh nothing.
    campaign = Campaign.from_rankings(
        {"A": {"q": ["d1", "d2", "d3"]}, "B": {"q": ["d4", "d5", "d6", "d7"]}}
    )
    strategy = Hybrid(campaign, explore=0.0)
    weights = strategy.weights()
    c = 1.0 / np.log2(np.arange(1, 5) + 1.0)
    c4 = c[3]
    expected = {f"d{k + 4}": c[k] * (2 * 2 * 2 * c4) - 2 * c[k] ** 2 for k in range(4)}
    expected.update({"d1": 0.0, "d2": 0.0, "d3": 0.0})
    pairs = zip(strategy._top.tolist(), weights.tolist(), strict=True)
    got = {campaign.docnos[0][d]: w for d, w in pairs}
    assert got == pytest.approx(expected, rel=1e-12)
    names = [campaign.docnos[0][d] for _, d in plan(strategy, [np.full(7, np.nan)], 5)]
    assert names == ["d4", "d5", "d6", "d7", "d1"]  # then A's, in depth order


def test_a_document_every_run_ranks_alike_weighs_nothing():
    campaign = Campaign.from_rankings(
        {"A": {"q": ["x", "a", "c"]}, "B": {"q": ["x", "b", "c"]}, "C": {"q": ["x", "c", "a"]}}
    )
    strategy = Hybrid(campaign, cutoff=3, explore=0.0)
    _observe(strategy, {("q", "a"): 0, ("q", "b"): 1})
    weights = dict(zip(strategy._top.tolist(), strategy.weights().tolist(), strict=True))
    assert weights[_code(campaign, "q", "x")[1]] == 0.0
    assert weights[_code(campaign, "q", "c")[1]] > 0.0


def _random_campaign(seed: int, queries: int = 6, runs: int = 5, universe: int = 60):
    """Return a small campaign whose runs share documents, and its graded qrels."""
    rng = np.random.default_rng(seed)
    rankings: dict[str, dict[str, list[str]]] = {f"r{r}": {} for r in range(runs)}
    qrels: dict[str, dict[str, float]] = {}
    for q in range(queries):
        grades = np.where(rng.random(universe) < 0.2, rng.integers(1, 5, universe), 0)
        for r in range(runs):
            score = (1.5 - r * 0.2) * grades + rng.normal(0, 1.0, universe)
            top = np.argsort(-score)[:15]
            rankings[f"r{r}"][f"q{q}"] = [f"d{q}-{d}" for d in top]
        qrels[f"q{q}"] = {f"d{q}-{d}": float(g) for d, g in enumerate(grades)}
    return Campaign.from_rankings(rankings), qrels


def _simulate(campaign: Campaign, qrels, budget: int) -> list[simulation.Step]:
    grades = simulation.oracle(campaign, qrels)
    reference = simulation.reference_scores(campaign, qrels)
    return simulation.simulate(
        campaign,
        grades,
        make_strategy("hybrid", campaign, refresh=3),
        budget=budget,
        step=7,
        reference=reference,
        tracker=NdcgCut(campaign, 10),
    )


def test_hybrid_simulation_is_deterministic_and_ends_at_tau_one():
    campaign, qrels = _random_campaign(3)
    pool = sum(campaign.n_docs)
    rows = _simulate(campaign, qrels, pool + 10)
    assert rows[1:] == _simulate(campaign, qrels, pool + 10)[1:]  # row 0: τ NaN (all tied)
    assert rows[-1].judged == pool  # every pooled pair once, then the pool ran out
    assert rows[-1].tau == 1.0 and rows[-1].tau_ap == 1.0


def test_hybrid_picks_every_pair_once():
    campaign, qrels = _random_campaign(5)
    grades = simulation.oracle(campaign, qrels)
    strategy = Hybrid(campaign, refresh=4)
    seen = []
    while (pick := strategy.next_pair()) is not None:
        seen.append(pick)
        strategy.observe(*pick, float(grades[pick[0]][pick[1]]))
    assert len(seen) == len(set(seen)) == sum(campaign.n_docs)


def test_plan_with_hybrid_skips_known_grades():
    campaign, qrels = _random_campaign(6)
    grades = simulation.oracle(campaign, qrels)
    known = [np.where(np.arange(len(g)) < 3, g, np.nan) for g in grades]
    picks = plan(make_strategy("hybrid", campaign), known, 25)
    assert len(picks) == len(set(picks)) == 25
    assert all(np.isnan(known[q][d]) for q, d in picks)


def test_ndcg_cut_tracker_equals_a_full_rescoring():
    campaign, qrels = _random_campaign(7)
    grades = simulation.oracle(campaign, qrels)
    scorer = simulation.make_scorer(campaign, "ndcg_cut.10")
    tracker = NdcgCut(campaign, 10)
    labels = [np.full(len(g), np.nan) for g in grades]
    rng = np.random.default_rng(0)
    pairs = [(q, d) for q, g in enumerate(grades) for d in range(len(g))]
    for i in rng.permutation(len(pairs)).tolist():
        q, d = pairs[i]
        labels[q][d] = grades[q][d]
        tracker.observe(q, d, grades[q][d])
        np.testing.assert_allclose(tracker.scores(), scorer(labels), rtol=0, atol=1e-12)
    # a grade replaced: the DCG and the ideal follow
    q, d = pairs[0]
    labels[q][d] = 4.0
    tracker.observe(q, d, 4.0)
    np.testing.assert_allclose(tracker.scores(), scorer(labels), rtol=0, atol=1e-12)


def test_judgments_to_reach_reads_tau_ap():
    rows = [
        simulation.Step(0, 0, float("nan"), float("nan")),
        simulation.Step(10, 1, 0.95, 0.5),
        simulation.Step(20, 2, 0.8, 0.95),
        simulation.Step(30, 3, 0.97, 0.92),
    ]
    assert simulation.judgments_to_reach(rows, 0.9) == 30
    assert simulation.judgments_to_reach(rows, 0.9, field="tau_ap") == 20


def test_fast_kendall_tau_b_equals_scipys():
    from metrics.engine.rankcorr import kendall_tau_b

    rng = np.random.default_rng(2)
    for n in (2, 3, 10, 31):
        x = rng.integers(0, 4, n).astype(float)  # ties in both
        y = x + rng.integers(-1, 2, n)
        assert simulation.kendall_tau_b(x, y) == pytest.approx(kendall_tau_b(x, y), abs=1e-12)
    assert np.isnan(simulation.kendall_tau_b(np.ones(3), np.arange(3.0)))
