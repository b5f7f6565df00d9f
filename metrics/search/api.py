"""REST of live search: endpoints open to a collection, configurations, tries, snapshots.

Coordinators only. Endpoints are read-only here (the operator registers them in the
admin); a configuration's changes are new versions (``POST …/versions/``); *Try it* sends
up to three queries and stores nothing; a snapshot is created queued and runs in the
background, its progress read from ``GET …/search-snapshots/<id>/``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from functools import cached_property
from typing import Any, ClassVar

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
)
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG, CollectionScopedView
from judging.models import Judge, Membership
from metrics.analysis.api import _pick
from metrics.models import Team
from metrics.search import presets, selectors, services
from metrics.search.models import SearchConfiguration, SearchEndpoint, SearchSnapshot
from metrics.selectors import measure_labels_of

ID = OpenApiParameter("id", OpenApiTypes.INT, OpenApiParameter.PATH, description="Id.")


class EndpointSerializer(serializers.Serializer):
    """A search endpoint open to the collection (where it is and its secret are not shown)."""

    name = serializers.CharField(read_only=True, help_text="Name to configure with.")
    kind = serializers.CharField(read_only=True, help_text=f"One of {', '.join(presets.KINDS)}.")


class ConfigurationVersionBodySerializer(serializers.Serializer):
    """What a version holds: endpoint, request template, depth and mapping."""

    endpoint = serializers.CharField(max_length=100, help_text="Endpoint name.")
    path = serializers.CharField(
        max_length=500, help_text="Path after the endpoint's base URL, e.g. /my-index/_search."
    )
    method = serializers.ChoiceField(
        choices=["GET", "POST"], default="POST", help_text="HTTP method (Solr: always GET)."
    )
    template = serializers.JSONField(
        help_text="JSON object: the query DSL body, Solr parameters or a generic body, with "
        "placeholders {{query_text}}, {{query_id}}, {{description}}, {{narrative}}, {{k}}."
    )
    depth = serializers.IntegerField(min_value=1, max_value=1000, default=100, help_text="k.")
    mapping = serializers.DictField(
        child=serializers.CharField(allow_blank=True, max_length=500),
        required=False,
        help_text="JMESPath expressions over the preset: hits, id, score, title, body, url, "
        "image_url (required for the generic kind: hits and id).",
    )


class ConfigurationBodySerializer(ConfigurationVersionBodySerializer):
    """A new configuration: its name, team and first version."""

    name = serializers.CharField(max_length=100, help_text="Name within the collection.")
    team = serializers.IntegerField(help_text="Id of the team whose runs the snapshots are.")


class ConfigurationVersionSerializer(serializers.Serializer):
    """One version of a configuration."""

    number = serializers.IntegerField(read_only=True)
    endpoint = serializers.CharField(source="endpoint.name", read_only=True)
    method = serializers.CharField(read_only=True)
    path = serializers.CharField(read_only=True)
    template = serializers.JSONField(read_only=True)
    depth = serializers.IntegerField(read_only=True)
    mapping = serializers.JSONField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)


class ConfigurationSerializer(serializers.Serializer):
    """A configuration and its versions, newest last."""

    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    team = serializers.IntegerField(source="team_id", read_only=True)
    auto_judge = serializers.IntegerField(
        source="auto_judge_id",
        read_only=True,
        allow_null=True,
        help_text="LLM judge grading each snapshot's unlabelled pairs (null: none).",
    )
    versions = ConfigurationVersionSerializer(many=True, read_only=True)


class ConfigurationPatchSerializer(serializers.Serializer):
    """What may change outside a version: the automatic LLM judge."""

    auto_judge = serializers.IntegerField(
        allow_null=True,
        help_text="Id of an LLM judge of the collection that grades each finished snapshot's "
        "pairs it has not labelled yet, within its provider's budget; null: none.",
    )


class TryBodySerializer(serializers.Serializer):
    """Which queries to try (external ids; default the first three)."""

    query_ids = serializers.ListField(
        child=serializers.CharField(max_length=500),
        required=False,
        max_length=services.TRY_QUERIES,
        help_text="At most three query ids.",
    )


class TrySerializer(serializers.Serializer):
    """One tried query: the request sent (credential masked), raw answer, mapped ranking."""

    query_id = serializers.CharField()
    request = serializers.JSONField(required=False)
    status = serializers.IntegerField(required=False, allow_null=True)
    raw = serializers.CharField(required=False)
    hits = serializers.ListField(child=serializers.JSONField(), required=False)
    errors = serializers.ListField(child=serializers.CharField(), required=False)
    error = serializers.CharField(required=False)


class SnapshotBodySerializer(serializers.Serializer):
    """A snapshot to run: of a configuration, or a retry or re-map of an earlier snapshot."""

    configuration = serializers.IntegerField(
        required=False, help_text="Configuration id (its current version)."
    )
    retry_of = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**63 - 1,
        help_text="Snapshot id: send its failed or unsent queries again (``query_ids`` "
        "chooses among them, one alone if you like); its answered queries are copied.",
    )
    remap_of = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**63 - 1,
        help_text="Snapshot id: map its kept raw answers with its configuration's current "
        "version; nothing is sent (the request must be unchanged).",
    )
    tag = serializers.CharField(
        max_length=100, required=False, allow_blank=True, help_text="Run tag (default: made)."
    )
    query_ids = serializers.ListField(
        child=serializers.CharField(max_length=500),
        required=False,
        max_length=100_000,
        help_text="A query set (external ids); default every query of the collection "
        "(with retry_of: every failed or unsent query of that snapshot).",
    )

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        """Require exactly one of configuration, retry_of and remap_of."""
        given = [name for name in ("configuration", "retry_of", "remap_of") if name in attrs]
        if len(given) != 1:
            raise serializers.ValidationError(
                {"configuration": "Give exactly one of configuration, retry_of and remap_of."}
            )
        if "remap_of" in attrs and "query_ids" in attrs:
            raise serializers.ValidationError(
                {"query_ids": "A re-map maps every kept answer; query_ids does not apply."}
            )
        return attrs


class FailedQuerySerializer(serializers.Serializer):
    """A query that failed, with its error."""

    query_id = serializers.CharField(source="query.external_id")
    error = serializers.CharField()
    retryable = serializers.BooleanField()
    attempts = serializers.IntegerField()


class LiveScoreSerializer(serializers.Serializer):
    """A snapshot's live score on the collection's first measure, beside its coverage."""

    measure = serializers.CharField(allow_null=True, help_text="The collection's first measure.")
    score = serializers.FloatField(
        allow_null=True, help_text="The run's mean of it on the live list (null: none judged)."
    )
    coverage = serializers.CharField(allow_null=True, help_text="The coverage measure shown.")
    judged = serializers.FloatField(
        allow_null=True,
        help_text="Judged@k: share of the top k documents with a live grade (null: none).",
    )
    thin = serializers.BooleanField(
        help_text="Below the collection's coverage threshold, or nothing judged yet."
    )
    stale = serializers.BooleanField(help_text="Scored against an older judgment-list version.")


class SnapshotSerializer(serializers.Serializer):
    """A snapshot's progress and outcome, and its live score once it is a run.

    ``context["scores"]`` (:func:`metrics.search.selectors.snapshot_scores`) holds the
    live scores by snapshot id; without it ``live`` is null.
    """

    id = serializers.IntegerField(read_only=True)
    tag = serializers.CharField(read_only=True)
    origin = serializers.ChoiceField(
        choices=["run", "retry", "remap", "schedule"],
        read_only=True,
        help_text="run: sent; retry: failed queries sent again; remap: kept answers "
        "re-mapped; schedule: sent by the configuration's schedule.",
    )
    source = serializers.IntegerField(
        source="source_id",
        read_only=True,
        allow_null=True,
        help_text="The snapshot a retry or re-map reuses.",
    )
    configuration = serializers.IntegerField(source="version.configuration_id", read_only=True)
    version = serializers.IntegerField(source="version.number", read_only=True)
    status = serializers.CharField(read_only=True)
    error = serializers.CharField(read_only=True)
    total = serializers.IntegerField(read_only=True)
    done = serializers.IntegerField(read_only=True)
    failed = serializers.IntegerField(read_only=True)
    run = serializers.IntegerField(source="run_id", read_only=True, allow_null=True)
    auto_job = serializers.IntegerField(
        source="auto_job_id",
        read_only=True,
        allow_null=True,
        help_text="The LLM job grading the snapshot's new pairs (GET …/llm-jobs/<id>/).",
    )
    auto_note = serializers.CharField(
        read_only=True, help_text="Why the automatic LLM judge did not start, or empty."
    )
    live = serializers.SerializerMethodField(
        help_text="The run's live score and Judged@k (null until the snapshot is a run)."
    )

    @extend_schema_field(LiveScoreSerializer(allow_null=True))
    def get_live(self, snapshot: SearchSnapshot) -> dict[str, Any] | None:
        """Return the snapshot's live score with its coverage, if it is a run."""
        score = self.context.get("scores", {}).get(snapshot.pk)
        return None if score is None else LiveScoreSerializer(score).data


class SnapshotDetailSerializer(SnapshotSerializer):
    """A snapshot with its failed queries."""

    failed_queries = FailedQuerySerializer(many=True, read_only=True)


class _SearchView(CollectionScopedView):
    """Coordinators; team members too, for their own teams, where the collection lets them."""

    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "POST": COORDINATORS}
    #: Methods a team member may use where the collection has ``search_by_teams`` on.
    team_methods: ClassVar[frozenset[str]] = frozenset({"GET", "POST"})
    pagination_class = None

    def allowed_roles(self) -> frozenset[str]:
        """Add the team role for :attr:`team_methods` where teams write configurations."""
        allowed = super().allowed_roles()
        method = "GET" if self.request.method in ("HEAD", "OPTIONS") else self.request.method
        if method in self.team_methods and self.collection.search_by_teams:
            return allowed | {Membership.Role.TEAM}
        return allowed

    @cached_property
    def teams(self) -> QuerySet[Team] | None:
        """Return the teams whose configurations the user may use (None: every team)."""
        return selectors.search_teams(collection=self.collection, user=self.request.user)

    def configuration(self, pk: Any) -> SearchConfiguration:
        found = (
            selectors.configurations_of(collection=self.collection, teams=self.teams)
            .filter(pk=pk)
            .first()
        )
        if found is None:
            raise exceptions.NotFound("No such configuration in this collection.")
        return found

    def fields(self, data: dict[str, Any]) -> services.VersionFields:
        endpoint = SearchEndpoint.objects.filter(name=data["endpoint"]).first()
        if endpoint is None or not selectors.endpoint_open_to(
            endpoint=endpoint, collection=self.collection, user=self.request.user
        ):
            raise exceptions.ValidationError(
                {"endpoint": "No such endpoint open to this collection."}
            )
        return services.VersionFields(
            endpoint=endpoint,
            path=data["path"],
            method=data["method"],
            template=data["template"],
            depth=data["depth"],
            mapping=data.get("mapping"),
        )


@extend_schema_view(
    get=extend_schema(
        summary="List the search endpoints open to this collection",
        operation_id="search_endpoints_list",
        description="Coordinators. The operator registers endpoints in the admin.",
        parameters=[SLUG],
        responses={200: EndpointSerializer(many=True), **error_responses(401, 403, 404)},
    )
)
class EndpointListView(_SearchView):
    """The endpoints a coordinator may configure with."""

    serializer_class = EndpointSerializer
    http_method_names: ClassVar[list[str]] = ["get", "head", "options"]

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """List them."""
        found = selectors.endpoints_in(collection=self.collection, user=request.user)
        return Response(EndpointSerializer(found, many=True).data)


@extend_schema_view(
    get=extend_schema(
        summary="List the collection's search configurations",
        operation_id="search_configurations_list",
        parameters=[SLUG],
        responses={200: ConfigurationSerializer(many=True), **error_responses(401, 403, 404)},
    ),
    post=extend_schema(
        summary="Create a search configuration (its version 1)",
        parameters=[SLUG],
        request=ConfigurationBodySerializer,
        responses={201: ConfigurationSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class ConfigurationListView(_SearchView):
    """Configurations of the collection."""

    serializer_class = ConfigurationSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """List them with their versions."""
        found = selectors.configurations_of(
            collection=self.collection, teams=self.teams
        ).prefetch_related("versions__endpoint")
        return Response(ConfigurationSerializer(found, many=True).data)

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Create one."""
        body = ConfigurationBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        teams = self.teams if self.teams is not None else Team.objects.all()
        team = teams.filter(collection=self.collection, pk=data["team"]).first()
        if team is None:
            raise exceptions.ValidationError({"team": "No such team in this collection."})
        configuration = services.configuration_create(
            collection=self.collection,
            name=data["name"],
            team=team,
            fields=self.fields(data),
            user=request.user,
        )
        return Response(ConfigurationSerializer(configuration).data, status=201)


@extend_schema_view(
    get=extend_schema(
        summary="Show a search configuration and its versions",
        parameters=[SLUG, ID],
        responses={200: ConfigurationSerializer, **error_responses(401, 403, 404)},
    ),
    patch=extend_schema(
        summary="Set a search configuration's automatic LLM judge",
        description="What the engine is asked changes only with a new version (POST "
        "…/versions/); the automatic judge is not part of a version.",
        parameters=[SLUG, ID],
        request=ConfigurationPatchSerializer,
        responses={200: ConfigurationSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class ConfigurationDetailView(_SearchView):
    """One configuration."""

    serializer_class = ConfigurationSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": COORDINATORS,
        "PATCH": COORDINATORS,
    }
    team_methods: ClassVar[frozenset[str]] = frozenset({"GET"})  # the LLM judge: coordinators
    http_method_names: ClassVar[list[str]] = ["get", "patch", "head", "options"]

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Show it."""
        return Response(ConfigurationSerializer(self.configuration(kwargs["pk"])).data)

    def patch(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Set or clear the automatic LLM judge."""
        configuration = self.configuration(kwargs["pk"])
        body = ConfigurationPatchSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        wanted = body.validated_data["auto_judge"]
        judge = None
        if wanted is not None:
            judge = Judge.objects.filter(pk=wanted).select_related("llm_provider").first()
            if judge is None:
                raise exceptions.ValidationError(
                    {"auto_judge": "Choose an LLM judge of this collection."}
                )
        services.configuration_auto_judge(
            configuration=configuration, judge=judge, user=request.user
        )
        return Response(ConfigurationSerializer(configuration).data)


@extend_schema_view(
    post=extend_schema(
        summary="Change a search configuration: add a version",
        description="Every change is a new version; earlier versions and their snapshots stay.",
        parameters=[SLUG, ID],
        request=ConfigurationVersionBodySerializer,
        responses={201: ConfigurationVersionSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class VersionCreateView(_SearchView):
    """New versions of a configuration."""

    serializer_class = ConfigurationVersionSerializer
    http_method_names: ClassVar[list[str]] = ["post", "options"]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Add a version."""
        configuration = self.configuration(kwargs["pk"])
        body = ConfigurationVersionBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        version = services.configuration_change(
            configuration=configuration, fields=self.fields(body.validated_data), user=request.user
        )
        return Response(ConfigurationVersionSerializer(version).data, status=201)


@extend_schema_view(
    post=extend_schema(
        summary="Try a search configuration on up to three queries",
        description="Sends the queries now and stores nothing: the request sent (credential "
        "masked), the raw answer, the mapped ranking and every mapping error by its path.",
        parameters=[SLUG, ID],
        request=TryBodySerializer,
        responses={200: TrySerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
)
class TryView(_SearchView):
    """*Try it*."""

    serializer_class = TrySerializer
    http_method_names: ClassVar[list[str]] = ["post", "options"]

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Try the configuration's current version."""
        configuration = self.configuration(kwargs["pk"])
        body = TryBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        queries = self.collection.queries.order_by("external_id")
        wanted = body.validated_data.get("query_ids")
        if wanted:
            queries = queries.filter(external_id__in=wanted)
            if queries.count() != len(set(wanted)):
                raise exceptions.ValidationError({"query_ids": "Not every id is a query here."})
        results = services.try_configuration(
            version=configuration.current,
            queries=list(queries[: services.TRY_QUERIES]),
            user=request.user,
        )
        return Response(results)


@extend_schema_view(
    get=extend_schema(
        summary="List the collection's search snapshots",
        operation_id="search_snapshots_list",
        parameters=[SLUG],
        responses={200: SnapshotSerializer(many=True), **error_responses(401, 403, 404)},
    ),
    post=extend_schema(
        summary="Run a search configuration: start a snapshot",
        description="With configuration: sends every query (or the query set given) in "
        "the background. With retry_of: a new snapshot of the same version sends that "
        "snapshot's failed or unsent queries again (or the ones chosen) and copies the "
        "answered ones. With remap_of: a new snapshot maps that snapshot's kept answers with "
        "the configuration's current version, at once (201), or in the background for more "
        "than 500 queries (202, queued). Each becomes a run of the "
        "configuration's team; a snapshot's run is never rewritten.",
        parameters=[SLUG],
        request=SnapshotBodySerializer,
        responses={
            201: SnapshotSerializer,
            202: SnapshotSerializer,
            **error_responses(400, 401, 403, 404),
        },
    ),
)
class SnapshotListView(_SearchView):
    """Snapshots of the collection."""

    serializer_class = SnapshotSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """List them, newest first."""
        found = list(selectors.snapshots_of(collection=self.collection, teams=self.teams)[:200])
        scores = selectors.snapshot_scores(collection=self.collection, snapshots=found)
        return Response(SnapshotSerializer(found, many=True, context={"scores": scores}).data)

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Start one."""
        body = SnapshotBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        tag = data.get("tag", "")
        if "retry_of" in data:
            with _source_named("retry_of"):
                snapshot = services.snapshot_retry(
                    snapshot=self.snapshot(data["retry_of"]),
                    user=request.user,
                    query_ids=data.get("query_ids"),
                    tag=tag,
                )
        elif "remap_of" in data:
            with _source_named("remap_of"):
                snapshot = services.snapshot_remap(
                    snapshot=self.snapshot(data["remap_of"]), user=request.user, tag=tag
                )
            queued = snapshot.status == SearchSnapshot.Status.QUEUED  # mapped in the background
            return Response(SnapshotSerializer(snapshot).data, status=202 if queued else 201)
        else:
            snapshot = services.snapshot_start(
                configuration=self.configuration(data["configuration"]),
                user=request.user,
                tag=tag,
                query_ids=data.get("query_ids"),
            )
        return Response(SnapshotSerializer(snapshot).data, status=202)

    def snapshot(self, pk: int) -> SearchSnapshot:
        """Return the collection's snapshot ``pk`` (a 400 naming the field when there is none)."""
        found = (
            selectors.snapshots_of(collection=self.collection, teams=self.teams)
            .filter(pk=pk)
            .first()
        )
        if found is None:
            raise DjangoValidationError({"source": "No such snapshot in this collection."})
        return found


@contextlib.contextmanager
def _source_named(field: str) -> Iterator[None]:
    """Name the body's field in the services' errors about the source snapshot."""
    try:
        yield
    except DjangoValidationError as exc:
        if hasattr(exc, "error_dict") and "source" in exc.error_dict:
            errors = dict(exc.error_dict)
            errors[field] = errors.pop("source")
            raise DjangoValidationError(errors) from None
        raise


@extend_schema_view(
    get=extend_schema(
        summary="Show a snapshot's progress and its failed queries",
        parameters=[SLUG, ID],
        responses={200: SnapshotDetailSerializer, **error_responses(401, 403, 404)},
    )
)
class SnapshotDetailView(_SearchView):
    """One snapshot."""

    serializer_class = SnapshotDetailSerializer
    http_method_names: ClassVar[list[str]] = ["get", "head", "options"]

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Show it."""
        snapshot = (
            selectors.snapshots_of(collection=self.collection, teams=self.teams)
            .filter(pk=kwargs["pk"])
            .first()
        )
        if snapshot is None:
            raise exceptions.NotFound("No such snapshot in this collection.")
        snapshot.failed_queries = list(selectors.failed_queries(snapshot=snapshot)[:1000])
        scores = selectors.snapshot_scores(collection=self.collection, snapshots=[snapshot])
        return Response(SnapshotDetailSerializer(snapshot, context={"scores": scores}).data)


class PlacedSerializer(serializers.Serializer):
    """A document of a diff: its ranks before and after (null: not in that top k), grade."""

    docno = serializers.CharField()
    before = serializers.IntegerField(allow_null=True)
    after = serializers.IntegerField(allow_null=True)
    grade = serializers.FloatField(
        allow_null=True, help_text="Live grade (a mean under a mean policy); null: unjudged."
    )


class QueryDiffSerializer(serializers.Serializer):
    """One query of a diff."""

    query_id = serializers.CharField()
    before = serializers.FloatField(allow_null=True, help_text="The measure for the baseline.")
    after = serializers.FloatField(allow_null=True)
    delta = serializers.FloatField(allow_null=True, help_text="after − before.")
    overlap = serializers.FloatField(help_text="Share of documents both top-k lists hold.")
    entered = PlacedSerializer(many=True)
    left = PlacedSerializer(many=True)
    moved = PlacedSerializer(many=True)


class OverallDiffSerializer(serializers.Serializer):
    """The paired comparison of the two snapshots' runs (as on Compare)."""

    queries = serializers.IntegerField()
    mean_diff = serializers.FloatField()
    ci_low = serializers.FloatField()
    ci_high = serializers.FloatField()
    confidence = serializers.FloatField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    p_values = serializers.DictField(child=serializers.FloatField(allow_null=True))


class SnapshotDiffSerializer(serializers.Serializer):
    """Two snapshots compared query by query and overall."""

    a = serializers.IntegerField(help_text="The baseline snapshot.")
    b = serializers.IntegerField()
    measure = serializers.CharField(help_text="Canonical measure name.")
    k = serializers.IntegerField()
    overall = OverallDiffSerializer(allow_null=True)
    problem = serializers.CharField(help_text="Why there is no overall comparison, or empty.")
    queries = QueryDiffSerializer(many=True)


def _placed(rows: list[tuple[Any, float | None]]) -> list[dict[str, Any]]:
    return [
        {"docno": p.docno, "before": p.before, "after": p.after, "grade": grade}
        for p, grade in rows
    ]


@extend_schema_view(
    get=extend_schema(
        summary="Compare two snapshots query by query",
        description="Documents that entered, left or moved in each query's top k (with their "
        "live grades), the measure before and after per query, and the paired comparison of "
        "the two runs (mean difference, bootstrap interval, t, randomization and Wilcoxon "
        "p-values) — the diff page's numbers.",
        parameters=[
            SLUG,
            OpenApiParameter("a", OpenApiTypes.INT, description="Baseline snapshot id."),
            OpenApiParameter("b", OpenApiTypes.INT, description="Compared snapshot id."),
            OpenApiParameter(
                "measure", OpenApiTypes.STR, description="A collection measure (default: first)."
            ),
            OpenApiParameter("k", OpenApiTypes.INT, description="Rankings' depth, 1–100 (10)."),
        ],
        responses={200: SnapshotDiffSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class SnapshotDiffView(_SearchView):
    """Two snapshots compared."""

    serializer_class = SnapshotDiffSerializer
    http_method_names: ClassVar[list[str]] = ["get", "head", "options"]

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the diff."""
        params = request.query_params
        errors: dict[str, list[str]] = {}
        chosen: dict[str, SearchSnapshot] = {}
        for name in ("a", "b"):
            value = params.get(name, "")
            found = None
            if value.isascii() and value.isdigit() and len(value) < 12:
                found = (
                    selectors.snapshots_with_runs(collection=self.collection, teams=self.teams)
                    .filter(pk=int(value))
                    .first()
                )
            if found is None:
                errors[name] = ["Give the id of a snapshot of this collection that has a run."]
            else:
                chosen[name] = found
        k = params.get("k", str(selectors.DIFF_K))
        if not (k.isascii() and k.isdigit() and 1 <= int(k) <= 100):
            errors["k"] = ["Give a whole number from 1 to 100."]
        labels, _unreadable = measure_labels_of(self.collection)
        try:
            label = _pick(labels, params.get("measure"))
        except exceptions.ValidationError as exc:
            errors.update(exc.detail)
        if not errors and chosen["a"].pk == chosen["b"].pk:
            errors["b"] = ["Choose a snapshot other than the baseline."]
        if errors:
            raise exceptions.ValidationError(errors)
        result = selectors.snapshot_diff(
            a=chosen["a"], b=chosen["b"], measure=label.canonical, k=int(k)
        )
        overall = None
        if result.comparison is not None:
            row = result.comparison.rows[0]
            overall = {
                "queries": len(result.comparison.queries),
                "mean_diff": row.result.mean_diff,
                "ci_low": row.result.ci_low,
                "ci_high": row.result.ci_high,
                "confidence": result.comparison.confidence,
                "wins": row.result.wins,
                "losses": row.result.losses,
                "ties": row.result.ties,
                "p_values": row.raw,
            }
        body = {
            "a": result.a.pk,
            "b": result.b.pk,
            "measure": result.measure,
            "k": result.k,
            "overall": overall,
            "problem": result.problem,
            "queries": [
                {
                    "query_id": q.query.external_id,
                    "before": q.before,
                    "after": q.after,
                    "delta": q.delta,
                    "overlap": q.ranking.overlap,
                    "entered": _placed(q.entered),
                    "left": _placed(q.left),
                    "moved": _placed(q.moved),
                }
                for q in result.queries
            ],
        }
        return Response(body)
