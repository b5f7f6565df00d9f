"""The pooling benchmark's family report runs and reports what it says (no database)."""

from __future__ import annotations

import numpy as np

from benchmarks import pooling
from metrics.pool import simulation


def test_a_shape_without_a_spread_keeps_its_draws_and_the_spread_sets_the_qualities():
    a = pooling.SHAPES[0]
    assert a.spread is None and a.quality == (2.5, 0.3) and a.systems == "far (2.5 → 0.3)"
    g = next(s for s in pooling.SHAPES if s.label == "G")
    assert g.quality == (1.25, 1.15) and g.systems.startswith("within noise")
    # the draw of A depends on the seed and the shape only (the same as before G-M existed)
    first, _ = pooling.family_campaign(a, 1, universe=200, depth=10)
    again, _ = pooling.family_campaign(a, 1, universe=200, depth=10)
    assert all((x == y).all() for x, y in zip(first.rankings, again.rankings, strict=True))


def test_shuffled_depth_judges_the_same_pairs_in_another_order_within_each_rank():
    shape = pooling.Shape("T", 3, 4, dense=True, close=True)
    campaign, _ = pooling.family_campaign(shape, 2, universe=200, depth=10)
    orders = []
    for strategy in (pooling._strategy("depth", campaign), pooling.ShuffledDepth(campaign, 1)):
        picks = []
        while (pick := strategy.next_pair()) is not None:
            picks.append(pick)
            strategy.observe(*pick, 0.0)
        orders.append(picks)
    assert sorted(orders[0]) == sorted(orders[1]) and orders[0] != orders[1]
    for q in range(3):  # within a query both go by best rank; only ties are reordered
        best = campaign.best_rank(q)
        ranks = [[int(best[d]) for qq, d in picks if qq == q] for picks in orders]
        assert ranks[0] == sorted(ranks[0]) and ranks[1] == sorted(ranks[1])


def test_the_family_report_lists_every_campaign_and_the_summary():
    shapes = (pooling.Shape("T", 3, 4, dense=True, close=True),)
    # the whole pool is judged (a horizon beyond it), so every order reaches τ = 1 at the end
    text = pooling.family_report([1, 2], ("steady",), shapes, with_demo=False, per_topic=400)
    lines = text.splitlines()
    assert sum(line.startswith(("| T1 |", "| T2 |")) for line in lines) == 2
    assert any(line.startswith("| `steady` |") for line in lines)
    assert any(line.startswith("| `depth` | 100% (100%–100%)") for line in lines)
    assert "Campaigns where a fidelity, once it first touched its bar" in text


def test_within_one_swap_waits_for_the_ranking_to_stay_within_one_swap():
    reference = np.array([3.0, 2.0, 1.0])
    right, one, two = reference, np.array([2.0, 3.0, 1.0]), np.array([1.0, 3.0, 2.0])
    rows = [
        simulation.Step(10 * i, 0, t, t) for i, t in enumerate([1 / 3, 1.0, -1 / 3, 1.0, 1 / 3])
    ]
    means = [one, right, two, right, one]
    # 20 judgments: two swaps below; from 30 on at most one: reached at 30
    assert pooling._within_one(rows, means, reference, 0.95, "tau") == 30
