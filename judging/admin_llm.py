"""Admin of LLM judge runs (read-only: jobs, failures and provenance are written by services)."""

from __future__ import annotations

from django.contrib import admin

from .admin import ReadOnlyAdmin
from .models_llm import LLMFailure, LLMJob, LLMOutput


@admin.register(LLMJob)
class LLMJobAdmin(ReadOnlyAdmin):
    """LLM judge jobs and their counts."""

    list_display = ["id", "collection", "judge", "status", "total", "done", "failed", "skipped"]
    list_filter = ["status", "collection"]
    list_select_related = ["collection", "judge"]


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
