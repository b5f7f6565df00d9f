"""Post-processing of the OpenAPI schema: what every operation can answer."""

from __future__ import annotations

from typing import Any

from judging import textpolicy

#: Why any operation may answer 400 before its view runs (config.middleware).
QUERY_400 = (
    "A query parameter holds a NUL character or a lone surrogate, or is longer than "
    f"{textpolicy.MAX_URL_LENGTH:,} characters (refused before the view, naming the parameter)."
)
_METHODS = ("get", "put", "post", "patch", "delete")


def document_query_refusals(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Add the query-string 400 of ``QueryStringPolicyMiddleware`` to every operation."""
    error = {"$ref": "#/components/schemas/Error"}
    for path_item in result.get("paths", {}).values():
        for method in _METHODS:
            operation = path_item.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            existing = responses.get("400")
            if existing is None:
                responses["400"] = {
                    "content": {"application/json": {"schema": error}},
                    "description": QUERY_400,
                }
            elif QUERY_400 not in existing.get("description", ""):
                existing["description"] = f"{existing.get('description', '')} {QUERY_400}".strip()
    return result
