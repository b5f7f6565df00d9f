"""The API's one pagination: ``limit``/``offset`` pages of at most a fixed size.

Every paginated list endpoint uses :class:`BoundedLimitOffsetPagination` (it is
``DEFAULT_PAGINATION_CLASS``). A page holds at most :func:`max_page_size` items
(``settings.GRADED_API_MAX_PAGE_SIZE``), so the memory one request needs is bounded however
large the collection; streams (qrels and JSONL exports) are not paginated and stay streams.
``limit`` and ``offset`` are read strictly by :mod:`config.params`: a value that is not a
whole number in range is a 400 naming the parameter, never silently replaced and never
passed on to the database (``?limit=99999999999999999999`` once ended in "bigint out of
range").
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.pagination import LimitOffsetPagination
from rest_framework.request import Request

from config.params import MAX_BIGINT, whole_param

#: Items per page when the client gives no ``limit``.
DEFAULT_PAGE_SIZE = 100
#: Most items per page unless ``settings.GRADED_API_MAX_PAGE_SIZE`` says otherwise.
MAX_PAGE_SIZE = 1000


def max_page_size() -> int:
    """Return the most items one page may hold (``GRADED_API_MAX_PAGE_SIZE``)."""
    return int(getattr(settings, "GRADED_API_MAX_PAGE_SIZE", MAX_PAGE_SIZE))


def page_bounds(params: Any, *, default: int = DEFAULT_PAGE_SIZE) -> tuple[int, int]:
    """Return ``(limit, offset)`` read from query parameters, both in bounds (400 otherwise).

    For list endpoints that page a computed list themselves (the disagreement queue).
    """
    most = max_page_size()
    limit = whole_param(params, "limit", minimum=1, maximum=most, default=min(default, most))
    offset = whole_param(params, "offset", minimum=0, maximum=MAX_BIGINT - most, default=0)
    return int(limit or 1), int(offset or 0)


class BoundedLimitOffsetPagination(LimitOffsetPagination):
    """``limit``/``offset`` pagination with a maximum page size and strict parameters."""

    limit_query_description = f"Items per page, 1 to the maximum page size ({MAX_PAGE_SIZE})."
    offset_query_description = "Index of the first item (0 or more)."

    @property
    def max_limit(self) -> int:  # type: ignore[override]
        """Return the maximum page size."""
        return max_page_size()

    @property
    def default_limit(self) -> int:  # type: ignore[override]
        """Return the page size used when no ``limit`` is given."""
        return min(DEFAULT_PAGE_SIZE, max_page_size())

    def get_limit(self, request: Request) -> int:
        """Return the page size asked for; a value out of 1..maximum is a 400."""
        limit = whole_param(
            request.query_params,
            self.limit_query_param,
            minimum=1,
            maximum=self.max_limit,
            default=self.default_limit,
        )
        return int(limit or self.default_limit)

    def get_offset(self, request: Request) -> int:
        """Return the index of the first item; a negative or huge value is a 400."""
        offset = whole_param(
            request.query_params,
            self.offset_query_param,
            minimum=0,
            maximum=MAX_BIGINT - self.max_limit,
            default=0,
        )
        return int(offset or 0)

    def paginate_queryset(self, queryset: Any, request: Request, view: Any = None) -> Any:
        """Check both parameters before counting, then return the page."""
        self.get_offset(request)  # a bad offset is refused before any query runs
        return super().paginate_queryset(queryset, request, view)


def page_parameters() -> list[Any]:
    """Return the OpenAPI ``limit`` and ``offset`` parameters, for views that page by hand."""
    from drf_spectacular.types import OpenApiTypes
    from drf_spectacular.utils import OpenApiParameter

    return [
        OpenApiParameter(
            "limit",
            OpenApiTypes.INT,
            description=f"Items per page, 1 to {MAX_PAGE_SIZE}; {DEFAULT_PAGE_SIZE} by default.",
        ),
        OpenApiParameter("offset", OpenApiTypes.INT, description="Index of the first item."),
    ]
