"""Swap and hybrid pick exactly what they picked before their shared set-up was factored out.

``data/weighed_picks.json`` was recorded from the code before the refactor (commit
36f7a11) with the script in :func:`_picks`: small campaigns of the benchmark family
(shapes B and C cut to 6 topics, at most 12 runs, depth 20), seeds 1 and 2, 150 picks
each, every third pick pending (no grade yet) and the others graded from the qrels.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.pooling import SHAPES, family_campaign
from metrics.pool.simulation import make_scorer, oracle
from metrics.pool.strategies import make_strategy

RECORDED = json.loads((Path(__file__).parent / "data" / "weighed_picks.json").read_text())


def _picks(name: str, label: str, seed: int, n: int) -> list[list[str]]:
    """Replay strategy ``name`` on the small campaign; return its picks as (qid, docno)."""
    shape = next(s for s in SHAPES if s.label == label)
    shape = replace(shape, queries=6, runs=min(shape.runs, 12))
    campaign, qrels = family_campaign(shape, seed, universe=300, depth=20)
    truth = oracle(campaign, qrels)
    strategy = make_strategy(name, campaign, scores=make_scorer(campaign), seed=seed)
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


@pytest.mark.parametrize("key", sorted(RECORDED))
def test_the_pick_order_is_the_recorded_one(key):
    name, label, seed = key.split("/")
    recorded = RECORDED[key]
    assert len(recorded) == 150
    assert _picks(name, label, int(seed), len(recorded)) == recorded
