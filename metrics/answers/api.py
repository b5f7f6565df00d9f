"""REST of RAG answers: submit a file of answers, list answer runs, read one run's answers.

Same rules as ranked runs (:mod:`metrics.api.views`): coordinators and team members only,
a team sees its own answer runs (coordinators all), a submission is all or nothing with
every problem listed by ``line``/``item`` and ``field``, and the runs' daily budget
applies (429).
"""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import generics, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.parsers import PolicyFormParser, PolicyMultiPartParser
from judging.api.views import SLUG
from judging.lists.judgment_rows import LineErrors
from metrics.answers import selectors, services
from metrics.answers.models import AnswerRun
from metrics.api.permissions import RUN_ROLES
from metrics.api.serializers import UploadField
from metrics.api.views import BUDGET_429, JUDGES_SEE_NO_RUNS, BudgetRefused, MetricsScopedView
from metrics.visibility.services import BudgetExhausted

ANSWER_RUN_ID = OpenApiParameter(
    "id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Answer run id."
)


class AnswerRunSerializer(serializers.ModelSerializer):
    """One answer run (without its answers)."""

    team = serializers.CharField(source="team.name", read_only=True)

    class Meta:
        model = AnswerRun
        fields = (
            "id",
            "tag",
            "run_id",
            "team",
            "description",
            "submitted_at",
            "source_format",
            "query_count",
        )
        read_only_fields = fields


class AnswerRunCreatedSerializer(AnswerRunSerializer):
    """A new answer run and how many cited pairs entered the judging pool."""

    pairs_pooled = serializers.IntegerField(
        read_only=True, help_text="(topic, cited document) pairs new to the judging pool."
    )

    class Meta(AnswerRunSerializer.Meta):
        fields = (*AnswerRunSerializer.Meta.fields, "pairs_pooled")
        read_only_fields = fields


class AnswerSentenceSerializer(serializers.Serializer):
    """One answer sentence."""

    text = serializers.CharField()
    citations = serializers.ListField(
        child=serializers.IntegerField(), help_text="0-based indices into references."
    )


class AnswerSerializer(serializers.Serializer):
    """One topic's answer in the track's shape."""

    topic_id = serializers.CharField(source="query.external_id")
    references = serializers.ListField(child=serializers.CharField())
    answer = AnswerSentenceSerializer(source="sentences", many=True)
    length = serializers.IntegerField(help_text="Words in the answer.")


class AnswerRunDetailSerializer(AnswerRunSerializer):
    """One answer run with its answers (``answers`` set by the view, in topic order)."""

    answers = AnswerSerializer(many=True, read_only=True, source="answer_rows")

    class Meta(AnswerRunSerializer.Meta):
        fields = (*AnswerRunSerializer.Meta.fields, "answers")
        read_only_fields = fields


class AnswerSubmitSerializer(serializers.Serializer):
    """A file of answers and its tag (multipart form)."""

    file = UploadField(
        help_text="TREC RAG answers: JSON Lines (one record per topic) or one JSON array; "
        'each record `{"run_id", "topic_id", "references": [docids], "answer": '
        '[{"text", "citations": [indices]}]}`.'
    )
    tag = serializers.CharField(
        min_length=1, max_length=100, help_text="Unique among the collection's answer runs."
    )
    description = serializers.CharField(
        required=False, allow_blank=True, default="", help_text="How the answers were made."
    )
    team = serializers.IntegerField(
        required=False,
        allow_null=True,
        default=None,
        help_text="Team id; needed when you are in several teams, and for coordinators.",
    )


@extend_schema_view(
    get=extend_schema(
        summary="List answer runs",
        description="Your team's answer runs; coordinators see all. Newest first.",
        parameters=[SLUG],
        responses={
            200: AnswerRunSerializer(many=True),
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
    post=extend_schema(
        summary="Submit RAG answers",
        description=(
            "Multipart form with the answer `file` and its `tag`. TREC RAG 2024/2025 "
            "answers, JSON Lines or one JSON array, one record per topic "
            "(`run_id`, `topic_id` — or `metadata.run_id`, `metadata.narrative_id` —, "
            "`references`: document ids, `answer`: sentences with `text` and "
            "`citations`, 0-based indices into `references`). All or nothing: any "
            "problem → 400 listing every one by `line` (or `item` of the array) and "
            "`field` (a JSON path such as `answer[1].citations[0]`): unknown topics and "
            "documents, citations out of range, a topic answered twice, a second run id, "
            "refused text. The documents cited join the judging pool.\n\n"
            "Answers share the team's `runs_per_day` budget with ranked runs: beyond, "
            "429 names when the next is allowed."
        ),
        parameters=[SLUG],
        request={"multipart/form-data": AnswerSubmitSerializer},
        responses={
            201: AnswerRunCreatedSerializer,
            **error_responses(400, 401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
            **BUDGET_429,
        },
    ),
)
class AnswerRunListCreateView(MetricsScopedView, generics.ListCreateAPIView):
    """List and submit answer runs."""

    serializer_class = AnswerRunSerializer
    parser_classes: ClassVar[list] = [PolicyMultiPartParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": RUN_ROLES, "POST": RUN_ROLES}

    def get_queryset(self) -> Any:
        """Return the answer runs the user may see."""
        if self.fake():
            return AnswerRun.objects.none()
        return selectors.visible_answer_runs(collection=self.collection, who=self.who)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Submit the uploaded answers through ``answers_submit``."""
        data, team, upload = self.submission(AnswerSubmitSerializer)
        try:
            run = services.answers_submit(
                collection=self.collection,
                team=team,
                tag=data["tag"],
                content=upload.read(),
                user=request.user,
                description=data["description"],
            )
        except BudgetExhausted as exc:
            raise BudgetRefused(exc) from exc
        except services.AnswersRejected as exc:
            raise LineErrors(exc.errors) from exc
        run.team = team
        return Response(AnswerRunCreatedSerializer(run).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    get=extend_schema(
        summary="Show an answer run and its answers",
        description="Visible as in the list (own team's; coordinators any), else 404.",
        parameters=[SLUG, ANSWER_RUN_ID],
        responses={
            200: AnswerRunDetailSerializer,
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
)
class AnswerRunDetailView(MetricsScopedView, generics.RetrieveAPIView):
    """One answer run with its answers."""

    serializer_class = AnswerRunDetailSerializer

    def get_queryset(self) -> Any:
        """Return the answer runs the user may see."""
        if self.fake():
            return AnswerRun.objects.none()
        return selectors.visible_answer_runs(collection=self.collection, who=self.who)

    def get_object(self) -> AnswerRun:
        """Return the run with its answers attached (two queries)."""
        run = super().get_object()
        run.answer_rows = list(selectors.answers_of(run=run))
        return run
