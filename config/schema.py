"""Post-processing of the OpenAPI schema: what every operation can answer.

One place documents the answers any operation may give whatever its view does, all in the
API's error shape (``Error``): 400 (a refused query parameter, before the view; for a write,
an undeclared body field), 401 (no or a bad token), 403 (role, or CSRF with a session), 404
(no such object, or not yours), 429 (a rate limit, with ``Retry-After``), 503 (the database
does not answer, with ``Retry-After``: config/outage.py), and for operations with a request
body 413 (body too large) and 415 (a content type no parser reads). A view's own description
of a code is
kept; only missing codes are added, so ``status_code_conformance`` of the schema fuzz test
holds for throttled and refused requests too.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from config.api import ERROR_DESCRIPTIONS
from graded import textpolicy

#: Why any operation may answer 400 before its view runs (config.middleware).
QUERY_400 = (
    "A query parameter this operation does not declare (each error item names it in "
    "`field` and lists the accepted ones in `known`), or one that holds a NUL character or "
    f"a lone surrogate, or is longer than {textpolicy.MAX_URL_LENGTH:,} characters (refused "
    "before the view, naming the parameter)."
)
#: Why an operation with a request body may answer 400 before its view (config.body_fields).
BODY_400 = (
    "A top-level request-body field this operation does not declare (each error item names "
    "it in `field` and lists the fields read in `known`; read-only fields are ignored)."
)
_METHODS = ("get", "put", "post", "patch", "delete")
_BODY_METHODS = ("put", "post", "patch")

#: Answers every operation may give, beyond those its view documents.
COMMON = {
    **{code: ERROR_DESCRIPTIONS[code] for code in (400, 401, 403, 404)},
    429: "Too many requests or failed authentications from this client; retry after "
    "`Retry-After` seconds.",
    503: "The database is temporarily unavailable (error code `database_unavailable`); "
    "retry after `Retry-After` seconds. Nothing was written.",
}
#: Answers of operations that take a request body.
WITH_BODY = {
    413: "The request body is larger than the server accepts "
    f"({settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes outside file uploads).",
    415: "The request body's content type is not one this operation reads.",
}


def _error(description: str, code: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
        "description": description,
    }
    if code in (429, 503):
        response["headers"] = {
            "Retry-After": {
                "schema": {"type": "integer"},
                "description": "Seconds until another request is allowed."
                if code == 429
                else "Seconds to wait before trying again.",
            }
        }
    return response


def document_query_refusals(result: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    """Add the common error answers (and the query-string 400) to every operation."""
    for path_item in result.get("paths", {}).values():
        for method in _METHODS:
            operation = path_item.get(method)
            if operation is None:
                continue
            responses = operation.setdefault("responses", {})
            codes = dict(COMMON)
            if method in _BODY_METHODS and "requestBody" in operation:
                codes.update(WITH_BODY)
            for code, description in codes.items():
                responses.setdefault(str(code), _error(description, code))
            # A view's own 429 (a submission budget) keeps its text and gains the header.
            responses["429"].setdefault("headers", _error("", 429)["headers"])
            existing = responses["400"]
            if QUERY_400 not in existing.get("description", ""):
                existing["description"] = f"{existing.get('description', '')} {QUERY_400}".strip()
            if method in _BODY_METHODS and BODY_400 not in existing["description"]:
                existing["description"] = f"{existing['description']} {BODY_400}"
    return result
