"""Project-wide middleware."""

from __future__ import annotations

from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from graded import textpolicy


class ContentSecurityPolicyMiddleware:
    """Attach the configured Content-Security-Policy header to every response.

    The policy (``settings.CONTENT_SECURITY_POLICY``) forbids inline scripts, so hostile
    markup that slips into a document body cannot execute even if sanitising misses it.
    One static header needs no library; views may not weaken it.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        """Store the next handler in the chain."""
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        """Return the response with the policy header set."""
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", settings.CONTENT_SECURITY_POLICY)
        response.setdefault("Referrer-Policy", "same-origin")
        response.setdefault("X-Content-Type-Options", "nosniff")
        return response


class QueryStringPolicyMiddleware:
    """Refuse requests whose query parameters break the text policy (400, never a 500).

    One place for every list filter and page: a NUL character (``?query=%00``) or a value
    longer than :data:`graded.textpolicy.MAX_TEXT_LENGTH` never reaches a view or the
    database. API paths answer in the API's error shape, naming the parameter.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        """Store the next handler in the chain."""
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        """Return 400 for a refused parameter, else the view's response."""
        for key, values in request.GET.lists():
            for value in (key, *values):
                problem = textpolicy.text_problem(
                    value, max_length=textpolicy.MAX_URL_LENGTH, what=f"parameter {key[:40]!r}"
                )
                if problem:
                    return _bad_request(request, problem, key[:40])
        return self.get_response(request)


def _bad_request(request: HttpRequest, message: str, field: str) -> HttpResponse:
    """Return a 400 in the API's error shape under ``/api/``, as plain text elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"errors": [{"message": message, "field": field}]}, status=400)
    return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
