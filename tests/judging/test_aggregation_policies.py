"""The policies of part 9 on hand-computed examples, and Dawid–Skene against crowd-kit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from judging.aggregation import POLICIES, adjudicated_else, dawid_skene, get_policy

HIGHER = get_policy("majority_ties_higher_human_then_llm")
LOWER = get_policy("majority_human_then_llm")
MEDIAN_TIE = get_policy("majority_ties_median_human_then_llm")
TRIMMED = get_policy("trimmed_mean_human_then_llm")
HUMAN_ONLY = get_policy("human_only_lower_median")
LLM_ONLY = get_policy("llm_only_lower_median")
DS = get_policy("dawid_skene")


def _one(policy, human=(), llm=()):
    """Return the live grade of one pair, or None when the pair gets none."""
    grades = [*human, *llm]
    is_human = [True] * len(human) + [False] * len(llm)
    pair_ids, live = policy(
        np.zeros(len(grades), dtype=np.int64),
        grades,
        is_human,
        judge_index=list(range(len(grades))),
    )
    return live[0] if pair_ids.size else None


@pytest.mark.parametrize(
    ("grades", "lower", "higher", "median"),
    [
        ([1, 3], 1, 3, 1),  # two-way tie, median 2 is equally far from both: lower
        ([2, 2, 4, 4, 3], 2, 4, 2),  # tie 2/4, median 3: equally far: lower
        ([0, 0, 2, 2, 3, 3], 0, 3, 2),  # three-way tie, median 2
        ([0, 0, 3, 3, 4], 0, 3, 3),  # tie 0/3, median 3
        ([1, 1, 4, 4, 4], 4, 4, 4),  # clear majority: no tie rule needed
        ([2], 2, 2, 2),  # one judge
        ([0, 1, 3, 4], 0, 4, 1),  # all tied, median 2: 1 and 3 equally near -> 1
    ],
)
def test_majority_tie_rules(grades, lower, higher, median):
    assert _one(LOWER, human=grades) == lower
    assert _one(HIGHER, human=grades) == higher
    assert _one(MEDIAN_TIE, human=grades) == median


@pytest.mark.parametrize(
    ("grades", "expected"),
    [
        ([3], 3.0),  # one judge
        ([1, 3], 2.0),  # two judges: plain mean
        ([0, 4, 4], 4.0),  # 0 and one 4 dropped
        ([0, 1, 2, 4], 1.5),  # (1 + 2) / 2
        ([0, 2, 4, 4], 3.0),
        ([2, 2, 2], 2.0),
    ],
)
def test_trimmed_mean(grades, expected):
    assert _one(TRIMMED, human=grades) == pytest.approx(expected)


def test_trimmed_mean_uses_llm_grades_only_without_humans():
    assert _one(TRIMMED, human=[1], llm=[4, 4, 4]) == 1.0
    assert _one(TRIMMED, llm=[0, 3, 4]) == 3.0


def test_human_only_and_llm_only():
    assert _one(HUMAN_ONLY, human=[1, 3], llm=[4]) == 1
    assert _one(HUMAN_ONLY, llm=[4, 4]) is None  # LLM-only pair: unjudged
    assert _one(LLM_ONLY, human=[0], llm=[4, 2]) == 2
    assert _one(LLM_ONLY, human=[0, 1]) is None  # human-only pair: unjudged
    pair_ids, live = HUMAN_ONLY([0, 0, 1, 2], [3, 1, 4, 2], [False, True, False, True])
    assert (pair_ids.tolist(), live.tolist()) == ([0, 2], [1, 2])


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_all_cant_judge_gives_no_live_grade(name):
    policy = POLICIES[name]
    human = name != "llm_only_lower_median"
    pair_ids, live = policy(
        [0, 0, 1],
        [np.nan, np.nan, 2.0],
        [human] * 3,
        usable=[False, False, True],
        judge_index=[1, 2, 1],
    )
    assert pair_ids.tolist() == [1]
    assert live.tolist() == [2]


@pytest.mark.parametrize("name", sorted(POLICIES))
def test_one_judge_gives_their_grade(name):
    if name == "llm_only_lower_median":
        assert _one(POLICIES[name], llm=[3]) == 3
    else:
        assert _one(POLICIES[name], human=[3]) == 3


@pytest.mark.parametrize("name", sorted(set(POLICIES) - {"human_only_lower_median"}))
def test_llm_only_pairs(name):
    """A pair graded by LLM judges alone gets a grade from them (except human-only)."""
    pair_ids, live = POLICIES[name](
        [0, 0, 0], [1, 1, 3], [False, False, False], judge_index=[7, 8, 9]
    )
    expected = {"mean_human_then_llm": 5 / 3, "trimmed_mean_human_then_llm": 1.0}
    assert pair_ids.tolist() == [0]
    assert live[0] == pytest.approx(expected.get(name, 1))


def test_dawid_skene_needs_judges():
    with pytest.raises(ValueError, match="judge_index"):
        DS([0, 1], [1, 2], [True, True])
    with pytest.raises(ValueError, match="one entry per judgment"):
        DS([0, 1], [1, 2], [True, True], judge_index=[1])


def test_adjudicated_else():
    pair_ids, live = adjudicated_else(np.array([0, 1, 2]), np.array([1, 2, 3]), [2, 5], [0, 4])
    # Pair 2 is overridden, pair 5 (no usable judgment) is added, 0 and 1 are kept.
    assert pair_ids.tolist() == [0, 1, 2, 5]
    assert live.tolist() == [1.0, 2.0, 0.0, 4.0]
    pair_ids, live = adjudicated_else(np.array([3]), np.array([2.5]), [], [])
    assert (pair_ids.tolist(), live.tolist()) == ([3], [2.5])
    with pytest.raises(ValueError, match="0–4"):
        adjudicated_else(np.array([0]), np.array([1]), [0], [5])
    with pytest.raises(ValueError, match="only one"):
        adjudicated_else(np.array([0]), np.array([1]), [0, 0], [1, 2])


# --- Dawid–Skene ----------------------------------------------------------------------------


def _simulated(seed: int, n_pairs: int = 300, accuracies=(0.9, 0.8, 0.6, 0.5, 0.4, 0.3)):
    """Return judgments (pair, judge, grade) of simulated judges of known accuracy.

    The last judge also says 3 most of the time (a biased judge).
    """
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 5, n_pairs)
    rows = []
    for pair in range(n_pairs):
        for judge in rng.choice(len(accuracies), size=rng.integers(1, 5), replace=False):
            grade = truth[pair] if rng.random() < accuracies[judge] else rng.integers(0, 5)
            if judge == len(accuracies) - 1 and rng.random() < 0.7:
                grade = 3
            rows.append((pair, int(judge), int(grade)))
    return pd.DataFrame(rows, columns=["task", "worker", "label"]), truth


@pytest.mark.filterwarnings("ignore")  # crowd-kit 1.4.2 uses pandas keywords pandas 3 deprecates
@pytest.mark.parametrize("seed", [7, 2026])
def test_dawid_skene_equals_crowd_kit(seed):
    from crowdkit import aggregation as crowdkit  # slow import: only here

    data, _truth = _simulated(seed)
    reference = crowdkit.DawidSkene(n_iter=100).fit(data)
    ours = dawid_skene(data.task.to_numpy(), data.label.to_numpy(), data.worker.to_numpy())
    assert ours.iterations == len(reference.loss_history_)
    labels = ours.labels.tolist()
    np.testing.assert_allclose(
        reference.probas_.sort_index()[labels].to_numpy(), ours.posteriors, atol=1e-9
    )
    np.testing.assert_allclose(reference.priors_.sort_index().to_numpy(), ours.priors, atol=1e-9)
    np.testing.assert_array_equal(reference.labels_.sort_index().to_numpy(), ours.grades)
    for j, judge in enumerate(ours.judge_ids.tolist()):
        errors = reference.errors_.loc[judge]
        for k, label in enumerate(labels):
            if label in errors.index:
                np.testing.assert_allclose(
                    errors.loc[label, labels].to_numpy(), ours.errors[j, k], atol=1e-9
                )
            else:  # a grade this judge never gave has probability 0
                assert (ours.errors[j, k] == 0).all()


def test_dawid_skene_ranks_judges_by_accuracy():
    data, truth = _simulated(11, n_pairs=600)
    result = dawid_skene(data.task.to_numpy(), data.label.to_numpy(), data.worker.to_numpy())
    # The estimated accuracies order the judges as their true accuracies do.
    ranking = np.argsort(-result.accuracy).tolist()
    assert set(ranking[:2]) == {0, 1}
    assert ranking[-1] == 5  # the judge who mostly says 3
    assert result.accuracy[0] > 0.85
    # It recovers the truth better than the majority of the raw grades.
    majority = get_policy("majority_human_then_llm")
    _, majority_grades = majority(data.task, data.label, np.ones(len(data), dtype=bool))
    assert (result.grades == truth).mean() > (majority_grades == truth).mean()


def test_dawid_skene_hand_example():
    """Two careful judges agree on every pair; a third always says 3: it gets no weight."""
    pairs = [0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]
    judges = [1, 2, 3] * 4
    grades = [0, 0, 3, 4, 4, 3, 1, 1, 3, 3, 3, 3]
    result = dawid_skene(pairs, grades, judges)
    assert result.grades.tolist() == [0, 4, 1, 3]
    assert result.accuracy[:2] == pytest.approx([1.0, 1.0], abs=1e-6)
    assert result.accuracy[2] == pytest.approx(0.25, abs=1e-6)  # right only when truth is 3
    empty = dawid_skene([], [], [])
    assert empty.grades.size == 0
