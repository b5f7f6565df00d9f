"""Rank intervals and letter groups of a leaderboard (no database)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine import stats
from metrics.engine.letters import letter_strings
from metrics.engine.ranks import (
    RunRank,
    adjusted_p_values,
    leaderboard_ranks,
    letter_groups,
    pairwise_p_values,
)
from metrics.engine.uncertainty import leaderboard_uncertainty

#: "top" is far ahead; "near" equals "mid" on every query but the last, where it is lower.
THREE = np.array(
    [
        [0.9, 0.8, 0.9, 0.85, 0.95, 0.9],
        [0.5, 0.4, 0.5, 0.45, 0.55, 0.6],
        [0.5, 0.4, 0.5, 0.45, 0.55, 0.3],
    ]
)


def test_a_gap_from_one_query_gives_overlapping_ranks_and_one_letter():
    # mid − near = (0, 0, 0, 0, 0, 0.3): mean 0.05, sd 0.1225, t = 1.0, p = 0.36 (5 df);
    # top is ahead of both by ≥ 0.3 on every query (p < 1e-5, still < 0.05 after Holm).
    # A resample without the last query (share (5/6)^6 = 0.33 of them) leaves mid and
    # near level, so each could hold rank 2 or 3; top is first in every resample.
    ranks = leaderboard_ranks(THREE, [0, 1, 2], resamples=2000, seed=4)
    assert ranks == [
        RunRank(rank=1, low=1, high=1, groups=(0,)),
        RunRank(rank=2, low=2, high=3, groups=(1,)),
        RunRank(rank=3, low=2, high=3, groups=(1,)),
    ]
    assert [r.tier for r in ranks] == [1, 2, 2]
    assert stats.paired_t_test(THREE[1], THREE[2]).p_value == pytest.approx(0.3632, abs=1e-4)


def test_a_run_shares_a_letter_with_each_run_it_cannot_be_told_apart_from():
    a = [0.9, 0.9, 0.9, 0.9]
    b = [0.7, 1.0, 0.8, 1.0]  # a − b = (0.2, −0.1, 0.1, −0.1): p = 0.70
    c = [0.8, 0.8, 0.8, 0.8]  # a − c = 0.1 on every query: p = 0; b − c: t = 1, p = 0.39
    d = [0.3, 0.3, 0.3, 0.3]  # b − d = (0.4, 0.7, 0.5, 0.7): t = 7.67, p = 0.0046 (3 df)
    scores = np.array([a, b, c, d])
    p = pairwise_p_values(scores)
    assert p[0, 2] == 0.0 and p[0, 3] == 0.0 and p[2, 3] == 0.0
    assert p[1, 2] == pytest.approx(0.3910, abs=1e-4)
    assert p[1, 3] == pytest.approx(0.00461, abs=1e-5)
    # c is significantly below a but not below b; d is below all three (Holm over 6
    # pairs: b–d adjusted to 3 × 0.0046 = 0.014 ≤ 0.05). So a–b and b–c cannot be told
    # apart, every other pair can: b holds both letters (the old tiers put a, b, c in
    # one tier, although a and c differ).
    assert letter_strings(letter_groups(scores, [0, 1, 2, 3])) == ["a", "ab", "b", "c"]
    # A stricter alpha keeps b–d together too (0.014 > 0.01): b shares a letter with all.
    assert adjusted_p_values(scores)[1, 3] == pytest.approx(3 * p[1, 3])
    assert letter_strings(letter_groups(scores, [0, 1, 2, 3], alpha=0.01)) == [
        "a",
        "abc",
        "b",
        "c",
    ]


def test_holm_is_what_keeps_a_marginal_gap_in_one_letter():
    # a − b = (0.1, 0.3, 0.4, 0.3, 0): mean 0.22, sd 0.1643, t = 2.99, p = 0.040 (4 df),
    # below 0.05 alone; Holm over the 3 pairs multiplies the smallest p-value by 3: 0.12.
    scores = np.array(
        [[0.7, 0.7, 0.5, 0.5, 1.0], [0.6, 0.4, 0.1, 0.2, 1.0], [1.0, 0.0, 0.1, 0.7, 0.2]]
    )
    p = pairwise_p_values(scores)
    assert p[0, 1] == pytest.approx(0.0402, abs=1e-4)
    assert p[0, 2] > p[0, 1] and p[1, 2] > p[0, 1]
    assert stats.holm(p[np.triu_indices(3, 1)])[0] == pytest.approx(3 * p[0, 1])
    assert letter_groups(scores, [0, 1, 2]) == [(0,), (0,), (0,)]


def test_pairwise_p_values_are_the_paired_t_test():
    rng = np.random.default_rng(2)
    scores = rng.beta(2, 5, size=(5, 25))
    scores[3] = scores[1]  # identical runs: p = 1
    scores[4] = scores[0] - 0.1  # a constant shift: p = 0
    p = pairwise_p_values(scores)
    for i, j in itertools.combinations(range(5), 2):
        expected = stats.paired_t_test(scores[i], scores[j]).p_value
        assert p[i, j] == pytest.approx(expected, rel=1e-9, abs=1e-300)
        assert p[j, i] == p[i, j]
    assert np.all(np.diag(p) == 1.0)


def test_edge_cases():
    assert leaderboard_ranks(np.empty((0, 3)), []) == []
    assert letter_groups(np.empty((0, 3)), []) == []
    a = (0,)  # the first letter
    # One run: rank 1 of 1, whatever the queries.
    assert leaderboard_ranks([[0.3, 0.4]], [0]) == [RunRank(1, 1, 1, a)]
    assert leaderboard_ranks([[0.3]], [0]) == [RunRank(1, 1, 1, a)]
    # One query: no test, one letter; each resample is that query, so ranks are fixed.
    assert leaderboard_ranks([[0.2], [0.5]], [1, 0]) == [RunRank(1, 1, 1, a), RunRank(2, 2, 2, a)]
    # No queries: every run could hold every rank.
    assert leaderboard_ranks(np.empty((3, 0)), [0, 1, 2]) == [
        RunRank(1, 1, 3, a),
        RunRank(2, 1, 3, a),
        RunRank(3, 1, 3, a),
    ]
    # Identical runs (a tie): both could be first or second, one letter.
    tied = [[0.1, 0.7, 0.4], [0.1, 0.7, 0.4], [0.0, 0.0, 0.0]]
    assert leaderboard_ranks(tied, [1, 0, 2])[:2] == [RunRank(1, 1, 2, a), RunRank(2, 1, 2, a)]
    # Same mean, different queries (floating sums): level within 1e-12, still tied.
    level = [[0.1, 0.2, 0.7], [0.7, 0.1, 0.2]]
    ranks = leaderboard_ranks(level, [0, 1], resamples=200)
    assert (ranks[0].low, ranks[0].high) == (1, 2) and ranks[1].groups == a
    with pytest.raises(ValueError, match="finite"):
        leaderboard_ranks([[0.1, np.nan], [0.2, 0.3]], [0, 1])
    with pytest.raises(ValueError, match="order"):
        leaderboard_ranks([[0.1], [0.2]], [0, 0])
    with pytest.raises(ValueError, match="matrix"):
        letter_groups([0.1, 0.2], [0, 1])
    with pytest.raises(ValueError, match="alpha"):
        letter_groups([[0.1, 0.2]], [0], alpha=0.0)
    with pytest.raises(ValueError, match="confidence"):
        leaderboard_ranks([[0.1, 0.2]], [0], confidence=1.0)


def test_two_runs_agree_with_the_bootstrap_of_their_gap():
    # Same draws as leaderboard_uncertainty: the second run can be first exactly when it
    # scores higher in more than 2.5% of the resamples.
    rng = np.random.default_rng(7)
    for shift in (0.0, 0.01, 0.02, 0.05, 0.2):
        base = rng.random(20)
        scores = np.vstack([base + shift + rng.normal(0, 0.05, 20), base])
        order = np.argsort(-scores.mean(axis=1), kind="stable")
        _runs, (pair,) = leaderboard_uncertainty(scores, order, resamples=1000, seed=3)
        second = leaderboard_ranks(scores, order, resamples=1000, seed=3)[1]
        assert (second.low == 1) == (pair.swap_share > 0.025), (shift, pair.swap_share)


def test_the_interval_is_stretched_to_hold_the_observed_rank():
    # Six runs o_k each beat x by 0.01 on every query but q_k, where they trail by 0.051:
    # x leads each by 0.001 / 6 on the full sample, but o_k is ahead in every resample
    # that leaves q_k out. x is first only when all six queries are drawn, in
    # 6! / 6^6 = 1.5% of resamples, so its percentile interval would start at 2nd place.
    x = np.full(6, 0.5)
    others = [x + 0.01 - np.eye(6)[k] * 0.061 for k in range(6)]
    scores = np.vstack([x, *others])
    assert np.all(scores[0].mean() > scores[1:].mean(axis=1))
    assert np.prod(np.arange(1, 7)) / 6**6 < 0.025
    ranks = leaderboard_ranks(scores, range(7), resamples=4000, seed=0)
    assert ranks[0].rank == 1 and ranks[0].low == 1  # stretched to hold rank 1
    assert ranks[0].high >= 4


SCORE = st.sampled_from([0.0, 0.25, 0.5, 0.75, 1.0])  # a coarse grid makes ties common


@settings(max_examples=150, deadline=None)
@given(
    st.integers(1, 6).flatmap(
        lambda runs: st.integers(0, 8).flatmap(
            lambda queries: st.lists(
                st.lists(SCORE, min_size=queries, max_size=queries),
                min_size=runs,
                max_size=runs,
            )
        )
    ),
    st.integers(0, 2**16),
)
def test_properties(rows, seed):
    scores = np.array(rows, dtype=float).reshape(len(rows), -1)
    n = scores.shape[0]
    means = scores.mean(axis=1) if scores.shape[1] else np.zeros(n)
    order = np.argsort(-means, kind="stable")  # the leaderboard's order
    ranks = leaderboard_ranks(scores, order, resamples=200, seed=seed)
    assert [r.rank for r in ranks] == list(range(1, n + 1))
    # The interval holds the observed rank and stays within 1..n.
    assert all(1 <= r.low <= r.rank <= r.high <= n for r in ranks)
    # The letters are letter_groups', with "a" on the first run; the tier is the number
    # of the first letter.
    groups = [r.groups for r in ranks]
    assert groups == letter_groups(scores, order)
    assert 0 in groups[0] and [r.tier for r in ranks] == [g[0] + 1 for g in groups]
    # Deterministic for a seed.
    assert ranks == leaderboard_ranks(scores, order, resamples=200, seed=seed)
    # Two runs share a letter exactly when their Holm-adjusted p-value is above 0.05.
    if scores.shape[1] >= 2 and n > 1:
        p = pairwise_p_values(scores)
        iu = np.triu_indices(n, 1)
        adj = np.ones((n, n))
        adj[iu] = stats.holm(p[iu])
        adj.T[iu] = adj[iu]
        for i, j in itertools.combinations(range(n), 2):
            share = bool(set(groups[i]) & set(groups[j]))
            assert share == (adj[order[i], order[j]] > 0.05), (i, j)
    else:
        assert groups == [(0,)] * n
