"""Django admin for coordinators, scoped to their collections (see judging.admin_base).

Collections, members, queries, documents, judges and pool entries are edited here.
Judgments, their history and the live grades are read-only: every judgment change must go
through ``judging.services`` so that history, pool counters and live grades stay right.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from judging.adjudication import services as services_adjudication
from judging.admin_base import (
    ReadOnlyAdmin,
    TenantScopedAdmin,
    TenantScopedInline,
    operator_only,
)
from judging.aggregation import POLICIES
from judging.guidelines import services as services_guidelines
from judging.llm import admin as llm_admin  # noqa: F401  (registers the LLM job admins)
from judging.llm.forms import JudgeAdminForm
from judging.models import (
    Collection,
    Document,
    Judge,
    Judgment,
    JudgmentEvent,
    LiveGrade,
    Membership,
    PoolEntry,
    Query,
)
from judging.progress import services as services_progress


class MembershipInline(TenantScopedInline):
    """Members of a collection, edited on the collection's page."""

    model = Membership
    extra = 1
    raw_id_fields = ["user"]
    fields = ["user", "role", "created_at"]
    readonly_fields = ["created_at"]


@admin.register(Collection)
class CollectionAdmin(TenantScopedAdmin):
    """Judging campaigns, with their members inline."""

    list_display = [
        "name",
        "slug",
        "judges_per_pair",
        "pool_depth",
        "leaderboard_published",
        "judgments_version",
        "created_at",
    ]
    list_filter = ["leaderboard_published"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    # Leaderboard settings change on the collection's Settings page, which validates the
    # measures with the engine and rescores every run; the admin only shows them.
    readonly_fields = [
        "measures",
        "pool_depth",
        "coverage_threshold",
        "leaderboard_published",
        "judgments_version",
        "judgments_changed_at",
        "guidelines_version",
        # The qualification bar changes on the Gold pairs page (or REST), which re-derives
        # the judges' standings and rebuilds the live list; the admin only shows it.
        "qualification_pairs",
        "qualification_share",
        "created_at",
    ]
    inlines = [MembershipInline]

    def has_add_permission(self, request: HttpRequest) -> bool:
        """Let superusers only add here (coordinators use the site's New collection page)."""
        return bool(request.user.is_superuser) and super().has_add_permission(request)

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """Offer the known aggregation policies as choices."""
        if db_field.name == "aggregation_policy":
            kwargs["widget"] = forms.Select(choices=[(name, name) for name in POLICIES])
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def save_model(self, request: HttpRequest, obj: Collection, form: Any, change: bool) -> None:
        """Save; a new aggregation policy is recorded and rebuilds the live judgment list.

        Changed guidelines start a new guidelines version (:mod:`judging.guidelines`).
        """
        guidelines = None
        if change and "guidelines" in form.changed_data:
            guidelines, obj.guidelines = obj.guidelines, form.initial["guidelines"]
        if change and "aggregation_policy" in form.changed_data:
            new_policy = obj.aggregation_policy
            obj.aggregation_policy = form.initial["aggregation_policy"]
            super().save_model(request, obj, form, change)
            services_adjudication.aggregation_settings_update(
                collection=obj, actor=request.user, aggregation_policy=new_policy
            )
        else:
            super().save_model(request, obj, form, change)
            if change and {"judges_per_pair", "max_judges_per_pair", "disagreement_spread"} & set(
                form.changed_data
            ):
                services_progress.progress_rebuild(collection=obj)  # which pairs are open changed
        if guidelines is not None:
            services_guidelines.guidelines_update(
                collection=obj,
                guidelines=guidelines,
                note="Changed in the admin",
                actor=request.user,
            )


class ProgressKeepingAdmin(TenantScopedAdmin):
    """Deletes, and edits that can open or close pool pairs, keep the progress counters right.

    ``progress_fields``: the fields whose change (or a new row, when ``None``) does.
    """

    progress_fields: frozenset[str] | None = frozenset({"collection"})

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        """Delete, then rebuild the counters of the object's collection.

        Queries and documents go through ``services_progress.rows_delete``, which also
        announces the change of the judgment list when live grades go with them.
        """
        if isinstance(obj, Query | Document):
            services_progress.rows_delete(queryset=type(obj).objects.filter(pk=obj.pk))
            return
        collection = obj.collection
        super().delete_model(request, obj)
        services_progress.progress_rebuild(collection=collection)

    def delete_queryset(self, request: HttpRequest, queryset: Any) -> None:
        """Delete, then rebuild the counters of every collection concerned."""
        if queryset.model in (Query, Document):
            services_progress.rows_delete(queryset=queryset)
            return
        collections = list(Collection.objects.filter(pk__in=queryset.values("collection_id")))
        super().delete_queryset(request, queryset)
        for collection in collections:
            services_progress.progress_rebuild(collection=collection)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """Save, then rebuild the counters of the collections before and after, if needed."""
        before = form.initial.get("collection") if change else None
        super().save_model(request, obj, form, change)
        fields = self.progress_fields
        if fields is not None and not (change and fields & set(form.changed_data)):
            return
        for pk in {before, obj.collection_id} - {None}:
            services_progress.progress_rebuild(collection=Collection.objects.get(pk=pk))


@admin.register(Membership)
class MembershipAdmin(TenantScopedAdmin):
    """Who holds which role in which collection."""

    list_display = ["user", "collection", "role", "created_at"]
    list_filter = ["role", "collection"]
    search_fields = ["user__username", "user__email", "collection__name", "collection__slug"]
    raw_id_fields = ["user", "collection"]
    list_select_related = ["user", "collection"]


@admin.register(Query)
class QueryAdmin(ProgressKeepingAdmin):
    """Topics judges read: text, description and narrative."""

    list_display = ["external_id", "text", "collection"]
    list_filter = ["collection"]
    search_fields = ["external_id", "text", "description"]
    raw_id_fields = ["collection"]
    list_select_related = ["collection"]

    def save_model(self, request: HttpRequest, obj: Query, form: Any, change: bool) -> None:
        """Save; a changed description or narrative starts a new guidelines version."""
        texts = {"description", "narrative"}
        if not (change and texts & set(form.changed_data)):
            super().save_model(request, obj, form, change)
            return
        description, narrative = obj.description, obj.narrative
        obj.description = form.initial["description"]
        obj.narrative = form.initial["narrative"]
        super().save_model(request, obj, form, change)
        services_guidelines.query_instructions_update(
            query=obj,
            description=description,
            narrative=narrative,
            note="Changed in the admin",
            actor=request.user,
        )


@admin.register(Document)
class DocumentAdmin(ProgressKeepingAdmin):
    """Documents; bodies are untrusted and are sanitised wherever they are shown."""

    progress_fields = frozenset({"collection", "has_content"})

    list_display = ["external_id", "title", "collection", "has_content"]
    list_filter = ["has_content", "collection"]
    search_fields = ["external_id", "title", "url"]
    raw_id_fields = ["collection"]
    list_select_related = ["collection"]


@admin.register(Judge)
class JudgeAdmin(TenantScopedAdmin):
    """Human and LLM judges."""

    form = JudgeAdminForm  # checks the LLM configuration (placeholders, key variable name)
    list_display = ["name", "kind", "user", "provider", "model", "model_version", "created_at"]
    list_filter = ["kind", "provider"]
    search_fields = ["name", "user__username", "model", "provider"]
    raw_id_fields = ["user"]
    filter_horizontal = ["collections"]
    list_select_related = ["user"]


@admin.register(PoolEntry)
class PoolEntryAdmin(ProgressKeepingAdmin):
    """Pairs in judging pools (add many at once on the collection's "Add pairs" page)."""

    progress_fields = None  # every new or changed pair

    list_display = ["id", "query", "document", "collection", "source", "graded_count", "added_at"]
    list_filter = ["source", "collection"]
    search_fields = ["query__external_id", "document__external_id"]
    raw_id_fields = ["query", "document", "collection"]
    readonly_fields = ["graded_count", "added_at"]
    list_select_related = ["query", "document", "collection"]


@admin.register(Judgment)
class JudgmentAdmin(ReadOnlyAdmin):
    """Current labels (read-only; see the history for every change)."""

    list_display = [
        "id",
        "judge",
        "query",
        "document",
        "grade",
        "status",
        "collection",
        "updated_at",
    ]
    list_filter = ["status", "grade", "judge__kind", "collection"]
    search_fields = ["query__external_id", "document__external_id", "judge__name", "note"]
    raw_id_fields = ["judge", "query", "document", "collection"]
    list_select_related = ["judge", "query", "document", "collection"]
    date_hierarchy = "updated_at"


@admin.register(JudgmentEvent)
class JudgmentEventAdmin(ReadOnlyAdmin):
    """Append-only judgment history (read-only)."""

    help_text = "Read-only: the judgment history is append-only and written by the services."
    list_display = ["at", "action", "channel", "judge", "query", "document", "actor", "collection"]
    list_filter = ["action", "channel", "collection"]
    search_fields = ["query__external_id", "document__external_id", "judge__name"]
    raw_id_fields = ["judgment", "judge", "query", "document", "actor", "collection"]
    list_select_related = ["judge", "query", "document", "actor", "collection"]
    date_hierarchy = "at"


@admin.register(LiveGrade)
class LiveGradeAdmin(ReadOnlyAdmin):
    """Aggregated grades per pair (read-only; kept by the services)."""

    help_text = "Read-only: live grades are recomputed by the services from the judgments."
    list_display = ["query", "document", "grade", "human_count", "llm_count", "version"]
    list_filter = ["collection"]
    search_fields = ["query__external_id", "document__external_id"]
    raw_id_fields = ["query", "document", "collection"]
    list_select_related = ["query", "document"]


# Django's and DRF's admins (users, groups, tokens) are registered by now: superusers only.
operator_only(admin.site)
