"""``score_bounds``: the range a measure's per-query values lie in (for clipping intervals)."""

from __future__ import annotations

import pytest

from metrics.engine.measures import score_bounds

UNIT = (0.0, 1.0)


@pytest.mark.parametrize(
    "name",
    [
        "nDCG@10",
        "ndcg_cut.10",
        "nDCG(gain=exp,discount=jk,ideal=recall,empty=one,judged_only=true)@10",
        "ndcg.0=0,1=1,2=3",
        "P@10",
        "R@100",
        "AP",
        "map",
        "RR",
        "Rprec",
        "Bpref",
        "ERR@10",
        "Success@5",
        "Judged@10",
        "set_F",
    ],
)
def test_shares_probabilities_and_ndcgs_lie_in_zero_one(name):
    assert score_bounds(name) == UNIT


@pytest.mark.parametrize(
    "name", ["num_ret", "num_rel_ret", "UDCG@10", "sNDCG@10", "utility", "ndcg.0=-1,1=1,2=3"]
)
def test_counts_utilities_negative_gains_and_standardized_scores_have_no_range(name):
    assert score_bounds(name) is None
