"""Large file imports over REST, in the background: start one, then follow it.

* ``POST .../imports/``: upload topic, document, pair and judgment files (multipart);
  the import runs in a worker, all or nothing, as on the *Import files* page; 202 with
  the import and a ``Location`` to follow.
* ``POST .../judgments/`` and ``POST .../qrels/`` with a judgment file of at least
  ``GRADED_BACKGROUND_IMPORT_BYTES``: the same (see
  :func:`judging.api.views.background_import_response`).
* ``GET .../imports/<id>/``: its status, bytes read so far, and then its report and
  counts, or every refused line. Coordinators see every import of the collection; a judge
  (who may post their own judgment files) only the imports they started.
"""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.parsers import PolicyFormParser, PolicyMultiPartParser
from judging import selectors
from judging.api.permissions import COORDINATORS, JUDGING_ROLES
from judging.api.serializers import FileImportSerializer
from judging.api.views import SLUG, CollectionScopedView, accepted_import
from judging.imports import services as services_files
from judging.lists import judgment_rows as imports
from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats
from judging.models import FileImport, Judge


class FileImportCreateSerializer(serializers.Serializer):
    """The files of a background import (any of them) and how to read them."""

    topics = serializers.FileField(required=False, help_text="TREC, JSON Lines or TSV topics.")
    topics_format = serializers.ChoiceField(
        choices=collection_formats.TOPIC_FORMATS, required=False, help_text="Default: detect."
    )
    documents = serializers.FileField(required=False, help_text="JSON Lines or TSV documents.")
    documents_format = serializers.ChoiceField(
        choices=collection_formats.DOCUMENT_FORMATS, required=False, help_text="Default: detect."
    )
    pairs = serializers.FileField(required=False, help_text="`qid docno` lines for the pool.")
    judgments = serializers.FileField(
        required=False, help_text="qrels, csv, jsonl, json or ranklib judgments."
    )
    judgments_format = serializers.ChoiceField(
        choices=judgment_formats.IMPORT_FORMATS,
        required=False,
        help_text="Default: from the file name.",
    )
    judge_name = serializers.CharField(
        required=False,
        max_length=100,
        help_text="Whose judgments (an imported judge, created on first use); required "
        "with `judgments`.",
    )
    judge_kind = serializers.ChoiceField(choices=Judge.Kind.choices, default=Judge.Kind.HUMAN)
    scale = serializers.CharField(
        required=False, max_length=200, help_text="The judgments' grade scale when not 0–4."
    )
    dry_run = serializers.BooleanField(default=False, help_text="Check and count only.")

    def validate(self, data: dict[str, Any]) -> dict[str, Any]:
        """Require a file, a judge name with judgments, and files within the size limit."""
        files = [data.get(role) for role in services_files.ROLES]
        if not any(files):
            raise serializers.ValidationError(
                {"files": "Give at least one of topics, documents, pairs, judgments."}
            )
        if data.get("judgments") and not (data.get("judge_name") or "").strip():
            raise serializers.ValidationError({"judge_name": "Say whose judgments these are."})
        for role in services_files.ROLES:
            upload = data.get(role)
            if upload is not None and upload.size > imports.MAX_FILE_BYTES:
                raise serializers.ValidationError(
                    {role: f"The file is larger than {imports.MAX_FILE_BYTES} bytes."}
                )
        return data


@extend_schema_view(
    post=extend_schema(
        summary="Start a background import",
        description="Coordinators only. Uploads topic, document, pair and judgment files "
        "(multipart) and imports them in a background worker, all or nothing, as the "
        "Import files page does: 202 with the import; follow `Location` for its progress "
        "and outcome (`done`, or `refused` with every bad line and nothing written).",
        parameters=[SLUG],
        request={"multipart/form-data": FileImportCreateSerializer},
        responses={202: FileImportSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class FileImportCreateView(CollectionScopedView):
    """Start a background import."""

    serializer_class = FileImportCreateSerializer
    parser_classes: ClassVar[list] = [PolicyMultiPartParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"POST": COORDINATORS}

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Keep the files and queue the import."""
        serializer = FileImportCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        options = {
            "topics_format": data.get("topics_format", ""),
            "documents_format": data.get("documents_format", ""),
            "judgments_format": data.get("judgments_format", ""),
            "judge_name": data.get("judge_name", ""),
            "judge_kind": data["judge_kind"],
            "scale": data.get("scale", ""),
            "dry_run": data["dry_run"],
        }
        job = services_files.file_import_start(
            collection=self.collection,
            uploads={role: data.get(role) for role in services_files.ROLES},
            options=options,
            actor=request.user,
        )
        return accepted_import(request, self.collection, job)


@extend_schema_view(
    get=extend_schema(
        summary="Follow a background import",
        description="Coordinators see every import of the collection; a judge only the "
        "judgment files they posted (404 for any other). Status (`queued`, `running`, "
        "`done`, `refused`, `failed`), bytes read so far, and once finished the report "
        "(and for a judgment file its counts, `result`) or every refused line (`errors`, "
        "each naming its line; nothing was written).",
        parameters=[SLUG],
        responses={200: FileImportSerializer, **error_responses(401, 403, 404)},
    )
)
class FileImportDetailView(CollectionScopedView):
    """One background import."""

    serializer_class = FileImportSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": JUDGING_ROLES}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the import with its progress."""
        job, bytes_read = selectors.file_import_with_progress(
            collection=self.collection,
            import_id=kwargs["pk"],
            started_by=None if self.is_coordinator else request.user,
        )
        return Response(FileImportSerializer(job, context={"bytes_read": bytes_read}).data)


@extend_schema_view(
    post=extend_schema(
        summary="Retry an interrupted background import",
        description="Coordinators only. An import whose `status` is `interrupted` (its "
        "worker fell silent: killed or lost; nothing was written) is queued again and run "
        "from the start, exactly once: 202 with the import and a `Location` to follow. "
        "Should its files be gone it becomes `failed`, saying so (200). Any other import is "
        "a 400 naming its status.",
        parameters=[SLUG],
        request=None,
        responses={
            202: FileImportSerializer,
            200: FileImportSerializer,
            **error_responses(400, 401, 403, 404),
        },
    )
)
class FileImportRetryView(CollectionScopedView):
    """Retry one interrupted background import."""

    serializer_class = FileImportSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"POST": COORDINATORS}

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Queue the import again (or record that its files are gone)."""
        job, _ = selectors.file_import_with_progress(
            collection=self.collection, import_id=kwargs["pk"]
        )
        job = services_files.file_import_retry(job=job)
        if job.status == FileImport.Status.QUEUED:
            return accepted_import(request, self.collection, job)
        return Response(FileImportSerializer(job).data)
