"""Fill request templates and map engine answers to rankings (no Django).

Templates are JSON (a query DSL body, Solr parameters, a generic body). Placeholders
(``{{query_text}}``, ``{{query_id}}``, ``{{description}}``, ``{{narrative}}``, ``{{k}}``,
and OpenSearch's ``%SearchText%``) are replaced **inside the parsed JSON's strings**, and the
request is serialised afterwards, so a query text with quotes, backslashes or braces is
always one JSON string and cannot change the DSL around it. A string that is exactly
``"{{k}}"`` becomes the number k.

A mapping is JMESPath expressions (see :mod:`metrics.search.presets`); every problem in an
answer is reported with the path where it was found, e.g. ``hits.hits[3]._id: missing``.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import jmespath
from jmespath.exceptions import JMESPathError

from metrics.search import presets

PLACEHOLDERS = ("query_text", "query_id", "description", "narrative", "k")
_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}|%SearchText%")
#: Longest docno a ranking may name (the collection's documents allow 500 characters).
MAX_DOCNO = 500
#: Longest text of a display field kept per hit.
MAX_FIELD = 100_000


class TemplateError(ValueError):
    """A template that is not JSON or names an unknown placeholder."""


@dataclass(frozen=True)
class QueryFields:
    """What a template may put into a request."""

    query_id: str
    query_text: str
    description: str = ""
    narrative: str = ""


def parse_template(text: str) -> Any:
    """Parse a template and check its placeholders; raise :class:`TemplateError`."""
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise TemplateError(f"The template is not JSON ({exc}).") from None
    if not isinstance(value, dict):
        raise TemplateError("The template must be a JSON object.")
    unknown = sorted(
        {m.group(1) for s in _strings(value) for m in _PLACEHOLDER.finditer(s) if m.group(1)}
        - set(PLACEHOLDERS)
    )
    if unknown:
        raise TemplateError(
            f"Unknown placeholder(s): {', '.join(unknown)}; use {', '.join(PLACEHOLDERS)}."
        )
    return value


def _strings(value: Any):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def render(template: Any, query: QueryFields, k: int) -> Any:
    """Return ``template`` (parsed JSON) with every placeholder replaced by its value."""
    values = {
        "query_text": query.query_text,
        "query_id": query.query_id,
        "description": query.description,
        "narrative": query.narrative,
        "k": str(k),
    }

    def fill(text: str) -> Any:
        if _PLACEHOLDER.fullmatch(text.strip()) and text.strip().strip("{} ") == "k":
            return k
        return _PLACEHOLDER.sub(lambda m: values[m.group(1) or "query_text"], text)

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return fill(value)
        if isinstance(value, dict):
            return {fill(key): walk(item) for key, item in value.items()}
        if isinstance(value, list):
            return [walk(item) for item in value]
        return value

    return walk(template)


@dataclass(frozen=True)
class Hit:
    """One mapped result: the docno, its score and what judges see."""

    docno: str
    score: float | None
    title: str = ""
    body: str = ""
    url: str = ""
    image_url: str = ""


@dataclass
class Mapped:
    """A mapped answer: the ranking (at most k hits) and every problem found, by path."""

    hits: list[Hit] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def check_mapping(mapping: dict[str, str]) -> dict[str, str]:
    """Return problems of a mapping by key: unknown keys, missing or invalid expressions."""
    problems: dict[str, str] = {}
    for key in mapping:
        if key not in presets.MAPPING_KEYS:
            problems[key] = f"Unknown mapping key; use {', '.join(presets.MAPPING_KEYS)}."
    for key in ("hits", "id"):
        if not mapping.get(key):
            problems[key] = "Required."
    for key, expression in mapping.items():
        if key in problems or not expression:
            continue
        if not isinstance(expression, str):
            problems[key] = "Give a JMESPath expression (a string)."
            continue
        try:
            jmespath.compile(expression)
        except JMESPathError as exc:
            problems[key] = f"Not a JMESPath expression ({str(exc).splitlines()[0][:200]})."
    return problems


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):  # Solr keeps multi-valued fields as lists
        value = " ".join(str(v) for v in value if v is not None)
    return str(value)[:MAX_FIELD]


def map_answer(data: Any, mapping: dict[str, str], *, kind: str, k: int) -> Mapped:
    """Map an engine's parsed JSON answer to at most ``k`` hits, naming every problem."""
    out = Mapped()
    hits_path = mapping["hits"]
    try:
        hits = jmespath.search(hits_path, data)
    except JMESPathError as exc:
        out.errors.append(f"{hits_path}: {exc}")
        return out
    if hits is None:
        out.errors.append(f"{hits_path}: missing")
        return out
    if not isinstance(hits, list):
        out.errors.append(f"{hits_path}: not a list ({type(hits).__name__})")
        return out
    seen: set[str] = set()
    for index, hit in enumerate(hits[:k]):
        where = f"{hits_path}[{index}]"
        if not isinstance(hit, dict):
            out.errors.append(f"{where}: not an object")
            continue
        fields: dict[str, Any] = {}
        for key in presets.MAPPING_KEYS[1:]:
            expression = mapping.get(key)
            if not expression:
                continue
            try:
                fields[key] = jmespath.search(expression, hit)
            except JMESPathError as exc:
                out.errors.append(f"{where}.{expression}: {exc}")
        raw_id = fields.get("id")
        if raw_id is None or isinstance(raw_id, dict | list | bool):
            state = "missing" if raw_id is None else f"not a string ({type(raw_id).__name__})"
            out.errors.append(f"{where}.{mapping['id']}: {state}")
            continue
        docno = str(raw_id).strip()
        if kind == presets.VESPA:
            docno = presets.vespa_docno(docno)
        if not docno or len(docno) > MAX_DOCNO or any(c.isspace() for c in docno):
            out.errors.append(
                f"{where}.{mapping['id']}: not a usable document id (empty, whitespace or "
                f"over {MAX_DOCNO} characters)"
            )
            continue
        if docno in seen:
            out.errors.append(f"{where}.{mapping['id']}: {docno[:100]} appears twice (kept once)")
            continue
        seen.add(docno)
        score = fields.get("score")
        if score is not None:
            if isinstance(score, int | float) and not isinstance(score, bool):
                score = float(score)
                if not math.isfinite(score):
                    out.errors.append(f"{where}.{mapping.get('score')}: not a finite number")
                    score = None
            else:
                out.errors.append(f"{where}.{mapping.get('score')}: not a number")
                score = None
        out.hits.append(
            Hit(
                docno=docno,
                score=score,
                title=_text(fields.get("title")),
                body=_text(fields.get("body")),
                url=_text(fields.get("url"))[:2000],
                image_url=_text(fields.get("image_url"))[:2000],
            )
        )
    return out
