"""REST for adaptive pooling: the pooling policy (versioned), its plan, the stop rule."""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import FiniteFloatField, error_responses
from config.pagination import page_parameters
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG, CollectionScopedView, CollectionSettingView
from metrics.pool import selectors, services, stopping
from metrics.pool.models import LIMITS, RECOMMENDATION, STRATEGY_CHOICES, PoolingPolicy
from metrics.pool.strategies import RECOMMENDED


class StrategySerializer(serializers.Serializer):
    """A pooling strategy one may choose."""

    name = serializers.CharField()
    description = serializers.CharField()
    recommended = serializers.BooleanField(
        help_text="The strategy the settings page recommends when unsure."
    )


class PoolingVersionSerializer(serializers.ModelSerializer):
    """One version of the pooling policy."""

    actor = serializers.CharField(source="actor.get_username", allow_null=True, default=None)

    class Meta:
        model = PoolingPolicy
        fields = (
            "version",
            "strategy",
            "wave_size",
            "horizon",
            "rel_level",
            "cutoff",
            "seed",
            "audit_percent",
            "actor",
            "at",
        )


class PoolingSettingsSerializer(serializers.Serializer):
    """The pooling policy in force, its plan's state, the strategies and the history."""

    strategy = serializers.ChoiceField(choices=[name for name, _ in STRATEGY_CHOICES])
    wave_size = serializers.IntegerField(
        min_value=LIMITS["wave_size"][0],
        max_value=LIMITS["wave_size"][1],
        help_text="Planned pairs per wave.",
    )
    horizon = serializers.IntegerField(
        min_value=LIMITS["horizon"][0],
        max_value=LIMITS["horizon"][1],
        help_text="Unjudged pairs the plan orders ahead.",
    )
    rel_level = serializers.IntegerField(
        min_value=LIMITS["rel_level"][0],
        max_value=LIMITS["rel_level"][1],
        help_text="Lowest grade the strategy counts as relevant.",
    )
    cutoff = serializers.IntegerField(
        min_value=LIMITS["cutoff"][0],
        max_value=LIMITS["cutoff"][1],
        help_text="Steady, hybrid and swap: rank cut-off they weigh.",
    )
    seed = serializers.IntegerField(
        min_value=LIMITS["seed"][0],
        max_value=LIMITS["seed"][1],
        help_text="Seed of Thompson sampling and of llm-check's random audit.",
    )
    audit_percent = serializers.IntegerField(
        min_value=LIMITS["audit_percent"][0],
        max_value=LIMITS["audit_percent"][1],
        help_text="llm-check: percent of human checks on a random sample of the pool "
        "(the unbiased audit of the LLM).",
    )
    version = serializers.IntegerField(read_only=True, help_text="0: never set (depth-k).")
    planned_pairs = serializers.IntegerField(read_only=True)
    planned_version = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Judgment-list version of the plan."
    )
    planned_at = serializers.DateTimeField(read_only=True, allow_null=True)
    strategies = StrategySerializer(many=True, read_only=True)
    recommendation = serializers.CharField(
        read_only=True, help_text="Why the recommended strategy is recommended (figures)."
    )
    history = PoolingVersionSerializer(many=True, read_only=True)


class PlannedPairSerializer(serializers.Serializer):
    """A planned pair, in the order judges get it."""

    query = serializers.CharField(source="query.external_id")
    document = serializers.CharField(source="document.external_id")
    wave = serializers.IntegerField(source="priority")
    graded_count = serializers.IntegerField()
    is_open = serializers.BooleanField()


def _settings(collection: Any) -> dict[str, Any]:
    """Return the settings body of ``collection``."""
    policy = selectors.pooling_policy(collection=collection)
    return {
        **selectors.pooling_values(collection=collection),
        "version": policy.version if policy else 0,
        "planned_pairs": policy.planned_pairs if policy else 0,
        "planned_version": policy.planned_version if policy else None,
        "planned_at": policy.planned_at if policy else None,
        "strategies": [
            {"name": n, "description": d, "recommended": n == RECOMMENDED}
            for n, d in STRATEGY_CHOICES
        ],
        "recommendation": RECOMMENDATION,
        "history": selectors.pooling_history(collection=collection),
    }


@extend_schema_view(
    get=extend_schema(
        summary="Show the pooling policy, its plan's state, the strategies and the history",
        parameters=[SLUG],
        responses={200: PoolingSettingsSerializer, **error_responses(401, 403, 404)},
    ),
    patch=extend_schema(
        summary="Change the pooling policy",
        description="Coordinators. A change is a new version (the history keeps every "
        "one) and replans the judges' queue at once; the plan then follows every grade.",
        parameters=[SLUG],
        request=PoolingSettingsSerializer(partial=True),
        responses={200: PoolingSettingsSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class PoolingSettingsView(CollectionSettingView):
    """A collection's pooling policy (PATCH: a new version from the current one)."""

    serializer_class = PoolingSettingsSerializer
    write_method = "patch"
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "PATCH": COORDINATORS}

    def current(self) -> dict[str, Any]:
        """Return the policy in force, its plan's state, the strategies and the history."""
        return _settings(self.collection)

    def change(self, data: dict[str, Any]) -> None:
        """Set a new version from the current one and the fields given."""
        values = selectors.pooling_values(collection=self.collection)
        values.update(data)
        services.pooling_policy_set(collection=self.collection, actor=self.request.user, **values)


@extend_schema_view(
    get=extend_schema(
        summary="List the planned pairs in the order judges get them",
        description="Coordinators. Wave by wave (lowest first); within a wave each judge "
        "gets the pairs in their own shuffle. Empty under depth-k.",
        parameters=[SLUG, *page_parameters()],
        responses={200: PlannedPairSerializer(many=True), **error_responses(401, 403, 404)},
    ),
)
class PoolPlanView(CollectionScopedView):
    """The pooling plan of a collection."""

    serializer_class = PlannedPairSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get_queryset(self) -> Any:
        """Return the planned entries, in order."""
        return selectors.pool_plan(collection=self.collection)

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return a page of the plan."""
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(PlannedPairSerializer(page, many=True).data)


class StabilityQuerySerializer(serializers.Serializer):
    """The stop rule's parameters (query string)."""

    step = serializers.IntegerField(
        min_value=1,
        max_value=100_000,
        default=stopping.DEFAULT_STEP,
        help_text="N: judgments per step, back and ahead.",
    )
    target = serializers.FloatField(
        min_value=0.0,
        max_value=1.0,
        default=stopping.DEFAULT_TARGET,
        help_text="τ at which more judging stops paying.",
    )


class StabilityPointSerializer(serializers.Serializer):
    """τ-b between the ranking at ``judged`` judgments and at ``then`` (a step earlier)."""

    judged = serializers.IntegerField()
    then = serializers.IntegerField()
    tau = FiniteFloatField()
    runs = serializers.IntegerField(help_text="Runs scored at both counts.")


class ExpectedTauSerializer(serializers.Serializer):
    """The τ-b expected between the ranking now and after the next step's judgments."""

    mean = FiniteFloatField()
    low = FiniteFloatField(help_text="10th percentile of the draws.")
    pairs = serializers.IntegerField(help_text="Pairs judged in each draw.")
    draws = serializers.IntegerField()


class ExpectedFlipsSerializer(serializers.Serializer):
    """Significance decisions expected to change over the next step's judgments."""

    change = FiniteFloatField(
        help_text="Share of the draws in which at least one pair of runs changes decision "
        "(the chance that the set of significant pairs changes)."
    )
    flips = FiniteFloatField(help_text="Mean number of pairs of runs that change decision.")
    pairs = serializers.IntegerField(help_text="Pairs judged in each draw.")
    draws = serializers.IntegerField()


class SignificanceStabilitySerializer(serializers.Serializer):
    """Whether the leaderboard's significance decisions held and are expected to hold."""

    pairs = serializers.IntegerField(
        help_text="Pairs of runs that differ significantly now (paired t-test over the "
        "queries every run is scored on, Holm-adjusted over every pair, p ≤ 0.05)."
    )
    tested = serializers.IntegerField(help_text="Pairs of runs tested.")
    queries = serializers.IntegerField(help_text="Queries the test used.")
    then = serializers.IntegerField(
        allow_null=True, help_text="Judgments at the snapshot compared with (a step back)."
    )
    changed = serializers.IntegerField(
        allow_null=True,
        help_text="Pairs of runs (in both) whose decision changed since `then`; null when "
        "no decisions were recorded a step back.",
    )
    compared = serializers.IntegerField(help_text="Pairs of runs compared with `then`.")
    ahead = ExpectedFlipsSerializer(allow_null=True)
    summary = serializers.CharField(help_text="The figures in one line.")


class StabilitySerializer(serializers.Serializer):
    """How stable the system ranking is, and whether more judging pays."""

    measure = serializers.CharField(allow_null=True, help_text="The leaderboard's main measure.")
    judged = serializers.IntegerField(help_text="Final judgments so far (all judges).")
    step = serializers.IntegerField()
    target = serializers.FloatField()
    looking_back = StabilityPointSerializer(allow_null=True)
    history = StabilityPointSerializer(many=True, help_text="Newest first, a step apart.")
    ahead = ExpectedTauSerializer(allow_null=True)
    open_pairs = serializers.IntegerField(help_text="Pool pairs still needing grades.")
    significance = SignificanceStabilitySerializer(
        allow_null=True,
        help_text="The set of significantly different pairs of runs: now, its change over "
        "the last step, and its expected change over the next.",
    )
    state = serializers.ChoiceField(choices=["done", "unknown", "moving", "stops-paying"])
    sentence = serializers.CharField()


@extend_schema_view(
    get=extend_schema(
        summary="Show how stable the system ranking is and whether more judging pays",
        description="Coordinators. τ-b between the runs' ranking now and N judgments ago "
        "(snapshots every 10 judgments), a step at a time back, and the τ-b expected "
        "after the next N judgments of the queue (simulated with grades drawn from the "
        "grades judged at the same ranks). `significance` does the same for the set of "
        "pairs of runs the leaderboard's paired t-test (Holm) tells apart: how many "
        "decisions changed since the snapshot N judgments ago, and the chance that one "
        "changes over the next N (same draws). `state` is `stops-paying` only when both "
        "τ reach `target`, no decision changed, and the chance of a change is at most 5%.",
        parameters=[
            SLUG,
            OpenApiParameter("step", int, description="N (1–100000, default 100)."),
            OpenApiParameter("target", float, description="τ target (0–1, default 0.95)."),
        ],
        responses={200: StabilitySerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class StabilityView(CollectionScopedView):
    """The stop rule of a collection."""

    serializer_class = StabilitySerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the stop rule's figures."""
        params = StabilityQuerySerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        stability = selectors.ranking_stability(collection=self.collection, **params.validated_data)
        return Response(StabilitySerializer(stability).data)
