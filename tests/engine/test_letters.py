"""Compact letter displays: runs share a letter exactly when they cannot be told apart."""

from __future__ import annotations

import itertools
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps
from scipy.linalg import hadamard
from statsmodels.stats.multitest import multipletests

from metrics.engine.letters import (
    differ_from_p,
    holm_matrix,
    letter_name,
    letter_strings,
    letters,
)
from metrics.engine.ranks import adjusted_p_values, letter_groups, pairwise_p_values

#: Rows 1–7 of the 8 × 8 Sylvester Hadamard matrix: ±1 patterns over 8 queries, each
#: summing to 0 and orthogonal to the others.
PATTERNS = hadamard(8)[1:].astype(float)


def staircase(runs: int, gap: float, spread: float) -> np.ndarray:
    """Return ``runs`` runs over 8 queries: run i = 0.4 + (runs − 1 − i)·gap + spread·h_i.

    With orthogonal zero-sum patterns h_i, the difference of runs i and j has mean
    (j − i)·gap and sum of squares 16·spread² around it, so its standard deviation is
    spread·√(16/7) and the paired t statistic (7 df) is (j − i)·(gap/spread)·√3.5.
    """
    return np.array([0.4 + (runs - 1 - i) * gap + spread * PATTERNS[i] for i in range(runs)])


def test_the_four_run_case_of_the_issue():
    # gap/spread = 1/0.7: t = 2.673 between neighbours (p = 0.032), 5.345 two apart
    # (p = 0.00107), 8.018 three apart (p = 0.00009). Holm over the 6 pairs: #1–#4 × 6 =
    # 0.0005; #1–#3 and #2–#4 × 5 and × 4 → 0.0053 both; the neighbours × 3, 2, 1 → 0.096
    # each (the running maximum). So #1–#2, #2–#3 and #3–#4 cannot be told apart, though
    # each raw p is below 0.05, and #1–#3 differ at Holm p = 0.0053. The old tiers put all
    # four in tier 1 (each run joined the tier of a run it could not be told apart from).
    scores = staircase(4, 0.05, 0.035)
    raw = pairwise_p_values(scores)
    t = np.sqrt(3.5) / 0.7
    assert raw[0, 1] == pytest.approx(2 * sps.t.sf(t, 7), rel=1e-12)
    assert raw[0, 1] == pytest.approx(0.0319, abs=1e-4)
    assert raw[0, 2] == pytest.approx(0.00107, abs=1e-5)
    adjusted = adjusted_p_values(scores)
    assert adjusted[0, 2] == pytest.approx(5 * raw[0, 2], rel=1e-12)
    assert adjusted[0, 2] == pytest.approx(0.0053, abs=1e-4)
    assert adjusted[0, 1] == adjusted[1, 2] == adjusted[2, 3] == pytest.approx(3 * raw[0, 1])
    groups = letter_groups(scores, [0, 1, 2, 3])
    assert groups == [(0,), (0, 1), (1, 2), (2,)]
    assert letter_strings(groups) == ["a", "ab", "bc", "c"]


def test_a_chain_of_five():
    # gap/spread = 1.6: neighbours t = 2.99 (p = 0.020), two apart t = 5.99 (p = 0.00055).
    # Holm over 10 pairs: the 4 neighbour pairs get at least 4 × 0.020 = 0.081 (> 0.05);
    # the 3 pairs two apart at most 7 × 0.00055 = 0.0038: letters a, ab, bc, cd, d.
    scores = staircase(5, 0.08, 0.05)
    raw = pairwise_p_values(scores)
    assert raw[0, 1] == pytest.approx(0.0202, abs=1e-4)
    assert raw[0, 2] == pytest.approx(0.00055, abs=1e-5)
    adjusted = adjusted_p_values(scores)
    assert all(adjusted[i, i + 1] > 0.05 for i in range(4))
    assert all(adjusted[i, i + 2] < 0.005 for i in range(3))
    assert letter_strings(letter_groups(scores, range(5))) == ["a", "ab", "bc", "cd", "d"]


def test_runs_with_equal_scores_share_every_letter():
    same = np.tile([0.1, 0.5, 0.3, 0.9], (4, 1))
    assert letter_strings(letter_groups(same, [2, 0, 3, 1])) == ["a"] * 4
    assert np.all(adjusted_p_values(same) == 1.0)
    # Level means from different per-query scores are tested like any other pair.
    level = np.array([[0.2, 0.4, 0.6, 0.8], [0.8, 0.6, 0.4, 0.2], [0.5, 0.5, 0.5, 0.5]])
    assert letter_strings(letter_groups(level, [0, 1, 2])) == ["a", "a", "a"]


def test_two_clearly_separated_blocks():
    rng = np.random.default_rng(3)
    base = rng.uniform(0.3, 0.6, 30)
    top = [base + 0.3 + rng.normal(0, 0.03, 30) for _ in range(3)]
    bottom = [base + rng.normal(0, 0.03, 30) for _ in range(2)]
    scores = np.clip(np.array(top + bottom), 0, 1)
    order = np.argsort(-scores.mean(axis=1), kind="stable")
    adjusted = adjusted_p_values(scores)
    assert np.all(adjusted[:3, 3:] < 1e-10)  # across the blocks: far apart
    assert np.all(adjusted[:3, :3] > 0.05) and adjusted[3, 4] > 0.05  # within: level
    assert letter_strings(letter_groups(scores, order)) == ["a", "a", "a", "b", "b"]


def test_runs_that_cannot_be_told_apart_need_not_be_neighbours():
    # A four-cycle: #1–#3 and #2–#4 differ, every other pair does not. No letter can hold
    # three runs, and each of the four pairs needs one.
    differ = np.zeros((4, 4), dtype=bool)
    for i, j in ((0, 2), (1, 3)):
        differ[i, j] = differ[j, i] = True
    assert letters(differ) == [(0, 1), (0, 2), (2, 3), (1, 3)]
    assert letter_strings(letters(differ)) == ["ab", "ac", "cd", "bd"]
    # The letters follow the board's order, not the rows': "a" holds the first run listed.
    assert letter_strings(letters(differ, [3, 2, 1, 0])) == ["ab", "ac", "cd", "bd"]


def test_edge_cases():
    assert letters(np.zeros((0, 0), dtype=bool)) == []
    assert letter_groups(np.empty((0, 4)), []) == []
    assert letters([[False]]) == [(0,)]  # one run: "a"
    assert letter_groups([[0.2, 0.3, 0.4]], [0]) == [(0,)]
    assert letters([[False, False], [False, False]]) == [(0,), (0,)]
    assert letters([[False, True], [True, False]]) == [(0,), (1,)]
    # Fewer than two queries: no test, nothing differs.
    assert letter_groups([[0.9], [0.1], [0.5]], [0, 2, 1]) == [(0,)] * 3
    assert letter_groups(np.empty((2, 0)), [0, 1]) == [(0,), (0,)]
    # Every run differs from every other: one letter each, in board order.
    assert letter_strings(letters(~np.eye(3, dtype=bool), [2, 0, 1])) == ["a", "b", "c"]
    with pytest.raises(ValueError, match="symmetric"):
        letters([[False, True], [False, False]])
    with pytest.raises(ValueError, match="square"):
        letters([[False, True]])
    with pytest.raises(ValueError, match="order"):
        letters(np.zeros((2, 2), dtype=bool), [0, 0])
    with pytest.raises(ValueError, match="finite"):
        letter_groups([[0.1, np.nan], [0.2, 0.3]], [0, 1])
    with pytest.raises(ValueError, match="alpha"):
        letter_groups([[0.1, 0.2]], [0], alpha=1.0)
    with pytest.raises(ValueError, match="NaN"):
        holm_matrix([[1.0, np.nan], [np.nan, 1.0]])


def test_letter_names_beyond_the_alphabet():
    assert [letter_name(i) for i in (0, 25, 26, 51, 52, 53, 104)] == [
        "a",
        "z",
        "A",
        "Z",
        "a2",
        "b2",
        "a3",
    ]
    # Sixty runs that all differ: sixty letters, printed apart once there are more than 52.
    shown = letter_strings(letters(~np.eye(60, dtype=bool)))
    assert shown[0] == "a" and shown[51] == "Z" and shown[52] == "a2"
    assert letter_strings([(0, 1), (1, 52)]) == ["a b", "b a2"]
    assert letter_strings([(0, 1), (1,)]) == ["ab", "b"]


# --- properties ----------------------------------------------------------------------------


def maximal_groups(differ: np.ndarray) -> set[frozenset[int]]:
    """Brute force: every maximal set of runs of which no two differ."""
    n = differ.shape[0]
    fine = [
        frozenset(s)
        for size in range(1, n + 1)
        for s in itertools.combinations(range(n), size)
        if not any(differ[i, j] for i, j in itertools.combinations(s, 2))
    ]
    return {s for s in fine if not any(s < other for other in fine)}


P_VALUE = st.one_of(
    st.floats(0.0, 0.02), st.floats(0.0, 1.0), st.sampled_from([0.0, 0.0125, 0.05, 1.0])
)


@st.composite
def p_matrices(draw) -> np.ndarray:
    n = draw(st.integers(1, 7))
    upper = draw(st.lists(P_VALUE, min_size=n * (n - 1) // 2, max_size=n * (n - 1) // 2))
    p = np.ones((n, n))
    iu = np.triu_indices(n, 1)
    p[iu] = upper
    p.T[iu] = p[iu]
    return p


def statsmodels_holm(p_values, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """Return statsmodels' Holm decisions and adjusted p-values.

    Its Holm branch calls ``gc.collect()`` (about 0.3 s in a test session); that changes
    nothing of the result, so it is skipped here.
    """
    with mock.patch("gc.collect"):
        reject, adjusted, _sidak, _bonferroni = multipletests(p_values, alpha=alpha, method="holm")
    return reject, adjusted


@settings(max_examples=200, deadline=None)
@given(p_matrices(), st.sampled_from([0.01, 0.05, 0.1]))
def test_holm_matrix_is_statsmodels_holm(p, alpha):
    n = p.shape[0]
    iu = np.triu_indices(n, 1)
    adjusted = holm_matrix(p)
    assert np.array_equal(adjusted.T, adjusted) and np.all(np.diag(adjusted) == 1.0)
    if n > 1:
        reject, expected = statsmodels_holm(p[iu], alpha)
        assert adjusted[iu] == pytest.approx(expected, rel=1e-12, abs=1e-15)
        assert np.array_equal(reject, differ_from_p(adjusted, alpha)[iu])


@settings(max_examples=300, deadline=None)
@given(p_matrices(), st.permutations(range(7)), st.sampled_from([0.01, 0.05, 0.1]))
def test_letters_are_sound_complete_maximal_and_needed(p, shuffle, alpha):
    n = p.shape[0]
    order = [i for i in shuffle if i < n]
    adjusted = holm_matrix(p)
    differ = differ_from_p(adjusted, alpha)
    groups = letters(differ, order)
    assert len(groups) == n and all(groups)
    members: dict[int, set[int]] = {}
    for position, run_letters in enumerate(groups):
        assert list(run_letters) == sorted(set(run_letters))
        for letter in run_letters:
            members.setdefault(letter, set()).add(order[position])
    assert sorted(members) == list(range(len(members)))  # numbered 0, 1, … without gaps
    for i, j in itertools.combinations(range(n), 2):
        share = bool(set(groups[order.index(i)]) & set(groups[order.index(j)]))
        # Sound (sharing a letter → not different) and complete (not different → sharing).
        assert share == (not differ[i, j]), (i, j)
    # Each letter is a maximal group (brute force), and none could be dropped.
    maximal = maximal_groups(differ)
    assert {frozenset(m) for m in members.values()} <= maximal
    for letter, runs in members.items():
        others = [m for other, m in members.items() if other != letter]
        needed = [
            (i, j)
            for i, j in itertools.combinations_with_replacement(sorted(runs), 2)
            if not any(i in m and j in m for m in others)
        ]
        assert needed, f"letter {letter} is redundant"
    # "a" holds the first run; letters are ordered by their members' board positions.
    if n:
        assert 0 in groups[0]
    positions = [sorted(order.index(r) for r in members[g]) for g in sorted(members)]
    assert positions == sorted(positions)


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 6), st.integers(2, 9), st.integers(0, 2**16))
def test_letters_from_scores_follow_statsmodels_holm_on_scipy_t_tests(runs, queries, seed):
    rng = np.random.default_rng(seed)
    scores = np.round(rng.uniform(0, 1, (runs, queries)) + rng.uniform(0, 0.6, (runs, 1)), 2)
    scores[rng.integers(runs)] = scores[0]  # sometimes a copy: p = 1
    order = np.argsort(-scores.mean(axis=1), kind="stable").tolist()
    pairs = list(itertools.combinations(range(runs), 2))
    raw = []
    for i, j in pairs:
        if np.array_equal(scores[i], scores[j]):
            raw.append(1.0)
            continue
        with np.errstate(all="ignore"):
            p = sps.ttest_rel(scores[i], scores[j]).pvalue
        raw.append(0.0 if np.isnan(p) else float(p))  # constant nonzero difference: p = 0
    reject, _adjusted = statsmodels_holm(raw, 0.05)
    groups = letter_groups(scores, order)
    for (i, j), differs in zip(pairs, reject, strict=True):
        share = bool(set(groups[order.index(i)]) & set(groups[order.index(j)]))
        assert share == (not differs), (i, j)
