"""Per-judge and per-query agreement figures on hand-computed examples (no database)."""

from __future__ import annotations

import numpy as np
import pytest

from judging.agreement.judges import group_agreement, judge_figures

NAN = np.nan


def test_judge_figures_hand_example():
    ratings = [[1, 1, 3], [2, 2, NAN], [4, NAN, NAN]]
    adjudicated = [1, NAN, 3]
    f = judge_figures(ratings, adjudicated)
    assert f.compared.tolist() == [2, 2, 1]
    # judge 0: vs 1 equal twice, vs 2 unequal once -> 2/3; judge 2: 0 of 2.
    np.testing.assert_allclose(f.agreement, [2 / 3, 2 / 3, 0.0])
    # judge 0: (1 - 2) + (2 - 2) over 2 items; judge 2: 3 - 1 = 2.
    np.testing.assert_allclose(f.bias, [-0.5, -0.5, 2.0])
    assert f.adjudicated.tolist() == [2, 1, 1]
    np.testing.assert_allclose(f.agreement_adjudicated, [0.5, 1.0, 0.0])  # 3 vs adjudicated 1
    np.testing.assert_allclose(f.bias_adjudicated, [0.5, 0.0, 2.0])


def test_judge_without_company_has_nan():
    f = judge_figures([[2, NAN], [NAN, 3]], [NAN, NAN])
    assert f.compared.tolist() == [0, 0]
    assert np.isnan(f.agreement).all() and np.isnan(f.bias).all()
    assert np.isnan(f.agreement_adjudicated).all()


def test_group_agreement_hand_example():
    ratings = [[1, 1, 3], [2, 2, NAN], [0, 4, NAN], [3, NAN, NAN]]
    agreement, items = group_agreement(ratings, [0, 0, 1, 1], 3)
    assert agreement[0] == pytest.approx(0.5)
    assert agreement[1] == 0.0
    assert np.isnan(agreement[2])
    assert items.tolist() == [2, 1, 0]


def test_shapes_checked():
    with pytest.raises(ValueError):
        judge_figures([[1, 2]], [1, 2])
    with pytest.raises(ValueError):
        group_agreement([[1, 2]], [0, 1], 2)
