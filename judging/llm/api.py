"""LLM judge jobs of a collection over REST (coordinators): start one, follow its progress.

``GET llm-providers/`` names the providers open to the caller (where LLM judges may send
requests; their URLs, key variables, allow-lists and budgets stay the operator's). ``POST
collections/<slug>/llm-jobs/`` checks the judge can run (a provider allowing its model, the
provider's key variable set) and answers 202 with the queued job; the job runs as a Celery
task when a broker is configured. ``GET`` lists the jobs or shows one with its counts and its
failures grouped by reason; ``GET …/llm-jobs/<id>/failures/`` pages through the failed pairs
themselves (of one reason with ``?reason=``), so a job whose 301 requests all failed the
same way answers with one group, not 301 rows.
"""

from __future__ import annotations

from typing import Any, ClassVar
from urllib.parse import urlencode

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import exceptions, generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import CheckedBodyMixin, error_responses
from judging.api import selectors
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG, CollectionScopedView
from judging.llm import selectors as selectors_llm
from judging.llm import services as services_llm
from judging.llm.models import LLMFailure, LLMJob, LLMOutput, LLMProvider


class LLMProviderSerializer(serializers.ModelSerializer):
    """A provider LLM judges may use: its name and the models it allows."""

    class Meta:
        model = LLMProvider
        fields = ["name", "allowed_models"]
        read_only_fields = fields


@extend_schema_view(
    get=extend_schema(
        summary="List LLM providers",
        description="The providers open to you: those the operator opened to a collection "
        "you coordinate, or to one of your groups (superusers see all). Set one as an LLM "
        "judge's `llm_provider`. Only superusers register providers (in the admin): where "
        "requests go, which key they carry, who may use them and their budgets are never "
        "set over the API.",
        responses={200: LLMProviderSerializer(many=True), **error_responses(401)},
    )
)
class LLMProviderListView(CheckedBodyMixin, generics.ListAPIView):
    """The LLM providers open to the user, read-only."""

    serializer_class = LLMProviderSerializer
    pagination_class = None

    def get_queryset(self) -> QuerySet[LLMProvider]:
        """Return the providers open to the requesting user."""
        if getattr(self, "swagger_fake_view", False):
            return LLMProvider.objects.none()
        return selectors_llm.providers_for(user=self.request.user)


class LLMFailureSerializer(serializers.ModelSerializer):
    """A pair the job could not grade."""

    query = serializers.SlugRelatedField(slug_field="external_id", read_only=True)
    document = serializers.SlugRelatedField(slug_field="external_id", read_only=True)

    class Meta:
        model = LLMFailure
        fields = ["query", "document", "reason", "raw_answer", "attempts", "at"]
        read_only_fields = fields


class LLMJobSerializer(serializers.ModelSerializer):
    """An LLM judge job with its progress and counts."""

    judge = serializers.PrimaryKeyRelatedField(read_only=True, help_text="LLM judge id.")
    judge_name = serializers.CharField(source="judge.name", read_only=True)
    percent = serializers.IntegerField(read_only=True, help_text="Pairs with an outcome, %.")
    options = serializers.DictField(read_only=True, help_text="concurrency, limit, queries.")

    class Meta:
        model = LLMJob
        fields = [
            "id",
            "judge",
            "judge_name",
            "status",
            "total",
            "done",
            "failed",
            "skipped",
            "percent",
            "prompt_tokens",
            "completion_tokens",
            "options",
            "error",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields


class FailureGroupSerializer(serializers.Serializer):
    """The failures of a job that share one reason."""

    reason = serializers.CharField(read_only=True, help_text="Why the pairs could not be graded.")
    count = serializers.IntegerField(read_only=True, help_text="Pairs that failed this way.")
    example = serializers.CharField(
        read_only=True, help_text="The raw answer of the first of them (often all the same)."
    )
    failures_url = serializers.SerializerMethodField(
        help_text="These failures, a page at a time (the failures list with ?reason=)."
    )

    def get_failures_url(self, group: selectors_llm.FailureGroup) -> str:
        """Return the URL of the group's failures (absolute when the request is known)."""
        url = reverse(
            "judging-api:llm-job-failures",
            kwargs={"slug": self.context["slug"], "pk": self.context["job_id"]},
        )
        url = f"{url}?{urlencode({'reason': group.reason})}"
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request is not None else url


class LLMJobDetailSerializer(LLMJobSerializer):
    """A job with its failures grouped by reason (the pairs themselves are paged apart)."""

    failure_groups = serializers.SerializerMethodField(
        help_text="The failures grouped by reason, commonest first, with counts; "
        "`failures_url` pages through each group's pairs."
    )
    failures_url = serializers.SerializerMethodField(
        help_text="Every failed pair of the job, a page at a time."
    )

    class Meta(LLMJobSerializer.Meta):
        fields = [*LLMJobSerializer.Meta.fields, "failure_groups", "failures_url"]
        read_only_fields = fields

    def _group_context(self, job: LLMJob) -> dict[str, Any]:
        """Return the context a group needs to name its failures URL."""
        return {**self.context, "slug": job.collection.slug, "job_id": job.pk}

    @extend_schema_field(FailureGroupSerializer(many=True))
    def get_failure_groups(self, job: LLMJob) -> list[dict[str, Any]]:
        """Return the job's failures grouped by reason, commonest first."""
        groups = selectors_llm.failure_groups(job=job)
        return FailureGroupSerializer(groups, many=True, context=self._group_context(job)).data

    def get_failures_url(self, job: LLMJob) -> str:
        """Return the URL of the job's failed pairs (absolute when the request is known)."""
        url = reverse(
            "judging-api:llm-job-failures", kwargs={"slug": job.collection.slug, "pk": job.pk}
        )
        request = self.context.get("request")
        return request.build_absolute_uri(url) if request is not None else url


class LLMJobCreateSerializer(serializers.Serializer):
    """What to run: which LLM judge, how many requests at once, over which pairs."""

    judge = serializers.IntegerField(help_text="LLM judge id.")
    concurrency = serializers.IntegerField(
        min_value=1, max_value=256, default=4, help_text="Requests in flight at once."
    )
    limit = serializers.IntegerField(
        min_value=1, allow_null=True, required=False, default=None, help_text="At most N pairs."
    )
    queries = serializers.ListField(
        child=serializers.CharField(max_length=100),
        required=False,
        default=list,
        max_length=100_000,
        help_text="Query ids to restrict the job to; all when empty.",
    )


@extend_schema_view(
    get=extend_schema(
        summary="List LLM judge jobs",
        description="Coordinators: the collection's LLM judge jobs, newest first.",
        parameters=[SLUG],
        responses={200: LLMJobSerializer(many=True), **error_responses(401, 403, 404)},
    ),
    post=extend_schema(
        summary="Start an LLM judge job",
        description="Coordinators: judge the pool pairs the LLM judge has not graded yet. "
        "Answers 202 with the queued job; follow it at its detail URL. A judge without an "
        "endpoint, or whose key variable is not set, is a 400 before any request is made.",
        parameters=[SLUG],
        request=LLMJobCreateSerializer,
        responses={202: LLMJobSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class LLMJobListCreateView(CollectionScopedView, generics.ListCreateAPIView):
    """The collection's LLM judge jobs."""

    serializer_class = LLMJobSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": COORDINATORS,
        "POST": COORDINATORS,
    }

    def get_queryset(self) -> Any:
        """Return the collection's jobs, newest first."""
        if self.fake():
            return LLMJob.objects.none()
        return selectors_llm.jobs_of(collection=self.collection)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Validate, create the job, start it after commit, answer 202."""
        serializer = LLMJobCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        judge = selectors.judge_by_id(judge_id=data["judge"])
        if judge is None:
            raise exceptions.ValidationError({"judge": f"Unknown judge id {data['judge']}."})
        try:
            job = services_llm.llm_job_create(
                collection=self.collection,
                judge=judge,
                concurrency=data["concurrency"],
                limit=data["limit"],
                queries=data["queries"],
                actor=request.user,
            )
        except DjangoValidationError as exc:
            raise exceptions.ValidationError(exc.message_dict) from None
        services_llm.llm_job_start(job=job)
        return Response(LLMJobSerializer(job).data, status=status.HTTP_202_ACCEPTED)


@extend_schema_view(
    get=extend_schema(
        summary="Show an LLM judge job",
        description="Coordinators: progress, counts, tokens and the failures grouped by "
        "reason with counts (`failure_groups`, commonest first). The failed pairs themselves "
        "are paged at `failures_url`.",
        parameters=[SLUG],
        responses={200: LLMJobDetailSerializer, **error_responses(401, 403, 404)},
    )
)
class LLMJobDetailView(CollectionScopedView, generics.RetrieveAPIView):
    """One LLM judge job."""

    serializer_class = LLMJobDetailSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the collection's jobs (their failures are read grouped, per job)."""
        if self.fake():
            return LLMJob.objects.none()
        return selectors_llm.jobs_of(collection=self.collection).select_related("collection")


REASON = OpenApiParameter(
    "reason",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    description="Only the failures with exactly this reason (a group's `reason`).",
)


@extend_schema_view(
    get=extend_schema(
        summary="List an LLM job's failed pairs",
        description="Coordinators only. The pairs the job could not grade, by query then "
        "document id, with the reason, the raw answer and the attempts made; `?reason=` keeps "
        "one group of the job's `failure_groups`. Paginated.",
        parameters=[SLUG, REASON],
        responses={200: LLMFailureSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
)
class LLMJobFailureListView(CollectionScopedView, generics.ListAPIView):
    """The failed pairs of one LLM judge job, a page at a time."""

    serializer_class = LLMFailureSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the job's failures (404 for a job of another collection)."""
        if self.fake():
            return LLMFailure.objects.none()
        job = selectors_llm.job_in(collection=self.collection, job_id=self.kwargs["pk"])
        if job is None:
            raise exceptions.NotFound("No such LLM job.")
        return selectors_llm.job_failures(job=job, reason=self.request.query_params.get("reason"))


class LLMOutputSerializer(serializers.ModelSerializer):
    """What an LLM judge was asked and answered for one pair it graded."""

    query = serializers.CharField(source="judgment.query.external_id", read_only=True)
    document = serializers.CharField(source="judgment.document.external_id", read_only=True)
    grade = serializers.IntegerField(
        source="judgment.grade", read_only=True, allow_null=True, help_text="Graded's 0–4."
    )

    class Meta:
        model = LLMOutput
        fields = [
            "query",
            "document",
            "grade",
            *(name for name in services_llm.OUTPUT_FIELDS if name != "job"),
            "updated_at",
        ]
        read_only_fields = fields


@extend_schema_view(
    get=extend_schema(
        summary="Read an LLM job's raw outputs",
        description="Coordinators only. Per pair the job graded (and its judge still holds "
        "that label): the answer as the model gave it, the label on its own scale, the "
        "grade it maps to, the prompt's SHA-256, the model the API reported, tokens and "
        "latency. Paginated, by query then document id.",
        parameters=[SLUG],
        responses={200: LLMOutputSerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class LLMJobOutputListView(CollectionScopedView, generics.ListAPIView):
    """The raw outputs of one LLM judge job."""

    serializer_class = LLMOutputSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the job's outputs (404 for a job of another collection)."""
        if self.fake():
            return LLMOutput.objects.none()
        jobs = selectors_llm.jobs_of(collection=self.collection)
        if not jobs.filter(pk=self.kwargs["pk"]).exists():
            raise exceptions.NotFound("No such LLM job.")
        return selectors_llm.job_outputs(collection=self.collection, job_id=self.kwargs["pk"])
