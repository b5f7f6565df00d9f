"""REST framework glue shared by every API view: one error body shape."""

from __future__ import annotations

import math
from typing import Any

from django.conf import settings
from django.core.exceptions import (
    PermissionDenied,
    RequestDataTooBig,
    SuspiciousOperation,
)
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import bad_request as django_bad_request
from django.views.defaults import page_not_found
from drf_spectacular.utils import OpenApiResponse
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from config import body_fields
from graded import textpolicy


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


#: Longest error message and field name sent back, in characters; most items listed.
MAX_MESSAGE = 500
MAX_FIELD = 200
MAX_ITEMS = textpolicy.MAX_ERRORS + 1  # the importers' own lists end with one summary item


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"


def capped(errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Return error items whose messages and fields are cut short, at most MAX_ITEMS of them.

    The one place every API error passes, so no value a client sent comes back at its own
    size (a 5,000,000-character setting once came back in a 5 MB error).
    """
    items = []
    for item in errors[:MAX_ITEMS]:
        item = dict(item)
        item["message"] = _cut(str(item.get("message", "")), MAX_MESSAGE)
        if "field" in item:
            item["field"] = _cut(str(item["field"]), MAX_FIELD)
        items.append(item)
    if len(errors) > MAX_ITEMS:
        items.append({"message": f"… and {len(errors) - MAX_ITEMS} more problems."})
    return items


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """Answer a request Django refuses before any view (400, 413) in the API's error shape.

    Django raises these while reading the request: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``
    (413), too many fields, a bad ``Host``. Pages get Django's usual answer.
    """
    if not request.path.startswith("/api/"):
        return django_bad_request(request, exception or SuspiciousOperation())
    if isinstance(exception, RequestDataTooBig):
        message = (
            f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes; "
            "send files as multipart uploads."
        )
        return JsonResponse({"errors": [{"message": message}]}, status=413)
    return JsonResponse({"errors": [{"message": "Bad request."}]}, status=400)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render every API error as ``{"errors": [{"message": ..., "field"/"line": ...}]}``."""
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        exc = exceptions.ValidationError(detail)
    elif isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        # A service's reason (e.g. a judge's quota) is shown; a bare one gets DRF's text.
        # Its own error items (``errors``: a quota's code and numbers) are kept.
        items = getattr(exc, "errors", None)
        exc = exceptions.PermissionDenied(str(exc) or None)
        if items is not None:
            exc.errors = items
    response = drf_exception_handler(exc, context)
    if response is None:
        return None
    errors = getattr(exc, "errors", None)
    if errors is None:
        errors = _flatten(response.data)
    response.data = {"errors": capped(errors)}
    if response.status_code == status.HTTP_400_BAD_REQUEST and not errors:
        response.data = {"errors": [{"message": "Bad request."}]}
    return response


class CheckedBodyMixin:
    """Base of every API view that writes: a body field its operation does not declare is a 400.

    Runs :func:`config.body_fields.check` at the end of DRF's ``initial()``, after
    authentication, permissions (the collection's 404 and the role's 403) and rate limits,
    before the handler: one place for every ``POST``, ``PUT`` and ``PATCH``, whether or not
    the view reads its body.
    """

    def initial(self, request: Any, *args: Any, **kwargs: Any) -> None:
        """Run DRF's checks, then refuse unknown body fields."""
        super().initial(request, *args, **kwargs)  # type: ignore[misc]
        body_fields.check(request, self)


class FiniteFloatField(serializers.FloatField):
    """A read-only number that is null where the figure is undefined (NaN or infinite).

    JSON has no NaN: figures the maths leaves undefined (a τ of tied rankings, a κ of one
    category, a p-value of one query) are written as null.
    """

    def __init__(self, **kwargs: Any) -> None:
        """Make the field read-only and nullable."""
        kwargs.setdefault("read_only", True)
        kwargs.setdefault("allow_null", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> float | None:
        """Return the value as a float, None where it is not finite."""
        number = float(value)
        return number if math.isfinite(number) else None


class QuotaErrorSerializer(serializers.Serializer):
    """The quota a refused write would pass: which one, its size, what is used and left."""

    name = serializers.CharField(
        help_text="Which quota: `judge`, a judge's quota in the collection (the most pairs "
        "they may finally judge, set by a coordinator)."
    )
    limit = serializers.IntegerField(help_text="The quota: pairs.")
    judged = serializers.IntegerField(
        help_text="Pairs the judge finally judged (graded or cannot judge)."
    )
    left = serializers.IntegerField(help_text="Pairs still allowed (0 once reached).")
    asked = serializers.IntegerField(help_text="New final labels the refused write would add.")
    resets_at = serializers.DateTimeField(
        allow_null=True,
        help_text="When the quota resets; always null: a judge quota is a cap that never "
        "resets (a coordinator raises it).",
    )


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
    item = serializers.IntegerField(
        required=False,
        help_text="1-based element of a JSON array file (a json judgment list) the message "
        "is about.",
    )
    part = serializers.ChoiceField(
        choices=["topics", "documents", "pairs", "judgments"],
        required=False,
        help_text="Which file of a several-file import the message is about.",
    )
    file = serializers.CharField(required=False, help_text="The name that file was uploaded under.")
    code = serializers.CharField(
        required=False,
        help_text="A stable name of the refusal, for programs: `quota_reached` (a judge's "
        "quota, 403, with `quota`), `database_unavailable` (503: retry after `Retry-After` "
        "seconds).",
    )
    quota = QuotaErrorSerializer(
        required=False, help_text="With `quota_reached`: which quota, and its numbers."
    )
    known = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="For an unknown query parameter or request-body field (named in `field`): "
        "the parameters, or the body fields, this operation accepts.",
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
