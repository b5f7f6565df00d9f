"""Steady, hybrid and swap pick the same pairs on every CPU.

A fresh machine without AVX-512 once failed CI here: the picks of ``hybrid`` diverged
from a recording made on an AVX-512 machine at pick 35. numpy takes other SIMD paths on
other CPUs, so its sums, logarithms and ``argpartition``'s choice among ties differ in the
last bits, and an order that compares raw floats follows them. The strategies now order by
:func:`metrics.pool.strategies.tie_key` with ties broken by index. These tests replay small
campaigns of the benchmark family (shapes B and C cut to 6 topics, at most 12 runs, depth
20; seeds 1 and 2; 150 picks, every third one pending) in child processes whose numpy
dispatch is limited with ``NPY_DISABLE_CPU_FEATURES`` to each level this machine has, and
in-process with weights nudged by a few units in the last place.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from benchmarks.pooling import SHAPES, family_campaign
from metrics.pool.simulation import make_scorer, oracle
from metrics.pool.strategies import Hybrid, Steady, Swap, make_strategy, tie_key

ROOT = Path(__file__).resolve().parents[3]
CASES = [
    f"{n}/{label}/{seed}" for n in ("steady", "hybrid", "swap") for label in "BC" for seed in (1, 2)
]


def _setup(label: str, seed: int):
    shape = next(s for s in SHAPES if s.label == label)
    shape = replace(shape, queries=6, runs=min(shape.runs, 12))
    campaign, qrels = family_campaign(shape, seed, universe=300, depth=20)
    return campaign, oracle(campaign, qrels)


def _replay(strategy, campaign, truth, n: int) -> list[list[str]]:
    """Take ``n`` picks of ``strategy``; every third stays pending, the rest get the truth."""
    out: list[list[str]] = []
    for _ in range(n):
        pick = strategy.next_pair()
        if pick is None:
            break
        q, d = pick
        out.append([campaign.queries[q], campaign.docnos[q][d]])
        if len(out) % 3 == 0:
            strategy.pend(q, d)
        else:
            strategy.observe(q, d, float(truth[q][d]))
    return out


def _picks(key: str, n: int = 150) -> list[list[str]]:
    """Replay case ``key`` (``strategy/shape/seed``); return its picks as (qid, docno)."""
    name, label, seed = key.split("/")
    campaign, truth = _setup(label, int(seed))
    strategy = make_strategy(name, campaign, scores=make_scorer(campaign), seed=int(seed))
    return _replay(strategy, campaign, truth, n)


def all_picks() -> dict[str, list[list[str]]]:
    """Return every case's picks (what each child process prints)."""
    return {key: _picks(key) for key in CASES}


def _dispatch_levels() -> list[str]:
    """Return NPY_DISABLE_CPU_FEATURES values: none, then each dispatch level cut off."""
    from numpy._core import _multiarray_umath as umath

    found = [f for f in umath.__cpu_dispatch__ if umath.__cpu_features__.get(f)]
    return [" ".join(found[i:]) for i in range(len(found) + 1)]


def test_the_picks_are_the_same_at_every_simd_level():
    levels = _dispatch_levels()
    if len(levels) < 2:
        pytest.skip("numpy dispatches no SIMD extension above its baseline on this CPU")
    results = {}
    for disabled in levels:
        env = {**os.environ, "NPY_DISABLE_CPU_FEATURES": disabled}
        code = (
            "import json; from tests.metrics.pool.test_weighed_picks import all_picks;"
            " print(json.dumps(all_picks()))"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True
        )
        assert done.returncode == 0, done.stderr[-2000:]
        results[disabled or "(all)"] = json.loads(done.stdout)
    reference = results["(all)"]
    assert all(len(picks) == 150 for picks in reference.values())
    for disabled, picks in results.items():
        for key in CASES:
            pairs = enumerate(zip(picks[key], reference[key], strict=True))
            diverge = next((i for i, (a, b) in pairs if a != b), None)
            assert diverge is None, f"{key} with {disabled} disabled diverges at pick {diverge}"


class _Nudged:
    """Multiply every weighing by 1 ± a few units in the last place (a seeded draw)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._noise = np.random.default_rng(7)

    def _nudge(self, w):
        return w * (1.0 + self._noise.integers(-4, 5, size=w.shape) * np.finfo(float).eps)

    def weights(self):
        weights = super().weights()
        if isinstance(weights, list):
            return [self._nudge(w) for w in weights]
        return self._nudge(weights)


class _NudgedHybrid(_Nudged, Hybrid):
    pass


class _NudgedSwap(_Nudged, Swap):
    pass


class _NudgedSteady(_Nudged, Steady):
    """Nudge both weighings: within the cut-off and through the ideal."""

    def ideal_weights(self):
        return self._nudge(super().ideal_weights())


@pytest.mark.parametrize("key", CASES)
def test_a_few_units_in_the_last_place_change_no_pick(key):
    name, label, seed = key.split("/")
    campaign, truth = _setup(label, int(seed))
    if name == "hybrid":
        nudged = _NudgedHybrid(campaign)
    elif name == "steady":
        nudged = _NudgedSteady(campaign)
    else:
        nudged = _NudgedSwap(campaign, scores=make_scorer(campaign))
    assert _replay(nudged, campaign, truth, 150) == _picks(key)


def test_tie_key_makes_near_ties_ties_and_keeps_real_differences():
    eps = np.finfo(float).eps
    values = np.array([0.3, 0.3 * (1 + 2 * eps), 0.1 + 0.2, 0.2, 0.0, -0.3 * (1 - eps)])
    key = tie_key(values)
    assert key[0] == key[1] == key[2]  # 0.1 + 0.2 != 0.3 in floats; one key here
    assert key[3] < key[0] and key[4] == 0.0 and key[5] == -key[0]
    # a stable sort of the key: near-ties keep the order of their indices
    assert np.argsort(-key, kind="stable").tolist() == [0, 1, 2, 3, 4, 5]
    # the scale is the largest magnitude: tiny weights are ordered as well as large ones
    assert (tie_key(values * 1e-12) == key).all()
    # differences above the digits kept stay differences
    assert tie_key(np.array([1.0, 1.0 - 1e-8]))[1] < 1.0


def test_tie_key_edge_cases():
    assert tie_key(np.zeros(0)).size == 0
    assert (tie_key(np.zeros(3)) == 0).all()
    key = tie_key(np.array([np.nan, np.inf, 2.0, -np.inf]))
    assert np.isnan(key[0]) and key[1] == np.inf and key[2] == 1.0 and key[3] == -np.inf
