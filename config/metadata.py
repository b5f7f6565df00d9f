"""``OPTIONS`` answers of the API.

Kept apart from :mod:`config.api`, which imports DRF's views: DRF reads
``DEFAULT_METADATA_CLASS`` while it defines ``APIView``.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from rest_framework import exceptions
from rest_framework.metadata import SimpleMetadata
from rest_framework.request import clone_request


class APIMetadata(SimpleMetadata):
    """``OPTIONS`` answers that never fail: the allowed methods, and the writes' fields.

    DRF's own class fetches the object (``get_object``) to check object permissions, which
    raises for views that are not built on a queryset (a 500 on
    ``OPTIONS .../judges/<id>/quota/``). Here a write is described when the caller passes
    the view's permission checks, from the view's serializer, without reading any object.
    """

    def determine_actions(self, request: Any, view: Any) -> dict[str, Any]:
        """Describe the fields of each write the caller may make (PUT, POST)."""
        actions: dict[str, Any] = {}
        for method in {"PUT", "POST"} & set(view.allowed_methods):
            view.request = clone_request(request, method)
            try:
                view.check_permissions(view.request)
                if getattr(view, "serializer_class", None) is None:
                    continue  # a view without a serializer: its methods are listed
                serializer_class = view.get_serializer_class()
                actions[method] = self.get_serializer_info(
                    serializer_class(context={"request": view.request, "view": view})
                )
            except (exceptions.APIException, PermissionDenied, Http404):
                continue
            finally:
                view.request = request
        return actions
