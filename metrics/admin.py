"""Django admin for coordinators: teams are edited here; runs are read-only.

Runs are submitted through the pages or the API, which validate, store, pool and score
them atomically; the admin only lets coordinators look at them or delete them.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from judging.admin_base import TenantScopedAdmin
from metrics import services
from metrics.models import Run, Team


@admin.register(Team)
class TeamAdmin(TenantScopedAdmin):
    """Teams of a collection and their members."""

    list_display = ["name", "collection", "created_at"]
    list_filter = ["collection"]
    search_fields = ["name"]
    filter_horizontal = ["members"]

    def save_related(self, request: HttpRequest, form, formsets, change: bool) -> None:
        """Save the members, then give each the collection's team role (via the service)."""
        super().save_related(request, form, formsets, change)
        team = form.instance
        for user in team.members.all():
            services.team_member_add(team=team, user=user)


@admin.register(Run)
class RunAdmin(TenantScopedAdmin):
    """Submitted runs (read-only; delete is allowed)."""

    list_display = ["tag", "team", "collection", "status", "query_count", "submitted_at"]
    list_filter = ["collection", "status"]
    search_fields = ["tag", "team__name"]
    readonly_fields = [f.name for f in Run._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        """Refuse: runs are submitted through the pages or the API."""
        return False

    def has_change_permission(self, request: HttpRequest, obj: Run | None = None) -> bool:
        """Refuse edits; the detail page stays viewable."""
        return False

    def delete_model(self, request: HttpRequest, obj: Run) -> None:
        """Delete through the service, which also removes the kept run file."""
        services.run_delete(run=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Run]) -> None:
        """Delete each selected run through the service."""
        for run in queryset:
            services.run_delete(run=run)


from metrics.schedules import admin as schedules_admin  # noqa: E402, F401
from metrics.search import admin as search_admin  # noqa: E402, F401
