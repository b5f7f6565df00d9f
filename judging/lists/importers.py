"""Parse query, document and pair files into service rows, naming the line of every problem.

Formats (UTF-8):
    queries    JSON Lines ``{"qid", "text", "description", "narrative"}`` (``id``/``query_id``
               for the id, ``query``/``title`` for the text), or TSV ``qid<TAB>text``.
    documents  JSON Lines ``{"docno", "title", "body", "url", ...}`` (``id``/``doc_id``/
               ``_id`` for the id, ``text``/``contents`` for the body); other keys go to
               ``extra``.
    pairs      ``qid docno`` per line (white-space separated).
Blank lines and lines starting with ``#`` are skipped.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.core.exceptions import ValidationError

from graded import textpolicy
from judging.services import DocumentRow, PairRow, QueryRow

QUERY_ID_KEYS = ("qid", "query_id", "id")
QUERY_TEXT_KEYS = ("text", "query", "title")
DOCUMENT_ID_KEYS = ("docno", "doc_id", "id", "_id")
DOCUMENT_BODY_KEYS = ("body", "text", "contents")


def _lines(data: bytes | str, name: str) -> Iterator[tuple[int, str]]:
    """Yield (line number, text) of the non-blank, non-comment lines of a text file.

    Bytes are decoded by :func:`graded.textpolicy.decode_utf8` (a byte-order mark at the
    start is dropped, UTF-16 and UTF-32 with a mark decoded); text loses a leading U+FEFF.
    """
    try:
        if isinstance(data, str):
            text = textpolicy.check_text(textpolicy.strip_bom(data), what=name)
        else:
            text = textpolicy.decode_utf8(data, what=name)
    except textpolicy.TextRefused as exc:
        raise ValidationError([f"line {exc.line or 1}: {exc.message}"]) from None
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip() and not line.lstrip().startswith("#"):
            yield number, line


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    """Return the first of ``keys`` present in ``obj`` and its value."""
    for key in keys:
        if key in obj:
            return key, obj[key]
    return None, None


def _json_objects(data: bytes, name: str) -> tuple[list[tuple[int, dict]], list[str]]:
    """Parse JSON Lines into (line, object) pairs and ``line N:`` errors."""
    objects, errors = [], []
    for number, line in _lines(data, name):
        if len(errors) >= textpolicy.MAX_ERRORS:
            break
        try:
            obj = textpolicy.loads_json(line)
        except textpolicy.TextRefused as exc:
            where = f" at {exc.field}" if exc.field else ""
            errors.append(f"line {number}: {exc.message}{where}")
            continue
        if not isinstance(obj, dict):
            errors.append(f"line {number}: expected a JSON object")
            continue
        objects.append((number, obj))
    return objects, errors


def _text(value: Any, what: str, max_length: int = textpolicy.MAX_TEXT_LENGTH) -> str:
    """Return a JSON scalar as text, or raise ``TextRefused`` if the policy refuses it."""
    if isinstance(value, dict | list):
        raise textpolicy.TextRefused(f"{what} must be a string, not a JSON {type(value).__name__}")
    value = textpolicy.check_text(
        "" if value is None else str(value), max_length=max_length, what=what
    )
    problem = textpolicy.kind_problem(what, value)
    if problem:
        raise textpolicy.TextRefused(problem)
    return value


def _id(value: Any, what: str) -> str:
    """Return an id (string or whole number) under the policy, or raise ``TextRefused``."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise textpolicy.TextRefused(f"{what} must be a string or a whole number")
    text = str(value).strip()
    problem = textpolicy.id_problem(text, what)
    if problem:
        raise textpolicy.TextRefused(problem)
    return text


def _refuse(errors: list[str]) -> None:
    """Raise ``ValidationError`` with the first ``MAX_ERRORS`` problems and a count of the rest."""
    if errors:
        raise ValidationError(textpolicy.cap_messages(errors))


def _is_json_lines(data: bytes) -> bool:
    """Return whether the file looks like JSON Lines (its first character is ``{``)."""
    return textpolicy.head_bytes(data[:4096]).lstrip()[:1] == b"{"


def parse_queries(data: bytes, name: str = "queries") -> list[QueryRow]:
    """Parse a queries file; raise ``ValidationError`` listing every bad line."""
    rows: list[QueryRow] = []
    errors: list[str] = []
    if _is_json_lines(data):
        objects, errors = _json_objects(data, name)
        for number, obj in objects:
            _, qid = _first(obj, QUERY_ID_KEYS)
            _, text = _first(obj, QUERY_TEXT_KEYS)
            if qid is None or text is None:
                errors.append(
                    f"line {number}: needs a query id ({'/'.join(QUERY_ID_KEYS)}) "
                    f"and a text ({'/'.join(QUERY_TEXT_KEYS)})"
                )
                continue
            try:
                row = QueryRow(
                    line=number,
                    external_id=_id(qid, "query id"),
                    text=_text(text, "text"),
                    description=_text(obj.get("description") or "", "description"),
                    narrative=_text(obj.get("narrative") or "", "narrative"),
                )
            except textpolicy.TextRefused as exc:
                errors.append(f"line {number}: {exc.message}")
                continue
            rows.append(row)
    else:
        for number, line in _lines(data, name):
            if len(errors) >= textpolicy.MAX_ERRORS:
                break
            parts = line.split("\t")
            if len(parts) < 2:
                errors.append(f"line {number}: expected 'qid<TAB>text'")
                continue
            try:
                row = QueryRow(
                    line=number, external_id=_id(parts[0], "query id"), text=_text(parts[1], "text")
                )
            except textpolicy.TextRefused as exc:
                errors.append(f"line {number}: {exc.message}")
                continue
            rows.append(row)
    _refuse(errors)
    return rows


def parse_documents(data: bytes, name: str = "documents") -> list[DocumentRow]:
    """Parse a JSON Lines documents file; raise ``ValidationError`` listing every bad line."""
    if not _is_json_lines(data) and data.strip():
        raise ValidationError(["line 1: documents must be JSON Lines (one object per line)"])
    objects, errors = _json_objects(data, name)
    rows: list[DocumentRow] = []
    for number, obj in objects:
        id_key, docno = _first(obj, DOCUMENT_ID_KEYS)
        if docno is None:
            errors.append(f"line {number}: needs a document id ({'/'.join(DOCUMENT_ID_KEYS)})")
            continue
        body_key, body = _first(obj, DOCUMENT_BODY_KEYS)
        known = {id_key, body_key, "title", "url"}
        try:
            url = _text(obj.get("url") or "", "url", max_length=textpolicy.MAX_URL_LENGTH)
            problem = textpolicy.url_problem(url)
            if problem:
                raise textpolicy.TextRefused(problem)
            row = DocumentRow(
                line=number,
                external_id=_id(docno, "document id"),
                title=_text(obj.get("title") or "", "title"),
                body=_text(body or "", "body"),
                url=url,
                extra={k: v for k, v in obj.items() if k not in known},
            )
        except textpolicy.TextRefused as exc:
            errors.append(f"line {number}: {exc.message}")
            continue
        rows.append(row)
    _refuse(errors)
    return rows


def parse_pairs_collecting(
    data: bytes | str, name: str = "pairs"
) -> tuple[list[PairRow], list[tuple[int, str]]]:
    """Parse ``qid docno`` lines; return the well-formed rows and (line, message) errors."""
    rows: list[PairRow] = []
    errors: list[tuple[int, str]] = []
    for number, line in _lines(data, name):
        if len(errors) >= textpolicy.MAX_ERRORS:
            break
        parts = line.split()
        if len(parts) != 2:
            errors.append(
                (
                    number,
                    f"line {number}: expected two fields “query-id document-id”, got {len(parts)}",
                )
            )
            continue
        problem = textpolicy.id_problem(parts[0], "query id") or textpolicy.id_problem(
            parts[1], "document id"
        )
        if problem:
            errors.append((number, f"line {number}: {problem}"))
            continue
        rows.append(PairRow(number, parts[0], parts[1]))
    return rows, errors


def parse_pairs(data: bytes | str, name: str = "pairs") -> list[PairRow]:
    """Parse ``qid docno`` lines (bytes or text); raise ``ValidationError`` naming bad lines."""
    rows, errors = parse_pairs_collecting(data, name)
    _refuse([message for _line, message in errors])
    return rows
