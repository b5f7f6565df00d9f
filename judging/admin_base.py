"""The read-only admin base shared by the core and the capability admins.

Rows written only by the services (history, live grades, LLM jobs) are shown read-only.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest, HttpResponse

READ_ONLY_NOTE = (
    "Read-only: judgments change only through the judging pages, the API or imports, "
    "so that every change is kept in the judgment history."
)


class ReadOnlyAdmin(admin.ModelAdmin):
    """An admin that lists and shows rows but never adds, changes or deletes them."""

    help_text = READ_ONLY_NOTE

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Refuse: rows are written by the services only."""
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Refuse: rows are written by the services only."""
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Refuse: rows are written by the services only."""
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Show the read-only note above the list."""
        return super().changelist_view(
            request, {**(extra_context or {}), "subtitle": self.help_text}
        )

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """Show the read-only note above the details."""
        return super().changeform_view(
            request, object_id, form_url, {**(extra_context or {}), "subtitle": self.help_text}
        )
