"""Metrics API views: submit and manage runs, read scores, the leaderboard and teams.

Every endpoint lives under ``collections/<slug>/`` and follows the judging API: token or
session authentication, 404 to non-members, 403 to members whose role does not allow the
request (judges, for everything here), and errors as ``{"errors": [{"message", ...}]}``.
Runs another team owns are 404 unless the leaderboard is published, and are never
changeable by other teams (404).
"""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
)
from rest_framework import exceptions, generics, status
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import ErrorSerializer, error_responses
from config.parsers import PolicyFormParser, PolicyJSONParser, PolicyMultiPartParser
from judging.api.views import SLUG, CollectionScopedView
from judging.lists.judgment_rows import LineErrors
from metrics import selectors as metrics_selectors
from metrics import services
from metrics.api import selectors
from metrics.api.permissions import COORDINATORS, RUN_ROLES, team_to_submit_for
from metrics.api.serializers import (
    LeaderboardSerializer,
    RunCreatedSerializer,
    RunScoresSerializer,
    RunSerializer,
    RunSubmitSerializer,
    RunUpdateSerializer,
    TeamCreateSerializer,
    TeamSerializer,
)
from metrics.live import scoring
from metrics.models import Run, Scoreboard, Team
from metrics.selectors import Viewer
from metrics.visibility.services import BudgetExhausted

JUDGES_SEE_NO_RUNS = "Your role does not allow this (judges never see runs)."
RUN_ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Run id.")


class BudgetRefused(exceptions.Throttled):
    """429: the team used its runs for the day; ``Retry-After`` says when the next may come."""

    def __init__(self, refusal: BudgetExhausted) -> None:
        """Keep the refusal's error item (field ``budget``, ``next_allowed``)."""
        super().__init__(wait=refusal.retry_after, detail=refusal.message)
        self.errors = [refusal.error()]


#: The schema entry of a refused submission.
BUDGET_429 = {
    (429, "application/json"): OpenApiResponse(
        response=ErrorSerializer,
        description="The team has used its runs per day (deleted runs count): one error "
        "item with `field` budget and `next_allowed` (ISO 8601, UTC; null when the "
        "collection takes no team runs); the `Retry-After` header gives the seconds.",
    )
}


class MetricsScopedView(CollectionScopedView):
    """Base of the metrics endpoints: coordinators and team members only."""

    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": RUN_ROLES}

    @cached_property
    def who(self) -> Viewer:
        """Return what the user may see of the collection's runs."""
        return metrics_selectors.viewer(user=self.request.user, collection=self.collection)

    @cached_property
    def measures(self) -> list[str]:
        """Return the canonical names of the collection's measures."""
        return scoring.canonical_names(self.collection.measures)

    def get_serializer_context(self) -> dict[str, Any]:
        """Add the collection's judgment-list version (for ``stale``)."""
        context = super().get_serializer_context()
        if not self.fake():
            context["judgments_version"] = self.collection.judgments_version
            context["score_policy"] = self.who.policy
        return context

    def submission(self, serializer_class: type[Any]) -> tuple[dict[str, Any], Team, Any]:
        """Validate an upload form (a run's or answers'): its data, its team and its file.

        Refuses (400) a form ``serializer_class`` refuses, a team the user may not submit
        for (403) and a file over ``GRADED_RUN_MAX_BYTES``, naming the ``file`` field.
        """
        form = serializer_class(data=self.request.data)
        form.is_valid(raise_exception=True)
        data = form.validated_data
        team = team_to_submit_for(collection=self.collection, who=self.who, team_id=data["team"])
        upload = data["file"]
        limit = settings.GRADED_RUN_MAX_BYTES
        if upload.size > limit:
            raise LineErrors(
                [
                    {
                        "field": "file",
                        "message": f"File is {upload.size} bytes; the limit is {limit}.",
                    }
                ]
            )
        return data, team, upload

    def per_query_or_403(self) -> None:
        """Refuse (403) an analysis built on per-query scores the viewer may not see."""
        if not self.who.policy.shows_per_query:
            raise exceptions.PermissionDenied(self.who.policy.note)


# --- runs --------------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List runs",
        description="Your team's runs; coordinators see all, and so do team members once "
        "the leaderboard is published. Newest first.",
        parameters=[SLUG],
        responses={
            200: RunSerializer(many=True),
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
    post=extend_schema(
        summary="Submit a run",
        description=(
            "Multipart form with the run `file` and its `tag`. TREC run format "
            "(`qid Q0 docno rank score tag`, one per line) or JSON / JSON Lines objects "
            '`{"qid", "docno", "score"}`. The run is validated, stored, pooled and scored '
            "against the live judgment list, all or nothing: any problem → 400 listing every "
            "one (by 1-based `line` where it has one, else by `field`), nothing stored.\n\n"
            "Team members submit for their team (give `team` when in several). Coordinators "
            "submit on behalf of a team and must give its id.\n\n"
            "Each team may submit the collection's `runs_per_day` runs in any 24 hours "
            "(deleted runs count; a coordinator's submissions do not): beyond, 429 names "
            "when the next is allowed."
        ),
        parameters=[SLUG],
        request={"multipart/form-data": RunSubmitSerializer},
        responses={
            201: RunCreatedSerializer,
            **error_responses(400, 401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
            **BUDGET_429,
        },
    ),
)
class RunListCreateView(MetricsScopedView, generics.ListCreateAPIView):
    """List and submit runs."""

    serializer_class = RunSerializer
    parser_classes: ClassVar[list] = [PolicyMultiPartParser, PolicyFormParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": RUN_ROLES, "POST": RUN_ROLES}

    def get_queryset(self) -> Any:
        """Return the runs the user may see."""
        if self.fake():
            return Run.objects.none()
        return selectors.runs_for_api(
            metrics_selectors.visible_runs(collection=self.collection, who=self.who)
        )

    def paginate_queryset(self, queryset: Any) -> Any:
        """Return a page of runs with the scores the viewer's policy shows (one pass)."""
        page = super().paginate_queryset(queryset)
        runs = list(queryset) if page is None else page
        Scoreboard.attach(runs)
        self.who.policy.apply(runs)
        for run in runs:
            run.__dict__["_scores_shown"] = True
        return page

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Submit the uploaded run through ``run_submit``."""
        data, team, upload = self.submission(RunSubmitSerializer)
        try:
            run = services.run_submit(
                collection=self.collection,
                team=team,
                tag=data["tag"],
                content=upload.read(),
                filename=upload.name or "run.txt",
                user=request.user,
                description=data["description"],
            )
        except BudgetExhausted as exc:
            raise BudgetRefused(exc) from exc
        except services.RunRejected as exc:
            raise LineErrors(
                [{k: v for k, v in e.items() if v is not None} for e in exc.errors]
            ) from exc
        pooled = run.pairs_pooled
        run = selectors.runs_for_api(Run.objects.filter(pk=run.pk)).get()
        run.pairs_pooled = pooled
        return Response(
            RunCreatedSerializer(run, context=self.get_serializer_context()).data,
            status=status.HTTP_201_CREATED,
        )


@extend_schema_view(
    get=extend_schema(
        summary="Show a run",
        parameters=[SLUG, RUN_ID],
        responses={
            200: RunSerializer,
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
    patch=extend_schema(
        summary="Rename a run or change its description",
        description="Your team's runs; coordinators any. Tags stay unique in the collection.",
        parameters=[SLUG, RUN_ID],
        request=RunUpdateSerializer,
        responses={
            200: RunSerializer,
            **error_responses(400, 401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
    delete=extend_schema(
        summary="Delete a run",
        description="Your team's runs; coordinators any. Its rankings and kept file go; "
        "documents it added to the judging pool stay.",
        parameters=[SLUG, RUN_ID],
        responses={
            204: None,
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
)
class RunDetailView(MetricsScopedView, generics.RetrieveUpdateDestroyAPIView):
    """One run: visible ones to read, own team's (or any, coordinators) to change."""

    serializer_class = RunSerializer
    http_method_names: ClassVar[list[str]] = ["get", "patch", "delete", "head", "options"]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": RUN_ROLES,
        "PATCH": RUN_ROLES,
        "DELETE": RUN_ROLES,
    }

    def get_queryset(self) -> Any:
        """Return no runs (``get_object`` looks the run up); used by the schema only."""
        return Run.objects.none()

    def get_object(self) -> Run:
        """Return the run if the user may see it (GET) or change it (else); 404 otherwise."""
        lookup = (
            metrics_selectors.run_for_viewer
            if self.request.method in ("GET", "HEAD", "OPTIONS")
            else metrics_selectors.run_for_owner
        )
        run = lookup(collection=self.collection, who=self.who, run_id=self.kwargs["pk"])
        self.check_object_permissions(self.request, run)
        return run

    def partial_update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Change the tag or description through ``run_update``."""
        run = self.get_object()
        form = RunUpdateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        run = services.run_update(run=run, **form.validated_data)
        return Response(self.get_serializer(run).data)

    def perform_destroy(self, instance: Run) -> None:
        """Delete the run through ``run_delete``."""
        services.run_delete(run=instance)


@extend_schema_view(
    get=extend_schema(
        summary="Show a run's scores",
        description="The run's mean and per-query scores for the collection's measures "
        "(canonical names), over the queries of the live judgment list, and the "
        "judgment-list version they were computed against. Teams see what the collection's "
        "score visibility allows until the judgments are published (`visibility`): by "
        "default no score at all, and never a per-query value (docs/security.md).",
        parameters=[SLUG, RUN_ID],
        responses={
            200: RunScoresSerializer,
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    )
)
class RunScoresView(MetricsScopedView):
    """The per-query scores of one visible run."""

    serializer_class = RunScoresSerializer
    pagination_class = None

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the run's scores."""
        run = metrics_selectors.run_for_viewer(
            collection=self.collection, who=self.who, run_id=self.kwargs["pk"]
        )
        scores = selectors.run_scores(
            run=run, collection=self.collection, measures=self.measures, who=self.who
        )
        return Response(RunScoresSerializer(scores).data)


# --- leaderboard -------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="Show the leaderboard",
        description="Visible runs with their mean scores, best first by `sort` (default: "
        "the first measure). Team members see every team's runs only once the leaderboard "
        "is published, their own before; coordinators always see all. `judged` holds the "
        "Judged@k coverage, `scores` the other measures. A row is `stale` while its "
        "scores rest on an older judgment-list version. Until the judgments are published "
        "teams see the scores the collection's score visibility allows (`visibility`; by "
        "default none) and no intervals.",
        parameters=[
            SLUG,
            OpenApiParameter(
                "sort", OpenApiTypes.STR, description="Canonical measure name to sort by."
            ),
            OpenApiParameter(
                "provenance",
                OpenApiTypes.STR,
                enum=list(metrics_selectors.PROVENANCES),
                description="all (default): scores on the live list; human: on human grades "
                "alone (pairs only LLM judges graded left out; no intervals).",
            ),
        ],
        responses={
            200: LeaderboardSerializer,
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    )
)
class LeaderboardView(MetricsScopedView):
    """The collection's leaderboard."""

    serializer_class = LeaderboardSerializer
    pagination_class = None

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the leaderboard."""
        provenance = request.query_params.get("provenance") or "all"
        if provenance not in metrics_selectors.PROVENANCES:
            raise exceptions.ValidationError(
                {"provenance": ["Use all (human and LLM-filled grades) or human."]}
            )
        board = metrics_selectors.leaderboard(
            collection=self.collection,
            who=self.who,
            measures=self.measures,
            sort=request.query_params.get("sort") or None,
            provenance=provenance,
        )
        context = {
            "coverage_threshold": self.collection.coverage_threshold,
            "visibility": str(self.who.policy.exposure),
        }
        return Response(LeaderboardSerializer(board, context=context).data)


# --- teams -------------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List teams",
        description="Coordinators see every team of the collection; team members their own.",
        parameters=[SLUG],
        responses={
            200: TeamSerializer(many=True),
            **error_responses(401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
    post=extend_schema(
        summary="Create a team",
        description="Coordinators only. Members (usernames) get the collection's team role.",
        parameters=[SLUG],
        request=TeamCreateSerializer,
        responses={
            201: TeamSerializer,
            **error_responses(400, 401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    ),
)
class TeamListCreateView(MetricsScopedView, generics.ListCreateAPIView):
    """List and create teams."""

    serializer_class = TeamSerializer
    pagination_class = None
    parser_classes: ClassVar[list] = [PolicyJSONParser, PolicyFormParser, PolicyMultiPartParser]
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": RUN_ROLES, "POST": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the teams the user may see."""
        if self.fake():
            return Team.objects.none()
        return selectors.teams_for_viewer(collection=self.collection, who=self.who)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Create the team through ``team_create``."""
        form = TeamCreateSerializer(data=request.data)
        form.is_valid(raise_exception=True)
        names = list(dict.fromkeys(n.strip() for n in form.validated_data["members"]))
        users = selectors.users_by_username(usernames=names)
        unknown = [n for n in names if n not in users]
        if unknown:
            raise exceptions.ValidationError({"members": f"Unknown user(s): {', '.join(unknown)}."})
        team = services.team_create(
            collection=self.collection,
            name=form.validated_data["name"],
            members=[users[n] for n in names],
        )
        team = selectors.teams_for_viewer(collection=self.collection, who=self.who).get(pk=team.pk)
        return Response(TeamSerializer(team).data, status=status.HTTP_201_CREATED)
