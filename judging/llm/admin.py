"""Admin of LLM judging: providers (superusers only) and runs (read-only: services write them)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from judging.admin_base import OPERATOR_CHOICES, ReadOnlyAdmin, TenantScopedAdmin
from judging.llm import selectors as selectors_llm
from judging.llm.models import (
    LLMFailure,
    LLMJob,
    LLMJobChunk,
    LLMOutput,
    LLMProvider,
    LLMUsage,
)


@admin.register(LLMProvider)
class LLMProviderAdmin(TenantScopedAdmin):
    """Where LLM judges may send requests, with which key: the operator's, superusers only.

    No permission granted to staff opens this page (a provider belongs to no collection,
    see :mod:`judging.admin_base`): a provider decides what the server connects to, which
    secret it sends and how much may be spent, so only superusers see or change providers.
    """

    list_display = [
        "name",
        "base_url",
        "api_key_env",
        "allowed_models",
        "token_budget",
        "tokens_used",
        "spend_budget",
        "spent",
    ]
    search_fields = ["name", "base_url"]
    filter_horizontal = ["allowed_collections", "allowed_groups"]
    readonly_fields = ["tokens_used", "spent", "tokens_reserved", "spend_reserved"]
    exclude = ["spend_used_nanos", "spend_reserved_nanos"]

    @admin.display(description="Spent")
    def spent(self, obj: LLMProvider) -> Decimal:
        """Return what was spent (and is reserved), in the operator's currency."""
        return Decimal(obj.spend_used_nanos) / 1_000_000_000

    @admin.display(description="Spend reserved")
    def spend_reserved(self, obj: LLMProvider) -> Decimal:
        """Return what is reserved for requests in flight, in the operator's currency."""
        return Decimal(obj.spend_reserved_nanos) / 1_000_000_000

    def save_model(self, request: HttpRequest, obj: LLMProvider, form: Any, change: bool) -> None:
        """Save the operator's settings, never the usage the runner keeps meanwhile."""
        if not change:
            super().save_model(request, obj, form, change)
            return
        counters = {"tokens_used", "spend_used_nanos", "tokens_reserved", "spend_reserved_nanos"}
        fields = [
            f.name
            for f in LLMProvider._meta.concrete_fields
            if not f.primary_key and f.name not in counters
        ]
        obj.save(update_fields=fields)


@admin.register(LLMUsage)
class LLMUsageAdmin(ReadOnlyAdmin):
    """What each collection used through each provider (kept by the runner)."""

    help_text = "Read-only: the runner reserves and settles every request's tokens here."
    list_display = ["provider", "collection", "tokens_used", "spent", "tokens_reserved"]
    list_select_related = ["provider", "collection"]
    exclude = ["spend_used_nanos", "spend_reserved_nanos"]
    readonly_fields = ["spent"]

    @admin.display(description="Spent")
    def spent(self, obj: LLMUsage) -> Decimal:
        """Return what the collection spent (and has reserved) through the provider."""
        return Decimal(obj.spend_used_nanos) / 1_000_000_000


# A coordinator editing an LLM judge in the admin picks among the providers open to them.
OPERATOR_CHOICES["judging.llmprovider"] = lambda user: selectors_llm.providers_for(user=user)


@admin.register(LLMJob)
class LLMJobAdmin(ReadOnlyAdmin):
    """LLM judge jobs and their counts."""

    list_display = ["id", "collection", "judge", "status", "total", "done", "failed", "skipped"]
    list_filter = ["status", "collection"]
    list_select_related = ["collection", "judge"]


@admin.register(LLMJobChunk)
class LLMJobChunkAdmin(ReadOnlyAdmin):
    """LLM job chunks: which worker holds which, under what lease (claims > 1: taken over)."""

    list_display = ["job", "index", "status", "owner", "lease_until", "claims", "finished_at"]
    list_filter = ["status"]
    list_select_related = ["job"]
    exclude = ["pairs"]


@admin.register(LLMFailure)
class LLMFailureAdmin(ReadOnlyAdmin):
    """Pairs an LLM job could not grade."""

    list_display = ["job", "query", "document", "reason", "attempts", "at"]
    list_select_related = ["job", "query", "document"]


@admin.register(LLMOutput)
class LLMOutputAdmin(ReadOnlyAdmin):
    """What an LLM judge was asked and answered, per judgment."""

    list_display = ["judgment", "native_label", "model_reported", "latency_ms", "updated_at"]
    list_select_related = ["judgment"]
