"""The recommended pooling order, ``steady`` (no database): its rules, worked by hand.

``steady`` is ``hybrid``'s weighing with three changes (docs/pooling.md, *The
strategies*): a pair's doubt is the chance that its unjudged part exceeds the gap shown
either way; within the cut-off only each run's shallowest unjudged document of a query
weighs; and every document also weighs through the ideal DCG its grade may raise. Each
test below fails if its rule is taken out.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.pool import simulation
from metrics.pool.strategies import (
    RECOMMENDED,
    STRATEGIES,
    Campaign,
    Hybrid,
    NdcgCut,
    Steady,
    make_strategy,
    plan,
)

PHI = {0.5: 0.3085375387259869, 1.5: 0.0668072012688581}  # Φ(-x), standard normal


def _c(rank: int) -> float:
    """Return the DCG discount at a 1-based rank."""
    return 1.0 / math.log2(rank + 1.0)


def test_the_recommended_strategy_is_steady_and_a_strategy():
    assert RECOMMENDED == "steady" and RECOMMENDED in STRATEGIES
    campaign = Campaign.from_rankings({"A": {"q": ["x"]}, "B": {"q": ["y"]}})
    assert isinstance(make_strategy(RECOMMENDED, campaign), Steady)


def test_doubt_counts_an_unjudged_part_larger_than_the_gap_either_way():
    measured = np.array([0.1, -0.1, 0.0, 0.1, 0.1])
    bias = np.array([0.05, -0.05, 0.3, 0.2, 0.05])
    sd = np.array([0.1, 0.1, 0.1, 0.0, 0.0])
    # |U| > 0.1 for U ~ N(0.05, 0.1): Φ((0.05 - 0.1) / 0.1) + Φ((-0.1 - 0.05) / 0.1)
    both = PHI[0.5] + PHI[1.5]
    expected = [both, both, 1.0, 1.0, 0.0]  # a tie counts 1; no spread: is |B| > gap?
    assert Steady._doubt(measured, bias, sd) == pytest.approx(expected, abs=1e-12)
    # hybrid's doubt counts only a flip of the pair: Φ(-(0.1 + 0.05) / 0.1) = Φ(-1.5)
    assert Hybrid._doubt(measured[:1], bias[:1], sd[:1]) == pytest.approx([PHI[1.5]])


def test_within_the_cut_off_only_each_runs_frontier_weighs():
    # The hand-worked campaign of test_hybrid.py: nothing judged, grade mean 2 and
    # variance 2 per cell, one query (scale 1). B ranks one document more within the
    # cut-off, so the unjudged part adds 2 c4 more to B: bias -2 c4 for (A, B). The
    # tied pair's doubt is 1 (hybrid's: 1/2), times the top weight 1/1 + 2/2 = 2: w = 2.
    # B's document at rank k would weigh w (8 c4 c_k - 2 c_k^2), A's are negative (0),
    # and only B's frontier, d4 at rank 1, is a candidate.
    campaign = Campaign.from_rankings(
        {"A": {"q": ["d1", "d2", "d3"]}, "B": {"q": ["d4", "d5", "d6", "d7"]}}
    )
    strategy = Steady(campaign, explore=0.0)
    got = dict(zip(strategy._top.tolist(), strategy.weights().tolist(), strict=True))
    names = {campaign.docnos[0][d]: w for d, w in got.items()}
    w, c4 = 2.0, _c(4)
    expected = dict.fromkeys(("d1", "d2", "d3", "d5", "d6", "d7"), 0.0)
    expected["d4"] = w * (8 * c4 * _c(1) - 2 * _c(1) ** 2)
    assert names == pytest.approx(expected, rel=1e-12)
    # hybrid, the same weighing without the frontier, weighs all four of B's (w = 1)
    hybrid = dict(zip(Hybrid(campaign).weights().tolist(), range(7), strict=True))
    assert sum(1 for weight in hybrid if weight > 0) == 4
    # nothing is judged, so no run's score depends on an ideal yet: the ideal adds 0
    assert (strategy.ideal_weights() == 0).all()
    # a planned pick moves the frontier on, even before its grade arrives
    picks = plan(strategy, [np.full(7, np.nan)], 4)
    assert [campaign.docnos[0][d] for _, d in picks] == ["d4", "d5", "d6", "d7"]


def _deep_campaign() -> Campaign:
    """Two runs, one query, cut-off 1: x and y at rank 1, z at rank 2 in both (below it)."""
    return Campaign.from_rankings({"A": {"q": ["x", "z"]}, "B": {"q": ["y", "z"]}})


def _code(campaign: Campaign, docno: str) -> int:
    return campaign.docnos[0].index(docno)


def test_grade_chances_borrow_a_deep_band_from_the_band_above():
    campaign = _deep_campaign()
    strategy = Steady(campaign, cutoff=1)
    strategy.observe(0, _code(campaign, "x"), 2.0)
    strategy.observe(0, _code(campaign, "y"), 0.0)
    chances = strategy.grade_chances()
    # x and y: best rank 1 (band 0), retrieved by 1 of 2 runs (share 1/2: bucket 3).
    # Band 0, bucket 3: grades 2 and 0 plus one count of each grade: (2, 1, 2, 1, 1) / 7.
    first = np.array([2, 1, 2, 1, 1]) / 7
    np.testing.assert_allclose(chances[0 * 4 + 3], first, rtol=1e-12)
    # z: best rank 2 (band 1), both runs (bucket 3), nothing judged there: its prior is
    # five counts spread as the band above, so the same chances (not one of each grade)
    np.testing.assert_allclose(chances[1 * 4 + 3], first, rtol=1e-12)
    # a band with neither grades nor a band above with grades: one of each grade
    np.testing.assert_allclose(chances[0 * 4 + 0], np.full(5, 0.2), rtol=1e-12)
    # a fractional grade splits between its two neighbours (the mean is kept)
    strategy.observe(0, _code(campaign, "z"), 2.5)
    np.testing.assert_allclose(
        strategy._histogram[1 * 4 + 3], [0, 0, 0.5, 0.5, 0], rtol=0, atol=1e-12
    )


def test_a_document_below_the_cut_off_weighs_what_it_may_add_to_the_ideal():
    campaign = _deep_campaign()
    strategy = Steady(campaign, cutoff=1)
    strategy.observe(0, _code(campaign, "x"), 2.0)
    strategy.observe(0, _code(campaign, "y"), 0.0)
    # A's DCG@1 is 2, B's 0, the ideal 2 (top grade 2 at rank 1): the pair's share of its
    # difference from the query is a = (2 - 0) / (2 * 1 query) = 1. Take the pair weighed
    # with w = 0.5 and an expected unjudged part B = 0.1.
    strategy._weighed_pairs = (np.array([0]), np.array([1]), np.array([0.5]), np.array([0.1]))
    # z of grade 3 would raise the ideal from 2 to 3 (h = 1/2 of it), of grade 4 to 4
    # (h = 1); grades 0-2 leave it. Chances of grade 3 and 4: 1/7 each (see above).
    mean, second = (0.5 + 1.0) / 7, (0.25 + 1.0) / 7
    expected = -2 * mean * (0.5 * 0.1 * 1.0) + (second - 2 * mean**2) * (0.5 * 1.0**2)
    weights = strategy.ideal_weights()
    assert weights[_code(campaign, "z")] == pytest.approx(expected, rel=1e-12)
    assert weights[_code(campaign, "x")] == weights[_code(campaign, "y")] == 0.0  # judged
    # with a grade 4 at rank 1 no grade can raise the ideal: z weighs nothing
    strategy.observe(0, _code(campaign, "x"), 4.0)
    assert strategy.ideal_weights()[_code(campaign, "z")] == 0.0


def test_below_the_cut_off_a_query_whose_ideal_can_still_grow_comes_first():
    # Three queries, cut-off 1. q1's ideal is complete (a grade 4 at rank 1), q2's is
    # not (a grade 2 at rank 1); q3 is not judged at all. u (q1) and w (q2) are below the
    # cut-off in both runs. A leads B by 1/3 on q1 and on q2 (each over its ideal and 3
    # queries); e and f, q3's unjudged rank-1 documents, leave the pair in doubt
    # (|N(0, 0.73)| > 2/3: 0.36, times the top weight 2). e and f would unbalance the
    # pair more than they settle it (variance 2.40 below the squared mean 3.16: weight
    # 0), u can raise no ideal (0), w can raise q2's: w comes first. Depth order takes
    # q3's rank-1 documents first, then u before w.
    campaign = Campaign.from_rankings(
        {
            "A": {"q1": ["a", "u"], "q2": ["c", "w"], "q3": ["e", "g"]},
            "B": {"q1": ["b", "u"], "q2": ["d", "w"], "q3": ["f", "g"]},
        }
    )
    grades = {("q1", "a"): 4.0, ("q1", "b"): 0.0, ("q2", "c"): 2.0, ("q2", "d"): 0.0}
    known = [
        np.array([grades.get((q, name), np.nan) for name in names])
        for q, names in zip(campaign.queries, campaign.docnos, strict=True)
    ]
    strategy = Steady(campaign, cutoff=1, explore=0.0, refresh=1)
    steady = plan(strategy, known, 1)
    name = {(q, d): campaign.docnos[q][d] for q in range(3) for d in range(3)}
    assert [name[p] for p in steady] == ["w"]
    depth = plan(make_strategy("depth", campaign), known, 4)
    assert [name[p] for p in depth] == ["e", "f", "u", "w"]
    # the doubt of the pair, by hand: the cell of e and f holds grades 4, 0, 2, 0 and one
    # of each grade: mean 16/9, variance 50/9 - (16/9)^2; each adds it over 3 queries
    (_, _, wrong, bias) = strategy._weighed_pairs
    var = 50 / 9 - (16 / 9) ** 2
    sd = math.sqrt(2 * var) / 3
    doubt = 2 * 0.5 * math.erfc((2 / 3) / sd / math.sqrt(2))  # 2 Φ(-gap / sd)
    assert bias.tolist() == pytest.approx([0.0], abs=1e-15)
    assert wrong.tolist() == pytest.approx([doubt * 2.0], rel=1e-12)


def _random_campaign(seed: int, queries: int = 6, runs: int = 5, universe: int = 60):
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


def test_steady_judges_every_pair_once_and_ends_at_tau_one():
    campaign, qrels = _random_campaign(3)
    grades = simulation.oracle(campaign, qrels)
    pool = sum(campaign.n_docs)
    runs = []
    for _ in range(2):
        rows = simulation.simulate(
            campaign,
            grades,
            make_strategy("steady", campaign, refresh=3),
            budget=pool + 10,
            step=7,
            reference=simulation.reference_scores(campaign, qrels),
            tracker=NdcgCut(campaign, 10),
        )
        runs.append(rows)
    assert runs[0][1:] == runs[1][1:]  # deterministic (row 0: τ NaN, all tied)
    assert runs[0][-1].judged == pool
    assert runs[0][-1].tau == 1.0 and runs[0][-1].tau_ap == 1.0
    strategy = Steady(campaign, refresh=4)
    seen = []
    while (pick := strategy.next_pair()) is not None:
        seen.append(pick)
        strategy.observe(*pick, float(grades[pick[0]][pick[1]]))
    assert len(seen) == len(set(seen)) == pool


def test_one_run_has_no_pair_to_weigh_so_steady_takes_depth_order():
    campaign = Campaign.from_rankings({"A": {"q1": ["a", "b"], "q2": ["c"]}})
    strategy = Steady(campaign)
    assert (strategy.weights() == 0).all() and (strategy.ideal_weights() == 0).all()
    picks = plan(strategy, [np.full(2, np.nan), np.full(1, np.nan)], 5)
    assert [campaign.docnos[q][d] for q, d in picks] == ["a", "c", "b"]
