"""The demo collection's content, composed deterministically from the topic modules.

:func:`demo_content` returns the queries, the documents (with ids, URLs on fictional
``.test`` hosts, rendered bodies and ``extra`` fields) and the author's intended reference
grades. The same input always gives the same output, so the committed run and qrels files
in ``demo/`` stay in step with what :mod:`judging.demo.loader` puts in the database. Nothing
here needs Django.
"""

from __future__ import annotations

import datetime
import functools
import html
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from . import topics_1, topics_2, topics_3, topics_4
from .spec import DocSpec, TopicSpec

#: Document ids are ``hg-`` and six digits hashed from the title: stable, and no hint of
#: the topic or the grade.
DOCNO_PREFIX = "hg-"
DOCNO_SPACE = 1_000_000
_FIRST_DATE = datetime.date(2019, 3, 1)
_DATE_SPAN_DAYS = 2250
_LIST_ITEM = re.compile(r"^(- |\d+\. )")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_SOURCES = {
    "forum": "forum",
    "product": "shop",
    "review": "review",
    "news": "news",
    "blog": "blog",
}


@dataclass(frozen=True)
class DemoQuery:
    """A query of the demo collection."""

    external_id: str
    text: str
    description: str
    narrative: str


@dataclass(frozen=True)
class DemoDocument:
    """A document of the demo collection, ready to store."""

    external_id: str
    title: str
    body: str
    url: str
    extra: dict[str, Any]


@dataclass(frozen=True)
class ReferenceGrade:
    """The grade the author intended for one (query, document) pair."""

    query_external_id: str
    document_external_id: str
    grade: int


@dataclass(frozen=True)
class DemoContent:
    """Everything the demo loads, plus the reference grades used for runs and qrels."""

    queries: tuple[DemoQuery, ...]
    documents: tuple[DemoDocument, ...]
    reference: tuple[ReferenceGrade, ...]

    def reference_by_query(self) -> dict[str, dict[str, int]]:
        """Return ``{query id: {document id: reference grade}}``."""
        table: dict[str, dict[str, int]] = {q.external_id: {} for q in self.queries}
        for ref in self.reference:
            table[ref.query_external_id][ref.document_external_id] = ref.grade
        return table


def topics() -> tuple[TopicSpec, ...]:
    """Return every demo topic in query-id order."""
    return tuple(
        sorted(
            [*topics_1.TOPICS, *topics_2.TOPICS, *topics_3.TOPICS, *topics_4.TOPICS],
            key=lambda t: t.qid,
        )
    )


def _stable_hash(text: str) -> int:
    """Return a hash of ``text`` that is the same in every process (unlike ``hash``)."""
    return zlib.crc32(text.encode("utf-8"))


def _slug(text: str, max_length: int = 60) -> str:
    """Return a URL slug of ``text``, cut at a word boundary."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    if len(slug) > max_length:
        slug = slug[:max_length].rsplit("-", 1)[0]
    return slug


def _blocks(body: str) -> Iterator[tuple[str, list[str]]]:
    """Yield ``(kind, texts)`` for each block of a body: ``p``, ``ul`` or ``ol``."""
    for block in re.split(r"\n\s*\n", body.strip()):
        lines = [line.strip() for line in block.splitlines() if line.strip()]
        if not lines:
            continue
        first = _LIST_ITEM.match(lines[0])
        if first is None:
            yield "p", [" ".join(lines)]
            continue
        items: list[str] = []
        for line in lines:
            marker = _LIST_ITEM.match(line)
            if marker is not None:
                items.append(line[marker.end() :])
            else:
                items[-1] = f"{items[-1]} {line}"
        yield ("ul" if first.group(1) == "- " else "ol"), items


def _inline_html(text: str) -> str:
    """Escape ``text`` for HTML and turn ``**bold**`` into ``<b>``."""
    return _BOLD.sub(r"<b>\1</b>", html.escape(text, quote=False))


def render_body(spec: DocSpec) -> str:
    """Return the stored body: light HTML when the spec uses lists, bold or specs."""
    blocks = list(_blocks(spec.body))
    as_html = bool(spec.specs) or "**" in spec.body or any(k != "p" for k, _ in blocks)
    if not as_html:
        return "\n\n".join(texts[0] for _, texts in blocks)
    parts = []
    for kind, texts in blocks:
        if kind == "p":
            parts.append(f"<p>{_inline_html(texts[0])}</p>")
        else:
            items = "".join(f"<li>{_inline_html(t)}</li>" for t in texts)
            parts.append(f"<{kind}>{items}</{kind}>")
    if spec.specs:
        rows = "".join(
            f"<li><b>{html.escape(k, quote=False)}:</b> {html.escape(v, quote=False)}</li>"
            for k, v in spec.specs
        )
        parts.append(f"<ul>{rows}</ul>")
    return "\n".join(parts)


def _date(spec: DocSpec) -> datetime.date:
    """Return the document's publication date: given in ``extra`` or derived from the title."""
    given = spec.extra.get("published")
    if given:
        return datetime.date.fromisoformat(given)
    return _FIRST_DATE + datetime.timedelta(days=_stable_hash(spec.title) % _DATE_SPAN_DAYS)


def _url(spec: DocSpec, area: str) -> str:
    """Return a URL on a fictional ``.test`` host for the document."""
    slug, key, date = _slug(spec.title), _stable_hash(spec.title), _date(spec)
    area = spec.area or area
    paths = {
        "guide": ("example-garden.test" if area == "garden" else "example-diy.test")
        + ("/guides/" if area == "garden" else "/how-to/")
        + slug,
        "forum": f"forum.example-home.test/t/{slug}/{1000 + key % 90000}",
        "product": f"shop.example-home.test/p/{slug}",
        "review": f"reviews.example-home.test/{slug}",
        "news": f"news.example.test/{date:%Y/%m}/{slug}",
        "faq": f"help.example-home.test/faq/{slug}",
        "blog": f"blog.example-{area}.test/{date:%Y}/{slug}",
    }
    path = paths[spec.kind]
    if spec.site:
        path = spec.site + path[path.index("/") :]
    return f"https://{path}"


def _extra(spec: DocSpec) -> dict[str, Any]:
    """Return the document's ``extra`` fields: source, dates and what the spec adds.

    Guides, help pages and every other blog post carry none of their own, as pages often
    do not.
    """
    key = _stable_hash(spec.title)
    extra: dict[str, Any] = {}
    if spec.kind in _SOURCES and not (spec.kind == "blog" and key % 2):
        extra["source"] = _SOURCES[spec.kind]
        if spec.kind != "product":
            extra["published"] = _date(spec).isoformat()
    elif spec.kind == "guide" and key % 3 == 0:
        extra["updated"] = _date(spec).isoformat()
    extra.update(spec.extra)
    return extra


def _check(all_topics: tuple[TopicSpec, ...]) -> None:
    """Refuse content with duplicate query ids or titles, or references to unknown queries."""
    qids = [t.qid for t in all_topics]
    if len(set(qids)) != len(qids):
        raise ValueError("duplicate query ids in the demo topics")
    titles = [d.title for t in all_topics for d in t.docs]
    duplicates = sorted({t for t in titles if titles.count(t) > 1})
    if duplicates:
        raise ValueError(f"duplicate document titles: {duplicates}")
    for t in all_topics:
        for d in t.docs:
            unknown = set(d.also) - set(qids)
            if unknown or t.qid in d.also:
                raise ValueError(f"bad 'also' query ids {sorted(d.also)} in {d.title!r}")


def _docnos(specs: list[DocSpec]) -> list[str]:
    """Return a document id for each spec, derived from its title.

    Ids stay the same when other documents are added, removed or reordered, so an existing
    demo database only gains the new documents; a rare hash collision moves the later
    document to the next free number.
    """
    taken: set[int] = set()
    docnos = []
    for spec in specs:
        number = _stable_hash(spec.title) % DOCNO_SPACE
        while number in taken:
            number = (number + 1) % DOCNO_SPACE
        taken.add(number)
        docnos.append(f"{DOCNO_PREFIX}{number:06d}")
    return docnos


@functools.cache
def demo_content() -> DemoContent:
    """Compose the demo's queries, documents and reference grades (cached)."""
    all_topics = topics()
    _check(all_topics)
    written = [(t, d) for t in all_topics for d in t.docs]
    documents: list[DemoDocument] = []
    reference: list[ReferenceGrade] = []
    for (t, d), docno in zip(written, _docnos([d for _, d in written]), strict=True):
        documents.append(
            DemoDocument(
                external_id=docno,
                title=d.title,
                body=render_body(d),
                url=_url(d, t.area),
                extra=_extra(d),
            )
        )
        reference.append(ReferenceGrade(t.qid, docno, d.grade))
        reference.extend(ReferenceGrade(qid, docno, grade) for qid, grade in d.also.items())
    queries = tuple(DemoQuery(t.qid, t.text, t.description, t.narrative) for t in all_topics)
    return DemoContent(
        queries=queries,
        documents=tuple(sorted(documents, key=lambda doc: doc.external_id)),
        reference=tuple(
            sorted(reference, key=lambda r: (r.query_external_id, r.document_external_id))
        ),
    )
