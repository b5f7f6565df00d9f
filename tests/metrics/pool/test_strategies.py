"""Pooling strategies and the judging simulation, on hand-made campaigns (no database).

Each test's campaign is small enough that the right order can be worked out by hand from
the published definitions: move-to-front's priority update (Cormack, Palmer and Clarke
1998) and the bandits' Beta posteriors with reward 1 for a relevant document (Losada,
Parapar and Barreiro 2016, 2017).
"""

from __future__ import annotations

import numpy as np
import pytest

from metrics.pool import simulation
from metrics.pool.strategies import (
    STRATEGIES,
    Bandit,
    Campaign,
    DepthK,
    MoveToFront,
    Strategy,
    make_strategy,
)


def _judge_all(strategy: Strategy, grades: dict[tuple[str, str], int]) -> list[str]:
    """Judge in the strategy's order until nothing is left; return ``query/docno`` picked."""
    campaign, picked = strategy.campaign, []
    while (pair := strategy.next_pair()) is not None:
        q, d = pair
        name = campaign.docnos[q][d]
        picked.append(f"{campaign.queries[q]}/{name}")
        strategy.observe(q, d, grades.get((campaign.queries[q], name), 0))
    return picked


def test_move_to_front_stays_on_a_hit_and_moves_on_at_a_miss():
    campaign = Campaign.from_rankings(
        {"A": {"q": ["d1", "d2", "d3"]}, "B": {"q": ["d4", "d5", "d6", "d7"]}}
    )
    grades = {("q", d): 1 for d in ("d1", "d3", "d4", "d5", "d7")}  # d2, d6 not relevant
    strategy = MoveToFront(campaign)
    order = _judge_all(strategy, grades)
    # A: d1 hit (stay), d2 miss (A to -1, move on); B: d4, d5 hits, d6 miss (B to -1);
    # both at -1: the next run after B is A: d3 hit (stay); A is done: B's d7.
    assert order == ["q/d1", "q/d2", "q/d4", "q/d5", "q/d6", "q/d3", "q/d7"]
    assert strategy.priority[0].tolist() == [-1, -1]


def test_move_to_front_skips_documents_judged_through_another_run():
    campaign = Campaign.from_rankings({"A": {"q": ["x", "y"]}, "B": {"q": ["x", "z"]}})
    order = _judge_all(MoveToFront(campaign), {("q", "x"): 0, ("q", "y"): 0, ("q", "z"): 0})
    assert order == ["q/x", "q/z", "q/y"]  # B's x was judged through A: B gives z next


def test_max_mean_bandit_follows_the_posterior_mean():
    campaign = Campaign.from_rankings(
        {"A": {"q": ["a1", "a2", "a3"]}, "B": {"q": ["b1", "b2", "b3"]}}
    )
    grades = {("q", "b1"): 2, ("q", "b2"): 2}  # A finds nothing
    strategy = Bandit(campaign, rule="mm", rel_level=1)
    order = _judge_all(strategy, grades)
    # both arms at Beta(1,1) (mean 1/2): A first. a1 misses: A's mean 1/3 < B's 1/2:
    # B; b1, b2 hit (3/4): B again; b3 misses, but B's 3/5 > A's 1/3; B done, then A.
    assert order == ["q/a1", "q/b1", "q/b2", "q/b3", "q/a2", "q/a3"]
    assert strategy.hits[0].tolist() == [0.0, 2.0]
    assert strategy.misses[0].tolist() == [3.0, 1.0]


def test_the_non_stationary_bandit_discounts_past_rewards():
    campaign = Campaign.from_rankings({"A": {"q": ["a1", "a2", "a3"]}})
    strategy = Bandit(campaign, rule="mm-ns", decay=0.5)
    _judge_all(strategy, {("q", "a1"): 3, ("q", "a2"): 0, ("q", "a3"): 1})
    # hits: 1 -> 0.5 -> 0.25 + 1; misses: 0 -> 1 -> 0.5
    assert strategy.hits[0].tolist() == [1.25]
    assert strategy.misses[0].tolist() == [0.5]


def test_thompson_sampling_is_reproducible_by_seed():
    rankings = {
        f"r{i}": {q: [f"{q}d{(i * 7 + j) % 30}" for j in range(12)] for q in ("q1", "q2")}
        for i in range(5)
    }
    campaign = Campaign.from_rankings(rankings)
    grades = {(q, f"{q}d{n}"): n % 3 for q in ("q1", "q2") for n in range(30)}
    first = _judge_all(Bandit(campaign, rule="thompson", seed=7), grades)
    again = _judge_all(Bandit(campaign, rule="thompson", seed=7), grades)
    other = _judge_all(Bandit(campaign, rule="thompson", seed=8), grades)
    assert first == again
    assert first != other
    assert sorted(first) == sorted(other)


def test_depth_k_takes_the_top_k_shallowest_first_and_queries_in_turn():
    campaign = Campaign.from_rankings(
        {
            "A": {"q1": ["a", "b", "c"], "q2": ["x", "y"]},
            "B": {"q1": ["c", "d", "a"], "q2": ["y", "z"]},
        }
    )
    order = _judge_all(DepthK(campaign, k=2), {})
    # q1 by best rank: a (0), c (0), b (1), d (1); q2: x (0), y (0), z (1); turns alternate
    assert order == ["q1/a", "q2/x", "q1/c", "q2/y", "q1/b", "q2/z", "q1/d"]


@pytest.mark.parametrize("name", STRATEGIES)
def test_every_strategy_judges_each_pooled_pair_once(name):
    rng = np.random.default_rng(3)
    rankings = {
        f"run{r}": {f"q{q}": [f"d{x}" for x in rng.permutation(40)[:15].tolist()] for q in range(4)}
        for r in range(6)
    }
    campaign = Campaign.from_rankings(rankings)
    grades = {(f"q{q}", f"d{x}"): int(rng.integers(0, 5)) for q in range(4) for x in range(40)}
    scorer = simulation.make_scorer(campaign, "ndcg_cut.10")
    strategy = make_strategy(name, campaign, scores=scorer, depth=15, refresh=5)
    order = _judge_all(strategy, grades)
    pooled = {
        f"{q}/{d}"
        for q, names in zip(campaign.queries, campaign.docnos, strict=True)
        for d in names
    }
    assert len(order) == len(set(order)) == len(pooled)
    assert set(order) == pooled


def test_swap_judges_first_the_pair_that_decides_two_close_runs():
    # A and B agree everywhere but at rank 1 of q1 ("hot" against "cold"); "same" sits at
    # rank 2 of both, so its grade moves both runs alike and cannot reorder them.
    rankings = {
        "A": {"q1": ["hot", "same", "f1"], "q2": ["g1", "g2"]},
        "B": {"q1": ["cold", "same", "f1"], "q2": ["g1", "g2"]},
    }
    campaign = Campaign.from_rankings(rankings)
    scorer = simulation.make_scorer(campaign, "ndcg_cut.10")
    strategy = make_strategy("swap", campaign, scores=scorer, refresh=1)
    first = strategy.next_pair()
    assert first is not None
    assert campaign.docnos[first[0]][first[1]] in {"hot", "cold"}
    weights = strategy.weights()
    q1 = campaign.queries.index("q1")
    same = campaign.docnos[q1].index("same")
    assert weights[q1][same] == 0.0
    assert weights[campaign.queries.index("q2")].max() == 0.0


def test_swap_weighs_a_document_by_the_chance_its_pair_is_shown_the_wrong_way_round():
    """Worked by hand: one query; A ranks x y, B ranks y x, C ranks z; board A, B, C.

    With ``window=1`` the pairs compared are (A, B) and (B, C). Every document's best rank
    is 1, one band; before any judgment its grade mean is the prior's (0+1+2+3+4)/5 = 2.
    A document's weight is, summed over the pairs, the chance that the board shows the
    pair the wrong way round, times its expected gain, times the difference of the two
    runs' discounts at it, over the ideal DCG of the grades known (at least 1).
    """
    from math import erf, sqrt

    rankings = {"A": {"q": ["x", "y"]}, "B": {"q": ["y", "x"]}, "C": {"q": ["z"]}}
    campaign = Campaign.from_rankings(rankings)
    board = {"A": 0.0, "B": 0.0, "C": -1.0}
    swap = make_strategy(
        "swap",
        campaign,
        scores=lambda labels: np.array([[board[r]] for r in campaign.runs]),
        window=1,
    )
    x, y, z = (campaign.docnos[0].index(n) for n in "xyz")
    second = 1.0 / np.log2(3.0)  # the discount at rank 2
    # Nothing judged: both pairs show a tie (no sign), so each is wrong with chance 1/2.
    # x: A-B discounts 1 - 1/log2 3, B-C 1/log2 3; y: the same, then 1; z: 0, then 1.
    weights = swap.impact([np.full(3, np.nan)])[0]
    assert weights[x] == pytest.approx(0.5 * 2 * (1 - second) + 0.5 * 2 * second)
    assert weights[y] == pytest.approx(0.5 * 2 * (1 - second) + 0.5 * 2 * 1.0)
    assert weights[z] == pytest.approx(0.5 * 2 * 1.0)

    # z judged 4. The band's mean is now (10 + 4) / 6, its variance (30 + 16) / 6 - mean^2;
    # the ideal DCG is 4. The board shows C ahead of B by 4 / 4 = 1; B's unjudged x and y
    # are expected to add mean * (1/log2 3 + 1) / 4, with variance var * (1/log2(3)^2 + 1)
    # / 16: the chance that B is really ahead is Phi(-(1 - expected) / sd).
    mean = 14 / 6
    var = 46 / 6 - mean**2
    expected = mean * (second + 1) / 4
    sd = sqrt(var * (second**2 + 1)) / 16**0.5
    wrong = 0.5 * (1 + erf(-(1 - expected) / sd / sqrt(2)))
    weights = swap.impact([np.array([np.nan, np.nan, 4.0])])[0]
    assert weights[x] == pytest.approx(0.5 * mean * (1 - second) / 4 + wrong * mean * second / 4)
    assert weights[z] == pytest.approx(wrong * mean * 1.0 / 4)

    # x and y judged 0 as well: nothing of B is unknown, C's lead is certain, and the pair
    # (B, C) weighs nothing; (A, B) is a tie still (both 0), wrong with chance 1/2.
    weights = swap.impact([np.array([0.0, 0.0, 4.0])])[0]
    mean = (10 + 4) / 8  # the band holds 0, 0 and 4 beside the prior's counts
    assert weights[z] == 0.0
    assert weights[x] == pytest.approx(0.5 * mean * (1 - second) / 4)
    # As a strategy, judged documents weigh nothing.
    swap.observe(0, x, 0.0)
    assert swap.weights()[0][x] == 0.0


def test_swap_learns_nothing_from_a_pick_still_waiting_for_its_grade():
    campaign = Campaign.from_rankings({"A": {"q": ["x", "y"]}, "B": {"q": ["y", "x"]}})
    swap = make_strategy("swap", campaign, scores=lambda labels: np.zeros((2, 1)))
    pended = [np.array([True, False])]  # x taken by the plan, no grade yet
    mean, second = swap._band_moments(pended, [np.array([np.nan, np.nan])])
    assert mean[0].tolist() == [2.0, 2.0] and second[0].tolist() == [6.0, 6.0]  # the prior
    mean, _ = swap._band_moments(pended, [np.array([4.0, np.nan])])  # graded: it counts
    assert mean[0].tolist() == [14 / 6, 14 / 6]


def _synthetic(n_queries: int = 8, n_runs: int = 6, seed: int = 1):
    """Return a campaign whose runs have clearly different quality, and its qrels."""
    rng = np.random.default_rng(seed)
    qrels, rankings = {}, {f"run{r}": {} for r in range(n_runs)}
    for q in range(n_queries):
        grades = {
            f"d{x}": int(g) for x, g in enumerate(rng.choice(5, 60, p=[0.6, 0.15, 0.1, 0.1, 0.05]))
        }
        qrels[f"q{q}"] = grades
        docs = list(grades)
        for r in range(n_runs):  # a better run puts relevant documents higher
            noise = rng.normal(0, 1 + r, len(docs))
            score = np.array([grades[d] for d in docs]) + noise
            rankings[f"run{r}"][f"q{q}"] = [docs[i] for i in np.argsort(-score)[:20]]
    return Campaign.from_rankings(rankings), qrels


def test_swap_takes_its_explore_share_of_picks_in_depth_order():
    campaign, qrels = _synthetic(n_queries=3, n_runs=4)
    grades = {(q, d): g for q, judged in qrels.items() for d, g in judged.items()}
    scorer = simulation.make_scorer(campaign, "ndcg_cut.10")
    width = max(m.shape[1] for m in campaign.rankings)
    depth_order = _judge_all(DepthK(campaign, k=width), grades)
    # explore = 1: every pick is depth order's.
    assert _judge_all(make_strategy("swap", campaign, scores=scorer, explore=1.0), grades) == (
        depth_order
    )
    # explore = 1/2: every second pick is depth order's -- the queries in turn, each the
    # shallowest of its documents not judged yet -- and the others are the weighing's.
    picked = _judge_all(make_strategy("swap", campaign, scores=scorer, explore=0.5), grades)
    assert sorted(picked) == sorted(depth_order)
    per_query = {q: [p for p in depth_order if p.startswith(f"{q}/")] for q in campaign.queries}
    for turn, i in enumerate(range(1, 40, 2)):
        q = campaign.queries[turn % len(campaign.queries)]
        assert picked[i] == next(p for p in per_query[q] if p not in picked[:i])
    assert picked[0:40:2] != depth_order[:20]  # the weighing's picks are not depth order
    with pytest.raises(ValueError, match="explore"):
        make_strategy("swap", campaign, scores=scorer, explore=1.5)


def test_the_simulation_ends_with_the_full_ranking_and_counts_what_it_found():
    campaign, qrels = _synthetic()
    grades = simulation.oracle(campaign, qrels)
    scorer = simulation.make_scorer(campaign, "ndcg_cut.10")
    everything = [g.copy() for g in grades]
    reference = scorer(everything).mean(axis=1)
    strategy = make_strategy("mtf", campaign)
    rows = simulation.simulate(
        campaign, grades, strategy, budget=10_000, step=25, scores=scorer, reference=reference
    )
    pooled = sum(campaign.n_docs)
    assert rows[0].judged == 0 and rows[-1].judged == pooled
    assert rows[-1].relevant == sum(int((g >= 1).sum()) for g in grades)
    assert rows[-1].tau == pytest.approx(1.0) and rows[-1].tau_ap == pytest.approx(1.0)
    assert [r.judged for r in rows[1:-1]] == list(range(25, pooled, 25))
    assert simulation.judgments_to_reach(rows, 0.9) is not None


def test_adaptive_strategies_find_relevant_documents_sooner_than_depth_k():
    campaign, qrels = _synthetic(n_queries=10, n_runs=8, seed=5)
    grades = simulation.oracle(campaign, qrels)
    scorer = simulation.make_scorer(campaign, "ndcg_cut.10")
    reference = scorer(grades).mean(axis=1)
    found = {}
    for name in ("depth", "mtf", "mm-ns"):
        rows = simulation.simulate(
            campaign,
            grades,
            make_strategy(name, campaign, depth=20),
            budget=200,
            step=200,
            scores=scorer,
            reference=reference,
        )
        found[name] = rows[-1].relevant
    assert found["mtf"] > found["depth"]
    assert found["mm-ns"] > found["depth"]


def test_judgments_to_reach_needs_tau_to_stay_at_the_target():
    rows = [
        simulation.Step(j, 0, tau, tau)
        for j, tau in [(0, 0.2), (10, 0.95), (20, 0.8), (30, 0.91), (40, 0.97)]
    ]
    assert simulation.judgments_to_reach(rows, 0.9) == 30
    assert simulation.judgments_to_reach(rows[:3], 0.9) is None


def test_unknown_names_and_bad_arguments_are_refused():
    campaign = Campaign.from_rankings({"A": {"q": ["d"]}})
    with pytest.raises(ValueError, match="unknown strategy"):
        make_strategy("nope", campaign)
    with pytest.raises(ValueError, match="scorer"):
        make_strategy("swap", campaign)
    with pytest.raises(ValueError, match="decay"):
        Bandit(campaign, decay=0)
