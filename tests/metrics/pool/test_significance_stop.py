"""The stop rule's significance watch, pure parts: which pairs of runs differ, flips, ahead.

Hand-worked: three runs over three queries, so the paired t-test has 2 degrees of freedom
and its two-sided p-value has a closed form, p = 1 - |t| / sqrt(t² + 2); Holm by hand.
Then 3 runs × 6 queries against ``scipy.stats.ttest_rel`` and a Holm written out here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from metrics.pool import stopping

# rows A, B, C; differences A-B = [1, 2, 3], A-C = [5, 5, 6], B-C = [4, 3, 3]
HAND = np.array([[6.0, 7.0, 8.0], [5.0, 5.0, 5.0], [1.0, 2.0, 2.0]])


def _p_df2(t: float) -> float:
    """Two-sided p of Student's t with 2 degrees of freedom (closed form)."""
    return 1.0 - abs(t) / math.sqrt(t * t + 2.0)


def test_p_values_by_hand():
    # A-B: mean 2, sd 1, se 1/√3, t = 2√3; A-C: mean 16/3, sd 1/√3, se 1/3, t = 16;
    # B-C: mean 10/3, sd 1/√3, se 1/3, t = 10
    expected = [_p_df2(2 * math.sqrt(3)), _p_df2(16.0), _p_df2(10.0)]
    assert expected == pytest.approx([0.074180, 0.003884, 0.009852], abs=1e-6)
    assert stopping.pair_p_values(HAND) == pytest.approx(expected, rel=1e-9)


def test_significant_pairs_by_hand_with_holm():
    # Holm over m = 3: A-C 3 × 0.003884 = 0.0117, B-C 2 × 0.009852 = 0.0197,
    # A-B 1 × 0.074180 = 0.0742 (monotone already): A > C and B > C at 0.05, A-B not.
    found = stopping.significant_pairs(HAND)
    assert (found.count, found.tested, found.queries) == (2, 3, 3)
    assert found.decisions.tolist() == [[0, 0, 1], [0, 0, 1], [-1, -1, 0]]
    assert found.record(["A", "B", "C"]) == {
        "runs": ["A", "B", "C"],
        "queries": 3,
        "better": [["A", "C"], ["B", "C"]],
    }
    # at alpha 0.10 A-B's 0.0742 passes too; at 0.015 only A-C's 0.0117
    assert stopping.significant_pairs(HAND, alpha=0.10).count == 3
    assert stopping.significant_pairs(HAND, alpha=0.015).decisions[0, 2] == 1
    assert stopping.significant_pairs(HAND, alpha=0.015).count == 1


def test_one_query_turns_a_decision():
    # B's third query 5 -> 6: A-B = [1, 2, 2], t = 5, p = 1 - 5/√27 = 0.03775; B-C = [4, 3, 4],
    # t = 11, p = 0.008163; Holm: A-C 0.0117, B-C 0.0163, A-B 0.0377: all three at 0.05.
    after = HAND.copy()
    after[1, 2] = 6.0
    assert stopping.pair_p_values(after) == pytest.approx(
        [_p_df2(5.0), _p_df2(16.0), _p_df2(11.0)], rel=1e-9
    )
    before, now = stopping.significant_pairs(HAND), stopping.significant_pairs(after)
    assert now.count == 3 and stopping.decision_flips(before, now) == 1
    # the ranking by mean did not move (A 7, B 5.33, C 1.67): τ alone would see nothing
    assert np.argsort(-after.mean(axis=1)).tolist() == np.argsort(-HAND.mean(axis=1)).tolist()


def _holm_reference(p: list[float]) -> list[float]:
    """Holm's step-down adjustment written out (Holm 1979)."""
    order = sorted(range(len(p)), key=lambda i: p[i])
    adjusted, running = [0.0] * len(p), 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return adjusted


@pytest.mark.parametrize(
    ("seed", "count", "cut_by_holm"),
    [(3, 3, 0), (4, 1, 2), (6, 0, 0), (18, 2, 0)],
)
def test_three_runs_six_queries_against_scipy(seed, count, cut_by_holm):
    rng = np.random.default_rng(seed)
    scores = rng.random((3, 6)) + np.array([[0.0], [0.3], [0.6]])
    pairs = [(0, 1), (0, 2), (1, 2)]
    raw = [float(stats.ttest_rel(scores[i], scores[j]).pvalue) for i, j in pairs]
    assert stopping.pair_p_values(scores) == pytest.approx(raw, rel=1e-9)
    adjusted = _holm_reference(raw)
    expected = [
        int(np.sign(scores[i].mean() - scores[j].mean())) if a <= 0.05 else 0
        for (i, j), a in zip(pairs, adjusted, strict=True)
    ]
    found = stopping.significant_pairs(scores)
    assert [int(found.decisions[i, j]) for i, j in pairs] == expected
    assert found.count == count  # none, some, all: the cases differ
    # raw p ≤ 0.05 that Holm's adjustment takes back (seed 4: 0.036 and 0.040 after 0.004)
    assert sum(r <= 0.05 < a for r, a in zip(raw, adjusted, strict=True)) == cut_by_holm


def test_edge_cases():
    # identical runs: p = 1; a constant non-zero shift: p = 0 (scipy's ±inf t)
    same = np.array([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0], [2.0, 3.0, 4.0]])
    assert stopping.pair_p_values(same).tolist() == [1.0, 0.0, 0.0]
    assert stopping.significant_pairs(same).decisions[2].tolist() == [1, 1, 0]
    # a query with a NaN for some run is left out; one query left: nothing is tested
    gap = np.array([[1.0, np.nan, 3.0], [0.0, 1.0, 1.0]])
    assert stopping.significant_pairs(gap).queries == 2
    lone = stopping.significant_pairs(np.array([[1.0, np.nan], [0.0, 1.0]]))
    assert (lone.defined, lone.tested, lone.count) == (False, 0, 0)
    assert stopping.significant_pairs(np.zeros((1, 5))).tested == 0
    with pytest.raises(ValueError, match="two queries"):
        stopping.pair_p_values(np.zeros((2, 1)))
    with pytest.raises(ValueError, match="alpha"):
        stopping.significant_pairs(HAND, alpha=1.5)
    with pytest.raises(ValueError, match="runs"):
        stopping.decision_flips(stopping.significant_pairs(HAND), stopping.significant_pairs(gap))


def test_flips_between_records_counts_common_pairs_once():
    then = {"runs": ["1", "2", "3"], "queries": 6, "better": [["1", "3"], ["2", "3"]]}
    assert stopping.flips_between(then, then) == (0, 3)
    # 2-3 no longer told apart, 1-2 now is: two decisions changed
    now = {"runs": ["1", "2", "3"], "queries": 6, "better": [["1", "2"], ["1", "3"]]}
    assert stopping.flips_between(now, then) == (2, 3)
    # a reversed pair changes one decision; a new run's pairs are not compared
    reversed_ = {"runs": ["1", "2", "3", "4"], "queries": 6, "better": [["3", "1"], ["2", "3"]]}
    reversed_["better"].append(["4", "1"])
    assert stopping.flips_between(reversed_, then) == (1, 3)


def _toggle():
    """A scorer of 3 runs × 3 queries: B's third query is 6 when the open pair is relevant.

    The open pair (query 0, document 0) cannot reorder the runs (τ stays 1) but turns the
    A-B decision (see :func:`test_one_query_turns_a_decision`).
    """

    def scorer(labels: list[np.ndarray]) -> np.ndarray:
        matrix = HAND.copy()
        if labels[0][0] >= 2:
            matrix[1, 2] = 6.0
        return matrix

    return scorer, [np.array([np.nan])]


def _prior(p_relevant: float) -> list[np.ndarray]:
    return [np.array([[1.0 - p_relevant, 0.0, p_relevant, 0.0, 0.0]])]


def test_look_ahead_sees_the_flip_that_tau_cannot():
    scorer, known = _toggle()
    kwargs = {"planned": [], "open_pairs": [(0, 0)], "step": 5, "draws": 400, "seed": 7}
    tau, flips = stopping.look_ahead(scorer, known, _prior(1.0), **kwargs)
    assert (tau.mean, tau.low) == (1.0, 1.0)
    assert (flips.change, flips.flips, flips.pairs, flips.draws) == (1.0, 1.0, 1, 400)
    _, never = stopping.look_ahead(scorer, known, _prior(0.0), **kwargs)
    assert (never.change, never.flips) == (0.0, 0.0)
    _, coin = stopping.look_ahead(scorer, known, _prior(0.25), **kwargs)
    # binomial(400, 0.25): sd 0.022, so 0.25 ± 0.09 is over four sd
    assert coin.change == coin.flips and abs(coin.change - 0.25) < 0.09
    # the same draws as expected_tau: its figures are unchanged
    alone = stopping.expected_tau(scorer, known, _prior(0.25), **kwargs)
    assert alone == stopping.look_ahead(scorer, known, _prior(0.25), **kwargs)[0]
    # nothing left to judge: nothing can flip
    _, done = stopping.look_ahead(scorer, known, _prior(1.0), planned=[], open_pairs=[], step=5)
    assert (done.change, done.flips, done.pairs) == (0.0, 0.0, 0)


def _verdict(back_flips, change):
    ahead = stopping.ExpectedTau(mean=1.0, low=1.0, pairs=5, draws=50)
    flips = None if change is None else stopping.ExpectedFlips(change, change, 5, 50)
    return stopping.verdict(
        looking_back=1.0,
        ahead=ahead,
        open_pairs=5,
        target=0.95,
        flips_back=back_flips,
        flips_ahead=flips,
    )


@pytest.mark.parametrize(
    ("back_flips", "change", "state"),
    [
        (0, 0.0, "stops-paying"),
        (0, 0.05, "stops-paying"),  # at the risk allowed
        (0, 0.06, "moving"),
        (1, 0.0, "moving"),  # τ stable, a decision flipped over the last N
        (None, 0.0, "unknown"),  # no record of the decisions a step back
        (0, None, "unknown"),
    ],
)
def test_verdict_needs_significance_to_hold_too(back_flips, change, state):
    got, sentence = _verdict(back_flips, change)
    assert got == state
    if state == "moving":
        assert "judging pays" in sentence and "held (τ ≥ 0.95)" in sentence


def test_look_ahead_with_one_query_tests_no_pair():
    # one query: no t-test, the set stays empty, so nothing can flip (and τ still moves)
    def scorer(labels: list[np.ndarray]) -> np.ndarray:
        return np.array([[1.0], [2.0 if labels[0][0] >= 2 else 0.0]])

    tau, flips = stopping.look_ahead(
        scorer, [np.array([np.nan])], _prior(1.0), planned=[(0, 0)], open_pairs=[], step=1
    )
    assert tau.mean == -1.0
    assert (flips.defined, flips.change, flips.flips) == (False, 0.0, 0.0)
