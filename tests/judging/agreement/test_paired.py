"""Exact and within-one agreement, mean signed difference and the confusion matrix."""

from __future__ import annotations

import math

import numpy as np
import pytest

from judging.agreement.coefficients import AgreementUndefinedWarning
from judging.agreement.paired import (
    confusion_matrix,
    exact_agreement,
    mean_signed_difference,
    shared,
    within_one_agreement,
)

NAN = np.nan
# Seven items; the judge skipped none but the last, the reference the sixth.
JUDGE = [0, 1, 2, 3, 4, 2, NAN, 1]
REFERENCE = [0, 2, 2, 1, 4, NAN, 3, 1]
# Shared: items 0-4 and 7 -> judge - reference = 0, -1, 0, 2, 0, 0.


def test_shared_keeps_the_items_both_graded():
    x, y = shared(JUDGE, REFERENCE)
    assert x.tolist() == [0, 1, 2, 3, 4, 1]
    assert y.tolist() == [0, 2, 2, 1, 4, 1]


def test_figures_by_hand():
    assert exact_agreement(JUDGE, REFERENCE) == pytest.approx(4 / 6)
    assert within_one_agreement(JUDGE, REFERENCE) == pytest.approx(5 / 6)
    # (0 - 1 + 0 + 2 + 0 + 0) / 6: the judge grades a little higher than the reference.
    assert mean_signed_difference(JUDGE, REFERENCE) == pytest.approx(1 / 6)
    assert mean_signed_difference(REFERENCE, JUDGE) == pytest.approx(-1 / 6)


def test_fractional_reference():
    # A mean consensus of 2.5 is within one of 2 and 3 but equal to neither.
    assert exact_agreement([2, 3, 4], [2.5, 2.5, 2.5]) == 0.0
    assert within_one_agreement([2, 3, 4], [2.5, 2.5, 2.5]) == pytest.approx(2 / 3)
    assert mean_signed_difference([2, 3, 4], [2.5, 2.5, 2.5]) == pytest.approx(0.5)


def test_confusion_matrix_rows_are_the_reference_columns_the_judge():
    matrix = confusion_matrix(JUDGE, REFERENCE)
    expected = np.zeros((5, 5), dtype=int)
    for judge, ref in [(0, 0), (1, 2), (2, 2), (3, 1), (4, 4), (1, 1)]:
        expected[ref, judge] += 1
    assert matrix.tolist() == expected.tolist()
    assert matrix.sum() == 6
    assert np.trace(matrix) / matrix.sum() == pytest.approx(exact_agreement(JUDGE, REFERENCE))
    # Above the diagonal: pairs the judge graded higher than the reference (3 vs 1).
    assert np.triu(matrix, 1).sum() == 1 and matrix[1, 3] == 1


def test_confusion_matrix_of_nothing_shared_is_all_zeros():
    assert confusion_matrix([1, NAN], [NAN, 2]).tolist() == np.zeros((5, 5)).tolist()


def test_confusion_matrix_refuses_grades_off_the_scale():
    with pytest.raises(ValueError, match="reference holds grades outside"):
        confusion_matrix([1, 2], [1, 2.5])
    with pytest.raises(ValueError, match="judge holds grades outside"):
        confusion_matrix([5, 2], [1, 2])


@pytest.mark.parametrize(
    "statistic", [exact_agreement, within_one_agreement, mean_signed_difference]
)
def test_no_shared_pair_is_undefined(statistic):
    with pytest.warns(AgreementUndefinedWarning, match="no pair was graded by both"):
        assert math.isnan(statistic([1, NAN], [NAN, 2]))


@pytest.mark.parametrize(
    ("a", "b"), [([1, 2], [1]), ([[1, 2]], [[1, 2]]), ([1, np.inf], [1, 2]), (["x"], [1])]
)
def test_bad_input_raises(a, b):
    with pytest.raises(ValueError):
        exact_agreement(a, b)


def test_no_django_import():
    import pathlib

    import judging.agreement.paired as module

    text = pathlib.Path(module.__file__).read_text()
    assert "django" not in text.lower().replace("no django", "")
