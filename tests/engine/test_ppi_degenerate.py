"""A bias-corrected interval of zero or infinite width says why (metrics.engine.ppi)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from metrics.engine import ppi


def test_audited_queries_that_do_not_vary_give_no_spread_not_certainty():
    """The issue's "PPI 1.000 (1.000–1.000)": every audited query scores 1 for everyone."""
    llm = np.ones(12)
    human = np.where(np.arange(12) < 5, 1.0, np.nan)
    got = ppi.audited_mean(llm, human, np.arange(12) < 5, bounds=(0.0, 1.0))
    assert got.estimate == 1.0 and got.std_error == 0.0
    assert got.low == got.high == 1.0  # what the board used to show as an interval
    assert got.degenerate == ppi.NO_SPREAD


def test_rounding_noise_is_no_spread_too():
    llm = np.full(10, 0.1)
    human = np.where(np.arange(10) < 4, 0.3, np.nan)  # 0.3 - λ·0.1 in floats: noise only
    got = ppi.audited_mean(llm, human, np.arange(10) < 4, lam=1.0)
    assert got.std_error < 1e-15 and got.degenerate == ppi.NO_SPREAD


def test_human_scores_the_llm_explains_exactly_leave_no_residual_spread():
    f = np.linspace(0.1, 0.9, 20)
    h = np.where(np.arange(20) % 3 == 0, 0.5 * f + 0.1, np.nan)  # h = λf + c on the audit
    got = ppi.audited_mean(f, h, np.arange(20) % 3 == 0)
    assert got.lam == pytest.approx(0.5)
    assert got.degenerate == ppi.NO_SPREAD


def test_everything_audited_is_exact_and_one_audited_is_infinite():
    f = np.array([0.2, 0.4, 0.6])
    exact = ppi.audited_mean(f, f + 0.1, np.ones(3, bool))
    assert exact.low == exact.high == pytest.approx(0.5) and exact.degenerate == ppi.EXACT
    one = ppi.audited_mean(f, [0.5, np.nan, np.nan], [True, False, False], bounds=(0.0, 1.0))
    assert math.isinf(one.high) and one.degenerate == ppi.ONE_AUDITED


def test_an_interval_wholly_beyond_the_range_is_clipped_to_a_point_and_says_so():
    llm = np.ones(10)
    human = np.where(np.arange(10) < 5, [1.5, 1.6, 1.5, 1.6, 1.5, 0, 0, 0, 0, 0], np.nan)
    got = ppi.audited_mean(llm, human, np.arange(10) < 5, bounds=(0.0, 1.0))
    assert got.low == got.high == 1.0 and got.clipped
    assert got.degenerate == ppi.CLIPPED


def test_an_ordinary_interval_is_not_degenerate():
    rng = np.random.default_rng(1)
    f = rng.random(30)
    h = np.where(np.arange(30) < 10, np.clip(f + rng.normal(0, 0.1, 30), 0, 1), np.nan)
    got = ppi.audited_mean(f, h, np.arange(30) < 10, bounds=(0.0, 1.0))
    assert got.low < got.estimate < got.high and got.degenerate == ""
