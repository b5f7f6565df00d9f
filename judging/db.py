"""Database helpers shared by the services of both apps."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence

import numpy as np
from django.db import connection, models

#: From this many rows on, PostgreSQL updates through a COPY-loaded temporary table.
UPDATE_BATCH = 1000


def update_rows(objs: Sequence[models.Model], fields: Sequence[str]) -> None:
    """Write ``fields`` of already-saved ``objs``, linear in their number.

    Django's ``bulk_update`` builds one ``CASE WHEN`` expression per column over the whole
    batch, which grows quadratically (a 5,000-row import took half a minute on SQLite).
    Values go through each field's own database preparation; see :func:`update_values`.
    """
    if not objs:
        return
    model = type(objs[0])
    columns = [model._meta.get_field(name) for name in fields]
    update_values(
        model,
        fields,
        [
            [f.get_db_prep_save(getattr(obj, f.attname), connection) for f in columns] + [obj.pk]
            for obj in objs
        ],
    )


def update_values(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence]
) -> None:
    """Set ``fields`` from ``rows`` of database-ready values, each ending with the row's pk.

    SQLite runs one prepared ``UPDATE`` per row (``executemany``, in process), as does
    PostgreSQL for fewer than :data:`UPDATE_BATCH` rows; more are copied into a temporary
    table and joined in by one ``UPDATE ... FROM`` (a hash join, not a lookup per row).
    Values are what the columns store (JSON as text, datetimes adapted by the backend).
    """
    if not rows:
        return
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor != "postgresql" or len(rows) < UPDATE_BATCH:
            assignments = ", ".join(f"{quote(f.column)} = %s" for f in columns)
            sql = f"UPDATE {table} SET {assignments} WHERE {quote(meta.pk.column)} = %s"
            cursor.executemany(sql, rows)
            return
        names = [quote(f.column) for f in columns]
        pk = quote(meta.pk.column)
        stage = quote(f"graded_update_{uuid.uuid4().hex[:16]}")
        cursor.execute(
            f"CREATE TEMPORARY TABLE {stage} ON COMMIT DROP AS"
            f" SELECT {pk}, {', '.join(names)} FROM {table} WITH NO DATA"
        )
        with cursor.cursor.copy(f"COPY {stage} ({', '.join(names)}, {pk}) FROM STDIN") as copy:
            for values in rows:
                copy.write_row(values)
        assignments = ", ".join(f"{name} = s.{name}" for name in names)
        cursor.execute(
            f"UPDATE {table} AS t SET {assignments} FROM {stage} AS s WHERE t.{pk} = s.{pk}"
        )
        cursor.execute(f"DROP TABLE {stage}")


def insert_rows(model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence]) -> None:
    """Insert ``rows`` (plain tuples, one value per field of ``fields``) into ``model``'s table.

    For bulk writers that build many rows: no model instances, no per-row compilation.
    PostgreSQL loads them with ``COPY``, SQLite with one prepared ``executemany``. Values
    must be what the column stores (JSON as text, foreign keys as ids, every
    ``auto_now`` field given); database constraints and triggers still apply.
    """
    if not rows:
        return
    meta = model._meta
    quote = connection.ops.quote_name
    columns = ", ".join(quote(meta.get_field(name).column) for name in fields)
    table = quote(meta.db_table)
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        else:
            marks = ", ".join(["%s"] * len(fields))
            cursor.executemany(f"INSERT INTO {table} ({columns}) VALUES ({marks})", rows)


def log_statement(sql: str, started: float) -> None:
    """Record a statement run past Django's cursor where Django records its own.

    ``started`` is the ``time.monotonic()`` of its start. Query-count assertions and the
    debug log then see the same statements on every database.
    """
    if connection.queries_logged:
        connection.queries_log.append({"sql": sql, "time": f"{time.monotonic() - started:.3f}"})


#: ``COPY ... (FORMAT binary)`` starts with a signature (11 bytes), flags (4) and a header
#: extension length (4), and ends with a field count of -1 (2).
_COPY_HEADER, _COPY_TRAILER = 19, 2


def copy_columns(select: str, params: Sequence, kinds: str) -> list[np.ndarray] | None:
    """Return the rows of ``select`` as one numpy column per field (PostgreSQL; else None).

    ``kinds`` has one letter per selected field: ``i`` for ``int8``, ``f`` for ``float8``;
    every field must be cast to that type and be NOT NULL (``COALESCE`` to ``'NaN'`` for
    floats). ``COPY (select) TO STDOUT (FORMAT binary)`` of fixed-width fields is parsed by
    one structured ``np.frombuffer``: hundreds of thousands of rows arrive without a
    Python object per row or per value.
    """
    if connection.vendor != "postgresql":
        return None
    fields = [("n", ">i2")]
    for k, kind in enumerate(kinds):
        fields += [(f"l{k}", ">i4"), (f"v{k}", {"i": ">i8", "f": ">f8"}[kind])]
    import psycopg

    connection.ensure_connection()
    sql = f"COPY ({select}) TO STDOUT (FORMAT binary)"
    started = time.monotonic()
    # COPY takes no server-side parameters: bind on the client, whatever cursor class the
    # connection is configured with.
    with psycopg.ClientCursor(connection.connection) as cursor, cursor.copy(sql, params) as copy:
        data = b"".join(bytes(block) for block in copy)
    log_statement(sql, started)
    rows = np.frombuffer(data[_COPY_HEADER:-_COPY_TRAILER], dtype=np.dtype(fields))
    return [
        rows[f"v{k}"].astype(np.int64 if kind == "i" else np.float64)
        for k, kind in enumerate(kinds)
    ]
