r"""One policy for untrusted text: what Graded accepts in ids, notes, names and JSON.

Pure Python (no Django), so every importer, parser, serializer and middleware can use it:

* **Refused everywhere:** the NUL character and surrogate code points (a lone ``\\ud800``
  written as a JSON escape; text decoded from UTF-8 never contains them). PostgreSQL cannot
  store either, and neither is ever meaningful in a query id, a docno or a note.
* **Lengths** (characters): ids (qid, docno) :data:`MAX_ID_LENGTH`, notes
  :data:`MAX_NOTE_LENGTH`, names and tags :data:`MAX_NAME_LENGTH`.
* **JSON:** nesting deeper than :data:`MAX_JSON_DEPTH`, a number written with more than
  :data:`MAX_NUMBER_CHARS` characters, a number that overflows a double, and the
  non-standard ``NaN``/``Infinity`` are refused before anything is built from them.
* **Errors:** at most :data:`MAX_ERRORS` problems are listed (then a count), and values echoed
  in messages are cut to :data:`MAX_ECHO` characters (:func:`echo`).

The API: :func:`text_problem` (why a string is refused, or ``None``), :func:`check_text`
(raise :class:`TextRefused`), :func:`id_problem` (ids), :func:`url_problem` and
:func:`safe_link` (http(s) links only), :func:`decode_utf8` (bytes to text, naming the bad line),
:func:`loads_json` (safe ``json.loads``), :func:`echo`, and :class:`ErrorList` (a capped
list of line errors).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_ID_LENGTH = 500
"""Longest query id or docno, in characters (the database columns hold this many)."""
MAX_NOTE_LENGTH = 5_000
"""Longest judgment note, in characters."""
MAX_NAME_LENGTH = 200
"""Longest name (collection, judge, team), in characters."""
MAX_TEXT_LENGTH = 1_000_000
"""Longest free text (a document body, a prompt), in characters."""
MAX_URL_LENGTH = 2000
"""Longest document URL, in characters (the database column holds this many)."""
MAX_JSON_DEPTH = 32
"""Deepest nesting of arrays and objects accepted in JSON."""
MAX_NUMBER_CHARS = 100
"""Longest JSON number literal accepted, in characters."""
MAX_ERRORS = 100
"""Most problems listed for one input; the rest are only counted."""
MAX_ECHO = 80
"""Longest user value echoed back in an error message, in characters."""

FORBIDDEN = re.compile("[\x00\ud800-\udfff]")
"""Characters refused in every text: NUL and the surrogate code points."""


class TextRefused(ValueError):
    """A value breaks the text policy; ``message`` says why, ``line``/``field`` where."""

    def __init__(self, message: str, *, line: int | None = None, field: str | None = None):
        """Keep the message and where the problem is."""
        super().__init__(message)
        self.message = message
        self.line = line
        self.field = field


def echo(value: Any, limit: int = MAX_ECHO) -> str:
    """Return ``repr(value)`` cut to about ``limit`` characters, for error messages."""
    if isinstance(value, str) and len(value) > limit:
        return repr(value[:limit]) + f"… ({len(value)} characters)"
    if isinstance(value, bytes) and len(value) > limit:
        return repr(value[:limit]) + f"… ({len(value)} bytes)"
    text = repr(value) if not isinstance(value, int) or value.bit_length() < 300 else "a huge int"
    return text if len(text) <= limit else text[:limit] + "…"


def text_problem(value: str, *, max_length: int | None = None, what: str = "text") -> str | None:
    """Return why ``value`` is refused (NUL, a surrogate, too long), or ``None`` if it is fine."""
    found = FORBIDDEN.search(value)
    if found:
        char = found.group()
        kind = "a NUL character" if char == "\x00" else f"a lone surrogate ({char!a})"
        return f"{what} contains {kind} at position {found.start() + 1}"
    if max_length is not None and len(value) > max_length:
        return f"{what} is {len(value)} characters long; the limit is {max_length}"
    return None


def check_text(
    value: str,
    *,
    max_length: int | None = None,
    what: str = "text",
    line: int | None = None,
    field: str | None = None,
) -> str:
    """Return ``value`` if the policy accepts it; raise :class:`TextRefused` otherwise."""
    problem = text_problem(value, max_length=max_length, what=what)
    if problem:
        raise TextRefused(problem, line=line, field=field)
    return value


def id_problem(value: str, what: str = "id") -> str | None:
    """Return why an id (qid, docno) is refused: empty, NUL, surrogate, or too long."""
    if not value:
        return f"{what} is empty"
    return text_problem(value, max_length=MAX_ID_LENGTH, what=what)


_URL = re.compile(r"https?://[^\s/?#]+[^\s]*", re.IGNORECASE)


def url_problem(url: str) -> str | None:
    """Return why ``url`` is refused as a document link (only http(s) with a host), or ``None``.

    The empty string (no link) is accepted. ``javascript:``, ``data:``, ``vbscript:``,
    relative and scheme-less addresses are refused.
    """
    if not url:
        return None
    problem = text_problem(url, max_length=MAX_URL_LENGTH, what="url")
    if problem:
        return problem
    if not _URL.fullmatch(url):
        return f"url {echo(url)} is not an http:// or https:// address"
    return None


def safe_link(url: Any) -> str | None:
    """Return ``url`` if it may be rendered as a link (:func:`url_problem` accepts it)."""
    if isinstance(url, str) and url and url_problem(url) is None:
        return url
    return None


def decode_utf8(data: bytes, *, what: str = "the file") -> str:
    """Decode UTF-8 (a leading BOM is dropped); raise :class:`TextRefused` naming the line."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TextRefused(f"{what} is not valid UTF-8 (byte {exc.start + 1})", line=line) from None
    if "\x00" in text:
        position = text.index("\x00")
        line = text.count("\n", 0, position) + 1
        raise TextRefused(f"{what} contains a NUL character", line=line)
    return text


def _parse_int(token: str) -> int:
    if len(token) > MAX_NUMBER_CHARS:
        raise TextRefused(f"a number with {len(token)} digits is too long")
    return int(token)


def _parse_float(token: str) -> float:
    if len(token) > MAX_NUMBER_CHARS:
        raise TextRefused(f"a number with {len(token)} characters is too long")
    value = float(token)
    if not math.isfinite(value):
        raise TextRefused(f"the number {echo(token)} is out of range")
    return value


def _parse_constant(token: str) -> Any:
    raise TextRefused(f"{token} is not a JSON number")


def _check_tree(value: Any) -> None:
    """Walk decoded JSON without recursion: check depth and every string and key."""
    stack: list[tuple[Any, int, str]] = [(value, 1, "")]
    while stack:
        node, depth, path = stack.pop()
        if isinstance(node, str):
            problem = text_problem(node, what=f"the string at {path or 'the top'}")
            if problem:
                raise TextRefused(problem, field=path or None)
            continue
        if not isinstance(node, dict | list):
            continue
        if depth > MAX_JSON_DEPTH:
            raise TextRefused(f"JSON nested deeper than {MAX_JSON_DEPTH} levels", field=path)
        if isinstance(node, dict):
            for key, child in node.items():
                problem = text_problem(key, what="a key")
                if problem:
                    raise TextRefused(problem, field=path or None)
                stack.append((child, depth + 1, f"{path}.{key}" if path else key))
        else:
            stack.extend((child, depth + 1, f"{path}[{i}]") for i, child in enumerate(node))


def loads_json(text: str | bytes) -> Any:
    """Parse JSON under the policy; raise :class:`TextRefused` (a ``ValueError``) if refused.

    Refuses invalid JSON, nesting deeper than :data:`MAX_JSON_DEPTH`, numbers longer than
    :data:`MAX_NUMBER_CHARS` or out of a double's range, ``NaN``/``Infinity``, and NUL or
    surrogates in any string or key. ``field`` of the error is the JSON path, when known.
    """
    if isinstance(text, bytes):
        text = decode_utf8(text, what="the JSON")
    try:
        value = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except TextRefused:
        raise
    except RecursionError:
        raise TextRefused(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise TextRefused(
            f"not valid JSON ({exc.msg}, column {exc.colno})", line=exc.lineno
        ) from None
    except ValueError as exc:  # e.g. Python's limit on int digits
        raise TextRefused(f"not valid JSON ({echo(str(exc))})") from None
    _check_tree(value)
    return value


class ErrorList:
    """Collect ``{"line": n, "message": ...}`` problems, keeping the first :data:`MAX_ERRORS`.

    ``full`` tells a parser to stop reading; :meth:`items` ends with one item counting the
    problems not listed (and, when parsing stopped early, saying so).
    """

    def __init__(self, limit: int = MAX_ERRORS) -> None:
        """Start empty."""
        self.limit = limit
        self.errors: list[dict[str, Any]] = []
        self.total = 0

    def add(self, line: int | None, message: str) -> None:
        """Record one problem (``line`` is ``None`` for the input as a whole)."""
        self.total += 1
        if len(self.errors) < self.limit:
            item: dict[str, Any] = {"message": message}
            if line is not None:
                item["line"] = line
            self.errors.append(item)

    def extend(self, items: list[dict[str, Any]]) -> None:
        """Record already-shaped problems."""
        for item in items:
            self.total += 1
            if len(self.errors) < self.limit:
                self.errors.append(item)

    @property
    def full(self) -> bool:
        """Return whether the cap is reached (a parser should stop reading)."""
        return self.total >= self.limit

    def __bool__(self) -> bool:
        """Return whether any problem was recorded."""
        return self.total > 0

    def __len__(self) -> int:
        """Return how many problems were recorded (listed or not)."""
        return self.total


def cap_messages(messages: list[str]) -> list[str]:
    """Return the first :data:`MAX_ERRORS` of ``messages`` and one counting the rest."""
    kept = messages[:MAX_ERRORS]
    if len(messages) > len(kept):
        kept.append(f"... and {len(messages) - len(kept)} more problems")
    return kept


def cap_errors(
    errors: list[dict[str, Any]], *, stopped: bool = False, total: int | None = None
) -> list[dict[str, Any]]:
    """Return the first :data:`MAX_ERRORS` of ``errors`` and an item counting the rest.

    ``total`` is how many problems there were in all, when ``errors`` lists only some.
    """
    kept = errors[:MAX_ERRORS]
    more = max(len(errors) if total is None else total, len(errors)) - len(kept)
    if more or stopped:
        tail = f"... and {more} more problems" if more else "... and possibly more problems"
        if stopped:
            tail += f" (reading stopped after {MAX_ERRORS} problems)"
        kept.append({"message": tail})
    return kept
