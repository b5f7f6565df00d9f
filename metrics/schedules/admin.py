"""Admin of alert webhooks: the operator's registry, superusers only (as search endpoints)."""

from __future__ import annotations

from django.contrib import admin

from judging.admin_base import TenantScopedAdmin
from metrics.schedules.models import AlertWebhook


@admin.register(AlertWebhook)
class AlertWebhookAdmin(TenantScopedAdmin):
    """Where alerts may be posted, signed with which secret: superusers only.

    A webhook belongs to no collection, so the scoping of :mod:`judging.admin_base` opens
    it to superusers alone.
    """

    list_display = ["name", "url", "secret_env", "timeout_seconds"]
    filter_horizontal = ["allowed_collections"]
