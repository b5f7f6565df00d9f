"""Property tests of the NDCG family (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from metrics.engine import evaluate_ranked

GAINS = ["linear", "exp"]
DISCOUNTS = ["log2", "jk", "rank"]
IDEALS = ["local", "recall", "global", "max"]
TOP = 4.0

grades = st.lists(
    st.floats(min_value=0, max_value=TOP, allow_nan=False).map(lambda x: round(x, 2)),
    min_size=1,
    max_size=25,
)
flavours = st.tuples(
    st.sampled_from(GAINS),
    st.sampled_from(DISCOUNTS),
    st.sampled_from(IDEALS),
    st.sampled_from(["zero", "one"]),
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 30)),
)


@st.composite
def query(draw):
    """A judged pool and a ranking of some judged and some unjudged documents."""
    pool = draw(grades)
    n = len(pool)
    picked = draw(st.lists(st.integers(0, n - 1), unique=True, max_size=n))
    unjudged = draw(st.integers(0, 5))
    ranking = [pool[i] for i in picked] + [np.nan] * unjudged
    order = draw(st.permutations(range(len(ranking))))
    return np.array(pool), np.array([ranking[i] for i in order], dtype=float)


def one(ranking, pool, measure, **kw) -> float:
    out = evaluate_ranked(ranking[None, :], [len(ranking)], [pool], [measure], **kw)
    return float(next(iter(out.values()))[0])


def ndcg_name(flavour):
    gain, discount, ideal, empty, judged_only, cutoff = flavour
    jo = ",judged_only=true" if judged_only else ""
    at = f"@{cutoff}" if cutoff else ""
    return f"nDCG(gain={gain},discount={discount},ideal={ideal},empty={empty}{jo}){at}"


@settings(max_examples=300, deadline=None)
@given(query(), flavours)
def test_ndcg_between_zero_and_one(q, flavour):
    pool, ranking = q
    value = one(ranking, pool, ndcg_name(flavour), scale_top=TOP)
    assert 0.0 <= value <= 1.0 + 1e-12


@settings(max_examples=200, deadline=None)
@given(grades, flavours)
def test_perfect_ranking_scores_one(pool, flavour):
    _gain, _discount, ideal, empty, _judged_only, cutoff = flavour
    assume(ideal != "max")
    ranking = np.sort(np.array(pool))[::-1]
    value = one(ranking, np.array(pool), ndcg_name(flavour))
    has_gain = (ranking[:cutoff] if cutoff else ranking).max() > 0
    expected = 1.0 if has_gain or empty == "one" else 0.0
    assert abs(value - expected) < 1e-12


@settings(max_examples=300, deadline=None)
@given(query(), flavours, st.floats(min_value=0.01, max_value=100))
def test_linear_gain_is_scale_invariant(q, flavour, c):
    pool, ranking = q
    _gain, discount, ideal, empty, judged_only, cutoff = flavour
    measure = ndcg_name(("linear", discount, ideal, empty, judged_only, cutoff))
    base = one(ranking, pool, measure, scale_top=TOP)
    scaled = one(ranking * c, pool * c, measure, scale_top=TOP * c)
    assert abs(base - scaled) < 1e-9


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 4), min_size=2, max_size=15), st.sampled_from(DISCOUNTS))
def test_shifting_grades_changes_ndcg(pool, discount):
    pool_arr = np.array(pool, dtype=float)
    ranking = pool_arr.copy()  # every judged document retrieved, in the given order
    measure = f"nDCG(discount={discount},ideal=global)"
    base = one(ranking, pool_arr, measure)
    assume(base < 1 - 1e-9)  # not already ideal: a shift must then change the value
    shifted = one(ranking + 1, pool_arr + 1, measure)
    assert abs(base - shifted) > 1e-12
    assert shifted > base  # a constant gain everywhere pulls NDCG towards 1


def test_shift_example():
    pool = np.array([0.0, 1.0, 2.0])
    ranking = np.array([0.0, 1.0, 2.0])
    a = one(ranking, pool, "nDCG@3")
    b = one(ranking + 2, pool + 2, "nDCG@3")
    c = one(ranking * 3, pool * 3, "nDCG@3")
    assert a != b and abs(a - c) < 1e-15
