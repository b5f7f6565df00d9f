"""What every reader shares: the text policy, line decoding and a capped problem list."""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

#: Problems listed one by one; the rest are only counted.
MAX_REPORTED = 100
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Problem:
    """One problem of an input: its 1-based line (or item), the field if known, a message."""

    line: int | None
    message: str
    field: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """Return the API error item ``{"message", "line"?, "field"?}``."""
        item: dict[str, Any] = {"message": self.message}
        if self.line is not None:
            item["line"] = self.line
        if self.field:
            item["field"] = self.field
        return item

    def __str__(self) -> str:
        """Return ``line N: field: message``."""
        where = f"line {self.line}: " if self.line is not None else ""
        field = f"{self.field}: " if self.field else ""
        return f"{where}{field}{self.message}"


class FormatError(ValueError):
    """A value a reader refuses; carries the :class:`Problem`."""

    def __init__(self, line: int | None, message: str, field: str | None = None) -> None:
        """Keep the problem."""
        self.problem = Problem(line, message, field)
        super().__init__(str(self.problem))


class Problems:
    """Collect problems; keep the first :data:`MAX_REPORTED` and count the rest."""

    def __init__(self) -> None:
        """Start empty."""
        self.items: list[Problem] = []
        self.total = 0

    def add(self, problem: Problem) -> None:
        """Record one problem."""
        self.total += 1
        if len(self.items) < MAX_REPORTED:
            self.items.append(problem)

    def extend(self, problems: Iterable[Problem]) -> None:
        """Record several problems."""
        for problem in problems:
            self.add(problem)

    def __bool__(self) -> bool:
        """Return whether any problem was recorded."""
        return self.total > 0

    def as_dicts(self) -> list[dict[str, Any]]:
        """Return the API error items, sorted by line, with a last item counting the rest."""
        items = [p.as_dict() for p in sorted(self.items, key=lambda p: p.line or 0)]
        if self.total > len(self.items):
            items.append({"message": f"… and {self.total - len(self.items)} more problems."})
        return items

    def messages(self) -> list[str]:
        """Return the problems as ``line N: ...`` strings (plus the count of the rest)."""
        messages = []
        for item in self.as_dicts():
            where = f"line {item['line']}: " if "line" in item else ""
            field = f"{item['field']}: " if "field" in item else ""
            messages.append(f"{where}{field}{item['message']}")
        return messages


def text(value: Any, line: int | None, field: str) -> str:
    """Return ``value`` as text, refusing NUL characters and lone surrogates.

    The one gate every text value of every reader passes through. Raises
    :class:`FormatError` naming the line and the field.
    """
    if not isinstance(value, str):
        value = str(value)
    if "\x00" in value:
        raise FormatError(line, "contains a NUL character", field)
    if _LONE_SURROGATE.search(value):
        raise FormatError(line, "contains a lone surrogate (not valid Unicode)", field)
    return value


def iter_lines(stream: IO[bytes] | bytes | str) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, text)`` of a UTF-8 input, without its line ending.

    Reads a binary stream in chunks, so a file of any size costs one chunk of memory.
    A byte order mark is dropped. Input that is not UTF-8 raises :class:`FormatError`
    naming the line.
    """
    if isinstance(stream, str):
        lines = stream.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, start=1):
            yield number, line.removesuffix("\r")
        return
    if isinstance(stream, bytes | bytearray):
        chunks: Iterable[bytes] = [bytes(stream)]
    else:
        chunks = iter(lambda: stream.read(_CHUNK), b"")
    decoder = codecs.getincrementaldecoder("utf-8-sig")()
    number = 0
    pending = ""
    for chunk in chunks:
        try:
            decoded = decoder.decode(chunk)
        except UnicodeDecodeError as exc:
            line = number + pending.count("\n") + chunk[: max(exc.start, 0)].count(b"\n") + 1
            raise FormatError(line, "not UTF-8 text") from None
        pending += decoded
        *complete, pending = pending.split("\n")
        for line in complete:
            number += 1
            yield number, line.removesuffix("\r")
    try:
        pending += decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        raise FormatError(number + 1, "not UTF-8 text") from None
    if pending:
        yield number + 1, pending.removesuffix("\r")
