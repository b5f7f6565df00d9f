"""Planning the live judging queue: a strategy replayed over the grades known so far.

No database: :func:`metrics.pool.strategies.plan` on hand-made campaigns whose orders
follow from the published rules (move-to-front's priority update, the bandits' rewards).
"""

from __future__ import annotations

import numpy as np
import pytest

from metrics.pool.strategies import STRATEGIES, Campaign, MoveToFront, make_strategy, plan

RUNS = {"A": {"q": ["d1", "d2", "d3"]}, "B": {"q": ["d4", "d5", "d6", "d7"]}}


def _known(campaign: Campaign, grades: dict[str, float]) -> list[np.ndarray]:
    return [
        np.array([grades.get(name, np.nan) for name in names], dtype=float)
        for names in campaign.docnos
    ]


def _names(campaign: Campaign, pairs: list[tuple[int, int]]) -> list[str]:
    return [campaign.docnos[q][d] for q, d in pairs]


def test_move_to_front_plans_on_from_the_grades_known():
    campaign = Campaign.from_rankings(RUNS)
    fresh = _known(campaign, {})
    assert _names(campaign, plan(MoveToFront(campaign), fresh, 1)) == ["d1"]
    # d1 relevant: stay with A; the plan goes on down A while d2's grade is unknown
    after_hit = _known(campaign, {"d1": 3})
    assert _names(campaign, plan(MoveToFront(campaign), after_hit, 2)) == ["d2", "d3"]
    # d2 not relevant: A drops to -1 and B takes over
    after_miss = _known(campaign, {"d1": 3, "d2": 0})
    assert _names(campaign, plan(MoveToFront(campaign), after_miss, 2)) == ["d4", "d5"]
    # d4 not relevant either: both runs at -1, the next run after B is A again
    both_missed = _known(campaign, {"d1": 3, "d2": 0, "d4": 0})
    assert _names(campaign, plan(MoveToFront(campaign), both_missed, 1)) == ["d3"]


def test_a_grade_known_out_of_order_is_used_when_the_strategy_reaches_it():
    campaign = Campaign.from_rankings(RUNS)
    # d5 was graded (say, by a judge under depth-k) before the strategy would take it
    known = _known(campaign, {"d1": 0, "d5": 4})
    strategy = MoveToFront(campaign)
    assert _names(campaign, plan(strategy, known, 3)) == ["d4", "d6", "d7"]
    # d1 missed: A to -1, B takes over; d4 unknown (no reward); d5 known relevant: the
    # plan stays with B through d6 and d7, and B has lost nothing
    assert strategy.priority[0].tolist() == [-1, 0]


@pytest.mark.parametrize("name", ["depth", "mtf", "mm-ns", "thompson"])
def test_replanning_after_each_grade_follows_the_strategy_judging_alone(name):
    rng = np.random.default_rng(7)
    rankings = {
        f"r{r}": {f"q{q}": [f"d{x}" for x in rng.permutation(12)[:8]] for q in range(3)}
        for r in range(4)
    }
    campaign = Campaign.from_rankings(rankings)
    grades = [rng.integers(0, 3, size=n).astype(float) for n in campaign.n_docs]
    alone = make_strategy(name, campaign, depth=8, seed=3)
    expected = []
    while (pair := alone.next_pair()) is not None:
        expected.append(pair)
        alone.observe(*pair, grades[pair[0]][pair[1]])
    known = [np.full(n, np.nan) for n in campaign.n_docs]
    live = []
    for _ in expected:
        (pair,) = plan(make_strategy(name, campaign, depth=8, seed=3), known, 1)
        live.append(pair)
        known[pair[0]][pair[1]] = grades[pair[0]][pair[1]]
    assert live == expected
    assert plan(make_strategy(name, campaign, depth=8, seed=3), known, 5) == []


@pytest.mark.parametrize("name", STRATEGIES)
def test_a_plan_holds_distinct_unjudged_eligible_pairs(name):
    rng = np.random.default_rng(11)
    rankings = {
        f"r{r}": {f"q{q}": [f"d{x}" for x in rng.permutation(15)[:10]] for q in range(4)}
        for r in range(5)
    }
    campaign = Campaign.from_rankings(rankings)
    known = [np.where(rng.random(n) < 0.3, rng.integers(0, 4, n), np.nan) for n in campaign.n_docs]
    eligible = [rng.random(n) < 0.8 for n in campaign.n_docs]

    def scores(labels):
        return np.array(
            [
                [
                    np.nansum(lab[m[r, :3][m[r, :3] >= 0]])
                    for lab, m in zip(labels, campaign.rankings, strict=True)
                ]
                for r in range(len(campaign.runs))
            ]
        )

    strategy = make_strategy(name, campaign, scores=scores, depth=10, cutoff=3, seed=1)
    picks = plan(strategy, known, 1000, eligible=eligible)
    assert len(picks) == len(set(picks))
    assert all(np.isnan(known[q][d]) and eligible[q][d] for q, d in picks)
    unjudged = sum(int((np.isnan(k) & e).sum()) for k, e in zip(known, eligible, strict=True))
    assert len(picks) == unjudged  # a large enough plan orders every pair still to judge


def test_a_plan_of_nothing_is_empty():
    campaign = Campaign.from_rankings(RUNS)
    assert plan(MoveToFront(campaign), _known(campaign, {}), 0) == []
