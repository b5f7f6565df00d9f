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


def test_group_coefficients_per_query():
    from judging.agreement.coefficients import cohen_kappa, gwet_ac, krippendorff_alpha
    from judging.agreement.judges import group_coefficients

    nan = np.nan
    ratings = np.array(
        [
            # query 0: judges A and B on four pairs, judge C on two of them
            [0, 1, nan],
            [2, 2, 2],
            [4, 3, 4],
            [1, 0, nan],
            # query 1: one pair graded twice, one graded once
            [3, 3, nan],
            [nan, 2, nan],
            # query 2: every grade 0 (κ and α undefined, AC2 defined)
            [0, 0, nan],
            [0, 0, nan],
        ]
    )
    groups = np.array([0, 0, 0, 0, 1, 1, 2, 2])
    got = group_coefficients(ratings, groups, 4)
    q0 = ratings[:4]
    ab = cohen_kappa(q0[:, 0], q0[:, 1], weights="quadratic")
    ac = cohen_kappa(q0[:, 0], q0[:, 2], weights="quadratic")  # C shares 2 pairs with A
    assert ac == pytest.approx(1.0)  # A and C agree on both
    # B and C share (2, 2) and (3, 4): quadratic κ = 1 - 0.03125 / 0.09375 = 2/3 by hand
    assert got.kappa[0] == pytest.approx((ab + ac + 2 / 3) / 3)
    assert got.alpha[0] == pytest.approx(krippendorff_alpha(q0.T, level="ordinal"))
    assert got.ac2[0] == pytest.approx(gwet_ac(q0, weights="quadratic"))
    # query 1: one pair graded twice, the same grade: κ (one shared pair) and α undefined
    assert np.isnan(got.kappa[1]) and np.isnan(got.alpha[1])
    assert got.ac2[1] == pytest.approx(gwet_ac(ratings[4:5], weights="quadratic"))
    assert np.isnan(got.kappa[2]) and np.isnan(got.alpha[2]) and got.ac2[2] > 0.8
    assert np.isnan(got.ac2[3])  # no items at all
    with pytest.raises(ValueError):
        group_coefficients(ratings, groups[:3], 4)


def test_group_coefficients_without_any_item_graded_twice():
    from judging.agreement.judges import group_coefficients

    got = group_coefficients(np.array([[1.0, np.nan], [np.nan, 2.0]]), np.array([0, 1]), 2)
    assert np.isnan(got.kappa).all() and np.isnan(got.alpha).all() and np.isnan(got.ac2).all()
    empty = group_coefficients(np.zeros((0, 2)), np.zeros(0, dtype=np.int64), 1)
    assert np.isnan(empty.ac2).all()
