"""Exceptions raised by the metrics engine.

Input problems (a malformed run or qrels file) are collected, not raised one at a
time: a reader gathers every :class:`InputError` it finds and raises a single
:class:`EngineInputError`.  Unknown or malformed measure names raise
:class:`MeasureError`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

MAX_ERRORS = 100
"""At most this many :class:`InputError` objects are kept; the rest are only counted."""


def place(line: int | None, item: int | None = None) -> str:
    """Name where a problem is: ``item 2 (line 1)`` in a JSON array, else ``line 3``.

    A JSON array may hold every record on one line, so its records are named by their
    1-based position in the array; the line is added for arrays spread over lines.
    Empty when neither is known.
    """
    if item is not None:
        return f"item {item}" if line is None else f"item {item} (line {line})"
    return "" if line is None else f"line {line}"


@dataclass(frozen=True)
class InputError:
    """One problem in one input: the file (or source) name, the 1-based line, the reason.

    ``line`` is ``None`` when the problem concerns the input as a whole; ``item`` is the
    1-based position of the record in a JSON array (``None`` elsewhere).
    """

    file: str
    line: int | None
    message: str
    item: int | None = None

    def __str__(self) -> str:
        """Return ``file:line: message``, ``file: item N (line L): message``, ``file: message``."""
        if self.item is not None:
            return f"{self.file}: {place(self.line, self.item)}: {self.message}"
        if self.line is None:
            return f"{self.file}: {self.message}"
        return f"{self.file}:{self.line}: {self.message}"


class EngineInputError(ValueError):
    """Raised when an input cannot be evaluated; carries every problem found.

    Attributes:
        errors: the first :data:`MAX_ERRORS` problems, in file and line order.
        total: how many problems were found in all (``>= len(errors)``).
    """

    def __init__(self, errors: Iterable[InputError], total: int | None = None) -> None:
        """Keep at most :data:`MAX_ERRORS` errors and remember how many there were."""
        errs = list(errors)
        self.total = len(errs) if total is None else max(total, len(errs))
        self.errors: list[InputError] = errs[:MAX_ERRORS]
        super().__init__(self._summary())

    @property
    def omitted(self) -> int:
        """Return how many problems were found but not kept in :attr:`errors`."""
        return self.total - len(self.errors)

    def _summary(self) -> str:
        lines = [str(e) for e in self.errors]
        if self.omitted:
            lines.append(f"... and {self.omitted} more errors")
        return "\n".join(lines) if lines else "invalid input"

    def __reduce__(self):  # keep .errors/.total across processes (evaluate_many)
        """Pickle with the error list and total."""
        return (type(self), (self.errors, self.total))


class MeasureError(ValueError):
    """Raised for an unknown measure name or an invalid measure parameter."""


class ErrorCollector:
    """Accumulate :class:`InputError` objects, keeping at most ``limit`` but counting all."""

    def __init__(self, file: str, limit: int = MAX_ERRORS) -> None:
        """Collect errors for ``file``."""
        self.file = file
        self.limit = limit
        self.errors: list[InputError] = []
        self.total = 0

    def add(self, line: int | None, message: str, item: int | None = None) -> None:
        """Record one problem at ``line`` (and ``item`` of a JSON array)."""
        self.total += 1
        if len(self.errors) < self.limit:
            self.errors.append(InputError(self.file, line, message, item))

    def __bool__(self) -> bool:
        """Return whether any problem was recorded."""
        return self.total > 0

    def raise_if_any(self) -> None:
        """Raise :class:`EngineInputError` if any problem was recorded."""
        if self.total:
            raise EngineInputError(self.errors, self.total)
