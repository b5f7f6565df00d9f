"""Building blocks of the demo content: topic and document specifications.

The topic modules (``topics_*.py``) describe each query and the documents written for it
with :func:`topic` and :func:`doc`; :mod:`judging.demo.content` turns them into the
collection's queries, documents and reference grades. Nothing here needs Django.

A document body is written as plain paragraphs separated by blank lines. Lines starting
with ``- `` form a bulleted list, lines starting with ``1. `` (any number) a numbered list,
and ``**words**`` is bold. Bodies using any of these are published as light HTML; the
others as plain text.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

KINDS = ("guide", "forum", "product", "review", "news", "faq", "blog")
AREAS = ("home", "garden")


@dataclass(frozen=True)
class DocSpec:
    """One document as written: the intended grade for its topic and its raw content."""

    grade: int
    kind: str
    title: str
    body: str
    specs: tuple[tuple[str, str], ...] = ()
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    also: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    site: str = ""
    area: str = ""


@dataclass(frozen=True)
class TopicSpec:
    """One query with its information need, the judges' narrative and its documents."""

    qid: str
    area: str
    text: str
    description: str
    narrative: str
    docs: tuple[DocSpec, ...]


def _prose(text: str) -> str:
    """Return ``text`` dedented, stripped, with each paragraph's lines joined by spaces."""
    return " ".join(textwrap.dedent(text).split())


def doc(
    grade: int,
    kind: str,
    title: str,
    body: str,
    *,
    specs: Sequence[tuple[str, str]] = (),
    extra: Mapping[str, Any] | None = None,
    also: Mapping[str, int] | None = None,
    site: str = "",
    area: str = "",
) -> DocSpec:
    """Describe a document intended to have ``grade`` for the topic it is written under.

    ``also`` gives reference grades for other topics (by query id) the document is pooled
    for; ``specs`` are product facts shown as a list; ``site`` overrides the host name and
    ``area`` the topic's area (``home`` or ``garden``) when choosing one.
    """
    if not 0 <= grade <= 4:
        raise ValueError(f"grade must be 0–4, not {grade} ({title!r})")
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} ({title!r})")
    if area and area not in AREAS:
        raise ValueError(f"unknown area {area!r} ({title!r})")
    return DocSpec(
        grade=grade,
        kind=kind,
        title=title,
        body=textwrap.dedent(body).strip(),
        specs=tuple(specs),
        extra=MappingProxyType(dict(extra or {})),
        also=MappingProxyType(dict(also or {})),
        site=site,
        area=area,
    )


def topic(
    qid: str,
    area: str,
    *,
    text: str,
    description: str,
    narrative: str,
    docs: Sequence[DocSpec],
) -> TopicSpec:
    """Describe a query: its id, area (``home`` or ``garden``), texts and documents."""
    if area not in AREAS:
        raise ValueError(f"unknown area {area!r} ({qid})")
    return TopicSpec(
        qid=qid,
        area=area,
        text=text,
        description=_prose(description),
        narrative=_prose(narrative),
        docs=tuple(docs),
    )
