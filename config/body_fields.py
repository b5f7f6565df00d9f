"""Unknown request-body fields: one check for every API write, derived from the OpenAPI schema.

A misspelt field (``PATCH .../judgments/7/ {"grdae": 3}``) used to be ignored with a 200,
so the client took the unchanged label for a changed one. Now every ``POST``, ``PUT`` and
``PATCH`` under ``/api/`` whose body names a top-level field its operation does not
declare is refused with a 400: one error item per unknown field, ``field`` naming it and
``known`` listing the fields the operation reads (as unknown query parameters are,
:mod:`config.query_params`). Nothing is written.

What an operation "declares" is its request body in the OpenAPI schema
(:mod:`config.declared`), per media type: JSON, form and multipart bodies (files
included) are all checked. Fields the schema marks read-only (``id``, ``created_at``, a
setting's history…) may be sent and are ignored, as DRF ignores them, so a resource read
with ``GET`` can be sent back with ``PUT``. A body whose top level the schema leaves open
(a free-form object, or a JSON array of items, which their readers check line by line)
is not checked here. A form's ``csrfmiddlewaretoken`` (the browsable API's forms) is not a
field.

The check runs in :class:`config.api.CheckedBodyMixin`, after authentication, the
collection's membership and role checks and the rate limits, so a caller who may not
write gets the 401/403/404 first. Every API view that writes inherits that mixin
(``tests/security/test_body_fields.py`` checks the URL conf).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from rest_framework import exceptions
from rest_framework.request import Request

from config import declared

#: Methods whose body is checked.
WRITE_METHODS = ("POST", "PUT", "PATCH")
#: Form field names that are never the operation's (the browsable API's CSRF token).
FORM_EXTRAS = frozenset({"csrfmiddlewaretoken"})
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def _media_type(request: Request) -> str:
    return (request.content_type or "").split(";", 1)[0].strip().lower()


def fields_for(request: Request, view: Any) -> declared.BodyFields | None:
    """Return the fields the request's operation accepts in its body; None to skip the check.

    A view outside the schema may name its fields in a ``body_fields`` class attribute.
    Skipped: methods other than POST, PUT and PATCH, methods the view does not handle (the
    client gets the 405), operations the schema does not know, and open bodies.
    """
    method = (request.method or "").upper()
    if method not in WRITE_METHODS:
        return None
    if method.lower() not in getattr(view, "http_method_names", ()) or not hasattr(
        view, method.lower()
    ):
        return None
    own: Iterable[str] | None = getattr(view, "body_fields", None)
    if own is not None:
        return declared.BodyFields(frozenset(own))
    match = getattr(request._request, "resolver_match", None)
    if match is None:
        return None
    by_type = declared.declared().bodies.get((declared.shape(match.route), method))
    if by_type is None:
        return None
    if not by_type:
        return declared.BodyFields(frozenset())  # the operation takes no body
    media_type = _media_type(request)
    if media_type in by_type:
        return by_type[media_type]
    if any(fields is declared.OPEN for fields in by_type.values()):
        return None
    return declared.BodyFields(
        frozenset().union(*(f.writable for f in by_type.values())),
        frozenset().union(*(f.read_only for f in by_type.values())),
    )


def unknown_field_errors(unknown: list[str], known: frozenset[str]) -> list[dict[str, Any]]:
    """Return one error item per unknown body field, each listing the known ones."""
    names = sorted(known)
    listed = (
        f"Fields here: {', '.join(names)}."
        if names
        else "This operation takes no request body fields."
    )
    return [
        {
            "field": name[:200],
            "message": f"Unknown field {name[:40]!r} in the request body. {listed}",
            "known": names,
        }
        for name in unknown
    ]


def body_names(request: Request) -> list[str] | None:
    """Return the top-level field names of the request's body, files included.

    None when the body is not an object (a JSON array or scalar, left to the view).
    """
    data = request.data
    if not isinstance(data, Mapping):
        return None
    names = [str(key) for key in data]
    names += [str(key) for key in request.FILES if key not in data]
    if _media_type(request) in _FORM_TYPES:
        names = [name for name in names if name not in FORM_EXTRAS]
    return names


def check(request: Request, view: Any) -> None:
    """Raise a 400 (``ValidationError``) naming each top-level body field not declared.

    Reads (parses) the body with the view's parsers; their refusals come first.
    """
    fields = fields_for(request, view)
    if fields is None:
        return
    names = body_names(request)
    if not names:
        return
    unknown = sorted({name for name in names if name not in fields.accepted})
    if not unknown:
        return
    error = exceptions.ValidationError(unknown)
    error.errors = unknown_field_errors(unknown, fields.writable)  # rendered as is
    raise error
