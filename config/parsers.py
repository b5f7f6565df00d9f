"""The API's parsers: every request body is read under the project's text policy.

JSON, form-encoded and multipart bodies get the same rules (:mod:`graded.textpolicy`): they
are decoded at its one decoding point (a byte-order mark at the start of a JSON or form
body is dropped; UTF-16 and UTF-32 with a mark are decoded; a multipart body's mark falls
in its preamble, which is ignored, and uploaded files are decoded where they are read); a
NUL character or a lone surrogate in any value or field name, or a value longer than
:data:`graded.textpolicy.MAX_TEXT_LENGTH`, is a 400 naming the field, before any
serializer, form field or database sees it. A form field once took a NUL to PostgreSQL
and came back as a 500 (``collections``, ``llm_provider`` of ``POST /api/v1/judges/``).
Every API view uses these classes (``DEFAULT_PARSER_CLASSES``, or the same classes named
in its ``parser_classes``).
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import DataAndFiles, FormParser, JSONParser, MultiPartParser

from graded import textpolicy


def _refused(kind: str, message: str, field: str | None) -> ParseError:
    """Return the 400 of a refused body, with ``field`` set when known."""
    where = f" (at {field})" if field else ""
    error = ParseError(f"{kind} parse error - {message}{where}")
    item: dict[str, Any] = {"message": str(error.detail)}
    if field:  # so a client sees which field was refused
        item["field"] = field[:200]
    error.errors = [item]  # rendered as is by config.api.exception_handler
    return error


def check_fields(kind: str, items: Iterable[tuple[str, list[Any]]]) -> None:
    """Raise ``ParseError`` naming the first field whose name or text value the policy refuses."""
    for key, values in items:
        name_problem = textpolicy.text_problem(
            key, max_length=textpolicy.MAX_NAME_LENGTH, what="a field name"
        )
        if name_problem:
            raise _refused(kind, name_problem, textpolicy.FORBIDDEN.sub("?", key))
        for value in values:
            text = value if isinstance(value, str) else getattr(value, "name", None)
            if not isinstance(text, str):
                continue
            problem = textpolicy.text_problem(
                text, max_length=textpolicy.MAX_TEXT_LENGTH, what=f"field {key!r}"
            )
            if problem:
                raise _refused(kind, problem, key)


class PolicyJSONParser(JSONParser):
    """Parse JSON with :func:`graded.textpolicy.loads_json`; refusals are 400s.

    Deep nesting, numbers of hundreds of digits or beyond a double's range, ``NaN``, NUL
    characters and lone surrogates anywhere in the body are refused before any serializer
    sees them, with the JSON path of the offending value.
    """

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        """Return the decoded body or raise ``ParseError`` naming the problem."""
        data = stream.read() if stream is not None else b""
        try:
            return textpolicy.loads_json(data)
        except textpolicy.TextRefused as exc:
            raise _refused("JSON", exc.message, exc.field) from None


class PolicyFormParser(FormParser):
    """Parse ``application/x-www-form-urlencoded`` bodies; refuse NUL, surrogates, huge values."""

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        """Return the form's QueryDict or raise ``ParseError`` naming the field.

        The body goes through :func:`graded.textpolicy.utf8_bytes` first, as every text
        input does: a byte-order mark at its start is not part of the first field's name.
        """
        body = stream.read() if stream is not None else b""
        try:
            body = textpolicy.utf8_bytes(body, what="the form")
        except textpolicy.TextRefused as exc:
            raise _refused("Form", exc.message, None) from None
        data = super().parse(io.BytesIO(body), media_type, parser_context)
        check_fields("Form", data.lists())
        return data


class PolicyMultiPartParser(MultiPartParser):
    """Parse multipart bodies; field values and file names follow the text policy."""

    def parse(
        self,
        stream: IO[bytes] | None,
        media_type: str | None = None,
        parser_context: dict[str, Any] | None = None,
    ) -> Any:
        """Return data and files or raise ``ParseError`` naming the field."""
        parsed = super().parse(stream, media_type, parser_context)
        check_fields("Multipart form", parsed.data.lists())
        check_fields("Multipart form", parsed.files.lists())
        return DataAndFiles(parsed.data, parsed.files)
