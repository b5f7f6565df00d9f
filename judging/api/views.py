"""Views of the judging API: validate with a serializer, call one service or selector, render.

Every error body is ``{"errors": [{"message": ..., "field": ... | "line": ...}]}`` (see
:mod:`config.api`). Collection endpoints answer 404 to non-members and 403 to members whose
role does not allow the request (see :mod:`judging.api.permissions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from functools import cached_property
from typing import Any, ClassVar

from django import forms
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.http import Http404
from django.urls import reverse
from django_filters import rest_framework as filters
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import exceptions, generics, status
from rest_framework.permissions import IsAuthenticated
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import CheckedBodyMixin, error_responses
from config.params import MAX_ROW_ID, whole_param
from config.parsers import PolicyFormParser, PolicyJSONParser, PolicyMultiPartParser
from judging import selectors as judging_selectors
from judging import services
from judging.adjudication import services as services_quota
from judging.api import names, selectors
from judging.api.permissions import (
    ANY_ROLE,
    COORDINATORS,
    JUDGING_ROLES,
    CanSeeJudgment,
    HasCollectionRole,
    IsCoordinatorAnywhere,
    Role,
    judge_to_record_as,
)
from judging.api.renderers import QrelsRenderer, TextResponse
from judging.api.serializers import (
    CollectionSerializer,
    DocumentSerializer,
    FileImportSerializer,
    ImportSummarySerializer,
    JudgeSerializer,
    JudgmentBatchSerializer,
    JudgmentCreateSerializer,
    JudgmentEventSerializer,
    JudgmentFileSerializer,
    JudgmentSerializer,
    JudgmentUpdateSerializer,
    MembershipCreateSerializer,
    MembershipSerializer,
    MembershipUpdateSerializer,
    PoolEntrySerializer,
    QrelsLineSerializer,
    QuerySerializer,
)
from judging.imports import services as services_files
from judging.lists import judgment_rows as imports
from judging.lists.formats import FormatError
from judging.llm import judges as services_judges
from judging.llm import native_labels as llm_labels
from judging.llm.services import maps_labels as llm_labels_maps
from judging.models import (
    Collection,
    Document,
    FileImport,
    Judge,
    Judgment,
    JudgmentEvent,
    Membership,
    PoolEntry,
    Query,
)

API = JudgmentEvent.Channel.API
#: Judgment items name their pair ``query``/``document``; ``qid``/``docno`` are accepted too.
PAIR_NAMES = ("query", "document")
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


# --- background imports ---------------------------------------------------------------


def background_import_response(
    request: Request,
    *,
    collection: Collection,
    kind: str,
    upload: UploadedFile,
    options: dict[str, Any],
) -> Response:
    """Queue a REST judgment upload's import; answer 202 with it and its ``Location``."""
    job = services_files.file_import_start(
        collection=collection,
        uploads={"judgments": upload},
        options=options,
        actor=request.user,
        kind=kind,
    )
    return accepted_import(request, collection, job)


def accepted_import(request: Request, collection: Collection, job: FileImport) -> Response:
    """Answer 202 with the queued import (already run when there is no broker)."""
    location = request.build_absolute_uri(
        reverse("judging-api:file-import-detail", args=[collection.slug, job.pk])
    )
    job.refresh_from_db()  # without a broker it has already run (after commit)
    return Response(
        FileImportSerializer(job).data,
        status=status.HTTP_202_ACCEPTED,
        headers={"Location": location},
    )


class IdFilter(filters.NumberFilter):
    """Filter on a whole-number id (1 to :data:`MAX_ROW_ID`; else a 400 naming the filter)."""

    field_class = forms.IntegerField

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """Bound the id to what a database row can have."""
        kwargs.setdefault("min_value", 1)
        kwargs.setdefault("max_value", MAX_ROW_ID)
        super().__init__(*args, **kwargs)


class UTCDateTimeFilter(filters.IsoDateTimeFilter):
    """An ISO 8601 time, compared in UTC; a time no database can hold is a 400.

    ``0170-09-04T16:53-18:11`` parses in Python, but PostgreSQL refuses offsets beyond
    ±15:59 (a 500 before); converting to UTC first removes the offset, and a time that
    leaves the calendar when converted is refused naming the filter.
    """

    def filter(self, qs: Any, value: Any) -> Any:
        """Filter with the value converted to UTC."""
        if value is not None:
            try:
                value = value.astimezone(UTC)
            except (OverflowError, ValueError):
                raise exceptions.ValidationError(
                    {self.field_name_for_errors: "Give a time between years 1 and 9999."}
                ) from None
        return super().filter(qs, value)

    @property
    def field_name_for_errors(self) -> str:
        """Return the parameter's name (the filter's name in its filter set)."""
        return (
            self.field_name
            if getattr(self, "parent", None) is None
            else (next((n for n, f in self.parent.filters.items() if f is self), self.field_name))
        )


def _judge_filter() -> IdFilter:
    """Return the ``judge`` filter (by judge id), typed as an integer in the schema."""
    return extend_schema_field({"type": "integer", "description": "Judge id."})(
        IdFilter(field_name="judge_id")
    )


def _flag(request: Request, name: str) -> bool | None:
    """Read a boolean query parameter (1/0, true/false); None when absent."""
    value = request.query_params.get(name, "").strip().lower()
    if not value:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise exceptions.ValidationError({name: "Use 1 or 0."})


def _int_param(request: Request, name: str) -> int | None:
    """Read an id query parameter (1 to :data:`MAX_ROW_ID`); None when absent.

    A number no row can have is a 400 naming the parameter, not a database error.
    """
    return whole_param(request.query_params, name, minimum=1, maximum=MAX_ROW_ID)


def llm_labels_judge(judge_id: Any) -> Judge | None:
    """Return the LLM judge of a posted ``judge`` id if its grades are native labels."""
    if isinstance(judge_id, bool) or not isinstance(judge_id, int):
        return None
    judge = Judge.objects.filter(pk=judge_id, kind=Judge.Kind.LLM).first()
    return judge if judge is not None and llm_labels_maps(judge) else None


SLUG = OpenApiParameter("slug", OpenApiTypes.STR, OpenApiParameter.PATH, description="Collection.")
INCLUDE_MISSING = OpenApiParameter(
    "include_missing",
    OpenApiTypes.BOOL,
    description="Coordinators: also list id-only documents (has_content false). "
    "Ignored for judges.",
)


class CollectionScopedView(CheckedBodyMixin, generics.GenericAPIView):
    """Base of the endpoints under ``collections/<slug>/``.

    Subclasses map HTTP methods to the roles allowed (``role_rules``). Looking up the
    collection answers 404 to non-members; a member without an allowed role gets 403.
    """

    permission_classes: ClassVar[list] = [IsAuthenticated, HasCollectionRole]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": ANY_ROLE}
    filter_backends: ClassVar[list] = []

    @cached_property
    def collection(self) -> Collection:
        """Return the collection of the URL if the user is a member (else 404)."""
        return judging_selectors.collection_for_member(
            user=self.request.user, slug=self.kwargs["slug"]
        )

    @cached_property
    def roles(self) -> set[str]:
        """Return the user's roles in the collection."""
        return judging_selectors.user_roles(user=self.request.user, collection=self.collection)

    @property
    def is_coordinator(self) -> bool:
        """Return whether the user coordinates the collection."""
        return Role.COORDINATOR in self.roles

    def allowed_roles(self) -> frozenset[str]:
        """Return the roles that may make this request."""
        method = "GET" if self.request.method in ("HEAD", "OPTIONS") else self.request.method
        handled = method.lower() in self.http_method_names and hasattr(self, method.lower())
        if not handled:
            return ANY_ROLE  # let members see the 405
        return self.role_rules.get(method, frozenset())

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        """Render errors as JSON even when qrels text was negotiated."""
        response = super().finalize_response(request, response, *args, **kwargs)
        if getattr(response, "exception", False) and isinstance(
            getattr(response, "accepted_renderer", None), QrelsRenderer
        ):
            response.accepted_renderer = JSONRenderer()
            response.accepted_media_type = JSONRenderer.media_type
        return response

    def fake(self) -> bool:
        """Return whether the view is being introspected for the OpenAPI schema."""
        return getattr(self, "swagger_fake_view", False)


# --- collections -------------------------------------------------------------------------


class CollectionSettingView(CollectionScopedView):
    """Base of a collection's one-of-a-kind settings: GET reads them, PUT or PATCH changes them.

    A subclass names its ``serializer_class`` (what GET answers and a change answers
    with), ``write_method`` (``"put"``: the body replaces the settings; ``"patch"``: the
    fields given change, the others keep their value), the body's serializer when it
    differs (``body_serializer_class``), :meth:`current` (what the serializer reads) and
    :meth:`change` (the service call, with the body's validated data). The body is
    validated before anything is written (a 400 names the field); the answer is the
    settings as they are after the change. Only GET and the write method are routed.
    """

    pagination_class = None
    write_method: ClassVar[str] = "patch"
    body_serializer_class: ClassVar[type | None] = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Route GET and the subclass's write method only."""
        super().__init_subclass__(**kwargs)
        if cls.write_method not in ("put", "patch"):
            raise TypeError(f"{cls.__name__}.write_method: 'put' or 'patch'")
        cls.http_method_names = ["get", cls.write_method, "head", "options"]

    def current(self) -> Any:
        """Return what :attr:`serializer_class` reads: the settings now."""
        raise NotImplementedError

    def change(self, data: dict[str, Any]) -> None:
        """Write the validated ``data`` through the capability's service."""
        raise NotImplementedError

    def answer(self) -> Response:
        """Return the settings as they are now."""
        return Response(self.get_serializer_class()(self.current()).data)

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the settings."""
        return self.answer()

    def put(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Replace the settings with the body's; answer with them."""
        return self._change(request, partial=False)

    def patch(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Change the fields given, all or nothing; answer with the settings."""
        return self._change(request, partial=True)

    def _change(self, request: Request, *, partial: bool) -> Response:
        body = (self.body_serializer_class or self.get_serializer_class())(
            data=request.data, partial=partial
        )
        body.is_valid(raise_exception=True)
        self.change(dict(body.validated_data))
        return self.answer()


@extend_schema_view(
    get=extend_schema(
        summary="List your collections",
        description="Collections you take part in, each with your roles in it.",
        responses={200: CollectionSerializer(many=True), **error_responses(401)},
    )
)
class CollectionListView(CheckedBodyMixin, generics.ListAPIView):
    """Collections the user belongs to."""

    serializer_class = CollectionSerializer
    filter_backends: ClassVar[list] = []

    def get_queryset(self) -> Any:
        """Return the user's collections with their roles."""
        if getattr(self, "swagger_fake_view", False):
            return Collection.objects.none()
        return selectors.collections_for_user(user=self.request.user)


@extend_schema_view(
    get=extend_schema(
        summary="Show a collection",
        parameters=[SLUG],
        responses={200: CollectionSerializer, **error_responses(401, 404)},
    )
)
class CollectionDetailView(CollectionScopedView, generics.RetrieveAPIView):
    """One collection the user belongs to."""

    serializer_class = CollectionSerializer

    def get_object(self) -> Collection:
        """Return the collection with the user's roles."""
        collection = self.collection
        collection.roles = sorted(self.roles)
        return collection


@extend_schema_view(
    get=extend_schema(
        summary="List the queries of a collection",
        description="For coordinators and judges, e.g. LLM-judging scripts building prompts.",
        parameters=[SLUG],
        responses={200: QuerySerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class QueryListView(CollectionScopedView, generics.ListAPIView):
    """The queries of a collection."""

    serializer_class = QuerySerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": JUDGING_ROLES}

    def get_queryset(self) -> Any:
        """Return the collection's queries."""
        if self.fake():
            return Query.objects.none()
        return selectors.queries_of(collection=self.collection)


@extend_schema_view(
    get=extend_schema(
        summary="List the documents of a collection",
        description="For coordinators and judges. Documents known only by id are left out.",
        parameters=[
            SLUG,
            INCLUDE_MISSING,
            OpenApiParameter(
                "pooled",
                OpenApiTypes.BOOL,
                description="1: only documents in the judging pool; 0: only those outside.",
            ),
            OpenApiParameter(
                "query", OpenApiTypes.STR, description="Only documents pooled for this qid."
            ),
        ],
        responses={200: DocumentSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
)
class DocumentListView(CollectionScopedView, generics.ListAPIView):
    """The documents of a collection."""

    serializer_class = DocumentSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": JUDGING_ROLES}

    def get_queryset(self) -> Any:
        """Return the collection's documents, filtered by the query parameters."""
        if self.fake():
            return Document.objects.none()
        return selectors.documents_of(
            collection=self.collection,
            include_missing=bool(_flag(self.request, "include_missing")) and self.is_coordinator,
            pooled=_flag(self.request, "pooled"),
            query_external_id=self.request.query_params.get("query") or None,
        )


@extend_schema_view(
    get=extend_schema(
        summary="List the judging pool",
        description="Pooled (query, document) pairs with how many judges graded each; "
        "what LLM workers iterate over. Pairs whose document has no content are left out.",
        parameters=[
            SLUG,
            INCLUDE_MISSING,
            OpenApiParameter("query", OpenApiTypes.STR, description="Only pairs of this qid."),
            OpenApiParameter(
                "unjudged_by",
                OpenApiTypes.INT,
                description="Only pairs this judge has not judged yet. Judges may give only "
                "their own judge id.",
            ),
            OpenApiParameter(
                "needs_grades",
                OpenApiTypes.BOOL,
                description="Coordinators: 1 keeps the pairs graded by fewer than "
                "judges_per_pair judges, 0 the others. Judges: 1 keeps the pairs still open "
                "to you (those the judging queue may serve you and you have not judged "
                "finally), 0 the others.",
            ),
        ],
        responses={200: PoolEntrySerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
)
class PoolListView(CollectionScopedView, generics.ListAPIView):
    """The judging pool of a collection.

    What a judge receives tells no gold pair from the others (docs/judges.md, *Gold pairs
    are blind*): opaque ids, no grade counts, and ``needs_grades`` as the judge's queue
    sees it.
    """

    serializer_class = PoolEntrySerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": JUDGING_ROLES}

    def get_serializer_context(self) -> dict[str, Any]:
        """Say whether the viewer is a coordinator (judges see no grade counts)."""
        context = super().get_serializer_context()
        context["coordinator"] = self.fake() or self.is_coordinator
        return context

    def get_queryset(self) -> Any:
        """Return the pool entries, filtered by the query parameters."""
        if self.fake():
            return PoolEntry.objects.none()
        unjudged_by = _int_param(self.request, "unjudged_by")
        if unjudged_by is not None and not self.is_coordinator:
            own = Judge.objects.filter(user=self.request.user).values_list("pk", flat=True)
            if unjudged_by not in own:
                raise exceptions.PermissionDenied("Judges may ask only about their own judge id.")
        return selectors.pool_of(
            collection=self.collection,
            include_missing=bool(_flag(self.request, "include_missing")) and self.is_coordinator,
            query_external_id=self.request.query_params.get("query") or None,
            unjudged_by=unjudged_by,
            needs_grades=_flag(self.request, "needs_grades"),
            open_to=None
            if self.is_coordinator
            else services.judge_for_user(user=self.request.user),
        )


# --- judgments ---------------------------------------------------------------------------


def choice_filter(name: str, choices: list[tuple[str, str]], **kwargs: Any) -> Any:
    """Return a choice filter whose refusal names the parameter and the values it allows."""
    allowed = ", ".join(value for value, _label in choices)
    return filters.ChoiceFilter(
        choices=choices,
        error_messages={"invalid_choice": f"{name}: use one of {allowed} (not %(value)s)."},
        **kwargs,
    )


class JudgmentFilter(filters.FilterSet):
    """Filters of the judgment export."""

    judge = _judge_filter()
    query = filters.CharFilter(field_name="query__external_id", help_text="Query id (qid).")
    document = filters.CharFilter(
        field_name="document__external_id", help_text="Document id (docno)."
    )
    status = choice_filter("status", Judgment.Status.choices)
    kind = choice_filter(
        "kind",
        Judge.Kind.choices,
        field_name="judge__kind",
        help_text="Only the labels of this kind of judge: human or llm.",
    )
    provenance = choice_filter(
        "provenance",
        JudgmentEvent.Channel.choices,
        field_name="provenance",
        help_text="Only labels whose current value was recorded through this channel (the "
        "`provenance` field: browser, api, import, admin, system, llm, adjudication).",
    )
    updated_after = UTCDateTimeFilter(
        field_name="updated_at",
        lookup_expr="gt",
        help_text="Only judgments changed after this time (ISO 8601).",
    )

    class Meta:
        model = Judgment
        fields: ClassVar[list[str]] = []


_RECORD_REQUEST = PolymorphicProxySerializer(
    component_name="JudgmentRecordRequest",
    serializers=[JudgmentCreateSerializer, JudgmentBatchSerializer],
    resource_type_field_name=None,
)
_RECORD_FORM_REQUEST = PolymorphicProxySerializer(
    component_name="JudgmentRecordFormRequest",
    serializers=[JudgmentFileSerializer, JudgmentCreateSerializer],
    resource_type_field_name=None,
)
_RECORD_RESPONSE = PolymorphicProxySerializer(
    component_name="JudgmentRecordResponse",
    serializers=[JudgmentSerializer, ImportSummarySerializer],
    resource_type_field_name=None,
)


@extend_schema_view(
    get=extend_schema(
        summary="Export judgments",
        description="Coordinators see every judgment of the collection; judges only their own. "
        "`?format=qrels` exports one judge's graded labels as TREC qrels text "
        "(coordinators must name the judge).",
        parameters=[
            SLUG,
            OpenApiParameter(
                "format",
                OpenApiTypes.STR,
                enum=["json", "qrels"],
                description="json (default, paged) or qrels (text, not paged).",
            ),
        ],
        responses={
            (200, "application/json"): JudgmentSerializer(many=True),
            (200, "text/plain"): OpenApiTypes.STR,
            **error_responses(400, 401, 403, 404),
        },
    ),
    post=extend_schema(
        summary="Record judgments",
        description=(
            "Three forms, all recorded with channel `api`:\n\n"
            "* one judgment object (JSON, or form fields) → 201 with the judgment (200 if "
            "it existed before);\n"
            '* `{"judge": <id>, "judgments": [...]}` → recorded all or nothing, 201 '
            "(200 when nothing new) with counts; any bad item → 400 listing every bad "
            "item by its 1-based `line`, nothing written;\n"
            "* multipart `file`: TREC qrels (`qid iter docno grade`, grades 0–4) or, for a "
            "name ending in `.jsonl`, JSON Lines; same as a batch, with file line numbers. "
            "A file of at least `GRADED_BACKGROUND_IMPORT_BYTES` (8 MiB by default) is "
            "imported by a background worker instead: 202 with the import, whose "
            "`Location` (`.../imports/<id>/`) gives its progress and then its counts "
            "(`result`) or every bad line (`errors`), nothing written.\n\n"
            "Without `judge` you record as your own human judge. Only coordinators may "
            "record as another judge (an LLM judge, for an LLM worker); a judge may never "
            "record as anyone else (403)."
        ),
        parameters=[SLUG],
        request={
            "application/json": _RECORD_REQUEST,
            "multipart/form-data": _RECORD_FORM_REQUEST,
            "application/x-www-form-urlencoded": JudgmentCreateSerializer,
        },
        responses={
            200: _RECORD_RESPONSE,
            201: _RECORD_RESPONSE,
            202: OpenApiResponse(
                FileImportSerializer,
                description="A large file: queued for a background worker; follow `Location`.",
            ),
            **error_responses(400, 401, 403, 404),
        },
    ),
)
class JudgmentListCreateView(CollectionScopedView, generics.ListCreateAPIView):
    """Export and record judgments."""

    serializer_class = JudgmentSerializer
    filterset_class = JudgmentFilter
    filter_backends: ClassVar[list] = [filters.DjangoFilterBackend]
    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyMultiPartParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": JUDGING_ROLES,
        "POST": JUDGING_ROLES,
    }

    def get_renderers(self) -> list[BaseRenderer]:
        """Offer qrels text besides JSON for reading."""
        renderers = super().get_renderers()
        if self.request is not None and self.request.method in ("GET", "HEAD"):
            renderers.append(QrelsRenderer())
        return renderers

    def get_queryset(self) -> Any:
        """Return the judgments the user may see: all for coordinators, else their own."""
        if self.fake():
            return Judgment.objects.none()
        return selectors.judgments_in(
            collection=self.collection,
            judge_user=None if self.is_coordinator else self.request.user,
        )

    def list(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the judgments, paged, or one judge's graded labels as qrels."""
        if request.accepted_renderer.format != QrelsRenderer.format:
            return super().list(request, *args, **kwargs)
        if self.is_coordinator and not request.query_params.get("judge"):
            raise exceptions.ValidationError(
                {"judge": "Give a judge id: a qrels file holds one judge's labels."}
            )
        labels = self.filter_queryset(self.get_queryset()).filter(status=Judgment.Status.GRADED)
        rows = sorted(labels.values_list("query__external_id", "document__external_id", "grade"))
        data = QrelsLineSerializer(
            [{"qid": q, "docno": d, "grade": g} for q, d, g in rows], many=True
        ).data
        return TextResponse(data)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Record one judgment, a batch, or an uploaded qrels or JSON Lines file."""
        if "file" in request.FILES:
            return self._record_file(request)
        if isinstance(request.data, Mapping) and "judgments" in request.data:
            return self._record_batch(request)
        if isinstance(request.data, Mapping):
            return self._record_one(request)
        raise exceptions.ValidationError(
            'Send one judgment object, {"judgments": [...]}, or a multipart file.'
        )

    def _judge(self, judge_id: int | None) -> Judge:
        """Return the judge to record as, checking the user may."""
        return judge_to_record_as(
            user=self.request.user,
            collection=self.collection,
            roles=self.roles,
            judge_id=judge_id,
        )

    def _record_one(self, request: Request) -> Response:
        """Record one judgment through ``judgment_record``."""
        try:
            payload = names.canonical_item(request.data, 1, PAIR_NAMES)
        except FormatError as exc:
            raise exceptions.ValidationError({exc.problem.field: exc.problem.message}) from None
        native = ""
        mapping_judge = llm_labels_judge(payload.get("judge"))
        if mapping_judge is not None:
            self._judge(mapping_judge.pk)
            try:
                payload, native = llm_labels.mapped_item(mapping_judge, payload)
            except DjangoValidationError as exc:
                raise exceptions.ValidationError(exc.message_dict) from None
        serializer = JudgmentCreateSerializer(data=payload)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        judge = self._judge(data["judge"])
        query, document = selectors.pair_in(
            collection=self.collection, query_id=data["query"], document_id=data["document"]
        )
        existed = selectors.judgment_exists(judge=judge, query=query, document=document)
        with transaction.atomic():
            judgment = services.judgment_record(
                judge=judge,
                query=query,
                document=document,
                grade=data["grade"],
                status=data["status"],
                note=data["note"],
                seconds=data["seconds"],
                abstain_probability=data["abstain_probability"],
                evidence=data.get("evidence", services.KEEP),
                evidence_rule=judge.kind == Judge.Kind.HUMAN,
                channel=API,
                actor=request.user,
            )
            llm_labels.store_output(
                judgment=judgment, native_label=native, raw_output=data["raw_output"]
            )
        judgment.provenance = API
        return Response(
            JudgmentSerializer(judgment, context=self.get_serializer_context()).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )

    def _summary_response(
        self,
        judge: Judge,
        rows: Any,
        errors: Any,
        natives: Mapping[int, str] | None = None,
        raw_outputs: Mapping[int, str] | None = None,
    ) -> Response:
        """Import parsed rows and answer with the counts (201 if anything was created)."""
        summary = services_files.judgment_rows_record(
            collection=self.collection,
            judge=judge,
            rows=rows,
            errors=list(errors),
            actor=self.request.user,
            natives=None if natives is None else dict(natives),
            raw_outputs=None if raw_outputs is None else dict(raw_outputs),
        )
        return self._summary(summary)

    def _summary(self, summary: services.ImportSummary) -> Response:
        """Answer with an import's counts (201 if anything was created)."""
        return Response(
            ImportSummarySerializer(summary).data,
            status=status.HTTP_201_CREATED if summary.created else status.HTTP_200_OK,
        )

    def _record_batch(self, request: Request) -> Response:
        """Record a JSON batch all or nothing."""
        serializer = JudgmentBatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        judge = self._judge(serializer.validated_data["judge"])
        items, alias_errors = [], []
        for line, item in enumerate(serializer.validated_data["judgments"], start=1):
            try:
                items.append(names.canonical_item(item, line, PAIR_NAMES))
            except FormatError as exc:
                alias_errors.append({"line": line, "message": exc.problem.message})
                items.append(item)
        if alias_errors:
            refusal = exceptions.ValidationError()
            refusal.errors = alias_errors  # kept as they are: ``line`` stays a number
            raise refusal
        natives: dict[int, str] = {}
        mapping_errors: list = []
        if llm_labels_maps(judge):
            items, natives, mapping_errors = llm_labels.mapped_items(judge, items)
        raw_outputs = {
            line: item["raw_output"]
            for line, item in enumerate(items, start=1)
            if isinstance(item, dict) and isinstance(item.get("raw_output"), str)
        }
        rows, errors = imports.rows_from_items(items)
        return self._summary_response(judge, rows, [*errors, *mapping_errors], natives, raw_outputs)

    def _record_file(self, request: Request) -> Response:
        """Record an uploaded qrels or JSON Lines file all or nothing."""
        serializer = JudgmentFileSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        upload = serializer.validated_data["file"]
        if upload.size > imports.MAX_FILE_BYTES:
            raise exceptions.ValidationError(
                {"file": f"The file is larger than {imports.MAX_FILE_BYTES} bytes."}
            )
        judge = self._judge(serializer.validated_data["judge"])
        if services_files.runs_in_background({"file": upload}):
            return background_import_response(
                request,
                collection=self.collection,
                kind=FileImport.Kind.JUDGMENTS,
                upload=upload,
                options={"judge": judge.pk},
            )
        summary = services_files.judgment_file_record(  # streamed from the upload
            collection=self.collection,
            judge=judge,
            source=upload,
            name=upload.name or "",
            actor=request.user,
        )
        return self._summary(summary)


@extend_schema_view(
    get=extend_schema(
        summary="Show a judgment",
        parameters=[SLUG],
        responses={200: JudgmentSerializer, **error_responses(401, 403, 404)},
    ),
    patch=extend_schema(
        summary="Change a judgment",
        description="Recorded with channel `api`; the history keeps the previous label.",
        parameters=[SLUG],
        request=JudgmentUpdateSerializer,
        responses={200: JudgmentSerializer, **error_responses(400, 401, 403, 404)},
    ),
    delete=extend_schema(
        summary="Delete a judgment",
        description="The history stays, ending with a delete event (channel `api`).",
        parameters=[SLUG],
        responses={204: None, **error_responses(401, 403, 404)},
    ),
)
class JudgmentDetailView(CollectionScopedView, generics.RetrieveUpdateDestroyAPIView):
    """One judgment: the user's own (judges) or any (coordinators)."""

    serializer_class = JudgmentSerializer
    http_method_names: ClassVar[list[str]] = ["get", "patch", "delete", "head", "options"]
    permission_classes: ClassVar[list] = [IsAuthenticated, HasCollectionRole, CanSeeJudgment]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": JUDGING_ROLES,
        "PATCH": JUDGING_ROLES,
        "DELETE": JUDGING_ROLES,
    }

    def get_queryset(self) -> Any:
        """Return the judgments the user may see: all for coordinators, else their own."""
        if self.fake():
            return Judgment.objects.none()
        return selectors.judgments_in(
            collection=self.collection,
            judge_user=None if self.is_coordinator else self.request.user,
        )

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Change the judgment through ``judgment_record``."""
        judgment = self.get_object()
        serializer = JudgmentUpdateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changes = serializer.validated_data
        label_status = changes.get("status")
        if label_status is None:
            graded = changes.get("grade") is not None
            label_status = Judgment.Status.GRADED if graded else judgment.status
        if "grade" in changes:
            grade = changes["grade"]
        else:
            grade = judgment.grade if label_status == Judgment.Status.GRADED else None
        updated = services.judgment_record(
            judge=judgment.judge,
            query=judgment.query,
            document=judgment.document,
            grade=grade,
            status=label_status,
            note=changes.get("note", judgment.note),
            seconds=changes.get("seconds", judgment.seconds),
            abstain_probability=changes.get("abstain_probability", judgment.abstain_probability),
            evidence=changes.get("evidence", services.KEEP),
            evidence_rule=judgment.judge.kind == Judge.Kind.HUMAN,
            channel=API,
            actor=request.user,
        )
        updated.provenance = API
        return Response(JudgmentSerializer(updated, context=self.get_serializer_context()).data)

    def perform_destroy(self, instance: Judgment) -> None:
        """Delete the judgment through ``judgment_delete``; its history stays."""
        services.judgment_delete(judgment=instance, channel=API, actor=self.request.user)


@extend_schema_view(
    get=extend_schema(
        summary="Show a judgment's history",
        description="Every change of this judge's label of the pair, oldest first "
        "(including earlier judgments of the pair that were deleted).",
        parameters=[SLUG],
        responses={200: JudgmentEventSerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class JudgmentHistoryView(CollectionScopedView, generics.ListAPIView):
    """The history of one judgment the user may see."""

    serializer_class = JudgmentEventSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": JUDGING_ROLES}

    def get_queryset(self) -> Any:
        """Return the events of the judgment's judge on its pair."""
        if self.fake():
            return JudgmentEvent.objects.none()
        judgment = (
            selectors.judgments_in(
                collection=self.collection,
                judge_user=None if self.is_coordinator else self.request.user,
            )
            .filter(pk=self.kwargs["pk"])
            .first()
        )
        if judgment is None:
            raise Http404("No such judgment.")
        return selectors.judgment_history(judgment=judgment)


class EventFilter(filters.FilterSet):
    """Filters of the judgment history feed."""

    judge = _judge_filter()
    query = filters.CharFilter(field_name="query__external_id", help_text="Query id (qid).")
    document = filters.CharFilter(
        field_name="document__external_id", help_text="Document id (docno)."
    )
    action = filters.ChoiceFilter(choices=JudgmentEvent.Action.choices)
    channel = filters.ChoiceFilter(choices=JudgmentEvent.Channel.choices)
    at_after = UTCDateTimeFilter(
        field_name="at", lookup_expr="gt", help_text="Only events after this time (ISO 8601)."
    )

    class Meta:
        model = JudgmentEvent
        fields: ClassVar[list[str]] = []


@extend_schema_view(
    get=extend_schema(
        summary="List the judgment history",
        description="Coordinators only: the append-only history of every judgment change.",
        parameters=[SLUG],
        responses={200: JudgmentEventSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
)
class EventListView(CollectionScopedView, generics.ListAPIView):
    """The judgment history of a collection."""

    serializer_class = JudgmentEventSerializer
    filterset_class = EventFilter
    filter_backends: ClassVar[list] = [filters.DjangoFilterBackend]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the collection's events, oldest first."""
        if self.fake():
            return JudgmentEvent.objects.none()
        return selectors.events_in(collection=self.collection)


# --- judges ------------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List judges",
        description="Superusers see every judge; coordinators the judges of the collections "
        "they coordinate (LLM judges assigned to them, their members, anyone who judged "
        "there) and their own; others only their own human judge.",
        responses={200: JudgeSerializer(many=True), **error_responses(400, 401)},
    ),
    post=extend_schema(
        summary="Register an LLM judge",
        description="For coordinators of any collection. The judge is created with kind "
        "`llm` for the `collections` given (default: every collection you coordinate); "
        "record its judgments there with `judge` set to its id.",
        responses={201: JudgeSerializer, **error_responses(400, 401, 403)},
    ),
)
class JudgeListCreateView(CheckedBodyMixin, generics.ListCreateAPIView):
    """Judges, and registering LLM judges."""

    serializer_class = JudgeSerializer
    permission_classes: ClassVar[list] = [IsAuthenticated, IsCoordinatorAnywhere]
    filterset_fields: ClassVar[list[str]] = ["kind"]

    def get_queryset(self) -> Any:
        """Return the judges the user may see."""
        if getattr(self, "swagger_fake_view", False):
            return Judge.objects.none()
        return (
            selectors.judges_visible_to(user=self.request.user)
            .select_related("llm_provider")
            .prefetch_related("collections")
        )

    def perform_create(self, serializer: JudgeSerializer) -> None:
        """Register the LLM judge, for the given collections or all those the user coordinates."""
        data = dict(serializer.validated_data)
        collections = data.pop("collections", None) or list(
            Collection.objects.filter(
                memberships__user=self.request.user,
                memberships__role=Membership.Role.COORDINATOR,
            )
        )
        problems = services_judges.provider_closed_to(
            provider=data.get("llm_provider"), collections=collections, user=self.request.user
        )
        if problems:
            raise exceptions.ValidationError(problems)
        serializer.instance = services_judges.llm_judge_create(
            config=services_judges.LLMJudgeConfig(**data), collections=collections
        )


#: Who may change an LLM judge over REST (PATCH judges/<id>/).
JUDGE_CHANGE_NOTE = (
    "Coordinators of a collection the LLM judge works for (and superusers) change it; "
    "`collections` adds or removes only collections you coordinate."
)


@extend_schema_view(
    get=extend_schema(
        summary="Show a judge",
        responses={200: JudgeSerializer, **error_responses(401, 404)},
    ),
    patch=extend_schema(
        summary="Change an LLM judge",
        description="The fields given change, the others keep their values (there is no "
        "PUT). Checked as on the judge's configuration page: prompt placeholders, the answer "
        "pattern, the scale and its mapping, the bounds of retries and timeout, a provider "
        "registered by the operator, open to you and to each collection the judge works "
        "for, that allows the model. A bad field is a 400 naming it, and nothing changes. "
        "A change of what decides the grades makes a new `version`: the judge's labels keep "
        "the version that gave them, its next labels record the new one (check a new "
        f"version first: `POST .../judges/<id>/versions/`). {JUDGE_CHANGE_NOTE} A human "
        "judge has no configuration (400).",
        request=JudgeSerializer,
        responses={200: JudgeSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class JudgeDetailView(CheckedBodyMixin, generics.RetrieveUpdateAPIView):
    """One judge the user may see; an LLM judge's coordinators change it."""

    serializer_class = JudgeSerializer
    http_method_names: ClassVar[list[str]] = ["get", "patch", "head", "options"]

    def get_queryset(self) -> Any:
        """Return the judges the user may see."""
        if getattr(self, "swagger_fake_view", False):
            return Judge.objects.none()
        return (
            selectors.judges_visible_to(user=self.request.user)
            .select_related("llm_provider")
            .prefetch_related("collections")
        )

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Change the LLM judge through ``llm_judge_update``; answer with the judge."""
        judge = self.get_object()
        if judge.kind != Judge.Kind.LLM:
            raise exceptions.ValidationError(
                "Only an LLM judge has a configuration; a human judge comes with their user."
            )
        coordinated = set(
            selectors.coordinated_collections(user=request.user).values_list("pk", flat=True)
        )
        current = list(judge.collections.all())
        if not any(c.pk in coordinated for c in current):
            raise exceptions.PermissionDenied(JUDGE_CHANGE_NOTE)
        serializer = self.get_serializer(judge, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        collections = None
        if "collections" in data:  # the field only takes collections the user coordinates
            given = data.pop("collections")
            collections = [c for c in current if c.pk not in coordinated] + given
        mine = [c for c in (collections or current) if c.pk in coordinated]
        if "llm_provider" in data or collections is not None:
            provider = data.get("llm_provider", judge.llm_provider)
            problems = services_judges.provider_closed_to(
                provider=provider, collections=mine, user=request.user
            )
            if problems:
                raise exceptions.ValidationError(problems)
        config = services_judges.LLMJudgeConfig.of(judge).with_changes(data)
        services_judges.llm_judge_update(judge=judge, config=config, collections=collections)
        return Response(self.get_serializer(judge).data)


# --- memberships -------------------------------------------------------------------------

MEMBERSHIP_PK = OpenApiParameter(
    "id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Membership id."
)
TEAM_ROLE_NOTE = (
    "The team role comes and goes with team membership: change it through `.../teams/`."
)


class MembershipFilter(filters.FilterSet):
    """Filters of the membership list."""

    role = choice_filter("role", Membership.Role.choices, help_text="Only this role.")

    class Meta:
        model = Membership
        fields: ClassVar[list[str]] = []


def _refuse_team_role(role: str | None) -> None:
    """Refuse (400) granting, changing or revoking the team role here."""
    if role == Role.TEAM:
        raise exceptions.ValidationError({"role": TEAM_ROLE_NOTE})


@extend_schema_view(
    get=extend_schema(
        summary="List the collection's members",
        description="Coordinators only: every role held in the collection, by username.",
        parameters=[SLUG],
        responses={200: MembershipSerializer(many=True), **error_responses(400, 401, 403, 404)},
    ),
    post=extend_schema(
        summary="Give a user a role",
        description="Coordinators only. 201 with the membership, 200 if the user already "
        f"held the role. {TEAM_ROLE_NOTE}",
        parameters=[SLUG],
        request=MembershipCreateSerializer,
        responses={
            200: MembershipSerializer,
            201: MembershipSerializer,
            **error_responses(400, 401, 403, 404),
        },
    ),
)
class MembershipListCreateView(CollectionScopedView, generics.ListCreateAPIView):
    """Who holds which role in the collection; granting roles."""

    serializer_class = MembershipSerializer
    filterset_class = MembershipFilter
    filter_backends: ClassVar[list] = [filters.DjangoFilterBackend]
    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyFormParser, PolicyMultiPartParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "POST": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the collection's memberships."""
        if self.fake():
            return Membership.objects.none()
        return selectors.memberships_of(collection=self.collection)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Grant the role through ``membership_grant`` (and the quota, for a judge)."""
        form = MembershipCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        user = selectors.user_by_username(username=data["user"].strip())
        if user is None:
            raise exceptions.ValidationError({"user": f"No active user {data['user']!r}."})
        if data["quota"] is not None and data["role"] != Role.JUDGE:
            raise exceptions.ValidationError({"quota": "A quota belongs to the judge role."})
        existed = Membership.objects.filter(
            collection=self.collection, user=user, role=data["role"]
        ).exists()
        with transaction.atomic():
            membership = services.membership_grant(
                collection=self.collection, user=user, role=data["role"]
            )
            if data["quota"] is not None:
                membership = services_quota.judge_quota_set(
                    collection=self.collection,
                    judge=services.judge_for_user(user=user),
                    quota=data["quota"],
                )
        return Response(
            MembershipSerializer(membership).data,
            status=status.HTTP_200_OK if existed else status.HTTP_201_CREATED,
        )


@extend_schema_view(
    get=extend_schema(
        summary="Show a membership",
        parameters=[SLUG, MEMBERSHIP_PK],
        responses={200: MembershipSerializer, **error_responses(401, 403, 404)},
    ),
    patch=extend_schema(
        summary="Change a membership",
        description="Coordinators only: a new role (the quota is then cleared), or a "
        "judge's quota. A collection keeps at least one coordinator. " + TEAM_ROLE_NOTE,
        parameters=[SLUG, MEMBERSHIP_PK],
        request=MembershipUpdateSerializer,
        responses={200: MembershipSerializer, **error_responses(400, 401, 403, 404)},
    ),
    delete=extend_schema(
        summary="Take a role away",
        description="Coordinators only. The member's labels stay. A collection keeps at "
        "least one coordinator (400). " + TEAM_ROLE_NOTE,
        parameters=[SLUG, MEMBERSHIP_PK],
        responses={204: None, **error_responses(400, 401, 403, 404)},
    ),
)
class MembershipDetailView(CollectionScopedView, generics.RetrieveUpdateDestroyAPIView):
    """One role held in the collection."""

    serializer_class = MembershipSerializer
    http_method_names: ClassVar[list[str]] = ["get", "patch", "delete", "head", "options"]
    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyFormParser, PolicyMultiPartParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": COORDINATORS,
        "PATCH": COORDINATORS,
        "DELETE": COORDINATORS,
    }

    def get_queryset(self) -> Any:
        """Return the collection's memberships (another collection's ids are 404)."""
        if self.fake():
            return Membership.objects.none()
        return selectors.memberships_of(collection=self.collection)

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Change the role through ``membership_update``, the quota through ``judge_quota_set``."""
        membership = self.get_object()
        form = MembershipUpdateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        changes = form.validated_data
        _refuse_team_role(membership.role)
        with transaction.atomic():
            membership = services.membership_update(membership=membership, role=changes.get("role"))
            if "quota" in changes:
                membership = services_quota.judge_quota_set(
                    collection=self.collection,
                    judge=services.judge_for_user(user=membership.user),
                    quota=changes["quota"],
                )
        return Response(MembershipSerializer(membership).data)

    def perform_destroy(self, instance: Membership) -> None:
        """Revoke the role through ``membership_revoke``."""
        _refuse_team_role(instance.role)
        services.membership_revoke(membership=instance)
