"""Stage a judgment import in a temporary table, check it and write it set-based.

:func:`judging.services.judgments_import` streams an import's rows into a temporary
table (``COPY`` on PostgreSQL, batched inserts on SQLite), so memory holds one batch, not
the file; repeated pairs and unknown ids are then found by SQL, and the judgments and
their history events are written by ``INSERT ... SELECT`` and ``UPDATE ... FROM``. The
table lives in the caller's transaction and is dropped when :class:`JudgmentStage` closes
(on PostgreSQL also at commit), so a refused import leaves nothing behind.

Only this module writes SQL that differs between the databases: null-safe comparison
(``IS DISTINCT FROM`` / ``IS NOT``), JSON construction (``jsonb_build_object`` /
``json_object``) and the bulk load.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from typing import Any

from django.db import connection

from judging.db import Pairs
from judging.models import Document, Judgment, JudgmentEvent, PoolEntry, Query

#: What a judge version may look like (it is inlined into SQL; see :meth:`JudgmentStage._json`).
_JUDGE_VERSION = re.compile(r"[A-Za-z0-9._:-]{1,80}")

#: Rows sent to SQLite per ``executemany`` (PostgreSQL streams them through ``COPY``).
BATCH = 5000
#: Written pairs per :meth:`JudgmentStage.scopes` range (and at most this many queries).
SCOPE_PAIRS = 50_000
SCOPE_QUERIES = 100
FINAL = ("graded", "cannot_judge")
COLUMNS = (
    "line", "qext", "dext", "grade", "status", "note", "seconds", "abstain", "evidence",
    "evidence_given",
)  # fmt: skip
LABEL = ("grade", "status", "note", "seconds", "abstain_probability")
#: Stage columns compared to tell a changed label (each has an ``old_`` twin).
COMPARED = ("grade", "status", "note", "seconds", "abstain", "evidence")

#: A staged row: ``evidence`` is the spans' JSON text (None: none), ``evidence_given``
#: whether the row said anything about evidence (when not, the current spans stay).
StagedRow = tuple[int, str, str, int | None, str, str, float | None, float | None, str | None, bool]


@dataclass(frozen=True)
class Reference:
    """A staged row that repeats a pair (``first`` is the first line) or names an unknown id."""

    line: int
    query: str
    document: str
    first: int | None
    query_known: bool
    document_known: bool


@dataclass(frozen=True)
class Classified:
    """What writing the staged rows would do to one judge's labels."""

    total: int
    created: int
    changed: int
    new_final: int
    done_delta: int
    done_open_delta: int


def json_text(value: Any) -> str:
    """Return a JSON value read back from PostgreSQL as the text SQLite would hold."""
    return json.dumps(value)


def _table(model: Any) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def _batches(rows: Iterable[StagedRow], size: int) -> Iterator[list[StagedRow]]:
    iterator = iter(rows)
    while batch := list(islice(iterator, size)):
        yield batch


class JudgmentStage:
    """A temporary table of one import's rows; use as a context manager inside a transaction."""

    def __init__(self) -> None:
        """Name the table (unique, so nested imports in one transaction do not collide)."""
        self.name = f"graded_stage_{uuid.uuid4().hex[:16]}"
        self.postgres = connection.vendor == "postgresql"
        self.rows = 0

    # --- lifetime ---------------------------------------------------------------------

    def __enter__(self) -> JudgmentStage:
        """Create the table."""
        big = "BIGINT" if self.postgres else "INTEGER"
        real = "DOUBLE PRECISION" if self.postgres else "REAL"
        json = "JSONB" if self.postgres else "TEXT"
        tail = " ON COMMIT DROP" if self.postgres else ""
        self._run(
            f"CREATE TEMPORARY TABLE {self.name} ("
            "line INTEGER NOT NULL, qext TEXT NOT NULL, dext TEXT NOT NULL, grade SMALLINT,"
            f" status VARCHAR(20) NOT NULL, note TEXT NOT NULL, seconds {real}, abstain {real},"
            f" evidence {json}, evidence_given BOOLEAN NOT NULL,"
            f" query_id {big}, document_id {big}, first_line INTEGER, judgment_id {big},"
            f" old_grade SMALLINT, old_status VARCHAR(20), old_note TEXT, old_seconds {real},"
            f" old_abstain {real}, old_evidence {json}, pool_id {big}, pool_open BOOLEAN){tail}"
        )
        return self

    def __exit__(self, *exc: object) -> None:
        """Drop the table, unless the transaction is already broken (rollback drops it)."""
        if exc[0] is None:
            self._run(f"DROP TABLE {self.name}")

    def _run(self, sql: str, params: Iterable[Any] = ()) -> int:
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            return cursor.rowcount

    def _all(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with connection.cursor() as cursor:
            cursor.execute(sql, list(params))
            return cursor.fetchall()

    # --- loading ----------------------------------------------------------------------

    def load(self, rows: Iterable[StagedRow]) -> int:
        """Append ``rows`` (consumed as a stream); return how many were staged in all."""
        columns = ", ".join(COLUMNS)
        if self.postgres:
            sql = f"COPY {self.name} ({columns}) FROM STDIN"
            with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
                for row in rows:
                    copy.write_row(row)
                    self.rows += 1
            return self.rows
        marks = ", ".join(["%s"] * len(COLUMNS))
        sql = f"INSERT INTO {self.name} ({columns}) VALUES ({marks})"
        for batch in _batches(rows, BATCH):
            with connection.cursor() as cursor:
                cursor.executemany(sql, batch)
            self.rows += len(batch)
        return self.rows

    # --- checking ---------------------------------------------------------------------

    def resolve(self, *, collection_id: int) -> None:
        """Fill in the query and document of every row, and the first line of a repeat."""
        s = self.name
        self._run(
            f"UPDATE {s} SET query_id = q.id FROM {_table(Query)} q"
            f" WHERE q.collection_id = %s AND q.external_id = {s}.qext",
            [collection_id],
        )
        self._run(
            f"UPDATE {s} SET document_id = d.id FROM {_table(Document)} d"
            f" WHERE d.collection_id = %s AND d.external_id = {s}.dext",
            [collection_id],
        )
        self._run(
            f"UPDATE {s} SET first_line = f.first FROM (SELECT qext, dext, MIN(line) AS first"
            f" FROM {s} GROUP BY qext, dext HAVING COUNT(*) > 1) f"
            f" WHERE f.qext = {s}.qext AND f.dext = {s}.dext AND f.first <> {s}.line"
        )
        if self.postgres:
            self._run(f"ANALYZE {s}")

    def evidence_rows(self, limit: int, after: int = 0) -> list[tuple[int, int, str]]:
        """Return up to ``limit`` rows giving evidence after line ``after``, by line.

        ``(line, document id, spans as JSON text)``, rows of known documents only.
        """
        rows = self._all(
            f"SELECT line, document_id, evidence FROM {self.name} WHERE evidence IS NOT NULL"
            " AND document_id IS NOT NULL AND line > %s ORDER BY line LIMIT %s",
            [after, limit],
        )
        return [(line, doc, ev if isinstance(ev, str) else json_text(ev)) for line, doc, ev in rows]

    def set_evidence(self, line: int, evidence: str) -> None:
        """Replace the spans of the row on ``line`` (checked and merged)."""
        cast = "CAST(%s AS JSONB)" if self.postgres else "%s"
        self._run(f"UPDATE {self.name} SET evidence = {cast} WHERE line = %s", [evidence, line])

    def current(self, *, judge_id: int) -> None:
        """Fill in the judge's current label of every row's pair, and the pair's pool entry.

        Call under the collection's lock (every writer of judgments takes it), so the
        labels cannot change before :meth:`write`. The pool entry (its id and whether it
        is open) is looked up row by row through the pair's unique index: a join could
        scan the whole pool, whose size is the collection's, not the import's.
        """
        s = self.name
        self._run(
            f"UPDATE {s} SET judgment_id = j.id, old_grade = j.grade, old_status = j.status,"
            " old_note = j.note, old_seconds = j.seconds, old_abstain = j.abstain_probability,"
            f" old_evidence = j.evidence FROM {_table(Judgment)} j WHERE j.judge_id = %s"
            f" AND j.query_id = {s}.query_id AND j.document_id = {s}.document_id",
            [judge_id],
        )
        # A row that says nothing about evidence keeps the label's spans.
        self._run(f"UPDATE {s} SET evidence = old_evidence WHERE NOT evidence_given")
        self._run(
            f"UPDATE {s} SET (pool_id, pool_open) = (SELECT p.id, p.is_open"
            f" FROM {_table(PoolEntry)} p WHERE p.query_id = {s}.query_id"
            f" AND p.document_id = {s}.document_id)"
        )

    def references(self, limit: int) -> tuple[list[Reference], int]:
        """Return the first ``limit`` repeated or unresolved rows by line, and how many in all.

        A repeated row is reported as such only (not also as unknown).
        """
        where = "first_line IS NOT NULL OR query_id IS NULL OR document_id IS NULL"
        (total,) = self._all(f"SELECT COUNT(*) FROM {self.name} WHERE {where}")[0]
        rows = self._all(
            f"SELECT line, qext, dext, first_line, query_id IS NOT NULL, document_id IS NOT NULL"
            f" FROM {self.name} WHERE {where} ORDER BY line LIMIT %s",
            [limit],
        )
        return [Reference(*row[:4], bool(row[4]), bool(row[5])) for row in rows], total

    # --- writing ----------------------------------------------------------------------

    def _differs(self, table: str = "") -> str:
        """Return the SQL condition "the row changes the judge's current label".

        ``table`` qualifies the stage's columns (``"<name>."``) where another table has the
        same column names.
        """
        op = "IS DISTINCT FROM" if self.postgres else "IS NOT"
        return "(" + " OR ".join(f"{table}{n} {op} {table}old_{n}" for n in COMPARED) + ")"

    def classify(self, *, collection_id: int) -> Classified:
        """Count what :meth:`write` would do, with the judge's progress deltas.

        ``done`` counts final labels (graded or cannot judge); ``done_open`` those of pairs
        whose pool entry is open.
        """
        s = self.name
        final = "status IN ('graded', 'cannot_judge')"
        was_final = "(old_status IS NOT NULL AND old_status IN ('graded', 'cannot_judge'))"
        moved = f"(CASE WHEN {final} THEN 1 ELSE 0 END - CASE WHEN {was_final} THEN 1 ELSE 0 END)"
        row = self._all(
            f"SELECT COUNT(*),"
            f" SUM(CASE WHEN judgment_id IS NULL THEN 1 ELSE 0 END),"
            f" SUM(CASE WHEN judgment_id IS NOT NULL AND {self._differs()} THEN 1 ELSE 0 END),"
            f" SUM(CASE WHEN {final} AND NOT {was_final} THEN 1 ELSE 0 END),"
            f" SUM({moved}),"
            f" SUM(CASE WHEN pool_open THEN {moved} ELSE 0 END)"
            f" FROM {s}",
        )[0]
        return Classified(*(int(v or 0) for v in row))

    def _json(self, prefix: str, *, version: int | None = None, judge_version: str = "") -> str:
        """Return SQL building the label history records from the stage's columns.

        With ``version``, the label written also records the guidelines version it was
        given under (an integer, inlined).
        """
        build = "jsonb_build_object" if self.postgres else "json_object"
        names = ("grade", "status", "note", "seconds", "abstain")
        args = ", ".join(
            f"'{label}', {prefix}{name}" for label, name in zip(LABEL, names, strict=True)
        )
        if version is not None:
            args += f", 'guidelines_version', {int(version)}"
        if judge_version:
            if not _JUDGE_VERSION.fullmatch(judge_version):
                raise ValueError(f"not a judge version: {judge_version!r}")
            args += f", 'judge_version', '{judge_version}'"
        # The evidence key only on labels with spans, as judging.services._label writes it.
        spans = f"{prefix}evidence"
        if self.postgres:
            return (
                f"({build}({args}) || CASE WHEN {spans} IS NULL THEN '{{}}'::jsonb"
                f" ELSE jsonb_build_object('evidence', {spans}) END)"
            )
        return (
            f"(CASE WHEN {spans} IS NULL THEN {build}({args})"
            f" ELSE json_set({build}({args}), '$.evidence', json({spans})) END)"
        )

    def write(
        self,
        *,
        collection_id: int,
        judge_id: int,
        actor_id: int | None,
        channel: str,
        now: datetime,
        counts: Classified,
        guidelines_version: int,
        judge_version: str = "",
    ) -> list[int]:
        """Write every new or changed label and its history event; return the touched queries.

        Call after :meth:`references` found nothing and under the collection's lock, with
        :meth:`classify`'s ``counts`` (statements with nothing to do are skipped). Every
        label written records ``guidelines_version`` and ``judge_version`` (LLM labels; a
        digest, checked before it is inlined into the history's SQL).
        """
        gv, jv = int(guidelines_version), judge_version or None
        s = self.name
        judgments, events = _table(Judgment), _table(JudgmentEvent)
        differs = self._differs()
        touched = [
            q
            for (q,) in self._all(
                f"SELECT DISTINCT query_id FROM {s} WHERE judgment_id IS NULL OR {differs}"
                " ORDER BY query_id"
            )
        ]
        if not touched:
            return []
        event_columns = (
            "judgment_id, collection_id, judge_id, query_id, document_id, actor_id, action,"
            " channel, before, after, at"
        )
        if counts.changed:
            # Changed labels: their events first (the stage holds the old label), then the rows.
            self._run(
                f"INSERT INTO {events} ({event_columns}) SELECT judgment_id, %s, %s, query_id,"
                f" document_id, %s, 'change', %s, {self._json('old_')},"
                f" {self._json('', version=gv, judge_version=jv)}, %s"
                f" FROM {s} WHERE judgment_id IS NOT NULL AND {differs} ORDER BY line",
                [collection_id, judge_id, actor_id, channel, now],
            )
            self._run(
                f"UPDATE {judgments} SET grade = {s}.grade, status = {s}.status, note = {s}.note,"
                f" seconds = {s}.seconds, abstain_probability = {s}.abstain,"
                f" evidence = {s}.evidence, updated_at = %s,"
                f" guidelines_version = %s, judge_version = %s"
                f" FROM {s} WHERE {judgments}.id = {s}.judgment_id AND {self._differs(s + '.')}",
                [now, gv, jv],
            )
        if counts.created:
            # New labels: the rows, then their events (joined back to get the new ids).
            self._run(
                f"INSERT INTO {judgments} (judge_id, query_id, document_id, collection_id, grade,"
                " status, note, seconds, abstain_probability, evidence, created_at, updated_at,"
                " guidelines_version, judge_version)"
                " SELECT %s, query_id, document_id, %s, grade, status, note, seconds, abstain,"
                f" evidence, %s, %s, %s, %s FROM {s} WHERE judgment_id IS NULL ORDER BY line",
                [judge_id, collection_id, now, now, gv, jv],
            )
            self._run(
                f"INSERT INTO {events} ({event_columns}) SELECT j.id, %s, %s, {s}.query_id,"
                f" {s}.document_id, %s, 'create', %s, NULL,"
                f" {self._json(s + '.', version=gv, judge_version=jv)}, %s"
                f" FROM {s} JOIN {judgments} j ON j.judge_id = %s AND j.query_id = {s}.query_id"
                f" AND j.document_id = {s}.document_id WHERE {s}.judgment_id IS NULL"
                f" ORDER BY {s}.line",
                [collection_id, judge_id, actor_id, channel, now, judge_id],
            )
        return touched

    # --- after writing: the written pairs, and their pool entries ------------------------

    def _written(self, table: str = "") -> str:
        """Return the SQL condition "the row was written" (new, or a changed label).

        ``table`` qualifies the stage's columns, as for :meth:`_differs`.
        """
        return f"({table}judgment_id IS NULL OR {self._differs(table)})"

    def scopes(self) -> list[Pairs]:
        """Return the written pairs in ranges of queries, each named by SQL on this table.

        At most :data:`SCOPE_QUERIES` queries and about :data:`SCOPE_PAIRS` pairs a range
        (one query's pairs are never split). The live grades, pool counts and progress
        of an import are then recomputed for its pairs only: their cost follows the
        import, not the labels its queries already hold.
        """
        s = self.name
        if self.postgres:  # each range reads its part of the table by index
            self._run(f"CREATE INDEX ON {s} (query_id, document_id)")
        counts = self._all(
            f"SELECT query_id, COUNT(*) FROM {s} WHERE {self._written()}"
            " GROUP BY query_id ORDER BY query_id"
        )
        sql = (
            f"SELECT query_id, document_id FROM {s}"
            f" WHERE query_id BETWEEN %s AND %s AND {self._written()}"
        )
        entries = (
            f"SELECT pool_id FROM {s} WHERE query_id BETWEEN %s AND %s AND pool_id IS NOT NULL"
            f" AND {self._written()}"
        )
        ranges: list[Pairs] = []
        first = last = 0
        queries = pairs = 0
        for query_id, count in counts:
            if queries and (queries >= SCOPE_QUERIES or pairs + count > SCOPE_PAIRS):
                ranges.append(Pairs(first, last, sql, (first, last), entries))
                queries = pairs = 0
            if not queries:
                first = query_id
            last, queries, pairs = query_id, queries + 1, pairs + count
        if queries:
            ranges.append(Pairs(first, last, sql, (first, last), entries))
        return ranges

    def recount_pool(self) -> None:
        """Move the graded counts of the written pairs' pool entries by the judge's change.

        Each written row adds 1 if its label is now graded and takes 1 away if it was: the
        count follows from the stage alone, without reading the pair's other labels, and
        the entries are updated by id (see :meth:`current`).
        """
        s, pool = self.name, _table(PoolEntry)
        delta = (
            "(CASE WHEN status = 'graded' THEN 1 ELSE 0 END"
            " - CASE WHEN old_status = 'graded' THEN 1 ELSE 0 END)"
        )
        self._run(
            f"UPDATE {pool} SET graded_count = {pool}.graded_count + c.delta"
            f" FROM (SELECT pool_id, {delta} AS delta FROM {s}"
            f" WHERE pool_id IS NOT NULL AND {self._written()}) c"
            f" WHERE {pool}.id = c.pool_id AND c.delta <> 0"
        )
