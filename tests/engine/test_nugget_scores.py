"""Nugget scores and citation support (metrics/engine/nuggets.py) on hand-worked cases.

The cases follow the TREC RAG track's definitions: strict scores count ``support`` only,
the others count ``partial_support`` as one half; vital scores use vital nuggets only.
"""

from __future__ import annotations

import numpy as np
import pytest

from metrics.engine import nuggets


def test_a_hand_worked_answer_with_every_label():
    # Query with 4 vital and 2 okay nuggets.  The answer supports vital 1 and okay 1,
    # partially supports vital 2 and okay 2, and does not support vitals 3 and 4.
    importance = ["vital", "vital", "vital", "vital", "okay", "okay"]
    assignment = [
        "support",
        "partial_support",
        "not_support",
        "not_support",
        "support",
        "partial_support",
    ]
    s = nuggets.nugget_scores(importance, assignment)
    assert s.strict_vital == pytest.approx(1 / 4)  # one vital fully supported
    assert s.strict_all == pytest.approx(2 / 6)  # vital 1 and okay 1
    assert s.vital == pytest.approx((1 + 0.5) / 4)
    assert s.all == pytest.approx((2 + 2 * 0.5) / 6)
    assert (s.vital_nuggets, s.nuggets) == (4, 6)
    assert s.vital_defined and s.all_defined


def test_okay_nuggets_never_move_the_vital_scores():
    base = nuggets.nugget_scores(["vital", "okay"], ["support", "not_support"])
    more = nuggets.nugget_scores(["vital", "okay"], ["support", "support"])
    assert (base.strict_vital, base.vital) == (more.strict_vital, more.vital) == (1.0, 1.0)
    assert (base.strict_all, more.strict_all) == (0.5, 1.0)


def test_an_unassigned_nugget_counts_as_not_supported():
    with_none = nuggets.nugget_scores(["vital", "vital"], ["support", None])
    explicit = nuggets.nugget_scores(["vital", "vital"], ["support", "not_support"])
    assert with_none == explicit
    assert with_none.strict_vital == 0.5


def test_no_vital_nuggets_gives_zero_vital_scores_and_says_so():
    s = nuggets.nugget_scores(["okay", "okay"], ["support", "partial_support"])
    assert (s.strict_vital, s.vital) == (0.0, 0.0)
    assert not s.vital_defined and s.all_defined
    assert (s.strict_all, s.all) == (0.5, 0.75)


def test_no_nuggets_gives_zeros_and_says_so():
    s = nuggets.nugget_scores([], [])
    assert s.as_dict() == {"strict_vital": 0.0, "strict_all": 0.0, "vital": 0.0, "all": 0.0}
    assert not s.vital_defined and not s.all_defined


@pytest.mark.parametrize(
    ("importance", "assignment", "message"),
    [
        (["vital"], ["support", "support"], "1 importances but 2 assignments"),
        (["critical"], ["support"], "nugget 1: importance 'critical'"),
        (["vital", "okay"], ["support", "yes"], "nugget 2: assignment 'yes'"),
    ],
)
def test_bad_labels_are_named_by_position(importance, assignment, message):
    with pytest.raises(ValueError, match=message):
        nuggets.nugget_scores(importance, assignment)


def test_scores_equal_a_direct_count_on_random_answers():
    rng = np.random.default_rng(7)
    for _ in range(200):
        n = int(rng.integers(0, 12))
        importance = list(rng.choice(nuggets.IMPORTANCES, size=n))
        assignment = list(rng.choice(nuggets.ASSIGNMENTS, size=n))
        s = nuggets.nugget_scores(importance, assignment)
        vital = [a for i, a in zip(importance, assignment, strict=True) if i == "vital"]
        half = {"support": 1.0, "partial_support": 0.5, "not_support": 0.0}
        assert s.strict_vital == (vital.count("support") / len(vital) if vital else 0.0)
        assert s.strict_all == (assignment.count("support") / n if n else 0.0)
        assert s.vital == pytest.approx(sum(half[a] for a in vital) / len(vital) if vital else 0.0)
        assert s.all == pytest.approx(sum(half[a] for a in assignment) / n if n else 0.0)
        assert s.strict_vital <= s.vital and s.strict_all <= s.all


def test_run_means_average_every_answer_including_queries_without_nuggets():
    a = nuggets.nugget_scores(["vital", "okay"], ["support", "not_support"])
    b = nuggets.nugget_scores([], [])
    means = nuggets.run_means([a, b])
    assert means == {"strict_vital": 0.5, "strict_all": 0.25, "vital": 0.5, "all": 0.25}
    assert nuggets.run_means([]) == dict.fromkeys(means, 0.0)


def test_citation_support_hand_worked():
    # Three sentences: [0, 1] cited, [1] cited, and one with no citation.
    # Labels: (0,0) full, (0,1) partial, (1,1) none.
    sentences = [[0, 1], [1], []]
    labels = {(0, 0): "full", (0, 1): "partial", (1, 1): "none"}
    c = nuggets.citation_support(sentences, labels)
    assert c.precision == pytest.approx((1 + 0.5 + 0) / 3)  # over the 3 citations
    assert c.recall == pytest.approx((1 + 0 + 0) / 3)  # best per sentence, over 3
    assert (c.citations, c.sentences) == (3, 3)


def test_a_partial_best_citation_gives_half_a_sentence_of_recall():
    c = nuggets.citation_support([[2, 3]], {(0, 2): "none", (0, 3): "partial"})
    assert (c.precision, c.recall) == (0.25, 0.5)


def test_unlabelled_and_repeated_citations():
    c = nuggets.citation_support([[0, 0, 1]], {(0, 0): "full"})
    # the repeated 0 counts once; 1 has no label, so it counts as none
    assert (c.citations, c.precision, c.recall) == (2, 0.5, 1.0)


def test_citation_edge_cases_say_what_is_undefined():
    none_cited = nuggets.citation_support([[], []], {})
    assert (none_cited.precision, none_cited.recall) == (0.0, 0.0)
    assert not none_cited.precision_defined and none_cited.recall_defined
    empty = nuggets.citation_support([], {})
    assert not empty.precision_defined and not empty.recall_defined
    with pytest.raises(ValueError, match="sentence 1, citation 0: support 'yes'"):
        nuggets.citation_support([[0]], {(0, 0): "yes"})


def test_bootstrap_interval_contains_the_mean_and_is_reproducible():
    values = [0.1, 0.4, 0.5, 0.9, 0.3, 0.6]
    low, high = nuggets.bootstrap_interval(values, seed=3)
    assert low < float(np.mean(values)) < high
    assert (low, high) == nuggets.bootstrap_interval(values, seed=3)
    assert nuggets.bootstrap_interval([0.4]) == (0.4, 0.4)
    assert nuggets.bootstrap_interval([]) == (0.0, 0.0)
