"""LLM judge jobs of a collection over REST (coordinators): start one, follow its progress.

``GET llm-providers/`` names the providers open to the caller (where LLM judges may send
requests; their URLs, key variables, allow-lists and budgets stay the operator's). ``POST
collections/<slug>/llm-jobs/`` checks the judge can run (a provider allowing its model, the
provider's key variable set) and answers 202 with the queued job; the job runs as a Celery
task when a broker is configured. ``GET`` lists the jobs or shows one with its counts and failures.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import exceptions, generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
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
class LLMProviderListView(generics.ListAPIView):
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


class LLMJobDetailSerializer(LLMJobSerializer):
    """A job with the pairs that failed."""

    failures = LLMFailureSerializer(many=True, read_only=True)

    class Meta(LLMJobSerializer.Meta):
        fields = [*LLMJobSerializer.Meta.fields, "failures"]
        read_only_fields = fields


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
        description="Coordinators: progress, counts, tokens and the failed pairs.",
        parameters=[SLUG],
        responses={200: LLMJobDetailSerializer, **error_responses(401, 403, 404)},
    )
)
class LLMJobDetailView(CollectionScopedView, generics.RetrieveAPIView):
    """One LLM judge job."""

    serializer_class = LLMJobDetailSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the collection's jobs with their failures."""
        if self.fake():
            return LLMJob.objects.none()
        return selectors_llm.jobs_of(collection=self.collection, with_failures=True)


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
