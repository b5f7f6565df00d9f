"""How far a fidelity falls again once reached, in swaps of neighbouring runs (no database)."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.engine.rankcorr import tau_ap
from metrics.pool.simulation import Step, swaps_below, worst_loss

REFERENCE = np.array([4.0, 3.0, 2.0, 1.0])  # runs 0, 1, 2, 3, best first


def test_swaps_below_counts_the_discordant_pairs_beyond_the_bar():
    # 4 runs, 6 pairs: τ-b 1 - 2 D / 6. The bar 0.95 allows no discordant pair; 0.6 one.
    assert swaps_below(REFERENCE, REFERENCE, 0.95) == 0
    one = np.array([3.0, 4.0, 2.0, 1.0])  # runs 0 and 1 swapped: τ 2/3
    assert swaps_below(one, REFERENCE, 0.95) == 1
    assert swaps_below(one, REFERENCE, 0.6) == 0
    two = np.array([3.0, 4.0, 1.0, 2.0])  # and runs 2 and 3: D = 2, τ 1/3
    assert swaps_below(two, REFERENCE, 0.95) == 2
    assert swaps_below(two, REFERENCE, 0.6) == 1
    reverse = np.array([1.0, 2.0, 3.0, 4.0])  # D = 6
    assert swaps_below(reverse, REFERENCE, 0.95) == 5  # capped: 5 or more
    assert swaps_below(reverse, REFERENCE, 0.95, cap=10) == 6
    # a tie shown below the bar is at least one swap away
    tied = np.array([4.0, 4.0, 2.0, 1.0])
    assert swaps_below(tied, REFERENCE, 0.95) == 1


def test_swaps_below_for_tau_ap_swaps_the_neighbours_that_help_most():
    # One swap at the top costs τ_AP 2/3 (C(2) = 0: 2/3 * (0/1 + 2/2 + 3/3) - 1 = 1/3);
    # one at the bottom 2/9. Each is one swap away from τ_AP = 1.
    top = np.array([3.0, 4.0, 2.0, 1.0])
    bottom = np.array([4.0, 3.0, 1.0, 2.0])
    assert tau_ap(top, REFERENCE) == pytest.approx(1 / 3)
    assert tau_ap(bottom, REFERENCE) == pytest.approx(7 / 9)
    assert swaps_below(top, REFERENCE, 0.9, field="tau_ap") == 1
    assert swaps_below(bottom, REFERENCE, 0.9, field="tau_ap") == 1
    assert swaps_below(bottom, REFERENCE, 0.7, field="tau_ap") == 0
    both = np.array([3.0, 4.0, 1.0, 2.0])
    assert swaps_below(both, REFERENCE, 0.9, field="tau_ap") == 2


def _rows(taus):
    return [Step(10 * i, 0, t, t) for i, t in enumerate(taus)]


def test_worst_loss_after_the_bar_was_touched_and_after_it_was_held():
    right = REFERENCE
    one = np.array([3.0, 4.0, 2.0, 1.0])  # τ 2/3: one swap below 0.95
    two = np.array([3.0, 4.0, 1.0, 2.0])  # τ 1/3: two swaps below
    means = [two, right, two, right, right, one, right]
    taus = [1 / 3, 1.0, 1 / 3, 1.0, 1.0, 2 / 3, 1.0]
    rows = _rows(taus)
    # touched at 10 judgments, then two swaps below at 20
    assert worst_loss(rows, means, REFERENCE, 0.95) == (10, 2)
    # held for 10 judgments: from 30 (10 stayed at the bar only 0 judgments before it
    # fell); after that it fell one swap below, at 50
    assert worst_loss(rows, means, REFERENCE, 0.95, hold=10) == (30, 1)
    # held for 30 judgments: never (30-40 then a fall at 50); the last row counts as
    # held when the bar is kept to the end
    assert worst_loss(rows, means, REFERENCE, 0.95, hold=30) == (60, 0)
    never = _rows([0.0, 1 / 3])
    assert worst_loss(never, [two, two], REFERENCE, 0.95) == (None, 0)
