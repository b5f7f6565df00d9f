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

* **Control characters** (:func:`name_problem`, :func:`prose_problem`): names and
  titles (collections, teams, judges, run tags, query and document titles) refuse every C0
  control character but tab and line feed, and DEL and the C1 controls (U+0080-U+009F);
  prose (guidelines, descriptions, narratives, prompts) refuses the same but also accepts
  carriage returns. Document bodies, notes and models' raw output are kept as given
  (rendered escaped); only NUL and surrogates are refused there.
* **Encodings** (:func:`byte_order_mark`, :func:`utf8_bytes`, :func:`utf8_chunks`,
  :func:`decode_utf8`): the one decoding point of every text input (files, uploads,
  request bodies). Text is UTF-8; a byte-order mark at the very start is dropped, and a
  UTF-16 or UTF-32 byte-order mark means the text is decoded from that encoding. A
  U+FEFF anywhere else is an ordinary character (a zero-width no-break space) and stays.

The API: :func:`text_problem` (why a string is refused, or ``None``), :func:`check_text`
(raise :class:`TextRefused`), :func:`id_problem` (ids), :func:`name_problem` and
:func:`prose_problem` (control characters), :func:`url_problem` and :func:`safe_link`
(http(s) links only), :func:`decode_utf8` (bytes to text, naming the bad line),
:func:`loads_json` (safe ``json.loads``), :func:`echo`, and :class:`ErrorList` (a capped
list of line errors).
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Iterable, Iterator, Mapping
from itertools import chain
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

CONTROL_IN_NAMES = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Control characters refused in names and titles: C0 but tab and line feed, DEL, C1."""
CONTROL_IN_PROSE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
"""Control characters refused in prose: as in names, but a carriage return is accepted."""

#: Control names of the C0 characters (U+0000-U+001F) and of the C1 ones (U+0080-U+009F).
_C0_NAMES = (  # noqa: SIM905 (one line of names reads better than 32)
    "NUL SOH STX ETX EOT ENQ ACK BEL BS HT LF VT FF CR SO SI "
    "DLE DC1 DC2 DC3 DC4 NAK SYN ETB CAN EM SUB ESC FS GS RS US"
).split()
_C1_NAMES = (  # noqa: SIM905
    "PAD HOP BPH NBH IND NEL SSA ESA HTS HTJ VTS PLD PLU RI SS2 SS3 "
    "DCS PU1 PU2 STS CCH MW SPA EPA SOS SGC SCI CSI ST OSC PM APC"
).split()


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


def character_name(char: str) -> str:
    """Return ``U+001B ESC``: the code point of ``char`` and its control name, if it has one."""
    code = ord(char)
    if code < 0x20:
        name = _C0_NAMES[code]
    elif code == 0x7F:
        name = "DEL"
    elif 0x80 <= code <= 0x9F:
        name = _C1_NAMES[code - 0x80]
    else:
        name = ""
    return f"U+{code:04X} {name}".rstrip()


def _control_problem(value: str, pattern: re.Pattern[str], what: str) -> str | None:
    found = pattern.search(value)
    if found is None:
        return None
    return (
        f"{what} contains a control character ({character_name(found.group())}) "
        f"at position {found.start() + 1}"
    )


def name_problem(
    value: str, *, what: str = "the name", max_length: int | None = MAX_NAME_LENGTH
) -> str | None:
    """Return why a name or title is refused, or ``None``.

    Besides :func:`text_problem` (NUL, surrogates, length), a control character: any C0
    character but tab and line feed, DEL or a C1 character, named with its position
    (``contains a control character (U+001B ESC) at position 4``).
    """
    return text_problem(value, max_length=max_length, what=what) or _control_problem(
        value, CONTROL_IN_NAMES, what
    )


def prose_problem(
    value: str, *, what: str = "the text", max_length: int | None = MAX_TEXT_LENGTH
) -> str | None:
    """Return why prose (guidelines, descriptions, narratives, prompts) is refused, or ``None``.

    As :func:`name_problem`, but carriage returns are accepted (line endings).
    """
    return text_problem(value, max_length=max_length, what=what) or _control_problem(
        value, CONTROL_IN_PROSE, what
    )


#: The text fields of imported files and batches by what they hold (see :func:`kind_problem`):
#: a query's text and a document's title are titles; descriptions and narratives prose.
#: Any other field (a document body, a note, ``extra``) refuses only NUL and surrogates.
FIELD_KINDS: dict[str, str] = {
    "text": "name",
    "title": "name",
    "user_email": "name",
    "description": "prose",
    "desc": "prose",
    "narrative": "prose",
    "narr": "prose",
}
_LABELS = {"guidelines": "guidelines text", "desc": "description", "narr": "narrative"}


def kind_problem(field: str, value: str, *, what: str | None = None) -> str | None:
    """Return the control character ``value`` may not hold as field ``field``, or ``None``.

    :data:`FIELD_KINDS` says which fields are names (:data:`CONTROL_IN_NAMES`) and which
    prose (:data:`CONTROL_IN_PROSE`); other fields are not checked here.
    """
    kind = FIELD_KINDS.get(field)
    if kind is None:
        return None
    pattern = CONTROL_IN_NAMES if kind == "name" else CONTROL_IN_PROSE
    return _control_problem(value, pattern, what or field)


def field_problems(
    *, names: Mapping[str, str | None] | None = None, prose: Mapping[str, str | None] | None = None
) -> dict[str, list[str]]:
    """Return ``{field: [message]}`` for the names and prose the policy refuses.

    For services: ``names`` (collection and team names, run tags, judge names, titles) go
    through :func:`name_problem`, ``prose`` (guidelines, descriptions) through
    :func:`prose_problem`; ``None`` values (not being changed) are skipped. Lengths are left
    to the caller, which knows its field's limit. The message names the field:
    ``The judge name contains a control character (U+001B ESC) at position 4.``
    """
    found: dict[str, list[str]] = {}
    for values, check in ((names or {}, name_problem), (prose or {}, prose_problem)):
        for field, value in values.items():
            if isinstance(value, str):
                label = _LABELS.get(field, field.replace("_", " "))
                problem = check(value, what=f"The {label}", max_length=None)
                if problem:
                    found[field] = [f"{problem}."]
    return found


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


#: Byte-order marks a text input may start with: (mark, codec, what it means), UTF-32's
#: first, since UTF-32 little-endian's starts with UTF-16 little-endian's.
BYTE_ORDER_MARKS: tuple[tuple[bytes, str, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32 (little-endian)"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32 (big-endian)"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16 (little-endian)"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16 (big-endian)"),
)


def byte_order_mark(head: bytes) -> tuple[int, str, str]:
    """Return (length of the byte-order mark, codec, encoding) of text starting with ``head``.

    ``(0, "utf-8", "UTF-8")`` when ``head`` starts with no byte-order mark: text is UTF-8.
    Four bytes of ``head`` are enough.
    """
    head = bytes(head[:4])
    for mark, codec, name in BYTE_ORDER_MARKS:
        if head.startswith(mark):
            return len(mark), codec, name
    return 0, "utf-8", "UTF-8"


def _utf16_hint(data: bytes) -> str:
    """Return a hint when ``data`` looks like UTF-16 without a byte-order mark, else ``""``."""
    head = bytes(data[:200])
    if len(head) < 4:
        return ""
    even, odd = head[0::2], head[1::2]
    if even.count(0) * 2 > len(even) or odd.count(0) * 2 > len(odd):
        return " (it looks like UTF-16 without a byte-order mark: save it as UTF-8)"
    return ""


def _not_encoded(what: str, name: str, data: bytes, skip: int, codec: str, at: int) -> TextRefused:
    """Return the refusal of text that is not valid ``name``; ``at`` is the bad byte's offset."""
    before = bytes(data[skip:at]).decode(codec, "replace")
    return TextRefused(f"{what} is not valid {name} (byte {at + 1})", line=before.count("\n") + 1)


def utf8_bytes(data: bytes, *, what: str = "the file") -> bytes:
    """Return ``data`` as UTF-8 without a leading byte-order mark (the one decoding rule).

    No mark: ``data`` itself. A UTF-8 mark is dropped. A UTF-16 or UTF-32 mark: the text is
    decoded from that encoding and given back in UTF-8 (line breaks, and so line numbers,
    unchanged). Only the first bytes are looked at: a U+FEFF further on stays.

    Raises:
        TextRefused: UTF-16 or UTF-32 text that is not valid (naming the byte and line).
    """
    skip, codec, name = byte_order_mark(data)
    if codec == "utf-8":
        return data[skip:] if skip else data
    try:
        return bytes(data[skip:]).decode(codec).encode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_encoded(what, name, data, skip, codec, skip + exc.start) from None


def utf8_chunks(chunks: Iterable[bytes], *, what: str = "the file") -> Iterator[bytes]:
    """Yield the chunks of a text input as UTF-8 without a leading byte-order mark.

    :func:`utf8_bytes` for a stream read in chunks: only the first bytes are looked at for
    a mark; UTF-16 and UTF-32 are decoded chunk by chunk (a character may straddle two).

    Raises:
        TextRefused: UTF-16 or UTF-32 text that is not valid (naming the byte and line).
    """
    rest = iter(chunks)
    head = b""
    for chunk in rest:
        head += chunk
        if len(head) >= 4:
            break
    skip, codec, name = byte_order_mark(head)
    if codec == "utf-8":
        if head[skip:]:
            yield head[skip:]
        yield from rest
        return
    decoder = codecs.getincrementaldecoder(codec)()
    offset, lines = skip, 0  # bytes decoded so far (from the file's start), line breaks seen
    for chunk in chain([head[skip:]], rest, [b""]):
        pending = len(decoder.getstate()[0])
        try:
            text = decoder.decode(chunk, final=not chunk)
        except UnicodeDecodeError as exc:
            at = offset - pending + exc.start
            line = lines + exc.object[: exc.start].decode(codec, "replace").count("\n") + 1
            raise TextRefused(f"{what} is not valid {name} (byte {at + 1})", line=line) from None
        offset += len(chunk)
        lines += text.count("\n")
        if text:
            yield text.encode("utf-8")


def head_bytes(head: bytes) -> bytes:
    """Return the first bytes of an input as UTF-8 without a byte-order mark (to guess a format).

    UTF-16 and UTF-32 are decoded leniently: a character cut off at the end is dropped.
    """
    skip, codec, _ = byte_order_mark(head)
    if codec == "utf-8":
        return bytes(head[skip:])
    return bytes(head[skip:]).decode(codec, "ignore").encode("utf-8")


def lenient_text(data: bytes) -> str:
    """Return a text input decoded as :func:`decode_utf8` would, never refused.

    For messages and lenient scans of input already refused: bytes that do not decode
    become U+FFFD.
    """
    skip, codec, _ = byte_order_mark(data)
    return bytes(data[skip:]).decode(codec, "replace")


def strip_bom(text: str) -> str:
    """Return ``text`` without one leading U+FEFF (text that was decoded keeping its mark)."""
    return text[1:] if text.startswith("\ufeff") else text


def decode_utf8(data: bytes, *, what: str = "the file", start: bool = True) -> str:
    """Decode a text input to ``str``; raise :class:`TextRefused` naming the line.

    ``start``: ``data`` is the input's beginning, so a byte-order mark is handled by
    :func:`utf8_bytes` (dropped, or UTF-16/UTF-32 decoded); a later block of the same
    input (``start=False``) is plain UTF-8, and a U+FEFF in it is kept. NUL is refused.
    """
    if start:
        data = utf8_bytes(data, what=what)
    try:
        text = bytes(data).decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise TextRefused(
            f"{what} is not valid UTF-8 (byte {exc.start + 1}){_utf16_hint(data)}", line=line
        ) from None
    if "\x00" in text:
        position = text.index("\x00")
        line = text.count("\n", 0, position) + 1
        hint = _utf16_hint(data)
        raise TextRefused(f"{what} contains a NUL character{hint}", line=line)
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


def json_message(message: str) -> str:
    """Return the JSON decoder's ``message``, saying plainly what a stray U+FEFF is."""
    if message.startswith("Unexpected UTF-8 BOM"):
        return "a byte-order mark (U+FEFF) before the JSON (one is dropped only at a file's start)"
    return message


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
            f"not valid JSON ({json_message(exc.msg)}, column {exc.colno})", line=exc.lineno
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


_NUMBERS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Return a sort key that orders ``q2`` before ``q10`` (ids as people read them).

    Runs of decimal digits compare as numbers, the rest case-insensitively. Only
    ``str.isdecimal`` runs are numbers: ``"²"`` is a digit to ``str.isdigit`` but not a
    number to ``int``, and an id holding one ("q1²", which the id policy accepts) must sort,
    not fail.
    """
    return tuple(
        (0, int(part)) if part.isdecimal() else (1, part.lower())
        for part in _NUMBERS.split(text)
        if part
    )
