"""Judgment lists in and out over REST, and filling a collection without the admin.

* ``GET .../qrels/``: the live judgment list (or raw labels) streamed in qrels, csv, jsonl,
  json or ranklib, versioned (header, ETag, file name), 304 on a matching ETag, gzip when
  accepted.
* ``POST .../qrels/``: import a judgment file as one judge's labels.
* ``POST /collections/``, ``POST .../queries/``, ``POST .../documents/``: create a
  collection and fill it, from JSON batches or files, all or nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, serializers, status
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.parsers import PolicyFormParser, PolicyJSONParser, PolicyMultiPartParser
from judging.api import names
from judging.api.permissions import ANY_ROLE, COORDINATORS, judge_to_record_as
from judging.api.selectors import is_coordinator_anywhere
from judging.api.serializers import (
    CollectionSerializer,
    FileImportSerializer,
    LiveGradeSerializer,
)
from judging.api.views import (
    SLUG,
    CollectionListView,
    CollectionScopedView,
    DocumentListView,
    QueryListView,
    background_import_response,
)
from judging.imports import services as services_files
from judging.lists import downloads, exports
from judging.lists import judgment_rows as imports
from judging.lists import services as services_lists
from judging.lists.formats import FormatError
from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats
from judging.models import Collection, FileImport, Judge, JudgmentEvent

_TRUE = {"1", "true", "yes", "on"}


def _refused(exc: services_lists.ImportRefused) -> imports.LineErrors:
    """Return the 400 listing an import's problems by line."""
    return imports.LineErrors(exc.problems.as_dicts())


def _is_true(value: Any) -> bool:
    """Return whether a form or JSON value means yes."""
    return value is True or str(value).strip().lower() in _TRUE


class JudgmentListImportSerializer(serializers.Serializer):
    """A judgment file and whose labels it holds."""

    file = serializers.FileField(help_text="The judgment file (UTF-8).")
    format = serializers.ChoiceField(
        choices=judgment_formats.IMPORT_FORMATS,
        required=False,
        help_text="qrels, csv (query,docid,rating; query as id or text; Quepid's ratings "
        "csv), tsv (the same, tab-separated), jsonl, json, ranklib, or a Quepid book: quepid "
        "(its JSON) or quepid_csv (its csv, a column per rater). Default: from the file name "
        "(qrels when unsure; `book_*.json`/`*quepid*.json` a Quepid book). In csv, tsv, "
        "jsonl and json an optional `gold` column (field) marks the pair as gold with that "
        "expected grade (on the file's scale), `gold_reason` says why; a line with `gold` "
        "and no rating only marks the pair.",
    )
    judge = serializers.IntegerField(
        required=False, help_text="Id of an existing judge (an LLM judge, or a human judge)."
    )
    judge_name = serializers.CharField(
        required=False,
        max_length=100,
        help_text="Instead of `judge`: name of an imported judge (created on first use), "
        "e.g. `TREC assessors`.",
    )
    judge_kind = serializers.RegexField(
        r"^(human|llm)$",
        default=Judge.Kind.HUMAN,
        help_text="Kind of the imported judge named by `judge_name`: human (default) or llm.",
    )
    scale = serializers.CharField(
        required=False,
        max_length=200,
        help_text="The file's grade scale when not 0–4: a range (`0-3`, `1-5`, `0-1`; "
        "mapped linearly, halves up) or a table (`-2=0,0=0,1=2,2=4`).",
    )
    dry_run = serializers.BooleanField(
        default=False, help_text="Check and count only; write nothing."
    )


class ImportResultSerializer(serializers.Serializer):
    """What a judgment import did (or would do, in a dry run)."""

    created = serializers.IntegerField()
    changed = serializers.IntegerField()
    unchanged = serializers.IntegerField()
    version = serializers.IntegerField(help_text="Judgment-list version after the import.")
    judge = serializers.IntegerField(help_text="Id of the judge the labels were recorded as.")
    judges = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Ids of every judge labels were recorded as: `judge`, or for a Quepid "
        "book one imported judge per rater it names.",
    )
    gold = serializers.IntegerField(
        help_text="Pairs the file's `gold` column marked as gold (new, or with a changed "
        "grade or reason)."
    )
    dry_run = serializers.BooleanField()


_EXPORT_PARAMETERS = [
    SLUG,
    OpenApiParameter(
        "format",
        OpenApiTypes.STR,
        enum=list(dict.fromkeys([*judgment_formats.FORMATS, *judgment_formats.RAW_FORMATS])),
        description="qrels (default; `qid 0 docno grade`), csv (`query,docid,rating`, query "
        "text), jsonl, json, or ranklib (`grade qid:N # docno`, with the qid mapping as "
        "`# qid:N = <qid>` comment lines first).",
    ),
    OpenApiParameter(
        "labels",
        OpenApiTypes.STR,
        enum=["live", "raw"],
        description="live (default): the aggregated grade per pair. raw: every judge's "
        "current label (coordinators only): csv, jsonl, or a Quepid book — quepid (its "
        "JSON: query_doc_pairs with every judge's judgement) or quepid_csv (query, docid "
        "and a rating column per judge).",
    ),
    OpenApiParameter("query", OpenApiTypes.STR, description="Only this qid."),
    OpenApiParameter(
        "judge", OpenApiTypes.INT, description="Only pairs this judge graded (raw: its labels)."
    ),
    OpenApiParameter(
        "kind",
        OpenApiTypes.STR,
        enum=list(Judge.Kind.values),
        description="Only pairs with a grade from this kind of judge (raw: their labels).",
    ),
    OpenApiParameter(
        "since_version",
        OpenApiTypes.INT,
        description="Only pairs whose live grade changed after this judgment-list version.",
    ),
    OpenApiParameter(
        "min_judges", OpenApiTypes.INT, description="Only pairs graded by at least N judges."
    ),
    OpenApiParameter(
        "provenance",
        OpenApiTypes.STR,
        enum=["all", "human"],
        description="all (default): human grades and the LLM grades that fill the other "
        "pairs. human: only pairs a human graded or adjudicated (raw: human labels only).",
    ),
    OpenApiParameter(
        "unjudged",
        OpenApiTypes.BOOL,
        description="1: add the pooled pairs nobody has graded yet, with grade -1 (trec_eval "
        "reads a negative grade as pooled but unjudged). Live list only, with no filter "
        "but `query`.",
    ),
    OpenApiParameter(
        "metadata",
        OpenApiTypes.BOOL,
        description="1: start a qrels or ranklib file with one provenance comment, "
        "`# ir_metadata {...}` (collection, judgment-list version, aggregation policy, "
        "filters, date, Graded version). Off by default: not every qrels reader skips "
        "comments (trec_eval 10.0 does).",
    ),
]


@extend_schema_view(
    get=extend_schema(
        summary="Export the judgment list",
        description="Streamed. Coordinators always; team members once the coordinator "
        "publishes the judgment list; judges never (blind judging). The response names "
        "its judgment-list version in `X-Judgment-List-Version`, its ETag and its file "
        "name; a GET with `If-None-Match` set to the current ETag answers 304. Gzip when "
        "the client sends `Accept-Encoding: gzip`. Sorted by qid, then docno (code-point "
        "order); whole grades as integers, others with up to 6 decimals.",
        parameters=_EXPORT_PARAMETERS,
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/jsonl"): OpenApiTypes.STR,
            (200, "application/json"): LiveGradeSerializer(many=True),
            304: None,
            **error_responses(400, 401, 403, 404),
        },
    ),
    post=extend_schema(
        summary="Import a judgment list",
        description="Coordinators only. Records a file's labels as one judge's: an "
        "existing judge (`judge`) or an imported judge created on the fly (`judge_name`, "
        "`judge_kind`). Grades on another scale are mapped with `scale`. All or nothing: "
        "any problem → 400 listing every bad line (the first 100, then a count), nothing "
        "written. `dry_run` checks and counts without writing. A file of at least "
        "`GRADED_BACKGROUND_IMPORT_BYTES` (8 MiB by default) is imported by a background "
        "worker instead: 202 with the import, whose `Location` (`.../imports/<id>/`) gives "
        "its progress and then these counts (`result`) or every bad line (`errors`).",
        parameters=[SLUG],
        request={"multipart/form-data": JudgmentListImportSerializer},
        responses={
            200: ImportResultSerializer,
            201: ImportResultSerializer,
            202: OpenApiResponse(
                FileImportSerializer,
                description="A large file: queued for a background worker; follow `Location`.",
            ),
            **error_responses(400, 401, 403, 404),
        },
    ),
)
class JudgmentListView(CollectionScopedView):
    """The judgment list: streamed out, imported in."""

    serializer_class = JudgmentListImportSerializer
    pagination_class = None
    parser_classes: ClassVar[list] = [PolicyMultiPartParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": ANY_ROLE, "POST": COORDINATORS}

    def perform_content_negotiation(self, request: Request, force: bool = False) -> Any:
        """Leave ``?format=`` to the export; errors are always JSON."""
        return JSONRenderer(), JSONRenderer.media_type

    def get(self, request: Request, *args: Any, **kwargs: Any) -> HttpResponse:
        """Stream the export, or answer 304."""
        spec = exports.export_spec(request.query_params)
        reason = exports.may_export(collection=self.collection, roles=self.roles, raw=spec.raw)
        if reason:
            raise exceptions.PermissionDenied(reason)
        return downloads.export_response(request, collection=self.collection, spec=spec)

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Import the uploaded judgment file."""
        serializer = JudgmentListImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        upload = data["file"]
        if upload.size > imports.MAX_FILE_BYTES:
            raise exceptions.ValidationError(
                {"file": f"The file is larger than {imports.MAX_FILE_BYTES} bytes."}
            )
        if data.get("judge") is not None and data.get("judge_name"):
            raise exceptions.ValidationError({"judge": "Give judge or judge_name, not both."})
        if services_files.runs_in_background({"file": upload}):
            return self._in_background(request, data)
        fmt = data.get("format") or judgment_formats.guess_format(upload.name or "")
        common = {
            "collection": self.collection,
            "source": upload,
            "format": fmt,
            "scale": data.get("scale"),
            "dry_run": data["dry_run"],
            "actor": request.user,
            "channel": JudgmentEvent.Channel.API,
        }
        try:
            if data.get("judge_name"):  # created, if need be, inside the import
                summary, judge = services_lists.judgment_list_import_named(
                    judge_name=data["judge_name"], judge_kind=data["judge_kind"], **common
                )
            else:
                judge = judge_to_record_as(
                    user=request.user,
                    collection=self.collection,
                    roles=self.roles,
                    judge_id=data.get("judge"),
                )
                summary = services_lists.judgment_list_import(judge=judge, **common)
        except services_lists.ImportRefused as exc:
            raise _refused(exc) from None
        body = services_lists.import_counts(
            summary, judge_id=judge and judge.pk, dry_run=data["dry_run"]
        )
        created = summary.created and not data["dry_run"]
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)

    def _in_background(self, request: Request, data: dict[str, Any]) -> Response:
        """Check what the worker cannot ask about, then queue the import (202)."""
        try:
            judgment_formats.parse_scale(data.get("scale"))
        except ValueError as exc:
            raise exceptions.ValidationError({"scale": str(exc)}) from None
        options: dict[str, Any] = {
            "format": data.get("format", ""),
            "scale": data.get("scale", ""),
            "dry_run": data["dry_run"],
        }
        if data.get("judge_name"):  # created by the worker, inside the import
            if not data["judge_name"].strip():
                raise exceptions.ValidationError({"judge_name": "Give a judge name."})
            options.update(judge_name=data["judge_name"], judge_kind=data["judge_kind"])
        else:
            options["judge"] = judge_to_record_as(
                user=request.user,
                collection=self.collection,
                roles=self.roles,
                judge_id=data.get("judge"),
            ).pk
        return background_import_response(
            request,
            collection=self.collection,
            kind=FileImport.Kind.QRELS,
            upload=data["file"],
            options=options,
        )


# --- creating collections and filling them -----------------------------------------------


class CollectionCreateSerializer(serializers.Serializer):
    """A new collection."""

    slug = serializers.SlugField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="Identifier used in addresses and by scripts; left out, it is made from "
        "the name. A short name another collection has is a 400 naming a free one.",
    )
    name = serializers.CharField(max_length=200)
    purpose = serializers.ChoiceField(
        choices=Collection.Purpose.choices,
        required=False,
        default=Collection.Purpose.SHARED_TASK,
        help_text="What the collection is for. internal: an internal evaluation, teams see "
        "their live scores as judgments arrive and have no daily run budget; shared_task "
        "(the default, as before this field existed): scores hidden from teams until "
        "publication, five runs per team per day. Live scores let a team infer unpublished "
        "grades. Either way the settings stay changeable (.../score-visibility/).",
    )
    guidelines = serializers.CharField(required=False, allow_blank=True, default="")
    judges_per_pair = serializers.IntegerField(required=False, min_value=1, default=1)


class ContentSummarySerializer(serializers.Serializer):
    """What an import of queries or documents did (or would do, in a dry run)."""

    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    dry_run = serializers.BooleanField()


class ContentFileSerializer(serializers.Serializer):
    """A topics or documents file."""

    file = serializers.FileField()
    format = serializers.CharField(
        required=False, help_text="Topics: trec, jsonl or tsv; documents: jsonl or tsv."
    )
    dry_run = serializers.BooleanField(default=False)


@extend_schema_view(
    get=extend_schema(
        summary="List your collections",
        description="Collections you take part in, each with your roles in it.",
        responses={200: CollectionSerializer(many=True), **error_responses(401)},
    ),
    post=extend_schema(
        summary="Create a collection",
        description="For staff and for coordinators of any collection; you become the new "
        "collection's coordinator. Fill it with POST .../queries/ and .../documents/.",
        request=CollectionCreateSerializer,
        responses={201: CollectionSerializer, **error_responses(400, 401, 403)},
    ),
)
class CollectionListCreateView(CollectionListView):
    """Collections the user belongs to; creating one."""

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Create the collection, with the user as coordinator."""
        if not (request.user.is_staff or is_coordinator_anywhere(user=request.user)):
            raise exceptions.PermissionDenied(
                "Creating collections needs staff status or the coordinator role somewhere."
            )
        serializer = CollectionCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        collection = services_lists.collection_create(creator=request.user, **serializer.data)
        collection.roles = ["coordinator"]
        return Response(CollectionSerializer(collection).data, status=status.HTTP_201_CREATED)


def _batch(request: Request, key: str) -> list[Any] | None:
    """Return the items of a JSON batch (``[...]`` or ``{key: [...]}``), or None for a file."""
    if "file" in request.FILES:
        return None
    data = request.data
    if isinstance(data, Mapping) and key in data:
        data = data[key]
    if not isinstance(data, list):
        raise exceptions.ValidationError(
            f'Send a JSON array, {{"{key}": [...]}}, or a multipart file.'
        )
    return data


def _objects(items: list[Any], build: Callable[[int, Any], Any], id_name: str) -> list[Any]:
    """Read JSON batch items into records or problems; ``line`` is the 1-based item.

    ``id_name`` (``qid`` or ``docno``) may also be spelt ``external_id``, as responses
    named it before (see :mod:`judging.api.names`).
    """
    records: list[Any] = []
    for number, item in enumerate(items, start=1):
        try:
            records.append(build(number, names.canonical_item(item, number, (id_name,))))
        except FormatError as exc:
            records.append(exc.problem)
    return records


def _content_import(
    request: Request,
    *,
    key: str,
    id_name: str,
    formats: tuple[str, ...],
    guess: Callable[[str, bytes], str],
    build: Callable[[int, Any], Any],
    run: Callable[..., services_lists.ContentSummary],
) -> Response:
    """Import queries or documents from a JSON batch or a file; answer with the counts."""
    items = _batch(request, key)
    dry_run = _is_true(request.query_params.get("dry_run", ""))
    try:
        if items is not None:
            summary = run(records=_objects(items, build, id_name), dry_run=dry_run)
        else:
            serializer = ContentFileSerializer(data=request.data)
            serializer.is_valid(raise_exception=True)
            upload = serializer.validated_data["file"]
            dry_run = dry_run or serializer.validated_data["dry_run"]
            fmt = (serializer.validated_data.get("format") or "").strip().lower()
            if not fmt:
                head = upload.read(4096)
                upload.seek(0)
                fmt = guess(upload.name or "", head)
            if fmt not in formats:
                raise exceptions.ValidationError({"format": f"Use one of {', '.join(formats)}."})
            summary = run(source=upload, format=fmt, dry_run=dry_run)
    except services_lists.ImportRefused as exc:
        raise _refused(exc) from None
    code = status.HTTP_201_CREATED if summary.created and not dry_run else status.HTTP_200_OK
    return Response(ContentSummarySerializer(summary).data, status=code)


DRY_RUN = OpenApiParameter(
    "dry_run", OpenApiTypes.BOOL, description="1: check everything, write nothing."
)


def _batch_schema(key: str, item: dict[str, Any]) -> dict[str, Any]:
    """Return the JSON body of a batch: an array of ``item``, or ``{key: [...]}`` and no more.

    The items are read by the file formats' readers (every problem names its item); the
    object's own fields are checked like every body's (:mod:`config.body_fields`).
    """
    items = {"type": "array", "items": item}
    return {
        "oneOf": [
            items,
            {
                "type": "object",
                "properties": {key: items},
                "required": [key],
                "additionalProperties": False,
            },
        ]
    }


def _string(description: str) -> dict[str, str]:
    return {"type": "string", "description": description}


_TOPIC_ITEM = {
    "type": "object",
    "description": "A query. Its id may also be spelt `external_id`, "
    f"{', '.join(collection_formats.QUERY_ID_KEYS[1:])}; its text "
    f"{', '.join(collection_formats.QUERY_TEXT_KEYS[1:])}.",
    "properties": {
        "qid": _string("Query id, as in runs and qrels."),
        "text": _string("The query as a user typed it."),
        "description": _string("What the user wants (TREC description)."),
        "narrative": _string("What counts as relevant (TREC narrative)."),
    },
}
_DOCUMENT_ITEM = {
    "type": "object",
    "description": "A document. Its id may also be spelt `external_id`, "
    f"{', '.join(collection_formats.DOCUMENT_ID_KEYS[1:])}; its body "
    f"{', '.join(collection_formats.DOCUMENT_BODY_KEYS[1:])}. Other keys are kept as the "
    "document's `extra`.",
    "properties": {
        "docno": _string("Document id, as in runs and qrels."),
        "title": _string("Title."),
        "body": _string("Text or HTML (shown to judges as untrusted content)."),
        "url": _string("Source address (http or https)."),
    },
    "additionalProperties": True,
}


@extend_schema_view(
    post=extend_schema(
        summary="Add or update queries",
        description='Coordinators only. A JSON array (or `{"queries": [...]}`) of '
        "`{qid, text, description, narrative}` (`external_id` is accepted for `qid`), or a "
        "multipart `file`: TREC topics, JSON "
        "Lines or TSV (`qid<TAB>text`). Queries are matched by qid (created or updated). "
        "All or nothing; problems name their line (file) or item (batch). `?dry_run=1` "
        "writes nothing.",
        parameters=[SLUG, DRY_RUN],
        request={
            "application/json": _batch_schema("queries", _TOPIC_ITEM),
            "multipart/form-data": ContentFileSerializer,
        },
        responses={
            200: ContentSummarySerializer,
            201: ContentSummarySerializer,
            **error_responses(400, 401, 403, 404),
        },
    ),
)
class QueryListCreateView(QueryListView):
    """The queries of a collection; adding them."""

    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyMultiPartParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        **QueryListView.role_rules,
        "POST": COORDINATORS,
    }

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Import the topics."""

        def run(*, records: Any = None, **kwargs: Any) -> services_lists.ContentSummary:
            return services_lists.topics_import(
                collection=self.collection, topics=records, **kwargs
            )

        return _content_import(
            request,
            key="queries",
            id_name="qid",
            formats=collection_formats.TOPIC_FORMATS,
            guess=collection_formats.guess_topic_format,
            build=collection_formats.topic_from_object,
            run=run,
        )


@extend_schema_view(
    post=extend_schema(
        summary="Add or update documents",
        description='Coordinators only. A JSON array (or `{"documents": [...]}`) of '
        "`{docno, title, body, url, ...}` (`external_id` is accepted for `docno`; other "
        "keys are kept as `extra`), or a multipart "
        "`file`: JSON Lines or TSV (`docno<TAB>text`, or `docno<TAB>url<TAB>title<TAB>"
        "body`), read and written in batches. Documents are matched by docno. All or "
        "nothing; problems name their line or item. `?dry_run=1` writes nothing.",
        parameters=[SLUG, DRY_RUN],
        request={
            "application/json": _batch_schema("documents", _DOCUMENT_ITEM),
            "multipart/form-data": ContentFileSerializer,
        },
        responses={
            200: ContentSummarySerializer,
            201: ContentSummarySerializer,
            **error_responses(400, 401, 403, 404),
        },
    ),
)
class DocumentListCreateView(DocumentListView):
    """The documents of a collection; adding them."""

    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyMultiPartParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        **DocumentListView.role_rules,
        "POST": COORDINATORS,
    }

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Import the documents."""

        def run(*, records: Any = None, **kwargs: Any) -> services_lists.ContentSummary:
            return services_lists.documents_import(
                collection=self.collection, documents=records, **kwargs
            )

        return _content_import(
            request,
            key="documents",
            id_name="docno",
            formats=collection_formats.DOCUMENT_FORMATS,
            guess=collection_formats.guess_document_format,
            build=collection_formats.document_from_object,
            run=run,
        )
