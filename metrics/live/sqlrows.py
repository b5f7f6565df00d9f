"""Raw reads shared by the scoring services (no model instances).

Rescoring reads a query's stored rankings and the live list; building model instances
and compiling querysets cost more than the database's own work. These helpers read
tuples, and on PostgreSQL bytes and fixed-width binary rows.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import psycopg
from django.db import connection

from judging.db import fetch_columns, log_statement


def fetch(sql: str, params: Sequence[Any]) -> list[tuple]:
    """Run a read; binary results on PostgreSQL (rankings arrive as bytes, not hex text)."""
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        started = time.monotonic()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            rows = cursor.fetchall()
        log_statement(sql, started)
        return rows
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def execute(sql: str, params: Sequence[Any]) -> None:
    """Run a write; on PostgreSQL with server-side binding, so bytes travel as binary.

    (Django's client-side binding writes a ``bytea`` parameter as hex text inside the
    statement: twice the bytes, and a parse of them.)
    """
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        started = time.monotonic()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params)
        log_statement(sql, started)
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


def live_grade_columns(
    table: str, collection_id: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Return a collection's whole live list as columns (query, document, grade, abstain).

    PostgreSQL only (``None`` elsewhere; :func:`judging.db.fetch_columns`): 200,000 live
    grades arrive without a Python tuple per row. Sorted by query, then document; NaN
    where no abstention probability is recorded.
    """
    columns = fetch_columns(
        fields=[
            ("query_id", "i"),
            ("document_id", "i"),
            ("grade", "f"),
            ("COALESCE(abstain_probability, 'NaN')", "f"),
        ],
        source=f"FROM {table} WHERE collection_id = %s",
        params=[collection_id],
        order_by=["query_id", "document_id"],
    )
    return None if columns is None else tuple(columns)  # type: ignore[return-value]
