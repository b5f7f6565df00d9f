"""What each API operation declares it takes, read once from the generated OpenAPI schema.

Two checks refuse what an operation does not declare: unknown query parameters
(:mod:`config.query_params`) and unknown request-body fields (:mod:`config.body_fields`).
Both read their lists here, from the schema drf-spectacular generates (filter sets,
pagination, ``extend_schema`` parameters and request serializers), so declaring a
parameter or a field in the schema is what makes a view accept it: the schema and the
behaviour cannot drift apart. The schema is generated once per process, on the first API
request that needs it (about a second), and kept.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from typing import Any

#: Parameters of a route placeholder (``<slug:slug>``, ``{id}``) reduced to one shape.
_PLACEHOLDER = re.compile(r"<[^>]+>|\{[^}]+\}")
#: Deepest ``$ref``/``allOf``/``oneOf`` nesting followed when reading a body schema.
_MAX_DEPTH = 8


def shape(path: str) -> str:
    """Return a route or schema path with every placeholder replaced by ``{}``."""
    return "/" + _PLACEHOLDER.sub("{}", path).lstrip("/")


@dataclass(frozen=True)
class BodyFields:
    """The top-level fields a request body may have (for one operation and media type).

    ``writable``: the fields the operation reads. ``read_only``: fields of the resource
    that the body may repeat (a resource read with GET can be sent back) and that are
    ignored, as DRF ignores read-only fields.
    """

    writable: frozenset[str]
    read_only: frozenset[str] = frozenset()

    @property
    def accepted(self) -> frozenset[str]:
        """Return every name the body may use."""
        return self.writable | self.read_only


#: A body whose top level the schema leaves open (a free-form object, or only an array,
#: whose items their readers check): nothing is checked.
OPEN = None


@dataclass(frozen=True)
class Declared:
    """Per (path shape, METHOD): query parameter names, and body fields by media type.

    ``bodies[key]`` is ``{}`` for an operation that takes no body; a media type maps to
    :class:`BodyFields` or :data:`OPEN`.
    """

    parameters: dict[tuple[str, str], frozenset[str]]
    bodies: dict[tuple[str, str], dict[str, BodyFields | None]]


def _resolve(node: Any, components: dict[str, Any]) -> Any:
    """Return ``node`` with a top-level ``$ref`` followed (once)."""
    if isinstance(node, dict) and "$ref" in node:
        return components.get(str(node["$ref"]).rsplit("/", 1)[-1], {})
    return node


def body_fields_of(node: Any, components: dict[str, Any], depth: int = 0) -> BodyFields | None:
    """Return the top-level fields an object body of schema ``node`` may have; OPEN if any.

    ``allOf`` merges its parts; ``oneOf``/``anyOf`` accept the fields of every object
    alternative (a JSON body that is an array is left to its readers). An object without
    ``properties``, or whose ``additionalProperties`` allow more, is open.
    """
    node = _resolve(node, components)
    if not isinstance(node, dict) or depth > _MAX_DEPTH:
        return OPEN
    parts = [
        body_fields_of(p, components, depth + 1)
        for key in ("allOf", "oneOf", "anyOf")
        for p in node.get(key, [])
        if _resolve(p, components).get("type") != "array"
    ]
    if any(part is OPEN for part in parts):
        return OPEN
    writable: set[str] = set()
    read_only: set[str] = set()
    for part in parts:
        writable |= part.writable
        read_only |= part.read_only
    if parts and "properties" not in node:
        return BodyFields(frozenset(writable), frozenset(read_only - writable))
    if node.get("type") not in (None, "object") or "properties" not in node:
        return OPEN
    if node.get("additionalProperties") not in (None, False):
        return OPEN
    for name, prop in node["properties"].items():
        (read_only if isinstance(prop, dict) and prop.get("readOnly") else writable).add(name)
    return BodyFields(frozenset(writable), frozenset(read_only - writable))


def _answer_fields(operation: dict[str, Any], components: dict[str, Any]) -> frozenset[str]:
    """Return the fields of the resource a PUT or PATCH answers with (its 200 JSON body)."""
    answer = (operation.get("responses") or {}).get("200") or {}
    entry = (answer.get("content") or {}).get("application/json") or {}
    fields = body_fields_of(entry.get("schema"), components)
    return frozenset() if fields is OPEN else fields.accepted


def _bodies_of(
    method: str, operation: dict[str, Any], components: dict[str, Any]
) -> dict[str, BodyFields | None]:
    """Return the body fields of ``operation`` by media type (``{}``: it takes no body).

    A PUT or PATCH may also repeat the fields of the resource it answers with (read with
    GET and sent back): those it does not read are read-only, and ignored.
    """
    content = (operation.get("requestBody") or {}).get("content") or {}
    echoed = _answer_fields(operation, components) if method in ("PUT", "PATCH") else frozenset()
    bodies: dict[str, BodyFields | None] = {}
    for media_type, entry in content.items():
        if not isinstance(entry, dict):
            continue
        fields = body_fields_of(entry.get("schema"), components)
        if fields is not OPEN:
            fields = BodyFields(fields.writable, (fields.read_only | echoed) - fields.writable)
        bodies[media_type] = fields
    return bodies


def _build() -> Declared:
    """Return what every (path shape, method) of the schema declares."""
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    components = schema.get("components", {}).get("schemas", {})
    parameters: dict[tuple[str, str], frozenset[str]] = {}
    bodies: dict[tuple[str, str], dict[str, BodyFields | None]] = {}
    for path, item in schema.get("paths", {}).items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            key = (shape(path), method.upper())
            parameters[key] = frozenset(
                p["name"] for p in operation.get("parameters", []) if p.get("in") == "query"
            )
            bodies[key] = _bodies_of(key[1], operation, components)
    return Declared(parameters, bodies)


_lock = threading.Lock()
_declared: Declared | None = None


def declared() -> Declared:
    """Return (and on first use build) what every operation of the schema declares."""
    global _declared
    if _declared is None:
        with _lock:
            if _declared is None:
                _declared = _build()
    return _declared


def reset() -> None:
    """Forget the cached declarations (tests that change the URL conf call this)."""
    global _declared
    with _lock:
        _declared = None
