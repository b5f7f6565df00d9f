"""REST framework glue shared by every API view: one error body shape."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler


def _flatten(detail: Any, field: str | None = None) -> list[dict[str, Any]]:
    """Turn DRF's nested error detail into a flat list of ``{field, message}`` items."""
    if isinstance(detail, dict):
        items: list[dict[str, Any]] = []
        for key, value in detail.items():
            name = key if field is None else f"{field}.{key}"
            top_level = key in ("non_field_errors", "detail")
            items.extend(_flatten(value, None if top_level else name))
        return items
    if isinstance(detail, list):
        if detail and all(isinstance(d, dict) and "message" in d for d in detail):
            return [dict(d) for d in detail]
        items = []
        for value in detail:
            items.extend(_flatten(value, field))
        return items
    item: dict[str, Any] = {"message": str(detail)}
    if field:
        item["field"] = field
    return [item]


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render every API error as ``{"errors": [{"message": ..., "field"/"line": ...}]}``."""
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        exc = exceptions.ValidationError(detail)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    errors = getattr(exc, "errors", None)
    if errors is None:
        errors = _flatten(response.data)
    response.data = {"errors": errors}
    if response.status_code == status.HTTP_400_BAD_REQUEST and not errors:
        response.data = {"errors": [{"message": "Bad request."}]}
    return response


class ErrorItemSerializer(serializers.Serializer):
    """One problem: a message, with the field or the line (or batch item) it concerns."""

    message = serializers.CharField()
    field = serializers.CharField(
        required=False, help_text="Request field the message is about, if any."
    )
    line = serializers.IntegerField(
        required=False,
        help_text="1-based file line or batch item the message is about, for imports.",
    )


class ErrorSerializer(serializers.Serializer):
    """The body of every error response."""

    errors = ErrorItemSerializer(many=True)


ERROR_DESCRIPTIONS = {
    400: "Invalid input; each item names its field, or the 1-based line of a file or batch.",
    401: "No or invalid credentials (send `Authorization: Token <key>`).",
    403: "Your role does not allow this.",
    404: "No such object, or you may not see it (non-members get 404 for a collection).",
}


def error_responses(*codes: int, **descriptions: str) -> dict[tuple[int, str], OpenApiResponse]:
    """Return OpenAPI entries for error responses, all in the project's error body shape.

    Keyword arguments ``e400``, ``e403``… replace the default description of a code.
    """
    return {
        (code, "application/json"): OpenApiResponse(
            response=ErrorSerializer,
            description=descriptions.get(f"e{code}", ERROR_DESCRIPTIONS[code]),
        )
        for code in codes
    }


def not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Answer 404 in the API's error shape under ``/api/`` (e.g. ``/judges/abc/``), else HTML.

    Paths that match no route — a non-integer id among them — never reach a DRF view, so
    Django's 404 handler is the one place that can keep the API's answers JSON.
    """
    if request.path.startswith("/api/"):
        return JsonResponse({"errors": [{"message": "Not found."}]}, status=404)
    return page_not_found(request, exception or Http404())
