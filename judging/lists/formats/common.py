"""What every reader shares: the text policy, line decoding and a capped problem list.

The policy itself lives in :mod:`graded.textpolicy` (one policy for every importer,
parser and serializer); this module only turns its refusals into line-numbered
:class:`Problem` s: :func:`text` (NUL, lone surrogates, a length limit), :func:`ident`
(query ids and docnos), :func:`url` (http(s) links only), :func:`json_value` (JSON under
the policy) and :func:`iter_lines` (UTF-8 decoding).
"""

from __future__ import annotations

import csv
import dataclasses
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from graded import textpolicy

#: Problems listed one by one; the rest are only counted (the policy's cap).
MAX_REPORTED = textpolicy.MAX_ERRORS
_CHUNK = 1 << 16


@dataclass(frozen=True)
class Problem:
    """One problem of an input: where it is, the field if known, a message.

    ``line`` counts from 1: lines of a text file, or elements of a JSON array when
    ``unit`` is ``"item"`` (None: the unit of the :class:`Problems` holding it). ``part``
    (``topics``, ``documents``, ``pairs``, ``judgments``) and ``file`` (its name) say
    which file of a several-file import it belongs to.
    """

    line: int | None
    message: str
    field: str | None = None
    unit: str | None = None
    part: str | None = None
    file: str | None = None

    def as_dict(self, unit: str = "line") -> dict[str, Any]:
        """Return the API error item ``{"message", "line"/"item"?, "field"?, "part"?, "file"?}``."""
        item: dict[str, Any] = {"message": self.message}
        if self.line is not None:
            item[self.unit or unit] = self.line
        for key in ("field", "part", "file"):
            if getattr(self, key):
                item[key] = getattr(self, key)
        return item

    def __str__(self) -> str:
        """Return ``line N: field: message`` (``item N`` in a JSON array)."""
        return describe(self.as_dict())


def describe(item: dict[str, Any]) -> str:
    """Return an error item as one line: ``topics file 't.tsv': line 3: text: message``."""
    where = ""
    if "part" in item:
        name = f" {textpolicy.echo(item['file'])}" if "file" in item else ""
        where = f"{item['part']} file{name}: "
    for unit in UNITS:
        if unit in item:
            where += f"{unit} {item[unit]}: "
    field = f"{item['field']}: " if "field" in item else ""
    return f"{where}{field}{item['message']}"


#: What the number of a :class:`Problem` counts.
UNITS = ("line", "item")


class FormatError(ValueError):
    """A value a reader refuses; carries the :class:`Problem`."""

    def __init__(self, line: int | None, message: str, field: str | None = None) -> None:
        """Keep the problem."""
        self.problem = Problem(line, message, field)
        super().__init__(str(self.problem))


class Problems:
    """Collect problems; keep the first :data:`MAX_REPORTED` and count the rest.

    ``unit`` is what their numbers count: ``"line"`` of a text file or ``"item"`` of a
    JSON array (a problem may say otherwise, e.g. a JSON syntax error's line).
    """

    def __init__(self, unit: str = "line") -> None:
        """Start empty."""
        self.items: list[Problem] = []
        self.total = 0
        self.stopped = False
        self.unit = unit

    def add(self, problem: Problem) -> None:
        """Record one problem."""
        self.total += 1
        if len(self.items) < MAX_REPORTED:
            self.items.append(problem)

    def extend(self, problems: Iterable[Problem]) -> None:
        """Record several problems."""
        for problem in problems:
            self.add(problem)

    def merge(self, other: Problems, *, part: str, file: str | None = None) -> None:
        """Add the problems of one file of a several-file import, naming the file.

        Kept in the order merged (file by file); the other's unit and uncounted rest
        come along.
        """
        for problem in sorted(other.items, key=lambda p: p.line or 0):
            self.add(
                dataclasses.replace(problem, unit=problem.unit or other.unit, part=part, file=file)
            )
        self.total += other.total - len(other.items)
        self.stopped = self.stopped or other.stopped

    @property
    def full(self) -> bool:
        """Return whether the cap is reached (a reader should stop reading)."""
        return self.total >= MAX_REPORTED

    def __bool__(self) -> bool:
        """Return whether any problem was recorded."""
        return self.total > 0

    def as_dicts(self) -> list[dict[str, Any]]:
        """Return the API error items, by file then line, with a last item counting the rest.

        The tail is :func:`graded.textpolicy.cap_errors`' (also saying when reading
        stopped at the cap).
        """
        parts: dict[str | None, int] = {}
        for problem in self.items:
            parts.setdefault(problem.part, len(parts))
        ordered = sorted(self.items, key=lambda p: (parts[p.part], p.line or 0))
        items = [p.as_dict(self.unit) for p in ordered]
        return textpolicy.cap_errors(items, stopped=self.stopped, total=self.total)

    def messages(self) -> list[str]:
        """Return the problems as ``line N: ...`` strings (plus the count of the rest)."""
        return [describe(item) for item in self.as_dicts()]


def text(
    value: Any, line: int | None, field: str, max_length: int | None = textpolicy.MAX_TEXT_LENGTH
) -> str:
    """Return ``value`` as text under :func:`graded.textpolicy.text_problem`.

    The one gate every text value of every reader passes through: NUL characters, lone
    surrogates and values longer than ``max_length`` raise :class:`FormatError` naming
    the line and the field, and so do control characters in the fields
    :data:`graded.textpolicy.FIELD_KINDS` names (a query's text, a document's title,
    descriptions and narratives).
    """
    if not isinstance(value, str):
        value = str(value)
    problem = textpolicy.text_problem(
        value, max_length=max_length, what=field
    ) or textpolicy.kind_problem(field, value)
    if problem:
        raise FormatError(line, problem, field)
    return value


def ident(value: str, line: int | None, field: str) -> str:
    """Return a query id or docno (stripped) under :func:`graded.textpolicy.id_problem`."""
    value = text(value, line, field, None).strip()
    problem = textpolicy.id_problem(value, what=field)
    if problem:
        raise FormatError(line, problem, field)
    return value


def url(value: str, line: int | None, field: str = "url") -> str:
    """Return a document URL: empty or http(s) (:func:`graded.textpolicy.url_problem`)."""
    value = text(value, line, field, None).strip()
    problem = textpolicy.url_problem(value)
    if problem:
        raise FormatError(line, problem, field)
    return value


def json_value(line: int | None, data: str) -> Any:
    """Parse JSON with :func:`graded.textpolicy.loads_json`.

    Deep nesting, huge numbers, NUL and surrogates are refused: :class:`FormatError`
    naming the line (and the JSON path).
    """
    try:
        return textpolicy.loads_json(data)
    except textpolicy.TextRefused as exc:
        where = line if line is not None else exc.line
        raise FormatError(where, exc.message, exc.field) from None


def _decode(data: bytes, before: int) -> str:
    """Decode complete lines with :func:`graded.textpolicy.decode_utf8`.

    ``before`` lines came earlier, so a refusal names the line of the whole input (and the
    block is not the input's start: its byte-order mark was handled already).
    """
    try:
        return textpolicy.decode_utf8(data, start=False)
    except textpolicy.TextRefused as exc:
        raise FormatError(before + (exc.line or 1), exc.message) from None


def iter_lines(stream: IO[bytes] | bytes | str) -> Iterator[tuple[int, str]]:
    """Yield ``(line number, text)`` of a text input, without its line ending.

    Reads a binary stream in chunks, so a file of any size costs about one chunk of
    memory (plus its longest line). The bytes go through
    :func:`graded.textpolicy.utf8_chunks`, the one decoding point of text inputs: a
    byte-order mark at the start is dropped (UTF-16 and UTF-32 with a mark are decoded);
    a U+FEFF further on is kept. Text that is not UTF-8, or holds a NUL character, raises
    :class:`FormatError` naming the line. ``str`` input loses one leading U+FEFF.
    """
    if isinstance(stream, str):
        lines = textpolicy.strip_bom(stream).split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        for number, line in enumerate(lines, start=1):
            yield number, line.removesuffix("\r")
        return
    if isinstance(stream, bytes | bytearray):
        raw: Iterable[bytes] = [bytes(stream)]
    else:
        raw = iter(lambda: stream.read(_CHUNK), b"")
    chunks = textpolicy.utf8_chunks(raw)
    number = 0
    pending: list[bytes] = []  # bytes after the last line feed seen
    while True:
        try:
            chunk = next(chunks)
        except StopIteration:
            break
        except textpolicy.TextRefused as exc:
            raise FormatError(exc.line or number + 1, exc.message) from None
        cut = chunk.rfind(b"\n")
        if cut < 0:
            pending.append(chunk)
            continue
        pending.append(chunk[: cut + 1])
        block = b"".join(pending)
        pending = [chunk[cut + 1 :]]
        *complete, _ = _decode(block, number).split("\n")
        for line in complete:
            number += 1
            yield number, line.removesuffix("\r")
    rest = b"".join(pending)
    if rest:
        yield number + 1, _decode(rest, number).removesuffix("\r")


def csv_records(
    lines: Iterable[tuple[int, str]], *, delimiter: str = ","
) -> Iterator[tuple[int, list[str]] | Problem]:
    """Yield ``(first line, cells)`` of each non-blank RFC 4180 record of csv lines.

    A record may span lines (a quoted cell with line breaks); it is named by the line it
    starts on. Malformed csv yields one :class:`Problem` and stops. ``delimiter`` is a tab
    for tab-separated values.
    """
    numbers: list[int] = []

    def physical() -> Iterator[str]:
        for number, line in lines:
            numbers.append(number)
            yield line + "\n"

    reader = csv.reader(physical(), strict=True, delimiter=delimiter)
    while True:
        start = len(numbers) + 1
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            yield Problem(numbers[-1] if numbers else start, f"not valid csv: {exc}")
            return
        line = numbers[start - 1] if start - 1 < len(numbers) else start
        if record and any(v.strip() for v in record):
            yield line, record


#: First characters that make a spreadsheet read a cell as a formula (OWASP), compared after
#: NFKC normalisation, so that full-width and small forms (＝ U+FF1D, ＋, －, ＠, ﹦) count.
FORMULA_STARTS = ("=", "+", "-", "@")
#: Control characters that start a formula on their own (OWASP: tab, carriage return).
FORMULA_CONTROLS = ("\t", "\r")


def _skipped_before_formula(char: str) -> bool:
    """Return whether a spreadsheet may skip ``char`` before it reads a formula.

    Any separator or space (Unicode Z*: space, NBSP, U+3000, line separators) and any
    control, format or other invisible character (C*: LF, VT, FF, U+200B, U+FEFF, bidi
    marks, private use), since some spreadsheet or import step trims each of them.
    """
    return unicodedata.category(char)[0] in "ZC"


def is_formula(text: str) -> bool:
    """Return whether a spreadsheet could take ``text`` for a formula.

    True when ``text`` starts with a tab or carriage return, or when its first visible
    character, after any leading spaces and invisible characters, is ``=``, ``+``, ``-``
    or ``@`` in any width (NFKC: ``＝`` is ``=``).
    """
    if text.startswith(FORMULA_CONTROLS):
        return True
    for char in text:
        if not _skipped_before_formula(char):
            return unicodedata.normalize("NFKC", char).startswith(FORMULA_STARTS)
    return False


def needs_formula_guard(text: str) -> bool:
    """Return whether a csv export must prefix ``text`` with ``'``.

    Formulas do, and so does text that starts with ``'`` before a formula, so that
    :func:`csv_cell_text` gives back exactly what was written.
    """
    return is_formula(text.lstrip("'"))


def csv_cell_text(cell: str) -> str:
    """Return a csv cell's text without the formula guard (a leading ``'``) csv exports add."""
    if cell.startswith("'") and needs_formula_guard(cell[1:]):
        return cell[1:]
    return cell
