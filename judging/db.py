"""Database helpers shared by the services of both apps."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db import connection, models
from django.db.models import BooleanField
from django.db.models.expressions import RawSQL

#: From this many rows on, PostgreSQL updates through a COPY-loaded temporary table.
UPDATE_BATCH = 1000


@dataclass(frozen=True)
class Pairs:
    """Some (query, document) pairs of one range of queries, named by a SQL query.

    ``sql`` (with ``params``) selects ``query_id, document_id``: e.g. the pairs a bulk
    import wrote, from its staging table. Work scoped to them reads only their rows
    (:meth:`condition`, :func:`of_pairs`), not every row of their queries, so it does not
    grow with what the collection already holds.
    """

    first_query: int
    last_query: int
    sql: str
    params: tuple[Any, ...] = ()
    #: SQL selecting the ids of the pairs' pool entries (with ``params``), when known.
    entries_sql: str = ""

    def condition(self, table: str) -> tuple[str, list[Any]]:
        """Return the SQL condition "the row of ``table`` (an alias) is one of the pairs"."""
        return (
            f"{table}.query_id BETWEEN %s AND %s"
            f" AND ({table}.query_id, {table}.document_id) IN ({self.sql})",
            [self.first_query, self.last_query, *self.params],
        )


def of_pairs(queryset: models.QuerySet, pairs: Pairs) -> models.QuerySet:
    """Return the rows of ``queryset`` (with ``query_id`` and ``document_id``) in ``pairs``.

    Pool entries are found by id when ``pairs`` knows them (an index lookup per entry,
    whatever the planner thinks of the other indexes).
    """
    meta = queryset.model._meta
    if pairs.entries_sql and meta.model_name == "poolentry":
        return queryset.filter(pk__in=RawSQL(pairs.entries_sql, pairs.params))
    sql, params = pairs.condition(connection.ops.quote_name(meta.db_table))
    return queryset.filter(RawSQL(sql, params, output_field=BooleanField()))


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


def _raw(sql: str, params: Sequence[Any], *, read: bool) -> list[tuple]:
    """Run ``sql`` past Django's query compiler; on PostgreSQL with server-side binding.

    Bytes parameters then travel as binary (Django's client-side binding writes a
    ``bytea`` as hex text inside the statement: twice the bytes, and a parse of them), and
    a read's results come back binary (rankings as bytes, not hex text).
    """
    if connection.vendor == "postgresql":
        import psycopg  # on first use: an installation on SQLite never loads the driver

        connection.ensure_connection()
        started = time.monotonic()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=read)
            rows = cursor.fetchall() if read else []
        log_statement(sql, started)
        return rows
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall() if read else []


def fetch(sql: str, params: Sequence[Any]) -> list[tuple]:
    """Run a raw read (no model instances); see :func:`_raw`."""
    return _raw(sql, params, read=True)


def execute(sql: str, params: Sequence[Any]) -> None:
    """Run a raw write (bytes parameters travel as binary); see :func:`_raw`."""
    _raw(sql, params, read=False)


_SEND = {
    "i": ("int8send", "int8", ">i8", np.int64),
    "f": ("float8send", "float8", ">f8", np.float64),
}


def fetch_columns(
    *,
    fields: Sequence[tuple[str, str]],
    source: str,
    params: Sequence,
    order_by: Sequence[str],
) -> list[np.ndarray] | None:
    """Return rows as one numpy column per field, sorted by ``order_by`` (PostgreSQL; else None).

    ``fields`` are (SQL expression, kind) pairs, kind ``i`` (read as ``int8``) or ``f``
    (``float8``); no expression may be NULL (``COALESCE`` floats to ``'NaN'``): a NULL is
    refused with ``ValueError``, never dropped. ``source`` is the ``FROM … WHERE …`` text
    that ``params`` bind, and the first of ``order_by`` must be a column of it.

    The server packs each group of rows sharing the first sort key into one ``bytea``
    (``string_agg`` of the fields' binary send forms), so hundreds of thousands of rows
    arrive as a few hundred values and are parsed by one structured ``np.frombuffer``:
    no Python object per row or per value, and no message per row as with ``COPY``
    (whose per-message cost in the driver was most of a 200,000-row read). Grouping keeps
    every value far below PostgreSQL's 1 GB limit.
    """
    if connection.vendor != "postgresql":
        return None
    packed = " || ".join(f"{_SEND[kind][0]}(({expr})::{_SEND[kind][1]})" for expr, kind in fields)
    group = order_by[0]
    sql = (
        f"SELECT count(*), string_agg({packed}, ''::bytea ORDER BY {', '.join(order_by)}) "
        f"{source} GROUP BY {group} ORDER BY {group}"
    )
    dtype = np.dtype([(f"v{k}", _SEND[kind][2]) for k, (_, kind) in enumerate(fields)])
    groups = fetch(sql, params)
    if sum(n for n, _ in groups) * dtype.itemsize != sum(len(b or b"") for _, b in groups):
        raise ValueError("fetch_columns: a field was NULL")  # string_agg skips NULL rows
    rows = np.frombuffer(b"".join(bytes(b) for _, b in groups if b), dtype=dtype)
    return [rows[f"v{k}"].astype(_SEND[kind][3]) for k, (_, kind) in enumerate(fields)]
