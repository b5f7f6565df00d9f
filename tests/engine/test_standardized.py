"""Standardized NDCG, RNDCG and topic difficulty (Gienapp et al., CIKM 2020)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from metrics.engine.standardized import (
    difficulty,
    difficulty_class,
    pool_stats,
    rndcg,
    sndcg,
)

POOL = {"a": 3, "b": 2, "c": 2, "d": 1, "e": 0, "f": 0, "g": 0, "h": 0}
POOL_LABELS = [np.array(list(POOL.values()), dtype=float)]


def _run(docs: str) -> np.ndarray:
    return np.array([[POOL.get(d, np.nan) for d in docs]], dtype=float)


def _score(docs: str, k: int = 5, **kw) -> float:
    return float(sndcg(_run(docs), [len(docs)], POOL_LABELS, k, **kw)[0])


# -- naive references (loops, no shared code with the module) -----------------


def _disc(r: int) -> float:
    return 1.0 / math.log2(r + 1)


def _naive_ndcg(ranking: list[float], pool: list[float], k: int, standardize: bool) -> float:
    g_pool = list(pool)
    g_run = list(ranking)
    if standardize:
        mu = sum(g_pool) / len(g_pool)
        sigma = math.sqrt(sum((g - mu) ** 2 for g in g_pool) / len(g_pool))
        g_pool = [(g - mu) / sigma for g in g_pool]
        g_run = [(g - mu) / sigma for g in g_run]
    dcg = sum(g * _disc(r) for r, g in enumerate(g_run[:k], start=1))
    ideal = sorted(g_pool, reverse=True)[:k]
    idcg = sum(g * _disc(r) for r, g in enumerate(ideal, start=1))
    return dcg / idcg


# -- the paper-style worked example ----------------------------------------------


def test_pool_statistics():
    mu, sigma = pool_stats(POOL_LABELS)
    assert mu[0] == 1.0
    assert sigma[0] == pytest.approx(math.sqrt(10 / 8))  # population sigma


def test_expected_random_ndcg():
    assert rndcg(POOL_LABELS, 5)[0] == pytest.approx(0.517952, abs=1e-6)


@pytest.mark.parametrize(
    ("docs", "expected"),
    [("abcde", 1.0), ("eafbg", -0.0708), ("efghd", -0.9335)],
)
def test_oracle_rankings(docs, expected):
    assert _score(docs) == pytest.approx(expected, abs=1e-4)


def test_oracle_difficulty():
    scores = np.array([[_score(d)] for d in ("abcde", "eafbg", "efghd")])
    assert difficulty(scores)[0] == pytest.approx(1 / 3)
    assert difficulty_class(difficulty(scores)) == ["moderately hard"]


def test_not_bounded_below_by_minus_one():
    # Skewed pool: the worst ranking's |DCG'| exceeds IDCG'.
    pool = [np.array([0.0] * 5 + [1.0] * 3)]
    worst = sndcg(np.array([[0.0] * 5]), [5], pool, 5)[0]
    assert worst < -1
    assert worst == pytest.approx(_naive_ndcg([0] * 5, [0] * 5 + [1] * 3, 5, standardize=True))


def test_ideal_includes_negative_standardized_gains():
    # Only 4 of 8 documents lie above the mean: the 5th ideal slot holds a z < 0.
    assert _score("abcde") == 1.0
    assert _score("abcd") > 1.0  # leaving the slot empty beats the ideal ranking


# -- edge cases ----------------------------------------------------------------


def test_vectorised_over_queries_with_padding():
    lab = np.vstack([_run("abcde"), _run("eafbg"), _run("efghd")])
    lab = np.hstack([lab, np.full((3, 2), 4.0)])  # padding beyond n_ret is ignored
    got = sndcg(lab, [5, 5, 5], POOL_LABELS * 3, 5)
    assert got == pytest.approx([1.0, -0.0708, -0.9335], abs=1e-4)


def test_sigma_zero_is_nan():
    pools = [np.array([1.0, 1.0, 1.0]), np.array([2.0]), np.array([]), np.array([0.1] * 3)]
    lab = np.array([[1.0, 1.0]] * 4)
    got = sndcg(lab, [2] * 4, pools, 10)
    assert np.isnan(got).all()
    assert pool_stats(pools)[1][[0, 1, 3]].tolist() == [0.0, 0.0, 0.0]
    assert np.isnan(pool_stats(pools)[0][2])
    # RNDCG: equal positive gains -> every reranking is ideal; empty or all-zero -> NaN.
    assert rndcg(pools, 10)[[0, 1, 3]] == pytest.approx([1.0, 1.0, 1.0])
    assert np.isnan(rndcg(pools, 10)[2])
    assert np.isnan(rndcg([np.zeros(4)], 10)[0])
    assert np.isnan(difficulty(np.full((3, 1), np.nan)))[0]


def test_unjudged_documents_get_gain_zero_by_default():
    assert _score("xabcd") == _score("eabcd")  # x is unjudged, e is judged 0
    assert _score("xabcd", unjudged_gain=3.0) == _score("aabcd")


def test_unjudged_documents_can_be_dropped():
    assert _score("axbxcde", unjudged_gain=None) == _score("abcde")
    assert _score("xxxxx", unjudged_gain=None) == 0.0


def test_empty_ranking_scores_zero():
    assert _score("") == 0.0


def test_pool_smaller_than_k():
    pool = [np.array([2.0, 1.0, 0.0])]
    perfect = sndcg(np.array([[2.0, 1.0, 0.0]]), [3], pool, 10)[0]
    assert perfect == pytest.approx(1.0)
    assert sndcg(np.array([[0.0, 1.0, 2.0]]), [3], pool, 10)[0] == pytest.approx(
        _naive_ndcg([0, 1, 2], [2, 1, 0], 10, standardize=True)
    )
    # RNDCG sums the discounts of the 3 pool ranks only.
    expected = 1.0 * (_disc(1) + _disc(2) + _disc(3)) / (2 + _disc(2))
    assert rndcg(pool, 10)[0] == pytest.approx(expected)


def test_no_cutoff_uses_whole_ranking_and_pool():
    assert sndcg(_run("abcdefgh"), [8], POOL_LABELS, None)[0] == pytest.approx(1.0)
    assert sndcg(_run("hgfedcba"), [8], POOL_LABELS, None)[0] == pytest.approx(
        _naive_ndcg([0, 0, 0, 0, 1, 2, 2, 3], list(POOL.values()), 8, standardize=True)
    )


def test_exponential_gain_standardizes_the_gains():
    lab = _run("eafbg")
    got = sndcg(lab, [5], POOL_LABELS, 5, gain="exp")[0]
    exp_pool = [2.0**g - 1 for g in POOL.values()]
    exp_run = [2.0**g - 1 for g in lab[0]]
    assert got == pytest.approx(_naive_ndcg(exp_run, exp_pool, 5, standardize=True))


def test_negative_grades_are_kept():
    pool = [np.array([-2.0, 0.0, 0.0, 1.0, 3.0])]
    lab = np.array([[-2.0, 3.0, 1.0]])
    assert sndcg(lab, [3], pool, 3)[0] == pytest.approx(
        _naive_ndcg([-2, 3, 1], [-2, 0, 0, 1, 3], 3, standardize=True)
    )


def test_difficulty_ignores_undefined_scores():
    s = np.array([[0.5, np.nan, -0.1], [0.0, np.nan, 0.2], [np.nan, np.nan, 0.3]])
    got = difficulty(s)
    assert got[0] == 0.5  # 0.0 is not better than random
    assert np.isnan(got[1])
    assert got[2] == pytest.approx(2 / 3)
    assert difficulty_class([0.0, 0.25, 0.26, 0.5, 0.75, 0.76, 1.0, np.nan]) == [
        "hard",
        "hard",
        "moderately hard",
        "moderately hard",
        "moderately easy",
        "easy",
        "easy",
        None,
    ]


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sndcg([[1.0]], [1], POOL_LABELS, 0), "k must be"),
        (lambda: sndcg([1.0], [1], POOL_LABELS, 5), "2-D"),
        (lambda: sndcg([[1.0]], [2], POOL_LABELS, 5), "n_ret"),
        (lambda: sndcg([[1.0]], [1], POOL_LABELS * 2, 5), "queries"),
        (lambda: sndcg([[1.0]], [1], [np.array([1.0, np.nan])], 5), "NaN"),
        (lambda: sndcg([[1.0]], [1], POOL_LABELS, 5, gain="log"), "unknown gain"),
        (lambda: rndcg(POOL_LABELS, 0), "k must be"),
        (lambda: difficulty([1.0, 2.0]), "2-D"),
    ],
)
def test_invalid_input(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# -- properties ------------------------------------------------------------------

grades = st.lists(st.integers(-2, 4), min_size=2, max_size=7).filter(lambda g: len(set(g)) > 1)


@settings(max_examples=60, deadline=None)
@given(pool=grades, k=st.integers(1, 8))
def test_mean_over_all_permutations_is_zero(pool, k):
    perms = np.array(list(itertools.permutations(pool)), dtype=float)
    got = sndcg(perms, [len(pool)] * len(perms), [np.array(pool, dtype=float)] * len(perms), k)
    assert abs(got.mean()) < 1e-9
    # Each value agrees with the loop reference.
    for i in (0, len(perms) // 2, len(perms) - 1):
        assert got[i] == pytest.approx(
            _naive_ndcg(list(perms[i]), pool, k, standardize=True), abs=1e-9
        )


@settings(max_examples=100, deadline=None)
@given(pool=grades, k=st.integers(1, 10), gain=st.sampled_from(["linear", "exp"]))
def test_perfect_ranking_scores_one(pool, k, gain):
    ideal = np.array([sorted(pool, reverse=True)], dtype=float)
    got = sndcg(ideal, [len(pool)], [np.array(pool, dtype=float)], k, gain=gain)[0]
    assert got == pytest.approx(1.0, abs=1e-12)


@settings(max_examples=100, deadline=None)
@given(
    pool=st.lists(st.integers(0, 4), min_size=3, max_size=15).filter(lambda g: len(set(g)) > 1),
    data=st.data(),
    k=st.integers(1, 10),
    scale=st.floats(0.01, 100.0),
    shift=st.floats(-10.0, 10.0),
)
def test_scale_and_shift_invariance(pool, data, k, scale, shift):
    ranking = data.draw(st.permutations(pool))
    base = np.array(pool, dtype=float)
    lab = np.array([ranking], dtype=float)

    def s(transform):
        return sndcg(transform(lab), [len(pool)], [transform(base)], k)[0]

    original = s(lambda x: x)
    assert s(lambda x: x * scale) == pytest.approx(original, abs=1e-9)
    assert s(lambda x: x + shift) == pytest.approx(original, abs=1e-9)
    assert s(lambda x: x * scale + shift) == pytest.approx(original, abs=1e-9)

    # Plain NDCG (Lemmas 1-2): scale invariant, not shift invariant.
    plain = _naive_ndcg(ranking, pool, k, standardize=False)
    assume(max(pool) > 0)
    assert _naive_ndcg([g * scale for g in ranking], [g * scale for g in pool], k, False) == (
        pytest.approx(plain, abs=1e-9)
    )
    # NDCG(g + c) = (DCG + c') / (IDCG + c') differs whenever DCG < IDCG (c > 0 keeps
    # IDCG + c' > 0 for non-negative grades).
    ideal = sorted(pool, reverse=True)
    dcg = sum(g * _disc(r) for r, g in enumerate(ranking[:k], start=1))
    idcg = sum(g * _disc(r) for r, g in enumerate(ideal[:k], start=1))
    assume(dcg < idcg - 1e-9)
    c = abs(shift) + 0.5
    shifted = _naive_ndcg([g + c for g in ranking], [g + c for g in pool], k, False)
    assert shifted != pytest.approx(plain, abs=1e-12)
    assert shifted > plain  # a positive shift pulls every NDCG towards 1


@settings(max_examples=30, deadline=None)
@given(
    pool=st.lists(st.integers(0, 4), min_size=8, max_size=40).filter(lambda g: len(set(g)) > 1),
    seed=st.integers(0, 2**32 - 1),
    k=st.sampled_from([5, 10, 20]),
)
def test_random_shuffles_average_to_zero(pool, seed, k):
    rng = np.random.default_rng(seed)
    n = 4000
    base = np.array(pool, dtype=float)
    lab = np.array([rng.permutation(base) for _ in range(n)])
    got = sndcg(lab, [len(pool)] * n, [base] * n, k)
    assert np.all(got <= 1 + 1e-12)
    # Standard error of the mean is at most 1/sqrt(n); 5 of them.
    assert abs(got.mean()) < 5 / math.sqrt(n)
    # RNDCG is the mean plain NDCG of the random reranker.
    plain_ideal = np.sort(base)[::-1][:k]
    disc = 1 / np.log2(np.arange(2, k + 2))
    plain = (lab[:, :k] @ disc[: lab[:, :k].shape[1]]) / (plain_ideal @ disc[: plain_ideal.size])
    assert rndcg([base], k)[0] == pytest.approx(plain.mean(), abs=5 * plain.std() / math.sqrt(n))
