"""Admin of search endpoints: the operator's registry, superusers only (as LLM providers)."""

from __future__ import annotations

from django.contrib import admin

from judging.admin_base import TenantScopedAdmin
from metrics.search.models import SearchEndpoint


@admin.register(SearchEndpoint)
class SearchEndpointAdmin(TenantScopedAdmin):
    """Where configurations may send queries, with which credential: superusers only.

    An endpoint belongs to no collection, so the scoping of :mod:`judging.admin_base`
    opens it to superusers alone, whatever permission a staff user holds.
    """

    list_display = ["name", "kind", "base_url", "auth", "credential_env", "concurrency"]
    filter_horizontal = ["allowed_collections", "allowed_groups"]
