"""The API's JSON parser: request bodies are read under the project's text policy."""

from __future__ import annotations

from typing import IO, Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from judging import textpolicy


class PolicyJSONParser(JSONParser):
    """Parse JSON with :func:`judging.textpolicy.loads_json`; refusals are 400s.

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
            where = f" (at {exc.field})" if exc.field else ""
            error = ParseError(f"JSON parse error - {exc.message}{where}")
            item: dict[str, Any] = {"message": str(error.detail)}
            if exc.field:  # the JSON path, so a client sees which field was refused
                item["field"] = exc.field
            error.errors = [item]  # rendered as is by config.api.exception_handler
            raise error from None
