"""Read RAG answer files in the TREC RAG 2024/2025 format (pure: bytes in, records out).

One record per topic::

    {"run_id": "team-a1", "topic_id": "2024-105741",
     "references": ["msmarco_v2.1_doc_29_677149#3_1", "msmarco_v2.1_doc_04_1230#1_5"],
     "answer": [{"text": "The sun is a star.", "citations": [0]},
                {"text": "It is 4.6 billion years old.", "citations": [0, 1]}]}

``run_id`` and ``topic_id`` may also sit in a ``metadata`` object (the 2025 layout;
``narrative_id`` is read as the topic id there).  Citations are 0-based indices into
``references``.  A file is JSON Lines (one record per line, blank lines skipped) or one
JSON document holding an array of records.

Every problem is collected in one round, each named by its line (JSON Lines) or item
(array) and its field as a JSON path (``answer[1].citations[0]``): invalid UTF-8, NUL and
other text the policy refuses (:mod:`graded.textpolicy`), a missing or mistyped field,
a citation index out of range, a second record for a topic, a second run id.  Whether
topics and documents exist is checked by :func:`id_problems`, given what the collection
holds, so this module needs no database.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from graded import textpolicy
from graded.textpolicy import MAX_ERRORS, TextRefused, echo

MAX_REFERENCES = 1_000
"""Most references one answer may list."""
MAX_SENTENCES = 1_000
"""Most sentences one answer may hold."""
MAX_SENTENCE_CHARS = 20_000
"""Longest answer sentence, in characters."""


@dataclass(frozen=True)
class Sentence:
    """One answer sentence and the 0-based indices of the references it cites."""

    text: str
    citations: tuple[int, ...]


@dataclass(frozen=True)
class ParsedAnswer:
    """One topic's answer as read from the file, with where it was."""

    topic_id: str
    run_id: str
    references: tuple[str, ...]
    sentences: tuple[Sentence, ...]
    line: int | None
    item: int | None

    @property
    def length(self) -> int:
        """Return the answer's length in words (whitespace-separated tokens)."""
        return sum(len(s.text.split()) for s in self.sentences)


@dataclass
class ParsedAnswers:
    """Every answer of one file, in file order, and the problems found."""

    answers: list[ParsedAnswer]
    errors: list[dict[str, Any]]
    format: str  # "jsonl" or "json"

    @property
    def run_id(self) -> str | None:
        """Return the file's run id (that of its first answer), if any."""
        return self.answers[0].run_id if self.answers else None


def _where(line: int | None, item: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if line is not None:
        out["line"] = line
    if item is not None:
        out["item"] = item
    return out


class _Record:
    """Checks one record, collecting its problems."""

    def __init__(self, line: int | None, item: int | None, errors: list[dict[str, Any]]):
        self.line, self.item, self.errors = line, item, errors

    def problem(self, field: str | None, message: str) -> None:
        entry = _where(self.line, self.item)
        if field:
            entry["field"] = field
        entry["message"] = message
        self.errors.append(entry)

    def an_id(self, value: Any, field: str, what: str) -> str | None:
        if not isinstance(value, str):
            self.problem(field, f"{what} must be a string, not {_kind(value)}")
            return None
        problem = textpolicy.id_problem(value.strip(), what) or textpolicy.name_problem(
            value, what=what, max_length=None
        )
        if problem:
            self.problem(field, problem)
            return None
        return value.strip()

    def read(self, record: Any) -> ParsedAnswer | None:
        if not isinstance(record, dict):
            self.problem(None, f"a record must be a JSON object, not {_kind(record)}")
            return None
        before = len(self.errors)
        meta = record.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            self.problem("metadata", f"metadata must be an object, not {_kind(meta)}")
            meta = None
        meta = meta or {}
        topic_field, topic = _first(record, meta, ("topic_id",), ("topic_id", "narrative_id"))
        run_field, run = _first(record, meta, ("run_id",), ("run_id",))
        topic_id = run_id = None
        if topic_field is None:
            self.problem("topic_id", "topic_id is missing")
        else:
            topic_id = self.an_id(topic, topic_field, "topic_id")
        if run_field is None:
            self.problem("run_id", "run_id is missing")
        else:
            run_id = self.an_id(run, run_field, "run_id")
        references = self.references(record.get("references", _MISSING))
        sentences = self.sentences(record.get("answer", _MISSING), references)
        if len(self.errors) > before or topic_id is None or run_id is None:
            return None
        assert references is not None and sentences is not None
        return ParsedAnswer(
            topic_id=topic_id,
            run_id=run_id,
            references=tuple(references),
            sentences=tuple(sentences),
            line=self.line,
            item=self.item,
        )

    def references(self, value: Any) -> list[str] | None:
        if value is _MISSING:
            self.problem("references", "references is missing (a list of document ids)")
            return None
        if not isinstance(value, list):
            self.problem("references", f"references must be a list, not {_kind(value)}")
            return None
        if len(value) > MAX_REFERENCES:
            self.problem("references", f"{len(value)} references; at most {MAX_REFERENCES}")
            return None
        out: list[str] = []
        ok = True
        for i, docid in enumerate(value):
            checked = self.an_id(docid, f"references[{i}]", "a document id")
            ok = ok and checked is not None
            out.append(checked or "")
        return out if ok else None

    def sentences(self, value: Any, references: list[str] | None) -> list[Sentence] | None:
        if value is _MISSING:
            self.problem("answer", "answer is missing (a list of sentences)")
            return None
        if not isinstance(value, list):
            self.problem("answer", f"answer must be a list of sentences, not {_kind(value)}")
            return None
        if len(value) > MAX_SENTENCES:
            self.problem("answer", f"{len(value)} sentences; at most {MAX_SENTENCES}")
            return None
        out: list[Sentence] = []
        for i, sentence in enumerate(value):
            field = f"answer[{i}]"
            if not isinstance(sentence, dict):
                self.problem(field, f"a sentence must be an object, not {_kind(sentence)}")
                continue
            text = sentence.get("text", _MISSING)
            if text is _MISSING:
                self.problem(f"{field}.text", "text is missing")
            elif not isinstance(text, str):
                self.problem(f"{field}.text", f"text must be a string, not {_kind(text)}")
                text = _MISSING
            else:
                problem = textpolicy.prose_problem(
                    text, what="the sentence", max_length=MAX_SENTENCE_CHARS
                )
                if problem:
                    self.problem(f"{field}.text", problem)
                    text = _MISSING
            citations = self.citations(sentence.get("citations", []), field, references)
            if text is not _MISSING and citations is not None:
                out.append(Sentence(text=text, citations=citations))
        return out

    def citations(
        self, value: Any, field: str, references: list[str] | None
    ) -> tuple[int, ...] | None:
        if not isinstance(value, list):
            self.problem(
                f"{field}.citations", f"citations must be a list of indices, not {_kind(value)}"
            )
            return None
        out: list[int] = []
        ok = True
        for j, index in enumerate(value):
            where = f"{field}.citations[{j}]"
            if isinstance(index, bool) or not isinstance(index, int):
                self.problem(where, f"a citation must be a whole number, not {_kind(index)}")
                ok = False
            elif references is not None and not 0 <= index < len(references):
                self.problem(
                    where,
                    f"citation {index} is out of range: the answer has "
                    f"{len(references)} reference{'' if len(references) == 1 else 's'} "
                    f"(indices 0 to {len(references) - 1})"
                    if references
                    else f"citation {index} is out of range: the answer has no references",
                )
                ok = False
            else:
                out.append(index)
        return tuple(out) if ok else None


_MISSING = object()


def _first(
    record: dict[str, Any], meta: dict[str, Any], top: tuple[str, ...], inner: tuple[str, ...]
) -> tuple[str | None, Any]:
    """Return (field path, value) of the first of ``top`` in the record, else in metadata."""
    for name in top:
        if name in record:
            return name, record[name]
    for name in inner:
        if name in meta:
            return f"metadata.{name}", meta[name]
    return None, None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "true/false",
        int: "a number",
        float: "a number",
        str: "a string",
        list: "a list",
        dict: "an object",
    }.get(type(value), type(value).__name__)


def read_answers(content: bytes) -> ParsedAnswers:
    """Read an answer file; every record and format problem is in ``errors`` (capped).

    A repeated topic and a second run id are reported too (the file is one run); only
    well-formed records are in ``answers``.
    """
    errors: list[dict[str, Any]] = []
    answers: list[ParsedAnswer] = []
    try:
        data = textpolicy.utf8_bytes(content, what="the answer file")
    except TextRefused as exc:
        return ParsedAnswers([], [{"message": exc.message}], "jsonl")
    fmt = "json" if data.lstrip()[:1] == b"[" else "jsonl"
    if fmt == "json":
        try:
            document = textpolicy.loads_json(data)
        except TextRefused as exc:
            where = _where(exc.line, None) | ({"field": exc.field} if exc.field else {})
            return ParsedAnswers([], [{**where, "message": exc.message}], fmt)
        if not isinstance(document, list):
            return ParsedAnswers([], [{"message": "the JSON document must be an array"}], fmt)
        for item, record in enumerate(document, start=1):
            parsed = _Record(None, item, errors).read(record)
            if parsed:
                answers.append(parsed)
            if len(errors) >= MAX_ERRORS:
                break
    else:
        for number, raw in enumerate(data.split(b"\n"), start=1):
            if not raw.strip():
                continue
            try:
                text = textpolicy.decode_utf8(raw, what="the line", start=False)
                record = textpolicy.loads_json(text)
            except TextRefused as exc:
                entry: dict[str, Any] = {"line": number}
                if exc.field:
                    entry["field"] = exc.field
                errors.append({**entry, "message": exc.message})
            else:
                parsed = _Record(number, None, errors).read(record)
                if parsed:
                    answers.append(parsed)
            if len(errors) >= MAX_ERRORS:
                break
    if not answers and not errors:
        errors.append({"message": "the file holds no answers"})
    errors += _file_problems(answers)
    return ParsedAnswers(answers, errors, fmt)


def _file_problems(answers: Iterable[ParsedAnswer]) -> list[dict[str, Any]]:
    """Return the repeated topics and the run ids after the first, by line or item."""
    problems: list[dict[str, Any]] = []
    seen: dict[str, ParsedAnswer] = {}
    run_id: str | None = None
    for answer in answers:
        where = _where(answer.line, answer.item)
        if run_id is None:
            run_id = answer.run_id
        elif answer.run_id != run_id:
            problems.append(
                {
                    **where,
                    "field": "run_id",
                    "message": f"run_id {echo(answer.run_id)} differs from the file's "
                    f"{echo(run_id)}: one file is one run",
                }
            )
        first = seen.get(answer.topic_id)
        if first is None:
            seen[answer.topic_id] = answer
        else:
            at = f"line {first.line}" if first.line is not None else f"item {first.item}"
            problems.append(
                {
                    **where,
                    "field": "topic_id",
                    "message": f"topic {echo(answer.topic_id)} is answered twice (first at {at})",
                }
            )
    return problems


def id_problems(
    answers: Iterable[ParsedAnswer],
    *,
    topics: Collection[str],
    known_documents: Callable[[set[str]], set[str]],
) -> list[dict[str, Any]]:
    """Return the topics not in ``topics`` and the references to unknown documents.

    ``known_documents(ids)`` returns which of ``ids`` the collection holds (one call for
    the whole file).  Each problem names the record's line or item and the field.
    """
    answers = list(answers)
    wanted = {docid for a in answers for docid in a.references}
    known = known_documents(wanted) if wanted else set()
    problems: list[dict[str, Any]] = []
    for answer in answers:
        where = _where(answer.line, answer.item)
        if answer.topic_id not in topics:
            problems.append(
                {
                    **where,
                    "field": "topic_id",
                    "message": f"topic {echo(answer.topic_id)} is not in the collection",
                }
            )
        for i, docid in enumerate(answer.references):
            if docid not in known:
                problems.append(
                    {
                        **where,
                        "field": f"references[{i}]",
                        "message": f"document {echo(docid)} is not in the collection",
                    }
                )
    return problems


def sort_key(error: dict[str, Any]) -> tuple[bool, int, int]:
    """Order problems by line (or item), those of the whole file last."""
    place = error.get("line") or error.get("item")
    return (place is None, place or 0, 0)
