"""REST of scheduled evaluations: a configuration's schedule, and the checks and alerts.

Coordinators only, as the rest of live search. ``PUT …/search-configurations/<id>/schedule/``
sets the whole schedule (created if there is none); ``DELETE`` removes it;
``GET …/search-checks/`` lists every scheduled snapshot's verdict, newest first
(``?fired=true``: the alerts).
"""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG
from metrics.schedules import noise, selectors, services
from metrics.schedules.models import SearchSchedule
from metrics.search.api import ID, _SearchView
from metrics.search.models import SearchSnapshot


class ScheduleBodySerializer(serializers.Serializer):
    """What a coordinator sets."""

    frequency = serializers.ChoiceField(
        choices=SearchSchedule.Frequency.choices, help_text="hourly, daily, weekly or cron."
    )
    cron = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="Five fields, UTC (frequency cron only), e.g. 30 2 * * 1-5.",
    )
    measure = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="Canonical measure watched (empty: the collection's first).",
    )
    direction = serializers.ChoiceField(
        choices=noise.DIRECTIONS, default="drop", help_text="Which changes alert."
    )
    alpha = serializers.FloatField(
        min_value=0.001, max_value=0.2, default=noise.ALPHA, help_text="The paired test's level."
    )
    baseline = serializers.IntegerField(
        required=False, allow_null=True, default=None, help_text="Pinned snapshot id (null: none)."
    )
    email = serializers.BooleanField(default=True, help_text="Mail alerts to the coordinators.")
    webhook = serializers.CharField(
        max_length=100,
        required=False,
        allow_blank=True,
        default="",
        help_text="Name of a webhook the operator opened to this collection (empty: none).",
    )
    active = serializers.BooleanField(default=True, help_text="False: paused.")


class ScheduleSerializer(serializers.Serializer):
    """A configuration's schedule and its state."""

    configuration = serializers.IntegerField(source="configuration_id", read_only=True)
    frequency = serializers.CharField(read_only=True)
    cron = serializers.CharField(read_only=True)
    measure = serializers.CharField(read_only=True)
    direction = serializers.CharField(read_only=True)
    alpha = serializers.FloatField(read_only=True)
    baseline = serializers.IntegerField(source="baseline_id", read_only=True, allow_null=True)
    email = serializers.BooleanField(read_only=True)
    webhook = serializers.CharField(source="webhook.name", read_only=True, allow_null=True)
    active = serializers.BooleanField(read_only=True)
    paused_reason = serializers.CharField(read_only=True)
    failures = serializers.IntegerField(read_only=True, help_text="Failed runs in a row.")
    next_run_at = serializers.DateTimeField(read_only=True)
    last_run_at = serializers.DateTimeField(read_only=True, allow_null=True)


class CheckSerializer(serializers.Serializer):
    """One scheduled snapshot's verdict against its baseline (at the time of the check)."""

    id = serializers.IntegerField(read_only=True)
    configuration = serializers.IntegerField(source="schedule.configuration_id", read_only=True)
    snapshot = serializers.IntegerField(source="snapshot_id", read_only=True)
    baseline = serializers.IntegerField(source="baseline_id", read_only=True, allow_null=True)
    measure = serializers.CharField(read_only=True)
    fired = serializers.BooleanField(read_only=True, help_text="An alert.")
    queries = serializers.IntegerField(read_only=True)
    mean_before = serializers.FloatField(read_only=True, allow_null=True)
    mean_after = serializers.FloatField(read_only=True, allow_null=True)
    mean_change = serializers.FloatField(read_only=True, allow_null=True)
    low = serializers.FloatField(read_only=True, allow_null=True)
    high = serializers.FloatField(read_only=True, allow_null=True)
    p_value = serializers.FloatField(read_only=True, allow_null=True)
    alpha = serializers.FloatField(read_only=True)
    reason = serializers.CharField(read_only=True)
    checked_at = serializers.DateTimeField(read_only=True)
    email = serializers.CharField(read_only=True, help_text="none, pending, sent or failed.")
    webhook = serializers.CharField(read_only=True, help_text="none, pending, sent or failed.")
    webhook_error = serializers.CharField(read_only=True)


@extend_schema_view(
    get=extend_schema(
        summary="Show a configuration's schedule",
        parameters=[SLUG, ID],
        responses={200: ScheduleSerializer, **error_responses(401, 403, 404)},
    ),
    put=extend_schema(
        summary="Set a configuration's schedule (created if there is none)",
        description="Each run is a snapshot; an alert fires when the change against the "
        "previous scheduled snapshot (or the pinned baseline) is beyond noise: the paired "
        "t-test at `alpha` and the bootstrap interval of the change excludes 0.",
        parameters=[SLUG, ID],
        request=ScheduleBodySerializer,
        responses={200: ScheduleSerializer, **error_responses(400, 401, 403, 404)},
    ),
    delete=extend_schema(
        summary="Remove a configuration's schedule",
        parameters=[SLUG, ID],
        responses={204: None, **error_responses(401, 403, 404)},
    ),
)
class ScheduleView(_SearchView):
    """A configuration's schedule."""

    serializer_class = ScheduleSerializer
    team_methods: ClassVar[frozenset[str]] = frozenset()  # schedules and alerts: coordinators
    role_rules: ClassVar[dict[str, frozenset[str]]] = {
        "GET": COORDINATORS,
        "PUT": COORDINATORS,
        "DELETE": COORDINATORS,
    }
    http_method_names: ClassVar[list[str]] = ["get", "put", "delete", "head", "options"]

    def schedule(self, pk: Any) -> SearchSchedule:
        found = SearchSchedule.objects.filter(configuration=self.configuration(pk)).first()
        if found is None:
            raise exceptions.NotFound("This configuration has no schedule.")
        return found

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Show it."""
        return Response(ScheduleSerializer(self.schedule(kwargs["pk"])).data)

    def put(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Set it."""
        configuration = self.configuration(kwargs["pk"])
        body = ScheduleBodySerializer(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        baseline = None
        if data["baseline"] is not None:
            baseline = (
                SearchSnapshot.objects.filter(collection=self.collection, pk=data["baseline"])
                .select_related("version")
                .first()
            )
            if baseline is None:
                raise exceptions.ValidationError({"baseline": "No such snapshot here."})
        webhook = None
        if data["webhook"]:
            webhook = (
                services.webhooks_open_to(collection_id=self.collection.pk, user=request.user)
                .filter(name=data["webhook"])
                .first()
            )
            if webhook is None:
                raise exceptions.ValidationError(
                    {"webhook": "No such webhook open to this collection."}
                )
        schedule = services.schedule_set(
            configuration=configuration,
            fields=services.ScheduleFields(
                frequency=data["frequency"],
                cron=data["cron"],
                measure=data["measure"],
                direction=data["direction"],
                alpha=data["alpha"],
                baseline=baseline,
                email=data["email"],
                webhook=webhook,
                active=data["active"],
            ),
            user=request.user,
        )
        return Response(ScheduleSerializer(schedule).data)

    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Remove it."""
        services.schedule_delete(schedule=self.schedule(kwargs["pk"]))
        return Response(status=204)


@extend_schema_view(
    get=extend_schema(
        summary="List the scheduled snapshots' checks (alerts: fired=true)",
        operation_id="search_checks_list",
        parameters=[
            SLUG,
            OpenApiParameter(
                "fired", OpenApiTypes.BOOL, description="true: alerts only; false: the others."
            ),
        ],
        responses={200: CheckSerializer(many=True), **error_responses(400, 401, 403, 404)},
    )
)
class CheckListView(_SearchView):
    """Checks of the collection's schedules, newest first (the latest 500)."""

    serializer_class = CheckSerializer
    team_methods: ClassVar[frozenset[str]] = frozenset()
    http_method_names: ClassVar[list[str]] = ["get", "head", "options"]

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """List them."""
        fired = request.query_params.get("fired")
        if fired not in (None, "true", "false"):
            raise exceptions.ValidationError({"fired": ["Give true or false."]})
        found = selectors.checks_of(
            collection=self.collection, fired=None if fired is None else fired == "true"
        )
        return Response(CheckSerializer(found[:500], many=True).data)
