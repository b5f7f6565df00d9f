"""Unknown query parameters: one check for every API view, derived from the OpenAPI schema.

A misspelt filter (``?knd=llm``) used to be ignored, so the client got the whole list and
took it for the filtered one. Now every request under ``/api/`` whose query string names a
parameter its operation does not declare is refused with a 400 that lists the parameters
the operation knows (:class:`UnknownQueryParameterMiddleware`).

What an operation "knows" is what the schema says it takes: the query parameters
drf-spectacular generates for it (filter sets, pagination, ``extend_schema`` parameters).
Declaring a parameter in the schema is therefore what makes a view accept it, so the schema
and the behaviour cannot drift apart. The schema is generated once per process, on the
first API request that has a query string (about a second), and kept
(:mod:`config.declared`, shared with the request-body check of :mod:`config.body_fields`).

Views outside the schema (the schema and docs views themselves, redirects) declare what
they read in a ``query_parameters`` class attribute; an API view in neither place accepts
no query parameter at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.http import HttpRequest, HttpResponse, JsonResponse

from config import declared

_shape = declared.shape


def schema_parameters() -> dict[tuple[str, str], frozenset[str]]:
    """Return (and on first use build) the declared query parameters by path and method."""
    return declared.declared().parameters


def reset() -> None:
    """Forget the cached parameters (tests that change the URL conf call this)."""
    declared.reset()


def known_parameters(request: HttpRequest, view_func: Callable[..., Any]) -> frozenset[str] | None:
    """Return the query parameters the request's operation accepts; None to skip the check.

    Skipped: OPTIONS (the metadata answer takes no parameters and reads none) and methods
    the view does not handle (the client gets the 405, not a 400).
    """
    view_class = getattr(view_func, "cls", None) or getattr(view_func, "view_class", None)
    declared: Iterable[str] | None = getattr(view_class, "query_parameters", None)
    if declared is not None:
        return frozenset(declared)
    method = "GET" if request.method == "HEAD" else (request.method or "GET").upper()
    if method == "OPTIONS":
        return None
    match = request.resolver_match
    if match is None:
        return None
    found = schema_parameters().get((_shape(match.route), method))
    if found is not None:
        return found
    handled = view_class is not None and method.lower() in getattr(
        view_class, "http_method_names", ()
    )
    if not handled or not hasattr(view_class, method.lower()):
        return None
    return frozenset()


def unknown_parameter_errors(unknown: list[str], known: frozenset[str]) -> list[dict[str, Any]]:
    """Return one error item per unknown parameter, each listing the known ones."""
    names = sorted(known)
    listed = (
        f"Known parameters here: {', '.join(names)}."
        if names
        else "This operation takes no query parameters."
    )
    return [
        {
            "field": name[:200],
            "message": f"Unknown query parameter {name[:40]!r}. {listed}",
            "known": names,
        }
        for name in unknown
    ]


class UnknownQueryParameterMiddleware:
    """Refuse API requests that name a query parameter their operation does not declare.

    Runs after URL resolution (``process_view``), before the view and so before
    authentication: the list of parameters is the public schema's, and an unknown
    parameter is a mistake whoever makes it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        """Store the next handler in the chain."""
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        """Return the view's response (the check happens in :meth:`process_view`)."""
        return self.get_response(request)

    def process_view(
        self,
        request: HttpRequest,
        view_func: Callable[..., Any],
        view_args: Any,
        view_kwargs: Any,
    ) -> HttpResponse | None:
        """Return a 400 listing the known parameters if the query string names others."""
        if not request.path.startswith("/api/") or not request.GET:
            return None
        known = known_parameters(request, view_func)
        if known is None:
            return None
        unknown = sorted(set(request.GET) - known)
        if not unknown:
            return None
        from config.api import capped

        errors = capped(unknown_parameter_errors(unknown, known))
        return JsonResponse({"errors": errors}, status=400)
