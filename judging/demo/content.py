"""The demo collection's content, read from the data files in ``demo/``.

``demo/topics.trec`` (TREC topics), ``demo/documents.jsonl`` (JSON Lines documents) and
``demo/qrels-reference.txt`` (the author's intended grades, TREC qrels) are read with the
same readers users' files go through (:mod:`judging.lists.formats`); :mod:`judging.demo.loader`
imports them with the same services. Nothing here needs Django.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from judging.lists.formats import Problem, iter_lines
from judging.lists.formats.collections import read_documents_jsonl, read_trec_topics
from judging.lists.formats.judgments import read_qrels

DEMO_DIR = Path(__file__).resolve().parents[2] / "demo"
TOPICS_PATH = DEMO_DIR / "topics.trec"
DOCUMENTS_PATH = DEMO_DIR / "documents.jsonl"
REFERENCE_PATH = DEMO_DIR / "qrels-reference.txt"


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


def _read(reader: Any, path: Path) -> list[Any]:
    """Return a reader's records of ``path``; a problem in a demo file is a bug."""
    with path.open("rb") as source:
        records = list(reader(iter_lines(source)))
    problems = [r for r in records if isinstance(r, Problem)]
    if problems:
        raise ValueError(f"{path.name}: {problems[0]}")
    return records


@functools.cache
def demo_content() -> DemoContent:
    """Read the demo's queries, documents and reference grades (cached)."""
    queries = tuple(
        DemoQuery(t.qid, t.text, t.description, t.narrative)
        for t in _read(read_trec_topics, TOPICS_PATH)
    )
    documents = tuple(
        DemoDocument(d.docno, d.title, d.body, d.url, d.extra)
        for d in _read(read_documents_jsonl, DOCUMENTS_PATH)
    )
    reference = tuple(
        sorted(
            (
                ReferenceGrade(r.query, r.document, r.grade)
                for r in _read(read_qrels, REFERENCE_PATH)
            ),
            key=lambda r: (r.query_external_id, r.document_external_id),
        )
    )
    return DemoContent(
        queries=tuple(sorted(queries, key=lambda q: q.external_id)),
        documents=tuple(sorted(documents, key=lambda d: d.external_id)),
        reference=reference,
    )
