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


def _logged(sql: str, started: float) -> None:
    """Record a statement run past Django's cursor where Django records its own.

    Query-count assertions and the debug log then see the same statements on every
    database.
    """
    if connection.queries_logged:
        connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})


def fetch(sql: str, params: Sequence[Any]) -> list[tuple]:
    """Run a read; binary results on PostgreSQL (rankings arrive as bytes, not hex text)."""
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        started = time.monotonic()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            rows = cursor.fetchall()
        _logged(sql, started)
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
        _logged(sql, started)
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, params)


# One row of ``COPY ... (FORMAT binary)`` of (int8, int8, float8, float8), all NOT NULL:
# a field count, then each field's length and big-endian value.
_LIVE_ROW = np.dtype(
    [
        ("n", ">i2"),
        ("lq", ">i4"),
        ("q", ">i8"),
        ("ld", ">i4"),
        ("d", ">i8"),
        ("lg", ">i4"),
        ("g", ">f8"),
        ("la", ">i4"),
        ("a", ">f8"),
    ]
)
_COPY_HEADER = 19  # signature (11), flags (4), header extension length (4)


def live_grade_columns(
    table: str, collection_id: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Return a collection's whole live list as columns (query, document, grade, abstain).

    PostgreSQL only (``None`` elsewhere): ``COPY ... TO STDOUT (FORMAT binary)`` of
    fixed-width fields parsed by one structured ``np.frombuffer`` -- 200,000 live grades
    arrive without a Python tuple per row. Sorted by query, then document; NaN where no
    abstention probability is recorded.
    """
    if connection.vendor != "postgresql":
        return None
    sql = (
        f"COPY (SELECT query_id::int8, document_id::int8, grade::float8, "
        f"COALESCE(abstain_probability, 'NaN')::float8 FROM {table} "
        f"WHERE collection_id = {int(collection_id)} ORDER BY query_id, document_id) "
        f"TO STDOUT (FORMAT binary)"
    )
    connection.ensure_connection()
    with psycopg.Cursor(connection.connection) as cursor, cursor.copy(sql) as copy:
        data = b"".join(bytes(block) for block in copy)
    body = data[_COPY_HEADER:-2]  # the trailer is a field count of -1
    rows = np.frombuffer(body, dtype=_LIVE_ROW)
    return (
        rows["q"].astype(np.int64),
        rows["d"].astype(np.int64),
        rows["g"].astype(np.float64),
        rows["a"].astype(np.float64),
    )
