"""Evidence spans: passages of a document a judge marks as the reason for a grade.

Pure functions, no database access. A span is ``{"start", "end", "text"}``: ``start`` and
``end`` are offsets into the document's *evidence text* (:func:`document_text`), counted
in Unicode code points (Python ``str`` indices, so an emoji is one character; the judging
card converts from the browser's UTF-16 offsets), ``end`` exclusive, and ``text`` is the
passage itself, which must equal ``document_text(body)[start:end]``: a span computed
against another version of the document is refused, not silently moved.

The evidence text is what the judge reads in the document's body on the card: the text
of the body as Graded renders it (:func:`judging.rendering.render_body`), tags removed and
character references decoded, in document order — exactly the concatenated text nodes
the browser builds from that HTML (the browser drops a line break right after ``<pre>``,
and so does :func:`document_text`). Plain-text bodies keep their line breaks. The title
and the extra fields are not part of it.

:func:`spans_from_value` checks a span list's shape (types, counts, lengths) without the
document; :func:`checked_spans` checks it against the evidence text (offsets in range,
text equal, not blank) and merges spans that overlap or touch, in document order.
Problems raise ``ValidationError`` on ``evidence``, naming the span (``evidence[2]``,
1-based).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from functools import lru_cache
from html.parser import HTMLParser
from typing import Any, NamedTuple

from django.core.exceptions import ValidationError

from graded import textpolicy
from judging.rendering import render_body

FIELD = "evidence"
#: Most spans one label may carry (as given, before merging).
MAX_SPANS = 20
#: Longest span, in characters.
MAX_SPAN_LENGTH = 2_000
#: Most characters of evidence one label may carry, all spans together (after merging).
MAX_EVIDENCE_LENGTH = 10_000
#: Largest offset accepted at all (beyond any document Graded stores).
MAX_OFFSET = textpolicy.MAX_TEXT_LENGTH * 4


class Span(NamedTuple):
    """One passage: code-point offsets ``[start, end)`` and the text between them."""

    start: int
    end: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        """Return the span as stored and exported: ``{"start", "end", "text"}``."""
        return {"start": self.start, "end": self.end, "text": self.text}


class _TextNodes(HTMLParser):
    """Collect the text nodes of rendered HTML as a browser's parser would build them."""

    def __init__(self) -> None:
        """Start with no text."""
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.after_pre = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Note a ``<pre>``: a line break right after it is not part of its text."""
        self.after_pre = tag == "pre"

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        """Close any ``<pre>`` start: a void tag holds no text."""
        self.after_pre = False

    def handle_endtag(self, tag: str) -> None:
        """Close any ``<pre>`` start: an end tag holds no text."""
        self.after_pre = False

    def handle_data(self, data: str) -> None:
        """Keep a text node (without the line break a ``<pre>`` swallows)."""
        if self.after_pre and data.startswith("\n"):
            data = data[1:]
        self.after_pre = False
        self.parts.append(data)


@lru_cache(maxsize=16)  # bodies may be long: a few recent ones (a card, a pair)
def document_text(body: str) -> str:
    """Return the evidence text of a document body (see the module's docstring).

    ``""`` for an empty body. Deterministic: the same body always gives the same text.
    """
    parser = _TextNodes()
    parser.feed(str(render_body(body or "", "")))
    parser.close()
    return "".join(parser.parts)


def _refuse(message: str) -> ValidationError:
    return ValidationError({FIELD: message})


def _offset(value: Any, where: str, name: str) -> int:
    """Return a whole-number offset, or refuse it naming ``where.name``."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise _refuse(f"{where}.{name}: must be a whole number, not {textpolicy.echo(value)}.")
    if not 0 <= value <= MAX_OFFSET:
        raise _refuse(f"{where}.{name}: {textpolicy.echo(value)} is not an offset in a document.")
    return value


def spans_from_value(value: Any) -> tuple[Span, ...] | None:
    """Check the shape of a span list as given (JSON); return it, or None when it is None.

    ``value`` is a list of at most :data:`MAX_SPANS` objects with exactly ``start``,
    ``end`` (whole numbers, ``start < end``, at most :data:`MAX_SPAN_LENGTH` apart) and
    ``text`` (a string of ``end - start`` characters, no NUL or surrogates). An empty list
    means "no evidence". Raises ``ValidationError`` on ``evidence`` naming the span.
    """
    if value is None:
        return None
    if not isinstance(value, list | tuple):
        raise _refuse(
            'Give a list of spans, each {"start": n, "end": n, "text": "..."}, '
            f"not {textpolicy.echo(value)}."
        )
    if len(value) > MAX_SPANS:
        raise _refuse(f"At most {MAX_SPANS} spans per label, not {len(value)}.")
    spans = []
    for number, item in enumerate(value, start=1):
        where = f"{FIELD}[{number}]"
        if not isinstance(item, dict):
            raise _refuse(f'{where}: must be an object {{"start", "end", "text"}}.')
        unknown = sorted(str(k) for k in set(item) - {"start", "end", "text"})
        if unknown:
            names = ", ".join(textpolicy.echo(k) for k in unknown[:5])
            raise _refuse(f"{where}: unknown field(s) {names}.")
        for name in ("start", "end", "text"):
            if name not in item:
                raise _refuse(f"{where}.{name}: is required.")
        start = _offset(item["start"], where, "start")
        end = _offset(item["end"], where, "end")
        if end <= start:
            raise _refuse(f"{where}: end ({end}) must be after start ({start}).")
        if end - start > MAX_SPAN_LENGTH:
            raise _refuse(
                f"{where}: {end - start} characters; a span holds at most {MAX_SPAN_LENGTH}."
            )
        text = item["text"]
        if not isinstance(text, str):
            raise _refuse(f"{where}.text: must be a string.")
        if problem := textpolicy.text_problem(text, what="text"):
            raise _refuse(f"{where}.{problem}.")
        if len(text) != end - start:
            raise _refuse(
                f"{where}.text: {len(text)} characters, but start and end say {end - start} "
                "(offsets count Unicode code points)."
            )
        spans.append(Span(start, end, text))
    return tuple(spans)


def checked_spans(spans: Sequence[Span], text: str) -> tuple[Span, ...]:
    """Check ``spans`` against a document's evidence ``text``; return them merged, in order.

    Each span must lie within the text, its ``text`` must equal the passage there, and it
    must hold more than white space. Spans that overlap or touch become one span (its
    text read from the document). Raises ``ValidationError`` on ``evidence``.
    """
    size = len(text)
    for number, span in enumerate(spans, start=1):
        where = f"{FIELD}[{number}]"
        if span.end > size:
            raise _refuse(
                f"{where}: offsets {span.start}–{span.end} are beyond the document's text "
                f"({size} characters)."
            )
        found = text[span.start : span.end]
        if found != span.text:
            raise _refuse(
                f"{where}.text: does not match the document at {span.start}–{span.end}, "
                f"which reads {textpolicy.echo(found)}."
            )
        if not found.strip():
            raise _refuse(f"{where}: holds only white space; select some words.")
    merged: list[Span] = []
    for span in sorted(spans):
        if merged and span.start <= merged[-1].end:
            last = merged[-1]
            end = max(last.end, span.end)
            merged[-1] = Span(last.start, end, text[last.start : end])
        else:
            merged.append(span)
    total = sum(span.end - span.start for span in merged)
    if total > MAX_EVIDENCE_LENGTH:
        raise _refuse(
            f"{total} characters of evidence; a label holds at most {MAX_EVIDENCE_LENGTH}."
        )
    return tuple(merged)


def evidence_for(value: Any, body: str) -> list[dict[str, Any]] | None:
    """Check a span list given for a document ``body``; return it as stored.

    None (no evidence) for None or an empty list; else the merged spans as dicts.
    """
    spans = spans_from_value(value)
    if not spans:
        return None
    return [span.as_dict() for span in checked_spans(spans, document_text(body))]


def dumps(spans: Sequence[dict[str, Any]] | None) -> str | None:
    """Return stored spans as JSON text, as the database's JSON column of SQLite keeps it."""
    return None if not spans else json.dumps(list(spans))


def in_context(
    spans: Sequence[dict[str, Any]] | None, text: str, *, around: int = 60
) -> list[dict[str, str]]:
    """Return each span with up to ``around`` characters of the document before and after.

    For showing evidence where the whole document is not on the page (adjudication,
    history): ``[{"before", "text", "after"}]``, cut at white space where possible, with
    an ellipsis where the document goes on. A span that no longer fits the text (the
    document changed since) is shown as recorded, without context.
    """
    shown = []
    for span in spans or ():
        start, end, quote = span.get("start"), span.get("end"), span.get("text", "")
        if not isinstance(start, int) or not isinstance(end, int) or text[start:end] != quote:
            shown.append({"before": "", "text": str(quote), "after": ""})
            continue
        before = text[max(0, start - around) : start]
        after = text[end : end + around]
        if start - around > 0:
            cut = before.find(" ")
            before = "…" + (before[cut + 1 :] if 0 <= cut < around // 2 else before)
        if end + around < len(text):
            cut = after.rfind(" ")
            after = (after[:cut] if cut > around // 2 else after) + "…"
        shown.append({"before": before, "text": quote, "after": after})
    return shown
