"""Rankings and live scores use lz4 on PostgreSQL servers that have it (0006, 0013)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from metrics.models import QueryScores, RunQuery, Scoreboard

pytestmark = pytest.mark.django_db


def _server_has_lz4() -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("CREATE TEMP TABLE lz4_probe (b bytea COMPRESSION lz4)")
            transaction.set_rollback(True)
    except DatabaseError:
        return False
    return True


@pytest.mark.parametrize(
    ("model", "column"),
    [
        (RunQuery, "ranking"),
        (QueryScores, "run_ids"),
        (QueryScores, "values"),
        (Scoreboard, "run_ids"),
        (Scoreboard, "sums"),
        (Scoreboard, "counts"),
    ],
)
def test_binary_columns_are_compressed_with_lz4_where_the_server_supports_it(model, column):
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only: SQLite has no column compression")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attcompression FROM pg_attribute WHERE attrelid = %s::regclass "
            "AND attname = %s",
            [model._meta.db_table, column],
        )
        (method,) = cursor.fetchone()
    assert method == ("l" if _server_has_lz4() else "")
