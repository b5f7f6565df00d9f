"""Turn API batches and uploaded files into import rows, and report problems by line.

Shared by the REST views and the background worker that imports large uploads
(:mod:`judging.imports.services`), so it sits below both.

Every parser returns ``(rows, errors)``: the rows it could read and one
``{"line": n, "message": ...}`` per problem, so that :func:`import_rows` can list every bad
line of a request at once (including those only the import service detects) and write
nothing unless there are none.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import IO, Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from rest_framework import exceptions, status

from graded import textpolicy
from judging import evidence, services
from judging.lists.formats import FormatError, iter_lines
from judging.models import Collection, Judge, JudgmentEvent
from judging.services import ImportSummary, JudgmentRow

LineError = dict[str, Any]
Source = IO[bytes] | bytes

#: Largest judgments file accepted, in bytes.
MAX_FILE_BYTES = 50 * 1024 * 1024

_ITEM_FIELDS = {
    "query",
    "document",
    "grade",
    "status",
    "note",
    "seconds",
    "abstain_probability",
    "evidence",  # spans, checked against the documents by the import service
    "raw_output",  # LLM judges; kept by judging.llm.native_labels
}
_JSONL_ALIASES = {"qid": "query", "docno": "document"}
_SERVICE_LINE = re.compile(r"^line (\d+): (.*)$", re.DOTALL)
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]+")


class LineErrors(exceptions.ValidationError):
    """A 400 whose ``errors`` are rendered as they are (``line`` stays a number)."""

    def __init__(self, errors: list[LineError]) -> None:
        """Keep the error items for the project exception handler."""
        super().__init__([e["message"] for e in errors])
        self.errors = errors
        self.status_code = status.HTTP_400_BAD_REQUEST


class _DryRun(Exception):
    """Raised inside a savepoint to roll back an import that only validated rows."""


def _error(line: int, message: str) -> LineError:
    """Return one line error."""
    return {"line": line, "message": message}


def _external_id(value: Any) -> str | None:
    """Return an id given as a non-empty string or a whole number, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and value.bit_length() < 1600:  # str() of huge ints fails
        return str(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    return None


def _number(value: Any) -> bool:
    """Return whether ``value`` is a finite JSON number that fits a double (not a boolean)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:  # an int with hundreds of digits
        return False


def row_from_item(line: int, item: Any) -> tuple[JudgmentRow | None, list[LineError]]:
    """Read one judgment object of a batch or JSON Lines file.

    Checks only shapes and types; the import service checks ids, ranges and statuses.
    """
    if not isinstance(item, dict):
        return None, [_error(line, "Each judgment must be a JSON object.")]
    problems: list[str] = []
    unknown = sorted(set(item) - _ITEM_FIELDS)
    if unknown:
        problems.append(f"unknown field(s): {', '.join(unknown)}")
    ids = {}
    for name in ("query", "document"):
        ids[name] = _external_id(item.get(name))
        if ids[name] is None:
            problems.append(f"{name}: an external id (string) is required")
        elif problem := textpolicy.id_problem(ids[name], name):
            problems.append(problem)
    grade = item.get("grade")
    if grade is not None:
        if isinstance(grade, float) and grade.is_integer():
            grade = int(grade)
        elif isinstance(grade, bool) or not isinstance(grade, int):
            problems.append(
                f"grade: must be a whole number from 0 to 4, not {textpolicy.echo(grade)}"
            )
    status_value = item.get("status", services.Status.GRADED)
    if not isinstance(status_value, str):
        problems.append("status: must be a string")
    elif problem := textpolicy.text_problem(status_value, max_length=20, what="status"):
        problems.append(problem)
    note = item.get("note", "")
    if note is None:
        note = ""
    if not isinstance(note, str):
        problems.append("note: must be a string")
    elif problem := textpolicy.text_problem(
        note, max_length=textpolicy.MAX_NOTE_LENGTH, what="note"
    ):
        problems.append(problem)
    for name in ("seconds", "abstain_probability"):
        value = item.get(name)
        if value is not None and not _number(value):
            problems.append(f"{name}: must be a number")
    spans = None
    if "evidence" in item:  # left out: the label's spans stay; [] or null removes them
        try:
            spans = evidence.spans_from_value(item["evidence"]) or ()
        except ValidationError as exc:
            problems.extend(exc.message_dict["evidence"])
    if problems:
        return None, [_error(line, p) for p in problems]
    row = JudgmentRow(
        line=line,
        query_external_id=ids["query"],
        document_external_id=ids["document"],
        grade=grade,
        status=status_value,
        note=note,
        seconds=None if item.get("seconds") is None else float(item["seconds"]),
        abstain_probability=None
        if item.get("abstain_probability") is None
        else float(item["abstain_probability"]),
        evidence=spans,
    )
    return row, []


def rows_from_items(items: Sequence[Any]) -> tuple[list[JudgmentRow], list[LineError]]:
    """Read the items of a JSON batch; lines are 1-based item indexes."""
    rows: list[JudgmentRow] = []
    errors: list[LineError] = []
    for line, item in enumerate(items, start=1):
        row, problems = row_from_item(line, item)
        if row is not None:
            rows.append(row)
        errors.extend(problems)
    return rows, errors


def _lines(data: Source, errors: list[LineError]) -> Iterator[tuple[int, str]]:
    """Yield the numbered lines of a UTF-8 file or upload, read in chunks.

    A line that is not UTF-8 or holds a NUL ends reading with an error naming it.
    """
    try:
        yield from iter_lines(data)
    except FormatError as exc:
        errors.append(_error(exc.problem.line or 1, exc.problem.message))


def _stopped(errors: list[LineError]) -> bool:
    """Return whether reading must stop (the cap), noting it once."""
    if len(errors) >= textpolicy.MAX_ERRORS:
        errors.append({"message": "... reading stopped here; there may be more problems"})
        return True
    return False


def rows_from_qrels(data: Source) -> tuple[Iterator[JudgmentRow], list[LineError]]:
    """Read TREC qrels lines ``qid iter docno grade``; blank and ``#`` lines are skipped.

    Lazy: the rows are read as they are consumed (a file of any size streams through),
    and ``errors`` fills meanwhile. Reading stops once :data:`~graded.textpolicy.MAX_ERRORS`
    problems were found.
    """
    errors: list[LineError] = []

    def rows() -> Iterator[JudgmentRow]:
        for number, text in _lines(data, errors):
            if _stopped(errors):
                return
            parts = text.split()
            if not parts or parts[0].startswith("#"):
                continue
            if len(parts) != 4:
                errors.append(
                    _error(number, f"expected 4 columns (qid iter docno grade), found {len(parts)}")
                )
                continue
            qid, _, docno, grade = parts
            if not _WHOLE_NUMBER.fullmatch(grade) or len(grade) > 10:
                message = f"grade: must be a whole number from 0 to 4, not {textpolicy.echo(grade)}"
                errors.append(_error(number, message))
                continue
            problem = textpolicy.id_problem(qid, "qid") or textpolicy.id_problem(docno, "docno")
            if problem:
                errors.append(_error(number, problem))
                continue
            yield JudgmentRow(number, qid, docno, grade=int(grade))

    return rows(), errors


def rows_from_jsonl(data: Source) -> tuple[Iterator[JudgmentRow], list[LineError]]:
    """Read JSON Lines, one ``{"qid", "docno", "grade", ...}`` object per non-blank line.

    ``query`` and ``document`` are accepted in place of ``qid`` and ``docno``. Lazy, like
    :func:`rows_from_qrels`.
    """
    errors: list[LineError] = []

    def rows() -> Iterator[JudgmentRow]:
        for number, text in _lines(data, errors):
            if _stopped(errors):
                return
            if not text.strip():
                continue
            try:
                item = textpolicy.loads_json(text)
            except textpolicy.TextRefused as exc:
                where = f" at {exc.field}" if exc.field else ""
                errors.append(_error(number, f"{exc.message}{where}"))
                continue
            if isinstance(item, dict):
                item = {_JSONL_ALIASES.get(k, k): v for k, v in item.items()}
            row, problems = row_from_item(number, item)
            errors.extend(problems)
            if row is not None:
                yield row

    return rows(), errors


def _service_errors(messages: Iterable[str]) -> list[LineError]:
    """Turn the service's ``line N: ...`` messages into line errors."""
    errors: list[LineError] = []
    for message in messages:
        match = _SERVICE_LINE.match(message)
        if match:
            errors.append(_error(int(match.group(1)), match.group(2)))
        else:
            errors.append({"message": message})
    return errors


def import_rows(
    *,
    collection: Collection,
    judge: Judge,
    rows: Iterable[JudgmentRow],
    errors: Sequence[LineError] = (),
    actor: AbstractBaseUser | None = None,
) -> ImportSummary:
    """Record ``rows`` through :func:`judging.services.judgments_import`, all or nothing.

    ``rows`` may be a lazy parser's stream; ``errors`` are the problems the parser found
    (a list it may still be filling while the rows are read). When there are some, the
    service's checks still run and its writes are rolled back, so the answer lists every
    bad line; nothing is written. Raises :class:`LineErrors`, sorted by line.
    """
    seen = 0

    def counted() -> Iterator[JudgmentRow]:
        nonlocal seen
        for row in rows:
            seen += 1
            yield row

    summary = None
    capped = 0  # problems the service counted but did not list
    found: list[LineError] = []
    try:
        with transaction.atomic():
            summary = services.judgments_import(
                collection=collection,
                judge=judge,
                rows=counted(),
                channel=JudgmentEvent.Channel.API,
                actor=actor,
            )
            if errors or not seen:
                raise _DryRun
    except ValidationError as exc:
        found = _service_errors(exc.messages)
        capped = max(getattr(exc, "total", 0) - len(exc.messages), 0)
    except _DryRun:
        summary = None
    found = [*errors, *found]
    if not found and not seen:
        raise LineErrors([{"message": "No judgments given."}])
    if found or summary is None:
        found.sort(key=lambda e: e.get("line") or float("inf"))
        raise LineErrors(textpolicy.cap_errors(found, total=len(found) + capped))
    return summary
