"""Smoke test of the PPI benchmark's campaign generator and tally (benchmarks/ppi.py)."""

from __future__ import annotations

import numpy as np

from benchmarks import ppi


def test_the_llm_grades_carry_the_stated_bias():
    rng = np.random.default_rng(0)
    human, llm, human_pool, llm_pool = ppi.campaign(rng, topics=30, runs=3)
    assert human.shape == llm.shape == (90, ppi.DEPTH)
    pooled_h = np.concatenate(human_pool)
    pooled_f = np.concatenate(llm_pool)
    diff = pooled_f - pooled_h
    assert set(np.unique(diff).tolist()) <= {-1.0, 0.0, 1.0}
    up = np.mean(diff[pooled_h == 0] == 1)
    down = np.mean(diff[pooled_h > 0] == -1)
    assert abs(up - 0.3) < 0.05 and abs(down - 0.2) < 0.06


def test_a_small_shape_runs_and_counts_every_interval():
    result = ppi.run_shape(20, 3, 0.3, draws=2, seed=1, resamples=50)
    for tally in result.kinds.values():
        assert tally.total == 2 * 3 * len(ppi.MEASURES)
        assert 0.0 <= tally.coverage <= 1.0
    assert len(result.lams) == 2 * 3 * len(ppi.MEASURES)
