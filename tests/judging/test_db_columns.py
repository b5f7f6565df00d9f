"""``judging.db.fetch_columns``: rows as numpy columns, packed by PostgreSQL."""

from __future__ import annotations

import numpy as np
import pytest
from django.db import connection

from judging.db import fetch_columns
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def postgres():
    """Skip, with the reason, unless on PostgreSQL."""
    if connection.vendor != "postgresql":
        pytest.skip("fetch_columns packs rows with PostgreSQL's string_agg; CI's PostgreSQL leg")


def test_other_databases_get_none_and_read_rows_their_own_way():
    if connection.vendor == "postgresql":
        pytest.skip("on PostgreSQL the columns come back (the tests below)")
    assert fetch_columns(fields=[("id", "i")], source="FROM judging_collection", params=[],
                         order_by=["id"]) is None  # fmt: skip


def _values(rows: list[tuple]) -> tuple[str, list]:
    marks = ", ".join("(%s::int8, %s::int8, %s::float8)" for _ in rows)
    return f"FROM (VALUES {marks}) AS t(a, b, c)", [v for row in rows for v in row]


def test_rows_come_back_as_sorted_columns_across_groups(postgres):
    rng = np.random.default_rng(3)
    rows = [
        (int(a), int(b), float(c))
        for a, b, c in zip(
            rng.integers(0, 40, 3000),
            rng.integers(-(2**62), 2**62, 3000),
            rng.normal(size=3000),
            strict=True,
        )
    ]
    rows[7] = (rows[7][0], rows[7][1], float("nan"))
    source, params = _values(rows)
    a, b, c = fetch_columns(
        fields=[("a", "i"), ("b", "i"), ("c", "f")],
        source=source,
        params=params,
        order_by=["a", "b"],
    )
    expected = sorted(rows, key=lambda r: (r[0], r[1]))
    assert a.dtype == np.int64 and c.dtype == np.float64
    assert a.tolist() == [r[0] for r in expected]
    assert b.tolist() == [r[1] for r in expected]
    np.testing.assert_array_equal(c, np.array([r[2] for r in expected]))
    assert np.isnan(c).sum() == 1


def test_no_rows_give_empty_columns(postgres):
    source, params = _values([(1, 2, 3.0)])
    columns = fetch_columns(
        fields=[("a", "i"), ("c", "f")], source=source + " WHERE a > 5", params=params,
        order_by=["a"],
    )  # fmt: skip
    assert [len(c) for c in columns] == [0, 0]


def test_a_null_is_refused_not_dropped(postgres):
    source, params = _values([(1, 2, 3.0), (1, 3, None)])
    with pytest.raises(ValueError, match="NULL"):
        fetch_columns(fields=[("a", "i"), ("c", "f")], source=source, params=params, order_by=["a"])


def test_parameters_in_fields_bind_before_the_source(postgres):
    coll = factories.collection("cols")
    source = "FROM judging_collection WHERE id = %s"
    (flag,) = fetch_columns(
        fields=[("(slug = %s)::int", "i")], source=source, params=["cols", coll.pk],
        order_by=["id"],
    )  # fmt: skip
    assert flag.tolist() == [1]
