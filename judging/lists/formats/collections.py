"""Topics (queries) and documents as files: readers yielding records or problems.

Topics:
``trec``   TREC topic files as used by TREC ad hoc, Web and the Deep Learning / RAG tracks:
           ``<top> <num> Number: 301 <title> … <desc> Description: … <narr> Narrative: …
           </top>``. Closing tags are optional, the ``Number:``/``Topic:``/
           ``Description:``/``Narrative:`` prefixes are dropped, white space (line breaks
           included) is collapsed, ``<narr>`` and ``<desc>`` may be missing, and
           ``<topic number="N">`` files with ``<query>``/``<description>``/``<narrative>``
           are read too.
``jsonl``  ``{"qid", "text", "description", "narrative"}`` per line (``id``/``query_id``
           for the id, ``query``/``title`` for the text).
``tsv``    ``qid<TAB>text`` (MS MARCO, TREC DL).
``csv``    a header line naming the columns (``qid``, ``text``, ``description``,
           ``narrative``; the same alternative names as JSON Lines), then one topic per
           record (RFC 4180: quoted cells may hold commas and line breaks).

Documents:
``jsonl``  ``{"docno", "title", "body", "url", ...}`` per line (``id``/``doc_id``/``_id``/
           ``docid``/``pid`` for the id, ``text``/``contents`` for the body); other keys go
           to ``extra``.
``tsv``    ``docno<TAB>text`` (MS MARCO passages) or ``docno<TAB>url<TAB>title<TAB>body``
           (MS MARCO documents).
``csv``    a header naming ``docno``, ``title``, ``body``, ``url`` (JSON Lines' alternative
           names too); other columns go to ``extra`` as text.

A csv cell that starts with ``'`` before a formula (see
:func:`judging.lists.formats.common.is_formula`) loses that ``'``: the guard Graded's own
csv exports add for spreadsheets.

Blank lines and lines starting with ``#`` are skipped (in JSON Lines and TSV).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from graded import textpolicy
from judging.lists.formats.common import (
    FormatError,
    Problem,
    csv_cell_text,
    csv_records,
    ident,
    json_value,
    text,
    url,
)

TOPIC_FORMATS = ("trec", "jsonl", "tsv", "csv")
DOCUMENT_FORMATS = ("jsonl", "tsv", "csv")
QUERY_ID_KEYS = ("qid", "query_id", "id", "number")
QUERY_TEXT_KEYS = ("text", "query", "title")
DOCUMENT_ID_KEYS = ("docno", "doc_id", "docid", "id", "_id", "pid")
DOCUMENT_BODY_KEYS = ("body", "text", "contents")


@dataclass(frozen=True, slots=True)
class TopicIn:
    """One topic read from a file."""

    line: int
    qid: str
    text: str
    description: str = ""
    narrative: str = ""


@dataclass(frozen=True, slots=True)
class DocumentIn:
    """One document read from a file."""

    line: int
    docno: str
    title: str = ""
    body: str = ""
    url: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _squash(value: str) -> str:
    """Collapse runs of white space (line breaks included) into single spaces."""
    return " ".join(value.split())


def _first(obj: dict[str, Any], keys: tuple[str, ...]) -> tuple[str | None, Any]:
    """Return the first of ``keys`` present in ``obj`` and its value."""
    for key in keys:
        if key in obj and obj[key] is not None:
            return key, obj[key]
    return None, None


def _scalar(value: Any, line: int, name: str) -> str:
    """Return a string or number field as text; refuse objects and lists."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise FormatError(line, "must be a string", name)
    return text(str(value), line, name)


def _json_line(number: int, line: str) -> dict[str, Any]:
    """Parse one JSON Lines object."""
    obj = json_value(number, line)
    if not isinstance(obj, dict):
        raise FormatError(number, "expected a JSON object")
    return obj


# --- topics ------------------------------------------------------------------------------

_TAG = re.compile(r"<\s*(/?)\s*([a-zA-Z]+)([^>]*)>")
_PREFIXES = {
    "num": re.compile(r"^\s*(number|num)\s*:\s*", re.IGNORECASE),
    "title": re.compile(r"^\s*(topic|title)\s*:\s*", re.IGNORECASE),
    "desc": re.compile(r"^\s*description\s*:\s*", re.IGNORECASE),
    "narr": re.compile(r"^\s*narrative\s*:\s*", re.IGNORECASE),
}
_FIELDS = {
    "num": "num",
    "title": "title",
    "query": "title",
    "desc": "desc",
    "description": "desc",
    "narr": "narr",
    "narrative": "narr",
}
_NUMBER_ATTR = re.compile(r"""number\s*=\s*["']?([^"'\s>]+)""", re.IGNORECASE)


def read_trec_topics(lines: Iterable[tuple[int, str]]) -> Iterator[TopicIn | Problem]:
    """Read a TREC topic file (see the module doc for the quirks it accepts)."""
    topic: dict[str, list[str]] | None = None
    start = 0
    current: str | None = None
    seen_any = False

    def finish(end_line: int) -> TopicIn | Problem:
        assert topic is not None
        values = {k: _squash(" ".join(v)) for k, v in topic.items()}
        for key, pattern in _PREFIXES.items():
            if key in values:
                values[key] = pattern.sub("", values[key], count=1).strip()
        qid = values.get("num", "")
        if not qid:
            return Problem(start, "topic without a <num>", "num")
        title = values.get("title", "")
        if not title:
            return Problem(start, f"topic {qid}: no <title>", "title")
        try:
            return TopicIn(
                start,
                ident(qid.split()[0], start, "num"),
                text(html.unescape(title), start, "title"),
                text(html.unescape(values.get("desc", "")), start, "desc"),
                text(html.unescape(values.get("narr", "")), start, "narr"),
            )
        except FormatError as exc:
            return exc.problem

    for number, line in lines:
        position = 0
        for match in _TAG.finditer(line):
            if topic is not None and current is not None:
                topic.setdefault(current, []).append(line[position : match.start()])
            position = match.end()
            closing, name = match.group(1), match.group(2).lower()
            if name in ("top", "topic"):
                if closing:
                    if topic is not None:
                        yield finish(number)
                    topic, current = None, None
                    continue
                if topic is not None:
                    yield finish(number)
                topic, start, current, seen_any = {}, number, None, True
                attr = _NUMBER_ATTR.search(match.group(3))
                if attr:
                    topic["num"] = [attr.group(1)]
                continue
            if topic is None:
                continue
            field_name = _FIELDS.get(name)
            if closing:
                current = None
            elif field_name is not None:
                current = field_name
                topic.setdefault(current, [])
            else:
                current = None  # an unknown tag (e.g. <subtopic>) is skipped
        if topic is not None and current is not None:
            topic.setdefault(current, []).append(line[position:])
    if topic is not None:
        yield finish(start)
    if not seen_any:
        yield Problem(1, "no <top> or <topic> found: is this a TREC topic file?")


def topic_from_object(number: int, obj: Any) -> TopicIn:
    """Read one topic object (of a JSON Lines file or a JSON batch)."""
    if not isinstance(obj, dict):
        raise FormatError(number, "expected a JSON object")
    _, qid = _first(obj, QUERY_ID_KEYS)
    _, query_text = _first(obj, QUERY_TEXT_KEYS)
    if qid is None or query_text is None:
        raise FormatError(
            number,
            f"needs a query id ({'/'.join(QUERY_ID_KEYS)}) and a text "
            f"({'/'.join(QUERY_TEXT_KEYS)})",
        )
    return TopicIn(
        number,
        ident(_scalar(qid, number, "qid"), number, "qid"),
        _scalar(query_text, number, "text"),
        _scalar(obj.get("description") or "", number, "description"),
        _scalar(obj.get("narrative") or "", number, "narrative"),
    )


def read_topics_jsonl(lines: Iterable[tuple[int, str]]) -> Iterator[TopicIn | Problem]:
    """Read one topic object per line."""
    for number, line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            yield topic_from_object(number, _json_line(number, line))
        except FormatError as exc:
            yield exc.problem


def read_topics_tsv(lines: Iterable[tuple[int, str]]) -> Iterator[TopicIn | Problem]:
    """Read ``qid<TAB>text`` lines (further columns: description, narrative)."""
    for number, line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split("\t")
        if len(parts) < 2 or len(parts) > 4:
            yield Problem(number, "expected 'qid<TAB>text'")
            continue
        parts += [""] * (4 - len(parts))
        try:
            yield TopicIn(
                number,
                ident(parts[0], number, "qid"),
                text(parts[1], number, "text"),
                text(parts[2], number, "description"),
                text(parts[3], number, "narrative"),
            )
        except FormatError as exc:
            yield exc.problem


def _csv_objects(
    lines: Iterable[tuple[int, str]], build: Callable[[int, dict[str, Any]], Any]
) -> Iterator[Any]:
    """Read csv with a header into one object per record and pass it to ``build``.

    The header names the keys (as in JSON Lines); a record with another number of cells
    than the header is a problem.
    """
    header: list[str] | None = None
    for item in csv_records(lines):
        if isinstance(item, Problem):
            yield item
            return
        number, cells = item
        if header is None:
            header = [cell.strip().lower() for cell in cells]
            repeated = sorted({name for name in header if header.count(name) > 1})
            if repeated or not all(header):
                yield Problem(number, "the header needs one distinct name per column")
                return
            continue
        if len(cells) != len(header):
            yield Problem(number, f"expected {len(header)} columns, found {len(cells)}")
            continue
        obj = {name: csv_cell_text(cell) for name, cell in zip(header, cells, strict=True)}
        try:
            yield build(number, {name: value for name, value in obj.items() if value != ""})
        except FormatError as exc:
            yield exc.problem
    if header is None:
        yield Problem(1, "no header line naming the columns")


def read_topics_csv(lines: Iterable[tuple[int, str]]) -> Iterator[TopicIn | Problem]:
    """Read csv with a header (``qid,text,description,narrative``)."""
    return _csv_objects(lines, topic_from_object)


def read_topics(fmt: str, lines: Iterable[tuple[int, str]]) -> Iterator[TopicIn | Problem]:
    """Read topics in format ``fmt`` (``trec``, ``jsonl``, ``tsv`` or ``csv``)."""
    readers = {
        "trec": read_trec_topics,
        "jsonl": read_topics_jsonl,
        "tsv": read_topics_tsv,
        "csv": read_topics_csv,
    }
    if fmt not in readers:
        raise ValueError(f"unknown topic format {fmt!r}; use one of {', '.join(TOPIC_FORMATS)}")
    return readers[fmt](lines)


def guess_topic_format(name: str, head: bytes) -> str:
    """Return the topic format a file name and its first bytes suggest."""
    lower = name.lower()
    head = textpolicy.head_bytes(head)
    if lower.endswith(".jsonl") or head.lstrip()[:1] == b"{":
        return "jsonl"
    if lower.endswith(".csv"):
        return "csv"
    if lower.endswith((".tsv", ".txt")) and b"<top" not in head:
        return "tsv"
    if b"<top" in head or lower.endswith((".trec", ".xml", ".sgml")):
        return "trec"
    return "tsv"


# --- documents ---------------------------------------------------------------------------


def _check_nested(value: Any, line: int, name: str) -> None:
    """Pass every string inside a JSON value (keys included) through :func:`text`."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            text(item, line, name)
        elif isinstance(item, dict):
            for key, inner in item.items():
                text(key, line, name)
                stack.append(inner)
        elif isinstance(item, list):
            stack.extend(item)


def document_from_object(number: int, obj: Any) -> DocumentIn:
    """Read one document object (of a JSON Lines file or a JSON batch)."""
    if not isinstance(obj, dict):
        raise FormatError(number, "expected a JSON object")
    id_key, docno = _first(obj, DOCUMENT_ID_KEYS)
    if docno is None:
        raise FormatError(number, f"needs a document id ({'/'.join(DOCUMENT_ID_KEYS)})")
    body_key, body = _first(obj, DOCUMENT_BODY_KEYS)
    extra = {k: v for k, v in obj.items() if k not in {id_key, body_key, "title", "url"}}
    for key, value in extra.items():
        _check_nested(value, number, text(key, number, "extra", 200))
    return DocumentIn(
        number,
        ident(_scalar(docno, number, "docno"), number, "docno"),
        _scalar(obj.get("title") or "", number, "title"),
        _scalar(body or "", number, "body"),
        url(_scalar(obj.get("url") or "", number, "url"), number),
        extra,
    )


def read_documents_jsonl(lines: Iterable[tuple[int, str]]) -> Iterator[DocumentIn | Problem]:
    """Read one document object per line."""
    for number, line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            yield document_from_object(number, _json_line(number, line))
        except FormatError as exc:
            yield exc.problem


def read_documents_tsv(lines: Iterable[tuple[int, str]]) -> Iterator[DocumentIn | Problem]:
    """Read ``docno<TAB>text`` or ``docno<TAB>url<TAB>title<TAB>body`` lines."""
    for number, line in lines:
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("\t")
        try:
            if len(parts) == 2:
                yield DocumentIn(
                    number,
                    ident(parts[0], number, "docno"),
                    body=text(parts[1], number, "body"),
                )
            elif len(parts) == 4:
                yield DocumentIn(
                    number,
                    ident(parts[0], number, "docno"),
                    url=url(parts[1], number),
                    title=text(parts[2], number, "title"),
                    body=text(parts[3], number, "body"),
                )
            else:
                yield Problem(
                    number,
                    f"expected 'docno<TAB>text' or 'docno<TAB>url<TAB>title<TAB>body', "
                    f"found {len(parts)} columns",
                )
        except FormatError as exc:
            yield exc.problem


def read_documents_csv(lines: Iterable[tuple[int, str]]) -> Iterator[DocumentIn | Problem]:
    """Read csv with a header (``docno,title,body,url``; other columns go to ``extra``)."""
    return _csv_objects(lines, document_from_object)


def read_documents(fmt: str, lines: Iterable[tuple[int, str]]) -> Iterator[DocumentIn | Problem]:
    """Read documents in format ``fmt`` (``jsonl``, ``tsv`` or ``csv``)."""
    readers = {"jsonl": read_documents_jsonl, "tsv": read_documents_tsv, "csv": read_documents_csv}
    if fmt in readers:
        return readers[fmt](lines)
    raise ValueError(f"unknown document format {fmt!r}; use one of {', '.join(DOCUMENT_FORMATS)}")


def guess_document_format(name: str, head: bytes) -> str:
    """Return the document format a file name and its first bytes suggest."""
    head = textpolicy.head_bytes(head)
    if name.lower().endswith(".jsonl") or head.lstrip()[:1] == b"{":
        return "jsonl"
    if name.lower().endswith(".csv"):
        return "csv"
    return "tsv"
