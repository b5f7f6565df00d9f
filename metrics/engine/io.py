"""Reading runs and qrels: TREC text, JSON and JSONL; from paths, bytes, files or arrays.

Formats
    * TREC run: ``qid Q0 docno rank score tag``, whitespace-separated.  The rank column
      is ignored: documents are ranked by score (compared as doubles, descending),
      ties broken by docno in descending byte order, as trec_eval 10 does.
    * TREC qrels: ``qid iter docno label``.  Labels are integers or decimals; a
      negative label marks a judged but unusable document.
    * JSON: an array of objects, or JSONL (one object per line).  Run objects have
      ``qid``, ``docno``, ``score`` (and optionally ``tag``); qrels objects have
      ``qid``, ``docno``, ``grade``.  ``query_id``/``doc_id``/``relevance``/``label``
      are accepted as aliases.

    Blank lines and lines starting with ``#`` are skipped in TREC files.

Encoding
    UTF-8, read under :mod:`graded.textpolicy`'s one decoding rule (pure Python, shared
    with every other text input of Graded): a byte-order mark at the very start is
    skipped by every reader (the C, numpy and Arrow fast paths, the line-by-line reader,
    JSON, and format detection), and a UTF-16 or UTF-32 byte-order mark means the input is
    decoded from that encoding first.  A U+FEFF anywhere else is kept (in a TREC line it
    is part of the qid, which no collection has).

Errors
    Every problem is collected (file, line, reason) and reported at once as an
    :class:`~metrics.engine.errors.EngineInputError`: wrong column count,
    non-numeric or non-finite score/label, empty input, and the same docno twice for
    one query.  Nothing is returned from an input with errors.  The rank and tag
    columns are not checked (trec_eval does not check them);
    :func:`run_rule_problems` checks what a submission requires of them (whole-number
    ranks, one tag), to be reported with the reader's problems.

Fast paths: a clean TREC file (single spaces, no comments or blank lines) given
by path is read by one of three readers, chosen by the ``reader`` argument (clean
TREC bytes in memory too when it is ``"c"``):

* ``"c"``: the optional C extension (:mod:`metrics.engine._creader`): one pass over
  the file in two threads without the GIL, the same columns as the numpy reader.
  The fastest and about as light; only there when it was compiled at install time
  (and ``GRADED_NO_CEXT`` is not set).
* ``"numpy"``: block by block with numpy alone (:mod:`metrics.engine._textread`:
  only the qid, docno and value columns, no Python objects per line, pyarrow not
  imported).  Light in memory; what ``manage.py evaluate`` uses without the C reader.
* ``"arrow"``: Arrow's multithreaded C++ CSV reader, streamed from the file.
  Faster (less CPU, and it parses on every core) but importing pyarrow costs
  ~47 MiB of resident memory and ~0.1 s once per process.
* ``"auto"`` (default): ``"c"`` when the extension is available; else ``"arrow"``
  when pyarrow is already imported in the process (the web app imports it), since
  its import then costs nothing more; ``"numpy"`` otherwise.

All give identical results; each falls back to the other paths below.  Bytes
(unless the C reader takes them), file objects and unclean text are tokenised by
pyarrow's CSV reader (after normalising blanks and comments).  Identifiers are
handled as byte matrices (see :mod:`metrics.engine._strings`); the C reader packs
docnos of very different lengths (URLs) instead of padding every row to the longest
(:class:`~metrics.engine._strings.RaggedWords`).  Anything the fast
paths cannot take exactly (any error) falls back to a line-by-line reader that also
produces the error messages.
"""

from __future__ import annotations

import codecs
import json
import mmap
import os
import re
import sys
from bisect import bisect_right
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from graded import textpolicy
from metrics.engine import _creader
from metrics.engine import _strings as S
from metrics.engine._lazy import LazyModule
from metrics.engine._textread import read_clean
from metrics.engine.core import JudgedPool
from metrics.engine.errors import MAX_ERRORS, EngineInputError, ErrorCollector, InputError

pa: Any = LazyModule("pyarrow")
pa_csv: Any = LazyModule("pyarrow.csv")
pc: Any = LazyModule("pyarrow.compute")

Format = Literal["auto", "trec", "json", "jsonl"]
Reader = Literal["auto", "c", "numpy", "arrow"]
Source = str | os.PathLike | bytes | bytearray | memoryview | IO[Any]

_RUN_LAYOUT = "qid Q0 docno rank score tag"
_QRELS_LAYOUT = "qid iter docno label"
_NON_BLANK = re.compile(rb"\S")
#: How JSON and JSON Lines begin (:func:`detect_format`): the bracket and what follows it.
_JSON_START = re.compile(rb'\s*\[\s*(?:[{\["\]]|\Z)')
_JSONL_START = re.compile(rb'\s*\{\s*(?:["}]|\Z)')
_NUMBER_RE = re.compile(rb"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")
_SURROGATE = re.compile("[\ud800-\udfff]")
_ECHO = 60  # longest value echoed in a message
_LOOKUP_SLICE = 1 << 16  # probes looked up at once (bounds the temporaries of a long run)


def _cut(text: str) -> str:
    """Return ``text`` cut to about :data:`_ECHO` characters."""
    return text if len(text) <= _ECHO else text[:_ECHO] + "…"


def _short(value: Any) -> str:
    """Return ``repr(value)`` cut to about :data:`_ECHO` characters (huge ints summarised)."""
    if isinstance(value, int) and value.bit_length() > 200:
        return "(an integer with hundreds of digits)"
    text = repr(value)
    return text if len(text) <= _ECHO else text[:_ECHO] + "…"


# --------------------------------------------------------------------------- sources
def _load(source: Source, name: str | None) -> tuple[Any, str]:
    """Return the content of ``source`` (bytes, or a read-only mmap of a file) and a name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), name or "<bytes>"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        try:
            with open(path, "rb") as fh:
                size = os.fstat(fh.fileno()).st_size
                if size == 0:
                    return b"", name or str(source)
                try:  # no copy of big files; pages are read as they are parsed
                    return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ), name or str(source)
                except (OSError, ValueError):
                    return fh.read(), name or str(source)
        except OSError as exc:
            label = name or str(source)
            raise EngineInputError(
                [InputError(label, None, f"cannot read: {exc.strerror}")]
            ) from exc
    if hasattr(source, "read"):
        data = source.read()
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        label = name or str(getattr(source, "name", "<stream>"))
        return bytes(data), label
    raise TypeError(f"cannot read {type(source).__name__}: give a path, bytes or a file object")


def _utf8(data: Any, label: str) -> Any:
    """Return loaded input as UTF-8 without a leading byte-order mark (textpolicy's rule).

    A UTF-8 mark is sliced off; UTF-16 or UTF-32 with a mark is decoded to UTF-8.
    """
    skip, codec, _ = textpolicy.byte_order_mark(data[:4])
    if codec == "utf-8":
        return data[skip:] if skip else data
    try:
        return textpolicy.utf8_bytes(bytes(data), what="the file")
    except textpolicy.TextRefused as exc:
        raise EngineInputError([InputError(label, exc.line, exc.message)]) from None


def detect_format(data: bytes) -> str:
    """Return ``"json"``, ``"jsonl"`` or ``"trec"``: what :func:`read_run` reads ``data`` as.

    After a byte-order mark and blanks: ``[`` followed by ``{``, ``[``, ``"``, ``]`` or
    nothing starts JSON, ``{`` followed by ``"``, ``}`` or nothing JSON Lines, anything else
    TREC. So a TREC file whose first query id is ``[`` or ``{`` (``{ Q0 d1 1 2.5 t``) reads
    as TREC; a JSON array of numbers (``[1, 2]``) reads as TREC and is refused by column.
    """
    skip, codec, _ = textpolicy.byte_order_mark(data[:4])
    if codec != "utf-8":
        return _detect(textpolicy.head_bytes(data), "auto")
    return _detect(memoryview(data)[skip:], "auto")


def _detect(data: bytes, fmt: Format) -> str:
    if fmt != "auto":
        if fmt not in ("trec", "json", "jsonl"):
            raise ValueError(f"unknown format {fmt!r}")
        return fmt
    if _JSON_START.match(data):
        return "json"
    if _JSONL_START.match(data):
        return "jsonl"
    return "trec"


def _number_error(token: bytes, what: str) -> str | None:
    """Return why ``token`` is not an acceptable finite number, or ``None`` if it is."""
    if _NUMBER_RE.match(token):
        value = float(token)
        if np.isfinite(value):
            return None
        return f"{what} {_short(S.decode(token))} is out of range"
    try:
        value = float(token)
    except ValueError:
        return f"{what} {_short(S.decode(token))} is not a number"
    if not np.isfinite(value):
        return f"{what} {_short(S.decode(token))} is not a finite number"
    return f"{what} {_short(S.decode(token))} is not a number"


# --------------------------------------------------------------------------- TREC text
def _normalise(data: bytes) -> bytes:
    """Collapse runs of blanks, drop comment lines and blanks at line ends."""
    data = re.sub(rb"[ \t\r\x0b\x0c]+", b" ", data)
    data = re.sub(rb"(?m)^ ?#[^\n]*", b"", data)
    data = re.sub(rb" ?\n ?", b"\n", data)
    return data.strip(b" ")


def _fast_table(data: Any, ncols: int, wanted: dict[int, pa.DataType]) -> pa.Table | None:
    """Tokenise regular TREC text with pyarrow; ``None`` if it cannot be done exactly.

    Single spaces between fields are what pyarrow reads; any other layout (tabs,
    repeated or leading/trailing blanks) makes a column count mismatch or is
    spotted here, and the text is normalised and tried once more.  Comment lines
    are spotted by the caller (a qid starting with ``#``).
    """
    if data.find(b"\x00") >= 0 or not _NON_BLANK.search(data):
        return None
    if data.find(b"\t") >= 0:
        return _arrow_csv(_normalise(data), ncols, wanted) if _head_fits(data, ncols) else None
    table = _arrow_csv(data, ncols, wanted)
    if table is None and _head_fits(data, ncols):
        table = _arrow_csv(_normalise(data), ncols, wanted)
    return table


def _head_fits(data: Any, ncols: int) -> bool:
    """Return whether the first data line has ``ncols`` fields once blanks are collapsed.

    Normalising a whole file costs seconds for tens of megabytes; a file whose first
    line is malformed goes straight to the line-by-line reader, which names the bad
    lines and stops at the error cap instead.
    """
    head = _normalise(bytes(data[: 1 << 16]))
    for line in head.split(b"\n"):
        if line:
            return len(line.split(b" ")) == ncols
    return True


_USE_THREADS = True  # parse with Arrow's thread pool; evaluate_many's workers turn it off


def set_parser_threads(enabled: bool) -> None:
    """Let the TREC reader use Arrow's threads (default) or not (one process per core)."""
    global _USE_THREADS
    _USE_THREADS = bool(enabled)


@lru_cache(maxsize=1)
def _memory_pool() -> pa.MemoryPool:
    """Return the Arrow memory pool for parsing: the system allocator.

    Measured on W1, it parses as fast as Arrow's default pool (mimalloc) with a
    lower peak, and much faster than jemalloc set to return memory at once.
    """
    return pa.system_memory_pool()


def _arrow_csv(
    data: Any, ncols: int, wanted: dict[int, pa.DataType], path: str | None = None
) -> pa.Table | None:
    """Parse single-space separated text (``data``, or the file ``path`` read in blocks).

    Text that (still) starts with a byte-order mark is left to the other readers: Arrow
    would skip it, and only the input's first mark is one (``data`` is past it already).
    """
    if data[:3] == codecs.BOM_UTF8:
        return None
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)].rstrip(b"\r")
    if len(first.split(b" ")) != ncols:
        return None
    names = [f"f{i}" for i in range(ncols)]
    try:
        table = pa_csv.read_csv(
            path if path is not None else pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(
                column_names=names, block_size=1 << 20, use_threads=_USE_THREADS
            ),
            parse_options=pa_csv.ParseOptions(
                delimiter=" ",
                quote_char=False,
                double_quote=False,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=True,
            ),
            convert_options=pa_csv.ConvertOptions(
                include_columns=[names[i] for i in wanted],
                column_types={names[i]: t for i, t in wanted.items()},
                null_values=[],
                strings_can_be_null=False,
                check_utf8=False,
            ),
            memory_pool=_memory_pool(),
        )
    except (pa.ArrowInvalid, pa.ArrowTypeError, KeyError, ValueError):
        return None
    for col in table.columns:
        if col.null_count:
            return None
    return table


def _slow_trec(
    data: Any, name: str, ncols: int, value_col: int, what: str, layout: str
) -> tuple[list[bytes], list[bytes], list[float], list[int], bytes]:
    """Parse TREC text line by line, collecting every error (raises if any)."""
    data = bytes(data)
    errs = ErrorCollector(name)
    qids: list[bytes] = []
    docs: list[bytes] = []
    vals: list[float] = []
    lines: list[int] = []
    tag = b""
    start = 0
    lineno = 0
    while start <= len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        raw = data[start:end]
        start = end + 1
        lineno += 1
        if errs.total >= MAX_ERRORS - 1:  # enough to fix; do not read (and echo) the rest
            errs.add(lineno, f"reading stopped here after {errs.total} problems")
            break
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        if b"\x00" in raw:
            errs.add(lineno, "NUL byte in line")
            continue
        if len(fields) != ncols:
            errs.add(lineno, f"expected {ncols} columns ({layout}), found {len(fields)}")
            continue
        problem = _number_error(fields[value_col], what)
        if problem:
            errs.add(lineno, problem)
            continue
        qids.append(fields[0])
        docs.append(fields[2])
        vals.append(float(fields[value_col]))
        lines.append(lineno)
        if ncols == 6:
            tag = fields[5]
    if not qids and not errs:
        errs.add(1, "file is empty (no data lines)")
    _duplicates(qids, docs, lines, errs)
    _raise_sorted(errs)
    return qids, docs, vals, lines, tag


def _duplicates(
    qids: Sequence[bytes],
    docs: Sequence[bytes],
    lines: Sequence[int],
    errs: ErrorCollector,
    items: Sequence[int] | None = None,
) -> None:
    """Report every record whose (qid, docno) an earlier record has.

    Records are told apart by their position, never by their line: a JSON array may
    hold them all on one line. ``items`` are the records' 1-based positions in a JSON
    array (named in the messages instead of bare lines); None for line-based inputs.
    """
    first: dict[tuple[bytes, bytes], int] = {}
    for i, (q, d) in enumerate(zip(qids, docs, strict=True)):
        seen = first.setdefault((q, d), i)
        if seen != i:
            item = None if items is None else items[i]
            earlier = f"line {lines[seen]}" if items is None else f"item {items[seen]}"
            errs.add(
                lines[i],
                f"docno {_cut(S.decode(d))} repeated for query {_cut(S.decode(q))} "
                f"(first {'on' if items is None else 'as'} {earlier})",
                item,
            )


def _raise_sorted(errs: ErrorCollector) -> None:
    if errs:
        ordered = sorted(errs.errors, key=lambda e: (e.line is not None, e.line or 0))
        raise EngineInputError(ordered, errs.total)


# --------------------------------------------------------------------------- JSON
_QID_KEYS = ("qid", "query_id")
_DOC_KEYS = ("docno", "doc_id", "docid")
_SCORE_KEYS = ("score",)
_GRADE_KEYS = ("grade", "relevance", "label", "rel")


def _json_records(data: bytes, name: str, kind: str) -> list[tuple[int, int | None, Any]]:
    """Return (line, item, object) triples of a JSON array or a JSONL input.

    ``item`` is the object's 1-based position in a JSON array, None in JSON Lines.
    """
    errs = ErrorCollector(name)
    data = bytes(data)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        errs.add(line, "not valid UTF-8")
        errs.raise_if_any()
        raise AssertionError from None  # pragma: no cover
    out: list[tuple[int, int | None, Any]] = []
    if kind == "jsonl":
        for lineno, raw in enumerate(text.split("\n"), 1):
            if not raw.strip():
                continue
            try:
                out.append((lineno, None, json.loads(raw)))
            except json.JSONDecodeError as exc:
                errs.add(lineno, f"invalid JSON: {textpolicy.json_message(exc.msg)}")
            except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit int
                errs.add(lineno, _json_refusal(exc))
            if errs.total >= MAX_ERRORS - 1:
                errs.add(lineno + 1, f"reading stopped here after {errs.total} problems")
                break
        errs.raise_if_any()
        return out
    newlines = [m.start() for m in re.finditer("\n", text)]

    def line_of(pos: int) -> int:
        return bisect_right(newlines, pos - 1) + 1

    decoder = json.JSONDecoder()
    ws = re.compile(r"\s*")
    pos = ws.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("[", pos):
        errs.add(line_of(pos), "expected a JSON array of objects")
        errs.raise_if_any()
    pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
    if text.startswith("]", pos):
        return out
    while True:
        item = len(out) + 1
        try:
            obj, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            errs.add(line_of(exc.pos), f"invalid JSON: {textpolicy.json_message(exc.msg)}", item)
            errs.raise_if_any()
        except (RecursionError, ValueError) as exc:  # deep nesting, a 5,000-digit int
            errs.add(line_of(pos), _json_refusal(exc), item)
            errs.raise_if_any()
        out.append((line_of(pos), item, obj))
        pos = ws.match(text, end).end()  # type: ignore[union-attr]
        if text.startswith(",", pos):
            pos = ws.match(text, pos + 1).end()  # type: ignore[union-attr]
            continue
        if text.startswith("]", pos):
            rest = text[pos + 1 :].strip()
            if rest:
                errs.add(line_of(pos + 1), "unexpected data after the JSON array")
            break
        errs.add(line_of(pos), "invalid JSON: expected ',' or ']'")
        break
    errs.raise_if_any()
    return out


def _json_refusal(exc: BaseException) -> str:
    """Describe JSON that Python's decoder refuses beyond syntax (too deep, too long a number)."""
    if isinstance(exc, RecursionError):
        return "invalid JSON: nested too deeply"
    return "invalid JSON: a number has too many digits"


def _finite_number(value: Any) -> bool:
    """Return whether ``value`` is a JSON number (not a boolean) that is a finite double."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return bool(np.isfinite(float(value)))
    except OverflowError:  # an int with hundreds of digits
        return False


def _field(obj: dict[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        if key in obj:
            return obj[key]
    return None


def _json_rows(
    data: bytes, name: str, kind: str, value_keys: Sequence[str], what: str
) -> tuple[list[bytes], list[bytes], list[float], list[int], bytes]:
    records = _json_records(data, name, kind)
    errs = ErrorCollector(name)
    qids: list[bytes] = []
    docs: list[bytes] = []
    vals: list[float] = []
    lines: list[int] = []
    items: list[int] = []
    tag = b""
    for lineno, item, obj in records:
        if not isinstance(obj, dict):
            errs.add(lineno, f"expected a JSON object, found {type(obj).__name__}", item)
            continue
        q, d, v = _field(obj, _QID_KEYS), _field(obj, _DOC_KEYS), _field(obj, value_keys)
        missing = [
            k for k, x in ((_QID_KEYS[0], q), (_DOC_KEYS[0], d), (value_keys[0], v)) if x is None
        ]
        if missing:
            errs.add(lineno, f"missing field {missing[0]!r}", item)
            continue
        bad = next(
            (
                k
                for k, x in ((_QID_KEYS[0], q), (_DOC_KEYS[0], d))
                if isinstance(x, bool) or not isinstance(x, (str, int))
            ),
            None,
        )
        if bad:
            errs.add(lineno, f"{bad} must be a string or an integer", item)
            continue
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            errs.add(lineno, f"{what} {_short(v)} is not a number", item)
            continue
        if not _finite_number(v):
            errs.add(lineno, f"{what} {_short(v)} is not a finite number", item)
            continue
        if (isinstance(q, int) and q.bit_length() > 1000) or (
            isinstance(d, int) and d.bit_length() > 1000
        ):
            errs.add(lineno, "qid and docno must be shorter", item)
            continue
        q_s, d_s = str(q), str(d)
        if not q_s or not d_s or any(ch.isspace() or ch == "\x00" for ch in q_s + d_s):
            errs.add(lineno, "qid and docno must be non-empty, without whitespace or NUL", item)
            continue
        if _SURROGATE.search(q_s) or _SURROGATE.search(d_s):
            errs.add(
                lineno, "qid and docno must not contain lone surrogates (\\ud800-\\udfff)", item
            )
            continue
        qids.append(S.encode(q_s))
        docs.append(S.encode(d_s))
        vals.append(float(v))
        lines.append(lineno)
        items.append(0 if item is None else item)
        t = obj.get("tag", obj.get("run"))
        if isinstance(t, str) and t and not tag and not _SURROGATE.search(t):
            tag = S.encode(t)
    if not qids and not errs:
        errs.add(1, "file is empty (no records)")
    _duplicates(qids, docs, lines, errs, items if kind == "json" else None)
    _raise_sorted(errs)
    return qids, docs, vals, lines, tag


# --------------------------------------------------------------------------- submission rules
_WHOLE_NUMBER = re.compile(rb"[0-9]+")


def run_rule_problems(
    source: Source, *, format: Format = "auto", name: str | None = None
) -> EngineInputError | None:
    """Check the rules a submitted run follows beyond what trec_eval reads; ``None`` if kept.

    trec_eval ignores the rank column and keeps the tag of the last line. A submission is
    one run, ranked by score as trec_eval ranks it, so:

    * a rank must be a whole number written in digits (``0``, ``1``, ``007``; not ``five``,
      ``1.5``, ``-1``, ``+1``); its value is still ignored. In JSON a ``rank`` is optional
      and, when given, an integer of at least 0;
    * every line carries the same tag (a JSON record may leave its ``tag``/``run`` out);
      each other tag is reported once, on its first line, with how many lines carry it.

    Lines the reader refuses (wrong column count, malformed JSON) are left to
    :func:`read_run`, which names them; call both to report every problem in one round.
    A clean TREC file is checked column-wise by Arrow; anything else line by line.
    """
    data, label = _load(source, name)
    try:
        data = _utf8(data, label)
    except EngineInputError:
        return None  # read_run names it
    detected = _detect(data, format)
    errs = ErrorCollector(label)
    if detected == "trec":
        if _clean_ranks_and_tag(data):
            return None
        _trec_rule_problems(bytes(data), errs)
    else:
        try:
            records = _json_records(data, label, detected)
        except EngineInputError:
            return None  # read_run names it
        _json_rule_problems(records, errs)
    return EngineInputError(errs.errors, errs.total) if errs else None


def _clean_ranks_and_tag(data: Any) -> bool:
    """Return whether regular TREC text surely has whole-number ranks and one tag.

    Arrow reads the rank and tag columns (no Python loop). ``False`` is only "not sure":
    a comment line of six fields is read as a row here, so any doubt goes to the exact
    line-by-line check.
    """
    table = _fast_table(data, 6, {3: pa.binary(), 5: pa.binary()})
    if table is None:
        return False
    ranks, tags = table.columns
    if not pc.all(pc.match_substring_regex(ranks, "^[0-9]+$")).as_py():
        return False
    return pc.count_distinct(tags).as_py() <= 1


def _trec_rule_problems(data: bytes, errs: ErrorCollector) -> None:
    """Name every rank that is not a whole number and every second tag, line by line."""
    first: tuple[bytes, int] | None = None
    others: dict[bytes, list[int]] = {}  # tag -> [first line, lines]
    start = lineno = 0
    while start <= len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        raw = data[start:end]
        start = end + 1
        lineno += 1
        fields = raw.split()
        if len(fields) != 6 or fields[0].startswith(b"#") or b"\x00" in raw:
            continue  # blank, a comment, or refused by the reader
        rank, tag = fields[3], fields[5]
        if not _WHOLE_NUMBER.fullmatch(rank):
            errs.add(lineno, f"rank {_short(S.decode(rank))} is not a whole number (0 or more)")
        if first is None:
            first = (tag, lineno)
        elif tag != first[0]:
            seen = others.setdefault(tag, [lineno, 0])
            seen[1] += 1
    if first is not None:
        for tag, (lineno, count) in others.items():
            errs.add(lineno, _second_tag(S.decode(tag), count, S.decode(first[0]), first[1]))


def _json_rule_problems(records: list[tuple[int, int | None, Any]], errs: ErrorCollector) -> None:
    """Name every ``rank`` that is not a whole number and every second tag of JSON records."""
    first: tuple[str, int, int | None] | None = None
    others: dict[str, list[Any]] = {}  # tag -> [first line, first item, records]
    for lineno, item, obj in records:
        if not isinstance(obj, dict):
            continue  # the reader names it
        rank = obj.get("rank")
        if "rank" in obj and (isinstance(rank, bool) or not isinstance(rank, int) or rank < 0):
            errs.add(lineno, f"rank {_short(rank)} is not a whole number (0 or more)", item)
        tag = obj.get("tag", obj.get("run"))
        if tag is None:
            continue
        if not isinstance(tag, str):
            errs.add(lineno, f"tag {_short(tag)} is not a string", item)
            continue
        if first is None:
            first = (tag, lineno, item)
        elif tag != first[0]:
            seen = others.setdefault(tag, [lineno, item, 0])
            seen[2] += 1
    if first is not None:
        where = f"item {first[2]}" if first[2] is not None else f"line {first[1]}"
        for tag, (lineno, item, count) in others.items():
            errs.add(lineno, _second_tag(tag, count, first[0], where, unit="record"), item)


def _second_tag(tag: str, count: int, first: str, where: int | str, unit: str = "line") -> str:
    """Return the message of a second run tag in one file."""
    at = f"line {where}" if isinstance(where, int) else where
    plural = "" if count == 1 else "s"
    return (
        f"a second run tag: {_short(tag)} ({count} {unit}{plural}, the first here) differs "
        f"from {_short(first)} of {at}; a file holds one run, so submit each tag separately"
    )


# --------------------------------------------------------------------------- containers
def _verify_duplicates(
    rows: NDArray[np.intp],
    keys: NDArray[np.uint64],
    qcode: NDArray[np.int32],
    words: NDArray[np.uint64],
) -> NDArray[np.intp]:
    """Among ``rows`` (hash-equal candidates), return those repeating an earlier row exactly.

    ``keys[i]`` is the key of ``rows[i]``.
    """
    order = np.lexsort((rows, keys))
    rows, keys = rows[order], keys[order]
    out: list[int] = []
    group_start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or keys[i] != keys[group_start]:
            group = rows[group_start:i]
            for j, r in enumerate(group[1:], 1):
                earlier = group[:j]
                same = (qcode[earlier] == qcode[r]) & S.same_words(
                    words, earlier, words, np.full(len(earlier), r)
                )
                if same.any():
                    out.append(int(r))
            group_start = i
    return np.array(sorted(out), dtype=np.intp)


def _find_duplicates(qcode: NDArray[np.int32], words: NDArray[np.uint64]) -> NDArray[np.intp]:
    """Return the rows whose (query, docno) pair occurred on an earlier row.

    The top 32 bits of the pair keys are sorted (twice as fast as 64-bit keys); the
    few values seen twice are checked on the full keys, then on the bytes.  Keys are
    made, and the candidates found, in slices: besides the 32-bit halves and their
    sorted copy (8 bytes a row), the temporaries are bounded whatever the length.
    """
    n = len(qcode)
    if n < 2:
        return np.zeros(0, np.intp)
    top = np.empty(n, np.uint32)
    step = 1 << 16
    for i in range(0, n, step):
        part = S.pair_key(S.hash_range(words, i, i + step), qcode[i : i + step])
        top[i : i + step] = part >> np.uint64(32)
    srt = np.sort(top)
    twice = np.unique(srt[1:][srt[1:] == srt[:-1]])
    del srt
    if not len(twice):
        return np.zeros(0, np.intp)
    found = []
    for i in range(0, n, step):
        part_top = top[i : i + step]
        pos = np.minimum(np.searchsorted(twice, part_top), len(twice) - 1)
        found.append(np.flatnonzero(twice[pos] == part_top) + i)
    del top
    cand = np.concatenate(found)
    full = S.pair_key(S.hash_words(words[cand]), qcode[cand])
    order = np.argsort(full, kind="stable")
    same = full[order][1:] == full[order][:-1]
    if not same.any():
        return np.zeros(0, np.intp)
    suspects = np.unique(np.concatenate([order[1:][same], order[:-1][same]]))
    return _verify_duplicates(cand[suspects], full[suspects], qcode, words)


class _Table:
    """Common storage of runs and qrels: one row per (qid, docno, value)."""

    def __init__(
        self,
        name: str,
        qid_names: list[str],
        qcode: NDArray[np.int32],
        docnos: pa.BinaryArray | pa.ChunkedArray | S.Words,
        values: NDArray[np.float64],
    ) -> None:
        self.name = name
        self.qids = qid_names
        self.qcode = qcode
        self.values = values
        # The docnos live on only as NUL-padded words (they cannot contain NUL).
        self.words: S.Words = (
            docnos if isinstance(docnos, (np.ndarray, S.RaggedWords)) else S.words(docnos)
        )
        self._index: dict[str, int] | None = None
        self._qid_hashes: NDArray[np.uint64] | None = None

    def __len__(self) -> int:
        """Return the number of rows."""
        return len(self.qcode)

    @property
    def index(self) -> dict[str, int]:
        """Return ``{qid: query index}``."""
        if self._index is None:
            self._index = {q: i for i, q in enumerate(self.qids)}
        return self._index

    @property
    def docnos(self) -> pa.BinaryArray:
        """Return the docno of every row as an Arrow binary array (rebuilt from the words)."""
        n = len(self.qcode)
        if isinstance(self.words, S.RaggedWords):
            return S.binary_from_list(self.docno_bytes())
        mat = self.words.view(np.uint8).reshape(n, -1)
        used = mat != 0  # docnos contain no NUL: each row is a prefix plus padding
        offsets = np.zeros(n + 1, np.int64)
        np.cumsum(used.sum(axis=1), out=offsets[1:])
        data = mat[used]
        return pa.Array.from_buffers(
            pa.binary(),
            n,
            [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data.tobytes())],
        )

    def hash_rows(self, rows: NDArray[np.integer] | None = None) -> NDArray[np.uint64]:
        """Return the docno hash of ``rows`` (all rows by default)."""
        return S.hash_words(self.words if rows is None else self.words[rows])

    @property
    def qid_hashes(self) -> NDArray[np.uint64]:
        """Return a hash of each distinct qid (index = query code)."""
        if self._qid_hashes is None:
            self._qid_hashes = S.name_hashes(self.qids)
        return self._qid_hashes

    def row_keys(self, rows: NDArray[np.integer] | None = None) -> NDArray[np.uint64]:
        """Return a (qid, docno) key of ``rows`` that does not depend on the other file."""
        codes = self.qcode if rows is None else self.qcode[rows]
        return S.row_key(self.hash_rows(rows), self.qid_hashes[codes])

    def docno_bytes(self) -> list[bytes]:
        """Return every row's docno as bytes."""
        if isinstance(self.words, S.RaggedWords):
            return self.words.row_bytes()
        return [w.tobytes().rstrip(b"\x00") for w in self.words]

    def docno(self, row: int) -> str:
        """Return the docno of one row."""
        return S.decode(self.words[row].tobytes().rstrip(b"\x00"))

    def duplicate_rows(self) -> NDArray[np.intp]:
        """Return the rows repeating an earlier (qid, docno) pair."""
        return _find_duplicates(self.qcode, self.words)

    def to_arrays(self) -> tuple[list[str], list[str], NDArray[np.float64]]:
        """Return (qid per row, docno per row, value per row) as Python lists and an array."""
        qids = [self.qids[c] for c in self.qcode.tolist()]
        docs = [S.decode(d) for d in self.docno_bytes()]
        return qids, docs, self.values.copy()


def _check_no_nul(name: str, *columns: pa.BinaryArray) -> None:
    """Reject identifiers containing NUL bytes (they are the padding of the byte matrices)."""
    for col in columns:
        data = col.buffers()[2]
        if data is not None and data.size and not np.frombuffer(data, np.uint8).all():
            raise EngineInputError(
                [InputError(name, None, "identifiers must not contain NUL bytes")]
            )


def _dup_error(name: str, table: _Table) -> EngineInputError:
    """Describe the duplicate rows of an array input (rows are reported 1-based)."""
    errs = ErrorCollector(name, limit=1 << 62)
    qids = [S.encode(table.qids[c]) for c in table.qcode.tolist()]
    docs = table.docno_bytes()
    _duplicates(qids, docs, list(range(1, len(qids) + 1)), errs)
    return EngineInputError(errs.errors, errs.total)


def _array_columns(
    name: str,
    qids: ArrayLike | Sequence[str] | pa.Array,
    docnos: ArrayLike | Sequence[str] | pa.Array,
    values: ArrayLike,
    plural: str,
    singular: str,
) -> tuple[pa.BinaryArray, NDArray[np.float64], list[str], NDArray[np.int32]]:
    """Validate parallel per-row arrays; return (docnos, values, qid names, qid codes).

    Raises:
        EngineInputError: lengths differ, a value is not finite, or an id holds a NUL byte
            (rows are reported 1-based as lines).
    """
    qb, db = S.as_binary(qids), S.as_binary(docnos)
    vals = np.asarray(values, dtype=np.float64).ravel()
    if not (len(qb) == len(db) == len(vals)):
        raise EngineInputError(
            [
                InputError(
                    name,
                    None,
                    f"qids, docnos and {plural} differ in length ({len(qb)}, {len(db)}, "
                    f"{len(vals)})",
                )
            ]
        )
    bad = np.flatnonzero(~np.isfinite(vals))
    if len(bad):
        raise EngineInputError(
            [
                InputError(
                    name, int(i) + 1, f"{singular} {float(vals[i])!r} is not a finite number"
                )
                for i in bad[:100]
            ],
            len(bad),
        )
    _check_no_nul(name, qb, db)
    names, codes = S.codes_for(qb)
    return db, vals, names, codes


class Run(_Table):
    """A parsed run: one scored document per row, ranked on demand.

    Attributes:
        name: where it came from (used in messages).
        tag: the run tag (trec_eval keeps the tag of the last line; so do we).
        qids: distinct query ids, in order of first appearance.
        qcode: int32 per row, index into :attr:`qids`.
        scores: float64 per row.
    """

    def __init__(
        self,
        name: str,
        tag: str,
        qid_names: list[str],
        qcode: NDArray[np.int32],
        docnos: pa.BinaryArray | pa.ChunkedArray,
        scores: NDArray[np.float64],
    ) -> None:
        """Store columns already validated (use the readers or :meth:`from_arrays`)."""
        super().__init__(name, qid_names, qcode, docnos, scores)
        self.tag = tag
        self._ranking: tuple[NDArray[np.intp], NDArray[np.int64], NDArray[np.int64]] | None = None

    @property
    def scores(self) -> NDArray[np.float64]:
        """Return the score of each row."""
        return self.values

    def __repr__(self) -> str:
        """Describe the run briefly."""
        return f"<Run {self.tag!r} from {self.name}: {len(self)} rows, {len(self.qids)} queries>"

    @classmethod
    def from_arrays(
        cls,
        qids: ArrayLike | Sequence[str] | pa.Array,
        docnos: ArrayLike | Sequence[str] | pa.Array,
        scores: ArrayLike,
        *,
        tag: str = "run",
        name: str = "<arrays>",
    ) -> Run:
        """Build a run from parallel per-row arrays (any order; ranked by score).

        Raises:
            EngineInputError: lengths differ, a score is not finite, or a docno
                repeats within a query (rows are reported 1-based as lines).
        """
        db, sc, names, codes = _array_columns(name, qids, docnos, scores, "scores", "score")
        run = cls(name, tag, names, codes, db, sc)
        dups = run.duplicate_rows()
        if len(dups):
            raise _dup_error(name, run)
        return run

    def ranking(self) -> tuple[NDArray[np.intp], NDArray[np.int64], NDArray[np.int64]]:
        """Return (row order, start per query code, count per query code).

        ``order[start[c] : start[c] + count[c]]`` are query ``c``'s rows from rank 1 down:
        score descending (doubles), ties by docno in descending byte order.
        """
        if self._ranking is None:
            self._ranking = self._rank()
        return self._ranking

    def _rank(self) -> tuple[NDArray[np.intp], NDArray[np.int64], NDArray[np.int64]]:
        q, s = self.qcode, self.values
        n, nq = len(q), len(self.qids)
        counts = np.bincount(q, minlength=nq).astype(np.int64)
        if n == 0:
            return np.zeros(0, np.intp), np.zeros(nq, np.int64), counts
        same = q[1:] == q[:-1]
        block_starts = np.flatnonzero(np.concatenate(([True], ~same)))
        in_order = len(block_starts) == nq and bool(((s[1:] <= s[:-1]) | ~same).all())
        if in_order:  # the usual layout: one block per query, scores non-increasing
            order = np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)
            starts = np.empty(nq, np.int64)
            starts[q[block_starts]] = block_starts
        else:
            order = np.argsort(-s)  # ties are re-ordered by docno below
            qkey = q.astype(np.int16) if nq < 32768 else q
            order = order[np.argsort(qkey[order], kind="stable")]
            if n < 2**31:
                order = order.astype(np.int32)
            starts = np.cumsum(counts) - counts
        # Ties (same query, same score): docno in descending byte order.
        if in_order:
            tie = (s[1:] == s[:-1]) & same
        else:
            so, qo = s[order], q[order]
            tie = (so[1:] == so[:-1]) & (qo[1:] == qo[:-1])
        if tie.any():
            prev = np.concatenate(([False], tie))
            nxt = np.concatenate((tie, [False]))
            pos = np.flatnonzero(prev | nxt)
            group = np.cumsum(~prev[pos])
            rows = order[pos]
            w = S.big_endian(self.words[rows])
            keys = [~w[:, j] for j in range(w.shape[1] - 1, -1, -1)]
            perm = np.lexsort([*keys, group])
            order[pos] = rows[perm]  # order is this function's own array
        return order, starts, counts


class Qrels(_Table):
    """Parsed relevance judgments.

    Attributes:
        name: where they came from (used in messages).
        qids: distinct query ids, sorted by their bytes (trec_eval's output order).
        qcode: int32 per row, index into :attr:`qids`.
        labels: float64 per row (negative: judged but unusable).
    """

    def __init__(
        self,
        name: str,
        qid_names: list[str],
        qcode: NDArray[np.int32],
        docnos: pa.BinaryArray | pa.ChunkedArray,
        labels: NDArray[np.float64],
    ) -> None:
        """Store columns already validated (use the readers or :meth:`from_arrays`)."""
        order = sorted(range(len(qid_names)), key=lambda i: S.encode(qid_names[i]))
        remap = np.empty(len(qid_names), np.int32)
        remap[order] = np.arange(len(order), dtype=np.int32)
        super().__init__(name, [qid_names[i] for i in order], remap[qcode], docnos, labels)
        self._pool: JudgedPool | None = None
        self._keys: tuple[NDArray[np.uint64], NDArray[np.intp], int] | None = None
        self._buckets: (
            tuple[int, NDArray[np.bool_], NDArray[np.int32], NDArray[np.int32]] | None
        ) = None

    @property
    def labels(self) -> NDArray[np.float64]:
        """Return the label of each row."""
        return self.values

    def __repr__(self) -> str:
        """Describe the qrels briefly."""
        return f"<Qrels from {self.name}: {len(self)} judgments, {len(self.qids)} queries>"

    @classmethod
    def from_arrays(
        cls,
        qids: ArrayLike | Sequence[str] | pa.Array,
        docnos: ArrayLike | Sequence[str] | pa.Array,
        labels: ArrayLike,
        *,
        name: str = "<arrays>",
    ) -> Qrels:
        """Build qrels from parallel per-row arrays.

        Raises:
            EngineInputError: lengths differ, a label is not finite, or a docno
                repeats within a query (rows are reported 1-based as lines).
        """
        db, lab, names, codes = _array_columns(name, qids, docnos, labels, "labels", "label")
        qrels = cls(name, names, codes, db, lab)
        dups = qrels.duplicate_rows()
        if len(dups):
            raise _dup_error(name, qrels)
        return qrels

    def _sorted_keys(self) -> tuple[NDArray[np.uint64], NDArray[np.intp], int]:
        """Return (keys without their low ``bits`` bits, sorted; the row of each; bits).

        One fast sort of 64-bit integers: the row number rides in the low bits.
        Truncated keys may coincide; every match is verified on the bytes.
        """
        if self._keys is None:
            n = len(self)
            bits = max(1, int(max(n, 1) - 1).bit_length())
            sh = np.uint64(bits)
            packed = self.row_keys() >> sh
            packed <<= sh
            packed |= np.arange(n, dtype=np.uint64)
            packed.sort()
            perm = (packed & np.uint64((1 << bits) - 1)).astype(np.intp)
            packed >>= sh
            self._keys = (packed, perm, bits)
        return self._keys

    def duplicate_rows(self) -> NDArray[np.intp]:
        """Return the rows repeating an earlier (qid, docno) pair."""
        srt, perm, _bits = self._sorted_keys()
        eq = np.flatnonzero(srt[1:] == srt[:-1])
        if not len(eq):
            return np.zeros(0, np.intp)
        rows = np.unique(np.concatenate([perm[eq], perm[eq + 1]]))
        keys = np.empty(len(self), np.uint64)
        keys[perm] = srt
        return _verify_duplicates(rows, keys[rows], self.qcode, self.words)

    @property
    def pool(self) -> JudgedPool:
        """Return the judged labels of every query (index = position in :attr:`qids`)."""
        if self._pool is None:
            self._pool = JudgedPool(self.qcode, self.values, len(self.qids))
        return self._pool

    def _bucket_index(self) -> tuple[int, NDArray[np.bool_], NDArray[np.int32], NDArray[np.int32]]:
        """Return (bits, bucket not empty, keys per bucket, first key of each bucket).

        A vectorised hash index: bucket ``b`` holds the sorted keys whose top ``bits``
        bits are ``b``; with two to four buckets per key most hold zero or one key.
        """
        if self._buckets is None:
            srt, _perm, low = self._sorted_keys()
            bits = min(22, max(4, len(srt).bit_length() + 1))
            bucket = (srt >> np.uint64(64 - low - bits)).astype(np.intp)
            counts = np.bincount(bucket, minlength=1 << bits).astype(np.int32)
            del bucket
            starts = np.cumsum(counts, dtype=np.int32)
            starts -= counts
            self._buckets = (bits, counts > 0, counts, starts)
        return self._buckets

    def lookup(
        self,
        qidx: NDArray[np.integer] | tuple[NDArray[np.integer], NDArray[np.integer]],
        run: Run,
        rows: NDArray[np.intp],
    ) -> NDArray[np.float64]:
        """Return the label of document ``run[rows]`` for query index ``qidx`` (NaN: unjudged).

        ``qidx`` are indices into :attr:`qids` of the probes' queries (negative: the
        query has no judgments), one per probe, or ``(starts, qidx_of_group)`` when the
        probes come in consecutive groups of one query each.  A few probes are
        binary-searched in the sorted qrels keys; many probes are hashed into buckets of
        them (no sorting of the probes).  Every match is verified on the bytes.
        """
        n = len(rows)
        out = np.full(n, np.nan)
        if n == 0 or len(self) == 0:
            return out
        # Probes go in slices, so the temporaries (keys, buckets, candidates: about 60
        # bytes a probe) stay bounded however long the run is.
        # few probes: binary search; else hash into buckets (built once, kept with the qrels)
        search = 8 * n < len(self._sorted_keys()[0])
        for a in range(0, n, _LOOKUP_SLICE):
            b = min(n, a + _LOOKUP_SLICE)
            self._lookup_slice(qidx, run, rows, a, b, out, search=search)
        return out

    def _lookup_slice(
        self,
        qidx: NDArray[np.integer] | tuple[NDArray[np.integer], NDArray[np.integer]],
        run: Run,
        all_rows: NDArray[np.intp],
        a: int,
        b: int,
        out: NDArray[np.float64],
        *,
        search: bool,
    ) -> None:
        """Write the labels of probes ``a:b`` of :meth:`lookup` into ``out``.

        ``search``: binary-search the sorted qrels keys (few probes in all), else bucket.
        """
        rows = all_rows[a:b]
        srt, perm, low = self._sorted_keys()
        probe = run.row_keys(rows)
        probe >>= np.uint64(low)
        if search:  # sorted needles make the binary searches cache-friendly
            order = np.argsort(probe)
            sp = probe[order]
            lo = np.searchsorted(srt, sp, side="left")
            left = np.searchsorted(srt, sp, side="right") - lo
            found = np.flatnonzero(left)
            live, pos, left = order[found], lo[found], left[found]
        else:
            bits, nonempty, counts, starts = self._bucket_index()
            bucket = (probe >> np.uint64(64 - low - bits)).astype(np.intp)
            live = np.flatnonzero(nonempty[bucket])
            in_bucket = bucket[live]
            pos = starts[in_bucket].astype(np.intp)
            left = counts[in_bucket].astype(np.int64)
        hits_p: list[NDArray[np.intp]] = []
        hits_q: list[NDArray[np.intp]] = []
        while len(live):  # walk the (short) runs of candidates; usually a single step
            same = srt[pos] == probe[live]
            hits_p.append(live[same])
            hits_q.append(pos[same])
            more = left > 1
            live, pos, left = live[more], pos[more] + 1, left[more] - 1
        cand_p = np.concatenate(hits_p) if hits_p else np.zeros(0, np.intp)
        qrow = perm[np.concatenate(hits_q)] if hits_q else np.zeros(0, np.intp)
        if isinstance(qidx, tuple):  # the group of each hit, by binary search
            group_start, group_q = qidx
            expected = group_q[np.searchsorted(group_start, cand_p + a, side="right") - 1]
        else:
            expected = qidx[cand_p + a]
        ok = (self.qcode[qrow] == expected) & S.same_words(
            self.words, qrow, run.words, rows[cand_p]
        )
        out[cand_p[ok] + a] = self.values[qrow[ok]]


# --------------------------------------------------------------------------- readers
def _from_lists(
    kind: str, name: str, qids: list[bytes], docs: list[bytes], vals: list[float], tag: bytes
) -> Run | Qrels:
    qb = S.binary_from_list(qids)
    db = S.binary_from_list(docs)
    names, codes = S.codes_for(qb)
    arr = np.asarray(vals, dtype=np.float64)
    if kind == "run":
        return Run(name, S.decode(tag) or "run", names, codes, db, arr)
    return Qrels(name, names, codes, db, arr)


def _last_tag(data: Any) -> str:
    end = len(data)
    while end > 0:
        start = data.rfind(b"\n", 0, end - 1) + 1
        fields = data[start:end].split()
        if fields and not fields[0].startswith(b"#"):
            return S.decode(fields[5]) if len(fields) >= 6 else "run"
        end = start - 1 if start > 0 else 0
        if start == 0:
            break
    return "run"


def _tail(path: str, size: int = 1 << 16) -> bytes:
    with open(path, "rb") as fh:
        fh.seek(0, os.SEEK_END)
        end = fh.tell()
        fh.seek(max(0, end - size))
        return fh.read()


def _read_streamed(path: str, label: str, kind: str, head: bytes) -> Run | Qrels | None:
    """Read a clean TREC file straight from disk in blocks (the whole file never in memory).

    Returns ``None`` whenever anything needs a closer look (the caller then reads the
    file as a whole, normalises it, or reports errors with line numbers).
    """
    ncols, vcol = (6, 4) if kind == "run" else (4, 3)
    if head.startswith((b"#", b" ")) or b"\t" in head or b"\x00" in head:
        return None
    table = _arrow_csv(head, ncols, {0: pa.binary(), 2: pa.binary(), vcol: pa.float64()}, path)
    if table is None:
        return None
    qid_col, doc_col, value_col = table.columns
    del table  # each column is released as soon as it has been converted
    for col in (qid_col, doc_col):  # tabs or NULs inside identifiers
        for chunk in col.chunks:
            data = chunk.buffers()[2]
            if data is not None and data.size and np.frombuffer(data, np.uint8).min() < 33:
                return None
    values = S.float_values(value_col)
    del value_col
    if not np.isfinite(values).all():
        return None
    names, codes = S.codes_for(qid_col)
    del qid_col
    if any(n.startswith("#") for n in names):
        return None
    obj: Run | Qrels
    if kind == "run":
        obj = Run(label, _last_tag(_tail(path)), names, codes, doc_col, values)
    else:
        obj = Qrels(label, names, codes, doc_col, values)
    del doc_col
    return None if len(obj.duplicate_rows()) else obj


def _pick_reader(reader: Reader) -> str:
    """Return the reader to use for a clean TREC file: ``"c"``, ``"numpy"`` or ``"arrow"``.

    Raises:
        ValueError: an unknown reader, or ``"c"`` when the extension is unavailable.
    """
    if reader == "auto":
        if _creader.AVAILABLE:
            return "c"
        return "arrow" if "pyarrow" in sys.modules else "numpy"
    if reader not in ("c", "numpy", "arrow"):
        raise ValueError(f"unknown reader {reader!r} (expected 'auto', 'c', 'numpy' or 'arrow')")
    if reader == "c" and not _creader.AVAILABLE:
        raise ValueError(f"reader 'c' is unavailable: the C extension is {_creader.WHY_NOT}")
    return reader


def _read(
    source: Source, kind: str, fmt: Format, name: str | None, reader: Reader = "auto"
) -> Run | Qrels:
    if isinstance(source, Run if kind == "run" else Qrels):
        return source
    chosen = _pick_reader(reader)
    try:
        return _read_any(source, kind, fmt, name, chosen)
    finally:
        if pa._lazy_module is not None:  # pyarrow was used: give the parser's buffers back
            _memory_pool().release_unused()


def _read_clean_mapped(path: str, skip: int, label: str, kind: str) -> Run | Qrels | None:
    """Read a clean TREC file with the C reader, mapped, its first ``skip`` bytes left out."""
    try:
        with open(path, "rb") as fh:
            mapped = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    try:
        with memoryview(mapped) as whole, whole[skip:] as text:
            return _read_clean(text, label, kind, "c")
    finally:
        mapped.close()


def _read_clean(
    path: str | memoryview, label: str, kind: str, reader: str = "numpy", *, skip: int = 0
) -> Run | Qrels | None:
    """Read clean TREC text with the C or numpy reader (no pyarrow); ``None`` if not clean.

    ``path`` is a file's path, or (C reader only) the text itself as a memoryview.
    ``skip``: bytes of the file before its text (a byte-order mark; numpy reader only).
    """
    ncols, vcol = (6, 4) if kind == "run" else (4, 3)
    if isinstance(path, memoryview):
        parsed = _creader.read_clean_c_buffer(path, ncols, vcol, threads=_USE_THREADS, ragged=True)
    elif reader == "c":  # docnos of different widths packed, not padded to the widest
        if skip:
            raise ValueError("the C reader of a path reads the whole file: map it instead")
        parsed = _creader.read_clean_c(path, ncols, vcol, threads=_USE_THREADS, ragged=True)
    else:
        parsed = read_clean(path, ncols, vcol, threads=_USE_THREADS, skip=skip)
    if parsed is None:
        return None
    raw_names, codes, words, values, last = parsed
    names = [S.decode(n) for n in raw_names]
    obj: Run | Qrels
    if kind == "run":
        obj = Run(label, S.decode(last), names, codes, words, values)
    else:
        obj = Qrels(label, names, codes, words, values)
    return None if len(obj.duplicate_rows()) else obj


def _read_any(
    source: Source, kind: str, fmt: Format, name: str | None, reader: str = "numpy"
) -> Run | Qrels:
    if isinstance(source, (str, os.PathLike)) and fmt in ("auto", "trec"):
        path = os.fspath(source)
        try:
            with open(path, "rb") as fh:
                head = fh.read(1 << 16)
        except OSError:
            head = b""  # reported by _load below
        skip, codec, _ = textpolicy.byte_order_mark(head)
        head = head[skip:]  # a UTF-8 mark is skipped by every fast path below
        if head and codec == "utf-8" and _detect(head, fmt) == "trec":
            clean = None
            if reader == "c" and skip:
                clean = _read_clean_mapped(path, skip, name or str(source), kind)
            elif reader in ("c", "numpy"):
                clean = _read_clean(path, name or str(source), kind, reader, skip=skip)
            if clean is not None:
                return clean
            # Arrow's CSV reader skips a UTF-8 byte-order mark itself.
            streamed = _read_streamed(path, name or str(source), kind, head)
            if streamed is not None:
                return streamed
    elif isinstance(source, (bytes, bytearray, memoryview)) and reader == "c":
        view = memoryview(source)  # an upload: the C reader parses it in place
        if view.c_contiguous and fmt in ("auto", "trec"):
            view = view.cast("B")  # its bytes, whatever the item format
            skip, codec, _ = textpolicy.byte_order_mark(view[:4])
            if codec == "utf-8" and _detect(view[skip:], fmt) == "trec":
                clean = _read_clean(view[skip:], name or "<bytes>", kind, "c")
                if clean is not None:
                    return clean
    data, label = _load(source, name)
    data = _utf8(data, label)
    detected = _detect(data, fmt)
    what = "score" if kind == "run" else "label"
    if detected in ("json", "jsonl"):
        keys = _SCORE_KEYS if kind == "run" else _GRADE_KEYS
        qids, docs, vals, _lines, tag = _json_rows(data, label, detected, keys, what)
        return _from_lists(kind, label, qids, docs, vals, tag)
    ncols, vcol, layout = (6, 4, _RUN_LAYOUT) if kind == "run" else (4, 3, _QRELS_LAYOUT)
    wanted = {0: pa.binary(), 2: pa.binary(), vcol: pa.float64()}
    table = _fast_table(data, ncols, wanted)
    names: list[str] = []
    if table is not None:
        names, codes = S.codes_for(S.as_binary(table.column(0)))
        if any(n.startswith("#") for n in names):  # comment lines: normalise and retry
            table = _arrow_csv(_normalise(data), ncols, wanted)
            if table is not None:
                names, codes = S.codes_for(S.as_binary(table.column(0)))
                if any(n.startswith("#") for n in names):
                    table = None
    if table is not None:
        values = S.float_values(table.column(2))
        if np.isfinite(values).all():
            db = table.column(1)  # chunked binary, kept as is
            obj: Run | Qrels
            if kind == "run":
                obj = Run(label, _last_tag(data), names, codes, db, values)
            else:
                obj = Qrels(label, names, codes, db, values)
            if not len(obj.duplicate_rows()):
                return obj
    # Slow path: exact messages with line numbers (or unusual but valid text).
    qids, docs, vals, _lines, tag = _slow_trec(data, label, ncols, vcol, what, layout)
    return _from_lists(kind, label, qids, docs, vals, tag)


def read_run(
    source: Source | Run,
    *,
    format: Format = "auto",
    name: str | None = None,
    reader: Reader = "auto",
) -> Run:
    """Read a run from a path, bytes or a binary/text file object (a :class:`Run` passes through).

    ``format`` is ``"trec"``, ``"json"``, ``"jsonl"`` or ``"auto"`` (an input starting
    with ``[`` is JSON, with ``{`` JSONL, anything else TREC).  ``name`` replaces the
    source's name in error messages.  ``reader`` picks the reader of clean TREC files
    given by path: ``"c"`` (the compiled extension: fastest, light; it also parses
    clean TREC bytes in place), ``"numpy"`` (light, no pyarrow), ``"arrow"``
    (multithreaded C++, imports pyarrow) or ``"auto"`` (``"c"`` if built, else
    ``"arrow"`` if pyarrow is already imported, else ``"numpy"``); the result is the
    same (see the module doc).

    Raises:
        EngineInputError: with every problem found (file, line, reason).
        ValueError: an unknown ``format`` or ``reader`` (or ``"c"`` when not built).
    """
    return _read(source, "run", format, name, reader)  # type: ignore[return-value]


def read_qrels(
    source: Source | Qrels,
    *,
    format: Format = "auto",
    name: str | None = None,
    reader: Reader = "auto",
) -> Qrels:
    """Read qrels from a path, bytes or a file object (a :class:`Qrels` passes through).

    See :func:`read_run` for ``format``, ``name`` and ``reader``.

    Raises:
        EngineInputError: with every problem found (file, line, reason).
        ValueError: an unknown ``format`` or ``reader``.
    """
    return _read(source, "qrels", format, name, reader)  # type: ignore[return-value]
