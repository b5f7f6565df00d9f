"""Aggregation policies of the live judgment list, on worked examples and random data."""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging import aggregation
from judging.aggregation import DEFAULT_POLICY, POLICIES, get_policy

LOWER_MEDIAN = get_policy("lower_median_human_then_llm")
MEAN = get_policy("mean_human_then_llm")
MAJORITY = get_policy("majority_human_then_llm")


def _one_pair(policy, human=(), llm=()):
    grades = [*human, *llm]
    is_human = [True] * len(human) + [False] * len(llm)
    pair_ids, live = policy(np.zeros(len(grades), dtype=np.int64), grades, is_human)
    assert pair_ids.tolist() == [0]
    return live[0]


# --- worked examples -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("human", "expected"),
    [
        ([1, 3], 1),  # lower median of two: the more cautious grade
        ([3, 1], 1),  # order of the judgments does not matter
        ([0, 2, 4], 2),
        ([1, 2, 3, 4], 2),
        ([4], 4),
        ([2, 2, 0, 4, 4], 2),
        ([0, 0, 4, 4], 0),
    ],
)
def test_lower_median_of_human_grades(human, expected):
    assert _one_pair(LOWER_MEDIAN, human=human) == expected


def test_lower_median_of_llm_grades_when_no_human():
    assert _one_pair(LOWER_MEDIAN, llm=[3, 4]) == 3
    assert _one_pair(LOWER_MEDIAN, llm=[4, 0, 2]) == 2


def test_human_grade_overrides_llm_grades():
    assert _one_pair(LOWER_MEDIAN, human=[0], llm=[4, 4, 4]) == 0
    assert _one_pair(LOWER_MEDIAN, human=[3, 1], llm=[0]) == 1
    assert _one_pair(MEAN, human=[4], llm=[0, 0]) == 4.0
    assert _one_pair(MAJORITY, human=[2], llm=[3, 3]) == 2


def test_mean_policy_is_fractional():
    assert _one_pair(MEAN, human=[1, 2, 4]) == pytest.approx(7 / 3)
    assert _one_pair(MEAN, llm=[3, 4]) == pytest.approx(3.5)
    assert MEAN.fractional and not LOWER_MEDIAN.fractional and not MAJORITY.fractional


@pytest.mark.parametrize(
    ("human", "expected"),
    [([1, 3], 1), ([2, 2, 4, 4, 3], 2), ([4, 4, 1], 4), ([0, 3, 3, 1, 1], 1), ([2], 2)],
)
def test_majority_policy_ties_go_to_the_lower_grade(human, expected):
    assert _one_pair(MAJORITY, human=human) == expected


def test_many_pairs_in_one_call():
    # Pairs 10, 3 and 7 (unsorted, non-contiguous); rows interleaved.
    pair_index = [10, 3, 7, 10, 3, 7, 7, 3]
    grades = [1, 4, 2, 3, 0, 4, 0, 4]
    is_human = [True, False, True, True, False, False, True, True]
    pair_ids, live = LOWER_MEDIAN(pair_index, grades, is_human)
    # 3: human [4] (LLM 4, 0 ignored) -> 4; 7: human [2, 0] -> 0; 10: human [1, 3] -> 1.
    assert pair_ids.tolist() == [3, 7, 10]
    assert live.tolist() == [4, 0, 1]
    assert pair_ids.dtype == np.int64 and live.dtype == np.int64
    _, means = MEAN(pair_index, grades, is_human)
    assert means.dtype == np.float64
    assert means.tolist() == pytest.approx([4.0, 1.0, 2.0])


def test_float_grades_as_read_from_the_database():
    pair_ids, live = LOWER_MEDIAN(
        np.array([0, 0, 1]), np.array([1.0, 3.0, 2.0]), np.array([True, True, False])
    )
    assert (pair_ids.tolist(), live.tolist()) == ([0, 1], [1, 2])


def test_unusable_rows_are_excluded():
    # cannot_judge / later rows carry no grade: callers may pass them with usable=False.
    pair_index = [0, 0, 0, 1, 1]
    grades = [0, 4, 4, 2, 3]
    is_human = [True, False, False, True, True]
    usable = [False, True, True, False, False]
    pair_ids, live = LOWER_MEDIAN(pair_index, grades, is_human, usable=usable)
    # Pair 0's only human row is unusable, so its LLM grades decide; pair 1 has nothing.
    assert (pair_ids.tolist(), live.tolist()) == ([0], [4])
    # The grade of an unusable row is ignored, even if it is out of range or NaN.
    pair_ids, live = LOWER_MEDIAN([0, 0], [np.nan, 2.0], [True, True], usable=[False, True])
    assert (pair_ids.tolist(), live.tolist()) == ([0], [2])


@pytest.mark.parametrize("policy", POLICIES.values(), ids=POLICIES.keys())
def test_empty_input(policy):
    pair_ids, live = policy([], [], [], judge_index=[])
    assert pair_ids.shape == live.shape == (0,)
    assert live.dtype == (np.float64 if policy.fractional else np.int64)
    pair_ids, live = policy([1], [2], [True], usable=[False], judge_index=[7])
    assert pair_ids.size == live.size == 0


def test_inputs_are_not_modified():
    pair_index = np.array([2, 1, 2, 1])
    grades = np.array([3, 1, 0, 4])
    is_human = np.array([True, True, False, True])
    copies = pair_index.copy(), grades.copy(), is_human.copy()
    for policy in POLICIES.values():
        policy(pair_index, grades, is_human, judge_index=[1, 2, 3, 3])
    for original, copy in zip((pair_index, grades, is_human), copies, strict=True):
        np.testing.assert_array_equal(original, copy)


# --- validation ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"grades": [5, 1]}, "0–4"),
        ({"grades": [-1, 1]}, "0–4"),
        ({"grades": [2.5, 1.0]}, "integers"),
        ({"grades": [np.nan, 1.0]}, "NaN"),
        ({"grades": [1, 2, 3]}, "one length"),
        ({"grades": [[1, 2]]}, "1-D"),
        ({"pair_index": [0.5, 1.0]}, "integers"),
        ({"pair_index": ["a", "b"]}, "integers"),
        ({"is_human": [2, 0]}, "boolean"),
        ({"is_human": ["yes", "no"]}, "boolean"),
    ],
)
def test_invalid_input_rejected(kwargs, match):
    args = {"pair_index": [0, 1], "grades": [1, 2], "is_human": [True, False], **kwargs}
    with pytest.raises(ValueError, match=match):
        LOWER_MEDIAN(args["pair_index"], args["grades"], args["is_human"])


def test_usable_must_match_and_be_boolean():
    with pytest.raises(ValueError, match="one length"):
        LOWER_MEDIAN([0, 1], [1, 2], [True, True], usable=[True])
    with pytest.raises(ValueError, match="boolean"):
        LOWER_MEDIAN([0, 1], [1, 2], [True, True], usable=[0.5, 1.0])


def test_integer_flags_accepted():
    _, live = LOWER_MEDIAN([0, 0], [4, 1], [0, 1])
    assert live.tolist() == [1]


# --- registry --------------------------------------------------------------------------


def test_registry():
    assert DEFAULT_POLICY == "lower_median_human_then_llm"
    assert DEFAULT_POLICY in POLICIES
    for name, policy in POLICIES.items():
        assert policy.name == name
        assert policy.description
        assert get_policy(name) is policy


def test_unknown_policy_lists_known_names():
    with pytest.raises(ValueError, match="Unknown aggregation policy 'median'") as exc:
        get_policy("median")
    message = str(exc.value)
    for name in POLICIES:
        assert name in message
    assert isinstance(exc.value, KeyError)
    assert isinstance(exc.value, aggregation.UnknownPolicyError)
    with pytest.raises(KeyError):
        get_policy(None)  # type: ignore[arg-type]


# --- equal to a simple per-pair reference implementation --------------------------------


def _reference(rows, reduce, pick="human_then_llm"):
    by_pair = defaultdict(lambda: ([], []))
    for pair, grade, human in rows:
        by_pair[pair][0 if human else 1].append(grade)
    out = {}
    for pair, (humans, llms) in by_pair.items():
        chosen = {"human_then_llm": humans or llms, "human": humans, "llm": llms}[pick]
        if chosen:
            out[pair] = reduce(chosen)
    return out


def _majority_reference(grades):
    counts = Counter(grades)
    top = max(counts.values())
    return min(g for g, c in counts.items() if c == top)


def _majority_higher_reference(grades):
    counts = Counter(grades)
    top = max(counts.values())
    return max(g for g, c in counts.items() if c == top)


def _majority_median_reference(grades):
    counts = Counter(grades)
    top = max(counts.values())
    median = statistics.median(grades)
    return min((abs(g - median), g) for g, c in counts.items() if c == top)[1]


def _trimmed_mean_reference(grades):
    ordered = sorted(grades)
    return statistics.fmean(ordered[1:-1] if len(ordered) >= 3 else ordered)


REFERENCES = {
    "lower_median_human_then_llm": statistics.median_low,
    "mean_human_then_llm": statistics.fmean,
    "majority_human_then_llm": _majority_reference,
    "majority_ties_higher_human_then_llm": _majority_higher_reference,
    "majority_ties_median_human_then_llm": _majority_median_reference,
    "trimmed_mean_human_then_llm": _trimmed_mean_reference,
    "human_only_lower_median": (statistics.median_low, "human"),
    "llm_only_lower_median": (statistics.median_low, "llm"),
}
#: Checked against crowd-kit instead (tests/judging/test_aggregation_policies.py).
MODEL_POLICIES = {"dawid_skene"}


def _check_against_reference(rows):
    pair_index = np.array([r[0] for r in rows], dtype=np.int64)
    grades = np.array([r[1] for r in rows], dtype=np.int64)
    is_human = np.array([r[2] for r in rows], dtype=bool)
    for name, reference in REFERENCES.items():
        reduce, pick = reference if isinstance(reference, tuple) else (reference, "human_then_llm")
        pair_ids, live = get_policy(name)(pair_index, grades, is_human)
        expected = _reference(rows, reduce, pick)
        assert pair_ids.tolist() == sorted(expected)
        assert live.tolist() == pytest.approx([expected[p] for p in sorted(expected)])


def test_registry_covered_by_reference_tests():
    assert set(REFERENCES) | MODEL_POLICIES == set(POLICIES)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(min_value=-5, max_value=30),
            st.integers(min_value=0, max_value=4),
            st.booleans(),
        ),
        max_size=60,
    )
)
def test_vectorised_equals_reference_hypothesis(rows):
    _check_against_reference(rows)


@pytest.mark.parametrize("seed", range(5))
def test_vectorised_equals_reference_seeded(seed):
    rng = np.random.default_rng(seed)
    n = 5_000
    pairs = rng.integers(0, 800, n)
    grades = rng.integers(0, 5, n)
    humans = rng.random(n) < 0.3
    rows = list(zip(pairs.tolist(), grades.tolist(), humans.tolist(), strict=True))
    _check_against_reference(rows)
