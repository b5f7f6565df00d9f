"""The alert rule (metrics.schedules.noise): fires on changes beyond noise, not on drops.

Hand-worked cases pin the rule to the paired t-test and the bootstrap interval the
compare page shows; the simulated schedules of benchmarks/alerts.py (the engine's
ndcg_cut.10 over campaigns whose true change is known) bound its false alarms.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from benchmarks import alerts
from metrics.engine import stats
from metrics.schedules import noise


def test_a_drop_beyond_noise_fires_with_the_compare_pages_numbers():
    before = np.array([0.50, 0.60, 0.70, 0.40, 0.55, 0.65, 0.45, 0.52])
    after = before - np.array([0.10, 0.08, 0.12, 0.09, 0.11, 0.10, 0.07, 0.13])
    verdict = noise.judge_change(before, after)
    assert verdict.fired
    assert verdict.mean_change == pytest.approx(-0.1)
    assert verdict.p_value == pytest.approx(scipy_stats.ttest_rel(after, before).pvalue)
    ci = stats.bootstrap_ci(after, before, confidence=0.95, resamples=noise.RESAMPLES, seed=0)
    assert (verdict.low, verdict.high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert verdict.high < 0
    assert verdict.reason.startswith("A drop beyond noise: -0.1000")


def test_a_drop_within_noise_does_not_fire():
    # The mean drops by 0.01, but the queries disagree: p is large and 0 is in the interval.
    before = np.array([0.5, 0.6, 0.7, 0.4, 0.55, 0.65])
    after = np.array([0.6, 0.5, 0.75, 0.3, 0.6, 0.59])
    verdict = noise.judge_change(before, after)
    assert verdict.mean_change < 0
    assert not verdict.fired
    assert verdict.p_value > 0.05
    assert verdict.low < 0 < verdict.high
    assert "Within noise" in verdict.reason


def test_direction_alpha_and_edge_cases():
    before = np.linspace(0.3, 0.7, 12)
    after = before + 0.05 + np.linspace(-0.01, 0.01, 12)
    assert not noise.judge_change(before, after).fired  # a rise; drops are watched
    assert "does not watch" in noise.judge_change(before, after).reason
    assert noise.judge_change(before, after, direction="rise").fired
    assert noise.judge_change(before, after, direction="either").fired
    assert noise.judge_change(after, before, direction="either").fired
    same = noise.judge_change(before, before)
    assert (same.fired, same.p_value, same.mean_change) == (False, 1.0, 0.0)
    assert same.reason == "No change over 12 queries."
    # A query one snapshot could not score is left out, not counted as a change.
    holes = noise.judge_change([0.5, np.nan, 0.4], [0.5, 0.9, np.inf])
    assert holes.queries == 1 and not holes.fired and holes.p_value is None
    assert "share 1 scored query" in holes.reason
    assert noise.judge_change([], []).queries == 0
    with pytest.raises(ValueError, match="direction"):
        noise.judge_change(before, after, direction="down")
    with pytest.raises(ValueError, match="alpha"):
        noise.judge_change(before, after, alpha=1.0)
    with pytest.raises(ValueError, match="length"):
        noise.judge_change([0.1, 0.2], [0.1])


def test_a_stricter_level_needs_a_larger_change():
    rng = np.random.default_rng(3)
    before = rng.uniform(0.2, 0.8, 40)
    after = before - 0.02 + rng.normal(0, 0.05, 40)
    p = noise.judge_change(before, after).p_value
    assert 0.001 < p < 0.05
    assert noise.judge_change(before, after, alpha=0.05).fired
    assert not noise.judge_change(before, after, alpha=p / 2).fired


@pytest.mark.parametrize("shape", alerts.SHAPES[:2], ids=lambda s: s.name)
def test_over_200_simulated_schedules_false_alarms_stay_under_5_percent(shape):
    """No change (only index churn differs): at most 5 % alert; Quepid's rule: about half."""
    found = alerts.simulate(shape, "none", schedules=200, seed=7)
    fired = sum(o.fired for o in found) / len(found)
    dropped = sum(o.dropped for o in found) / len(found)
    assert fired <= 0.05
    assert 0.35 <= dropped <= 0.65  # alerting on any drop would fire on every other night


def test_a_large_real_drop_is_caught_on_nearly_every_schedule():
    found = alerts.simulate(alerts.SHAPES[1], "large", schedules=100, seed=7)
    assert sum(o.fired for o in found) >= 95
