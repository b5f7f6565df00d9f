"""The stop rule's pure parts: τ between rankings, the grade prior, the expected τ ahead."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.pool import stopping
from metrics.pool.simulation import make_scorer
from metrics.pool.strategies import Campaign


def test_tau_between_compares_the_runs_scored_in_both():
    now = {"a": 0.9, "b": 0.5, "c": 0.1, "new": 0.7}
    assert stopping.tau_between(now, {"a": 0.8, "b": 0.4, "c": 0.2}) == (1.0, 3)
    assert stopping.tau_between(now, {"a": 0.1, "b": 0.4, "c": 0.8}) == (-1.0, 3)
    # one discordant pair (b, c) of three: τ = (2 - 1) / 3
    tau, n = stopping.tau_between(now, {"a": 0.9, "b": 0.1, "c": 0.5, "gone": 1.0})
    assert n == 3 and tau == pytest.approx(1 / 3)
    tau, n = stopping.tau_between(now, {"a": 0.9, "b": None})
    assert n == 1 and math.isnan(tau)


def test_the_prior_counts_grades_judged_at_the_same_rank_band():
    # query 0: best ranks 0 (band rank 1) and 5 (band 4-10); query 1: ranks 0 and 6
    best = [np.array([0, 5]), np.array([0, 6])]
    known = [np.array([3.0, 0.0]), np.array([np.nan, np.nan])]
    prior = stopping.grade_prior(best, known, smoothing=1.0)
    for probs in prior:
        assert np.allclose(probs.sum(axis=1), 1.0)
    # judged documents keep their own grade
    assert prior[0][0].tolist() == [0, 0, 0, 1, 0]
    assert prior[0][1].tolist() == [1, 0, 0, 0, 0]
    # rank 1 band: one 3 plus add-one smoothing over five grades -> 2/6 for grade 3
    assert prior[1][0] == pytest.approx([1 / 6, 1 / 6, 1 / 6, 2 / 6, 1 / 6])
    # rank 4-10 band: one 0 -> 2/6 for grade 0
    assert prior[1][1] == pytest.approx([2 / 6, 1 / 6, 1 / 6, 1 / 6, 1 / 6])
    # a mean grade of 2.5 is split between 2 and 3
    split = stopping.grade_prior([np.array([0])], [np.array([2.5])])
    assert split[0][0].tolist() == [0, 0, 0.5, 0.5, 0]


@pytest.fixture
def swing():
    """Run A ranks d0 d1, run B d1 d0; d1 has grade 1 and d0 decides who leads.

    NDCG@10 (linear gain): d0 = 0 gives A 1/log2(3) = 0.631 and B 1; d0 = 3 gives A 1 and
    B (1 + 3/log2(3)) / (3 + 1/log2(3)) = 0.797. Unjudged counts as not relevant, so
    today B leads.
    """
    campaign = Campaign.from_rankings({"A": {"q": ["d0", "d1"]}, "B": {"q": ["d1", "d0"]}})
    known = [np.array([np.nan, 1.0])]
    return make_scorer(campaign, "ndcg_cut.10"), known


def _prior(p0: float, p3: float) -> list[np.ndarray]:
    return [np.array([[p0, 0, 0, p3, 0], [0, 1, 0, 0, 0]], dtype=float)]


def test_expected_tau_follows_the_grade_the_open_pair_can_take(swing):
    scorer, known = swing
    scores = scorer(known).mean(axis=1)
    assert scores == pytest.approx([1 / math.log2(3), 1.0])
    kwargs = {"planned": [], "open_pairs": [(0, 0)], "step": 10, "draws": 200}
    stays = stopping.expected_tau(scorer, known, _prior(1.0, 0.0), **kwargs)
    assert (stays.mean, stays.low, stays.pairs) == (1.0, 1.0, 1)
    flips = stopping.expected_tau(scorer, known, _prior(0.0, 1.0), **kwargs)
    assert (flips.mean, flips.low) == (-1.0, -1.0)
    coin = stopping.expected_tau(scorer, known, _prior(0.5, 0.5), **kwargs)
    assert abs(coin.mean) < 0.2 and coin.low == -1.0  # E[τ] = 0.5 - 0.5


def test_expected_tau_is_one_with_nothing_left_to_judge(swing):
    scorer, known = swing
    ahead = stopping.expected_tau(
        scorer, known, _prior(0.0, 1.0), planned=[], open_pairs=[], step=10
    )
    assert (ahead.mean, ahead.pairs, ahead.draws) == (1.0, 0, 0)


def test_expected_tau_judges_the_planned_pairs_first():
    # as in ``swing``, plus d2 at rank 3 of both runs, whose grade cannot reorder them
    campaign = Campaign.from_rankings(
        {"A": {"q": ["d0", "d1", "d2"]}, "B": {"q": ["d1", "d0", "d2"]}}
    )
    scorer, known = make_scorer(campaign, "ndcg_cut.10"), [np.array([np.nan, 1.0, np.nan])]
    prior = [np.array([[0, 0, 0, 1.0, 0], [0, 1.0, 0, 0, 0], [1.0, 0, 0, 0, 0]])]
    both = [(0, 0), (0, 2)]
    kwargs = {"open_pairs": both, "step": 1, "draws": 100}
    assert stopping.expected_tau(scorer, known, prior, planned=[(0, 0)], **kwargs).mean == -1.0
    assert stopping.expected_tau(scorer, known, prior, planned=[(0, 2)], **kwargs).mean == 1.0
    unplanned = stopping.expected_tau(scorer, known, prior, planned=[], **kwargs)
    assert abs(unplanned.mean) < 0.3  # a random one of the two open pairs


@pytest.mark.parametrize(
    ("back", "ahead", "open_pairs", "state"),
    [
        (0.99, 0.99, 0, "done"),
        (None, 0.99, 5, "unknown"),
        (0.99, float("nan"), 5, "unknown"),
        (0.99, 0.97, 5, "stops-paying"),
        (0.95, 0.95, 5, "stops-paying"),
        (0.9, 0.99, 5, "moving"),
        (0.99, 0.9, 5, "moving"),
    ],
)
def test_verdict(back, ahead, open_pairs, state):
    expected = stopping.ExpectedTau(mean=ahead, low=ahead, pairs=5, draws=5)
    held = stopping.ExpectedFlips(change=0.0, flips=0.0, pairs=5, draws=5)
    got, sentence = stopping.verdict(
        looking_back=back,
        ahead=expected,
        open_pairs=open_pairs,
        target=0.95,
        flips_back=0,
        flips_ahead=held,
    )
    assert got == state and sentence
