"""Raw reads and multi-row writes shared by the scoring services (no model instances).

Rescoring one judgment touches a hundred ``RunQuery`` and ``Run`` rows; building model
instances, compiling querysets and one ``UPDATE`` per row each cost more than the
database's own work. These helpers read tuples and write many rows in one statement.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

import numpy as np
import orjson
import psycopg
from django.db import connection
from django.db.models import Model

from judging.db import update_rows
from metrics.models import RunQuery


def fetch(sql: str, params: Sequence[Any]) -> list[tuple]:
    """Run a read; binary results on PostgreSQL (rankings arrive as bytes, not hex text)."""
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            return cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def as_dict(value: Any) -> dict[str, Any]:
    """Return a JSON column's value as a dict (SQLite and ``::text`` casts hand back text)."""
    return orjson.loads(value) if isinstance(value, str) else (value or {})


def dumps(value: Any) -> str:
    """Return ``value`` as JSON text for a ``jsonb`` parameter.

    orjson, because rescoring one judgment encodes and decodes the scores of a hundred
    rows and runs (``json`` took 2 ms of it). Callers pass finite floats or None
    (``_finite``); orjson would write NaN as null rather than fail.
    """
    return orjson.dumps(value).decode()


def write_scores(rows: Sequence[Any], changed: Sequence[bool], version: int) -> None:
    """Store the new scores of the changed rows, with ``version``; leave the others alone.

    A row's ``version`` is the judgment-list version its scores were last written at; an
    unchanged row is not rewritten (whether it is current is its run's
    ``scored_version``). On PostgreSQL one statement. Neither column is indexed, so with
    the table's fillfactor the updates are HOT (no index entries written).
    """
    records = [{"pk": r.pk, "s": r.scores} for r, c in zip(rows, changed, strict=True) if c]
    if not records:
        return
    if connection.vendor != "postgresql":
        update_rows(
            [RunQuery(pk=r["pk"], scores=r["s"], version=version) for r in records],
            ["scores", "version"],
        )
        return
    quote = connection.ops.quote_name
    table = quote(RunQuery._meta.db_table)
    sql = (
        f"UPDATE {table} AS t SET scores = v.s, version = %s "
        f"FROM jsonb_to_recordset(%s::jsonb) AS v(pk bigint, s jsonb) WHERE t.id = v.pk"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [version, dumps(records)])


def write_rows(model: type[Model], objs: Sequence[Any], fields: Sequence[str]) -> None:
    """Write ``fields`` of saved rows of ``model``; on PostgreSQL in one statement.

    The rows travel as one JSON parameter expanded by ``jsonb_to_recordset``: a hundred rows
    cost one round trip, one plan and one parameter to quote, several times cheaper than a
    pipelined prepared UPDATE per row (``judging.db.update_rows``, used elsewhere). ``objs``
    are model instances or objects with the same attributes (``pk`` and ``fields``).
    """
    if not objs:
        return
    if connection.vendor != "postgresql":
        update_rows(
            [
                o if isinstance(o, model) else model(pk=o.pk, **{f: getattr(o, f) for f in fields})
                for o in objs
            ],
            fields,
        )
        return
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    names = [f"c{i}" for i in range(len(columns))]
    assignments = ", ".join(
        f"{quote(f.column)} = v.{n}" for f, n in zip(columns, names, strict=True)
    )
    types = ", ".join(f"{n} {f.db_type(connection)}" for f, n in zip(columns, names, strict=True))
    sql = (
        f"UPDATE {quote(meta.db_table)} AS t SET {assignments} "
        f"FROM jsonb_to_recordset(%s::jsonb) AS v(pk bigint, {types}) "
        f"WHERE t.{quote(meta.pk.column)} = v.pk"
    )
    records = []
    for obj in objs:
        record: dict[str, Any] = {"pk": obj.pk}
        for f, n in zip(columns, names, strict=True):
            value = getattr(obj, f.attname)
            record[n] = value.isoformat() if isinstance(value, datetime) else value
        records.append(record)
    with connection.cursor() as cursor:
        cursor.execute(sql, [dumps(records)])


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
