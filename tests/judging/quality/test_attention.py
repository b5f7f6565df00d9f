"""Attention signals: hand-worked cases and an independent check (scipy, statsmodels)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.proportion import proportions_ztest

from judging.quality.attention import (
    CANNOT_JUDGE,
    GRADED,
    LATER,
    MIN_LABELS,
    attention,
    longest_run,
    repeat_share,
    tukey_range,
)


def test_longest_run_by_hand():
    assert longest_run([]) == 0
    assert longest_run([2]) == 1
    assert longest_run([1, 1, 2, 2, 2, 0, 2]) == 3
    assert longest_run([4, 4, 4, 4]) == 4


def test_repeat_share_by_hand():
    # 0 1 0 1 0 1: never equal to the previous; chance = 0.5² + 0.5² = 0.5.
    share, chance, z = repeat_share([0, 1, 0, 1, 0, 1])
    assert (share, chance) == (0.0, 0.5)
    assert z == pytest.approx((0 - 0.5) / math.sqrt(0.5 * 0.5 / 5))
    # One value only: chance 1, no spread, no z.
    share, chance, z = repeat_share([3, 3, 3])
    assert (share, chance) == (1.0, 1.0) and math.isnan(z)
    assert all(math.isnan(v) for v in repeat_share([2]))


def test_repeat_share_z_agrees_with_the_binomial_normal_approximation():
    rng = np.random.default_rng(4)
    grades = rng.integers(0, 5, 300)
    _share, chance, z = repeat_share(grades)
    repeats = int((grades[1:] == grades[:-1]).sum())
    expected = stats.binom(len(grades) - 1, chance)
    assert z == pytest.approx((repeats - expected.mean()) / expected.std(), abs=1e-9)


def test_tukey_range_by_hand():
    # log seconds 0..7 (e^0..e^7): Q1 = 1.75, Q3 = 5.25, IQR 3.5 → fences -3.5 and 10.5.
    low, high = tukey_range(np.exp(np.arange(8.0)))
    assert low == pytest.approx(math.exp(-3.5)) and high == pytest.approx(math.exp(10.5))
    assert all(math.isnan(v) for v in tukey_range([]))


def _labels(rng, judges, n, *, seconds_scale=None, grades=None, cannot=0.02, later=0.02):
    """Labels of ``judges`` judges: statuses, grades and times."""
    judge = np.repeat(np.arange(judges), n)
    status = rng.choice(
        [GRADED, CANNOT_JUDGE, LATER], size=judge.size, p=[1 - cannot - later, cannot, later]
    )
    grade = rng.integers(0, 5, judge.size).astype(float) if grades is None else grades
    scale = np.full(judges, 20.0) if seconds_scale is None else np.asarray(seconds_scale)
    seconds = rng.lognormal(np.log(scale[judge]), 0.5)
    return judge, status, grade, seconds


def test_ordinary_judges_raise_no_flag():
    rng = np.random.default_rng(7)
    result = attention(*_labels(rng, 6, 200))
    assert [r.flags for r in result] == [()] * 6
    assert all(r.labels == 200 for r in result)


def test_a_fast_judge_a_clicker_and_an_abstainer_are_flagged():
    rng = np.random.default_rng(11)
    judge, status, grade, seconds = _labels(rng, 5, 200, seconds_scale=[20, 20, 20, 1, 20])
    # judge 1 repeats one grade in long runs; judge 2 says "can't judge" a third of the time
    ones = judge == 1
    grade[ones] = np.repeat(rng.integers(0, 5, 20), 10).astype(float)
    twos = np.flatnonzero(judge == 2)
    status[twos[::3]] = CANNOT_JUDGE
    result = attention(judge, status, grade, seconds)
    assert result[3].flags == ("fast",)
    assert result[3].median_seconds < result[3].others_low_seconds
    assert "runs" in result[1].flags and result[1].longest_run >= 10
    assert result[2].flags == ("cannot_judge",)
    assert result[0].flags == () and result[4].flags == ()
    # the z-score is the two-proportion z-test's (statsmodels, pooled variance)
    hits = int((status[judge == 2] == CANNOT_JUDGE).sum())
    other = int((status[judge != 2] == CANNOT_JUDGE).sum())
    z, _p = proportions_ztest([hits, other], [200, 800])
    assert result[2].cannot_judge_z == pytest.approx(z, abs=1e-9)


def test_too_few_labels_or_no_other_judge_flag_nothing():
    rng = np.random.default_rng(2)
    judge, status, grade, seconds = _labels(rng, 2, MIN_LABELS - 1, seconds_scale=[20, 1])
    result = attention(judge, status, grade, seconds)
    assert [r.flags for r in result] == [(), ()]
    assert math.isnan(result[1].others_low_seconds)
    alone = attention(*_labels(rng, 1, 300, seconds_scale=[0.5]))
    assert alone[0].flags == () and math.isnan(alone[0].cannot_judge_z)
    assert attention([], [], [], []) == []


def test_labels_without_time_are_left_out_of_the_seconds():
    judge = np.zeros(3, dtype=int)
    result = attention(judge, [GRADED] * 3, [1, 2, 3], [np.nan, 4.0, 6.0])
    assert result[0].timed == 2 and result[0].median_seconds == 5.0


def test_mismatched_inputs_are_refused():
    with pytest.raises(ValueError, match="one length"):
        attention([0, 0], [GRADED], [1, 2], [1.0, 2.0])
