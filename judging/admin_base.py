"""The admin bases shared by the core and the capability admins: tenant scoping, read-only.

Tenant scoping (every admin of the site): a superuser sees and changes everything. Any
other staff user, whatever model permissions they were given, sees and changes only the
objects of the collections they coordinate. :data:`COLLECTION_PATHS` says how each model
reaches its collection; a model that is not there (users, groups, tokens, LLM providers:
the operator's objects) is for superusers only. :class:`TenantScopedAdmin` applies that to
the querysets (lists, change, delete and history pages, raw-id pop-ups, autocomplete), the
choices of foreign keys and many-to-many fields (so an object cannot be moved into, or a
membership granted in, a collection one does not coordinate), the list filters and every
``has_*_permission``. ``tests/security/test_admin_matrix.py`` checks that every registered
admin uses it.

Rows written only by the services (history, live grades, LLM jobs) are shown read-only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib import admin
from django.contrib.admin.widgets import ForeignKeyRawIdWidget, ManyToManyRawIdWidget
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db.models import Model, QuerySet
from django.http import HttpRequest, HttpResponse

from graded import textpolicy
from judging.models import Collection, Membership

READ_ONLY_NOTE = (
    "Read-only: judgments change only through the judging pages, the API or imports, "
    "so that every change is kept in the judgment history."
)

#: How each model (``app_label.model_name``) reaches the collection(s) it belongs to: an ORM
#: path to the collection's id. Models absent here are the operator's: superusers only.
COLLECTION_PATHS: dict[str, str] = {
    "judging.collection": "pk",
    "judging.membership": "collection",
    "judging.query": "collection",
    "judging.document": "collection",
    "judging.judge": "collections",  # LLM judges; human judges belong to no collection
    "judging.poolentry": "collection",
    "judging.judgment": "collection",
    "judging.judgmentevent": "collection",
    "judging.livegrade": "collection",
    "judging.adjudication": "collection",
    "judging.policychange": "collection",
    "judging.fileimport": "collection",
    "judging.llmjob": "collection",
    "judging.llmjobchunk": "job__collection",
    "judging.llmfailure": "job__collection",
    "judging.llmoutput": "judgment__collection",
    "judging.llmusage": "collection",
    "metrics.team": "collection",
    "metrics.run": "collection",
    "metrics.poolingpolicy": "collection",
}

#: Text columns the admin edits by what they hold: names and titles refuse every control
#: character but tab and line feed, prose also accepts carriage returns
#: (:func:`graded.textpolicy.name_problem`, :func:`~graded.textpolicy.prose_problem`). The
#: pages and the API check the same columns in their services.
TEXT_KINDS: dict[str, str] = {
    "judging.collection.name": "name",
    "judging.collection.guidelines": "prose",
    "judging.query.text": "name",
    "judging.query.description": "prose",
    "judging.query.narrative": "prose",
    "judging.document.title": "name",
    "judging.judge.name": "name",
    "metrics.team.name": "name",
    "metrics.run.tag": "name",
    "metrics.run.description": "prose",
}


def _policy_validator(kind: str) -> Callable[[Any], None]:
    """Return a form validator refusing what the text policy refuses in a ``kind`` column."""
    check = textpolicy.name_problem if kind == "name" else textpolicy.prose_problem

    def validate(value: Any) -> None:
        if isinstance(value, str) and (problem := check(value, what="The text", max_length=None)):
            raise ValidationError(f"{problem}.", code="control_character")

    return validate


#: Choices a non-superuser may pick among an operator's objects (foreign keys to models not
#: in :data:`COLLECTION_PATHS`), by model; any other operator's model offers no choice.
OPERATOR_CHOICES: dict[str, Callable[[Any], QuerySet]] = {}


def collection_path(model: type[Model]) -> str | None:
    """Return the ORM path from ``model`` to its collection's id, or None (operator's)."""
    return COLLECTION_PATHS.get(model._meta.label_lower)


def _multi_valued(model: type[Model], path: str) -> bool:
    """Return whether ``path`` crosses a many-to-many or reverse relation."""
    if path == "pk":
        return False
    for name in path.split("__"):
        field = model._meta.get_field(name)
        if field.many_to_many or field.one_to_many:
            return True
        model = field.related_model
    return False


def coordinated(user: Any) -> QuerySet:
    """Return the ids of the collections ``user`` coordinates (a subquery, never cached)."""
    return Membership.objects.filter(user=user, role=Membership.Role.COORDINATOR).values(
        "collection_id"
    )


def scoped(model: type[Model], user: Any, queryset: QuerySet | None = None) -> QuerySet:
    """Return the rows of ``model`` that ``user`` may see in the admin.

    Superusers: all. Others: the rows whose collections are all among those they
    coordinate (an LLM judge shared with another collection is not theirs to change), and
    nothing of an operator's model.
    """
    queryset = model._default_manager.all() if queryset is None else queryset
    if user.is_superuser:
        return queryset
    path = collection_path(model)
    if path is None:
        if model._meta.label_lower in OPERATOR_CHOICES:
            return queryset.filter(pk__in=OPERATOR_CHOICES[model._meta.label_lower](user))
        return queryset.none()
    mine = coordinated(user)
    queryset = queryset.filter(**{f"{path}__in": mine})
    if _multi_valued(model, path):
        others = Collection.objects.exclude(pk__in=mine).values("pk")
        queryset = queryset.exclude(**{f"{path}__in": others}).distinct()
    return queryset


def in_scope(user: Any, obj: Model) -> bool:
    """Return whether ``user`` may see or change ``obj`` in the admin."""
    if user.is_superuser:
        return True
    model = type(obj)
    if collection_path(model) is None:
        return False
    return scoped(model, user).filter(pk=obj.pk).exists()


class TenantScopedMixin:
    """Scope a ``ModelAdmin`` (or inline) to the collections the staff user coordinates.

    Django's model permissions still apply on top: a coordinator needs them to open a
    page, and they never reach beyond the coordinator's collections.
    """

    model: type[Model]
    admin_site: admin.AdminSite

    def _may_use(self, request: HttpRequest) -> bool:
        """Superusers; others on collection models if they coordinate some collection."""
        user = request.user
        if user.is_superuser:
            return True
        if not (user.is_active and user.is_staff) or collection_path(self.model) is None:
            return False
        return coordinated(user).exists()

    def _allowed(self, request: HttpRequest, obj: Any) -> bool:
        return self._may_use(request) and (obj is None or in_scope(request.user, obj))

    def get_queryset(self, request: HttpRequest) -> QuerySet:
        """Return only the rows of the user's collections (all for superusers)."""
        return scoped(self.model, request.user, super().get_queryset(request))  # type: ignore[misc]

    def has_module_permission(self, request: HttpRequest) -> bool:
        """Show the app on the index only to users who may use some of its models."""
        return self._may_use(request) and super().has_module_permission(request)  # type: ignore[misc]

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Let the model permission count only inside the user's collections."""
        return self._allowed(request, obj) and super().has_view_permission(request, obj)  # type: ignore[misc]

    def has_add_permission(self, request: HttpRequest, *args: Any) -> bool:
        """Let the model permission count only inside the user's collections."""
        obj = args[0] if args else None  # inlines pass the parent object
        return self._allowed(request, obj) and super().has_add_permission(request, *args)  # type: ignore[misc]

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Let the model permission count only inside the user's collections."""
        return self._allowed(request, obj) and super().has_change_permission(request, obj)  # type: ignore[misc]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        """Let the model permission count only inside the user's collections."""
        return self._allowed(request, obj) and super().has_delete_permission(request, obj)  # type: ignore[misc]

    def _related_field(self, db_field: Any, request: HttpRequest, kwargs: dict, many: bool) -> None:
        """Narrow a relation's choices for non-superusers (users: by id, never listed)."""
        if request.user.is_superuser:
            return
        related = db_field.remote_field.model
        if related is get_user_model():
            # Any account may be made a member or team member (as on the site's pages),
            # but the admin lists no accounts: the user is given by id.
            widget = ManyToManyRawIdWidget if many else ForeignKeyRawIdWidget
            kwargs["widget"] = widget(db_field.remote_field, self.admin_site)
            return
        kwargs["queryset"] = scoped(related, request.user)

    def formfield_for_dbfield(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """Give the names and prose the admin edits (:data:`TEXT_KINDS`) the text policy's check."""
        formfield = super().formfield_for_dbfield(db_field, request, **kwargs)  # type: ignore[misc]
        model = getattr(db_field, "model", None)
        kind = TEXT_KINDS.get(f"{model._meta.label_lower}.{db_field.name}") if model else None
        if formfield is not None and kind is not None:
            formfield.validators.append(_policy_validator(kind))
        return formfield

    def formfield_for_foreignkey(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """Offer only objects of the user's collections (or the operator's allowed ones)."""
        self._related_field(db_field, request, kwargs, many=False)
        return super().formfield_for_foreignkey(db_field, request, **kwargs)  # type: ignore[misc]

    def formfield_for_manytomany(self, db_field: Any, request: HttpRequest, **kwargs: Any) -> Any:
        """Offer only objects of the user's collections (or the operator's allowed ones)."""
        self._related_field(db_field, request, kwargs, many=True)
        return super().formfield_for_manytomany(db_field, request, **kwargs)  # type: ignore[misc]

    def get_list_filter(self, request: HttpRequest) -> Any:
        """Filter on relations by the values in the user's rows only (no other names)."""
        filters = super().get_list_filter(request)  # type: ignore[misc]
        if request.user.is_superuser:
            return filters
        narrowed = []
        for entry in filters:
            if isinstance(entry, str) and self._is_relation(entry):
                entry = (entry, admin.RelatedOnlyFieldListFilter)
            narrowed.append(entry)
        return narrowed

    def _is_relation(self, path: str) -> bool:
        model: Any = self.model
        field = None
        for name in path.split("__"):
            field = model._meta.get_field(name)
            model = field.related_model
        return bool(field is not None and field.is_relation)


class TenantScopedAdmin(TenantScopedMixin, admin.ModelAdmin):
    """A ``ModelAdmin`` scoped to the staff user's collections (see the module)."""


class TenantScopedInline(TenantScopedMixin, admin.TabularInline):
    """A tabular inline scoped to the staff user's collections."""


def operator_only(site: admin.AdminSite) -> None:
    """Re-register every admin of ``site`` not yet scoped with the scoping mixin.

    The admins of Django's and DRF's models (users, groups, tokens) know nothing of
    collections: scoped, they are for superusers only, so a staff user given
    ``auth.change_user`` cannot make themselves a superuser.
    """
    for model, model_admin in list(site._registry.items()):
        if isinstance(model_admin, TenantScopedMixin):
            continue
        base = type(model_admin)
        site.unregister(model)
        site.register(model, type(f"Scoped{base.__name__}", (TenantScopedMixin, base), {}))


class ReadOnlyAdmin(TenantScopedAdmin):
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
