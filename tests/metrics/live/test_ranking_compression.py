"""Stored rankings use lz4 on PostgreSQL servers that have it (migration 0006)."""

from __future__ import annotations

import pytest
from django.db import DatabaseError, connection, transaction

from metrics.models import RunQuery

pytestmark = pytest.mark.django_db


def _server_has_lz4() -> bool:
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("CREATE TEMP TABLE lz4_probe (b bytea COMPRESSION lz4)")
            transaction.set_rollback(True)
    except DatabaseError:
        return False
    return True


def test_rankings_are_compressed_with_lz4_where_the_server_supports_it():
    if connection.vendor != "postgresql":
        pytest.skip("PostgreSQL only: SQLite has no column compression")
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT attcompression FROM pg_attribute WHERE attrelid = %s::regclass "
            "AND attname = 'ranking'",
            [RunQuery._meta.db_table],
        )
        (method,) = cursor.fetchone()
    assert method == ("l" if _server_has_lz4() else "")
