"""REST endpoints of part 9: disagreements, adjudications, settings and judge actions.

Also: one pair's provenance, per-judge agreement, bulk removal of a judge's labels, quotas.

Coordinators see everything; adjudicators see disagreements and every grade of a pair
(judge names hidden, "Judge 1", "Judge 2"…) and adjudicate; judges and teams get 403 (the
collection's existence still answers 404 to non-members). Thin views: validate, call
one selector or service, serialise.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import exceptions, serializers, status
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.pagination import MAX_PAGE_SIZE, page_bounds, page_parameters
from judging import aggregation
from judging.adjudication import selectors as selectors_disagreement
from judging.adjudication import services
from judging.adjudication.selectors import PairView
from judging.agreement import selectors as selectors_agreement_judges
from judging.agreement.api import JudgeRefSerializer
from judging.api.permissions import COORDINATORS
from judging.api.serializers import EvidenceSpanSerializer
from judging.api.views import SLUG, CollectionScopedView, CollectionSettingView
from judging.models import Adjudication, Document, Judge, Membership, PolicyChange, Query

Role = Membership.Role
ADJUDICATING = frozenset({Role.COORDINATOR, Role.ADJUDICATOR})


# --- serializers ------------------------------------------------------------------------------


class PairLabelSerializer(serializers.Serializer):
    """One judge's label of the pair."""

    judge = serializers.CharField(
        source="judge_name", help_text="Judge name (coordinators) or Judge 1, Judge 2…"
    )
    judge_id = serializers.IntegerField(allow_null=True, help_text="Coordinators only.")
    kind = serializers.CharField(source="judge_kind")
    status = serializers.CharField()
    grade = serializers.IntegerField(allow_null=True)
    note = serializers.CharField(help_text="The judge's note; an LLM judge's explanation.")
    evidence = EvidenceSpanSerializer(
        many=True, help_text="The label's evidence spans (`[]` when none)."
    )
    guidelines_version = serializers.IntegerField(
        allow_null=True,
        help_text="The guidelines version the label was last written under (null: before "
        "versions were kept).",
    )
    judge_version = serializers.CharField(
        allow_null=True,
        help_text="Coordinators, LLM labels: the judge configuration version that wrote "
        "the label; null otherwise.",
    )


class LiveGradeProvenanceSerializer(serializers.Serializer):
    """The pair's live grade and where it comes from."""

    grade = serializers.FloatField()
    policy = serializers.CharField(help_text="The aggregation policy that produced it.")
    adjudicated = serializers.BooleanField(help_text="An adjudication in force sets it.")
    judge_ids = serializers.ListField(
        child=serializers.IntegerField(), help_text="Judges whose grades the policy used."
    )
    human_count = serializers.IntegerField()
    llm_count = serializers.IntegerField()
    version = serializers.IntegerField(help_text="List version at which it last changed.")


class AdjudicationSerializer(serializers.ModelSerializer):
    """An adjudication (final grade with a reason)."""

    query = serializers.CharField(source="query.external_id")
    document = serializers.CharField(source="document.external_id")
    adjudicator = serializers.CharField(source="adjudicator.get_username")
    in_force = serializers.SerializerMethodField()

    class Meta:
        model = Adjudication
        fields = (
            "id",
            "query",
            "document",
            "grade",
            "reason",
            "adjudicator",
            "created_at",
            "revoked_at",
            "in_force",
        )

    def get_in_force(self, obj: Adjudication) -> bool:
        """Return whether the adjudication is in force (not revoked)."""
        return obj.revoked_at is None


class PairSerializer(serializers.Serializer):
    """A pair with every label, its live grade, adjudication and impact."""

    query = serializers.CharField(source="query.external_id")
    query_text = serializers.CharField(source="query.text")
    narrative = serializers.CharField(source="query.narrative")
    document = serializers.CharField(source="document.external_id")
    document_title = serializers.CharField(source="document.title")
    labels = PairLabelSerializer(many=True)
    spread = serializers.IntegerField(help_text="Highest minus lowest grade.")
    majority = serializers.IntegerField(
        allow_null=True, help_text="The grade with a strict majority; null if none."
    )
    no_majority = serializers.BooleanField(
        help_text="Three or more grades and none with a strict majority (two grades that "
        "differ are a spread, not a split)."
    )
    runs_in_top = serializers.IntegerField(
        help_text="Runs that rank the document in their top 10 for the query."
    )
    live_grade = LiveGradeProvenanceSerializer(allow_null=True)
    adjudication = AdjudicationSerializer(allow_null=True)


class DisagreementListSerializer(serializers.Serializer):
    """The disagreement queue."""

    count = serializers.IntegerField(help_text="Disagreements in total.")
    results = PairSerializer(many=True)


class AdjudicationCreateSerializer(serializers.Serializer):
    """A final grade for a pair named by external ids."""

    query = serializers.CharField(max_length=100)
    document = serializers.CharField(max_length=200)
    grade = serializers.IntegerField(min_value=0, max_value=4)
    reason = serializers.CharField(max_length=5000)


class PairParamsSerializer(serializers.Serializer):
    """A pair named by external ids (query parameters)."""

    query = serializers.CharField(max_length=100)
    document = serializers.CharField(max_length=200)


class PolicySerializer(serializers.Serializer):
    """An aggregation policy one may choose."""

    name = serializers.CharField()
    description = serializers.CharField()
    fractional = serializers.BooleanField()


class PolicyChangeSerializer(serializers.ModelSerializer):
    """A recorded change of policy."""

    actor = serializers.CharField(source="actor.get_username", allow_null=True, default=None)

    class Meta:
        model = PolicyChange
        fields = ("previous", "policy", "actor", "version", "at")


class AggregationSettingsSerializer(serializers.Serializer):
    """How a collection aggregates grades and assigns pairs."""

    aggregation_policy = serializers.ChoiceField(choices=sorted(aggregation.POLICIES))
    judges_per_pair = serializers.IntegerField(min_value=1, max_value=50)
    max_judges_per_pair = serializers.IntegerField(
        min_value=0, max_value=50, help_text="Disagreements get one more judge up to this; 0 off."
    )
    disagreement_spread = serializers.IntegerField(min_value=1, max_value=4)
    agreement_alert_threshold = serializers.FloatField(min_value=0.0, max_value=1.0)
    llm_hint = serializers.ChoiceField(
        choices=["hidden", "shown", "half"],
        help_text="Show human judges the LLM grade: never (blind), always (assisted), or "
        "on a random half of pairs per judge (to measure anchoring).",
    )
    evidence = serializers.ChoiceField(
        choices=["off", "optional", "required"],
        help_text="Evidence spans: off, optional, or required for human judges' grades from "
        "`evidence_from_grade` on (given one at a time, on the card or over REST).",
    )
    evidence_from_grade = serializers.IntegerField(
        min_value=0,
        max_value=4,
        help_text="With evidence required: the lowest grade that needs at least one span.",
    )
    judgments_version = serializers.IntegerField(read_only=True)
    policies = PolicySerializer(many=True, read_only=True)
    history = PolicyChangeSerializer(many=True, read_only=True)


class JudgeFiguresSerializer(serializers.Serializer):
    """One judge's figures; null where there is nothing to compare."""

    judge = JudgeRefSerializer()
    labels = serializers.IntegerField()
    graded = serializers.IntegerField()
    cannot_judge_share = serializers.FloatField(allow_null=True)
    median_seconds = serializers.FloatField(allow_null=True)
    compared = serializers.IntegerField(help_text="Pairs shared with another judge.")
    agreement = serializers.FloatField(allow_null=True)
    bias = serializers.FloatField(allow_null=True)
    adjudicated = serializers.IntegerField()
    agreement_adjudicated = serializers.FloatField(allow_null=True)
    bias_adjudicated = serializers.FloatField(allow_null=True)
    reliability = serializers.FloatField(
        allow_null=True, help_text="Accuracy estimated by Dawid–Skene."
    )
    alert = serializers.BooleanField(help_text="Agreement below the collection's threshold.")


class QueryAgreementSerializer(serializers.Serializer):
    """Agreement over one query's pairs."""

    query = serializers.CharField(source="external_id")
    text = serializers.CharField()
    pairs = serializers.IntegerField()
    agreement = serializers.FloatField(allow_null=True, help_text="Share of equal grades.")
    kappa = serializers.FloatField(
        allow_null=True,
        help_text="Cohen's κ, quadratic weights (mean over every two judges sharing 2+ pairs).",
    )
    alpha = serializers.FloatField(allow_null=True, help_text="Krippendorff's α, ordinal.")
    ac2 = serializers.FloatField(
        allow_null=True, help_text="Gwet's AC2, quadratic weights (robust when most grades are 0)."
    )


class ActionableSerializer(serializers.Serializer):
    """Per-judge figures, per-query agreement worst first, and alerts."""

    threshold = serializers.FloatField()
    judges = JudgeFiguresSerializer(many=True)
    queries = QueryAgreementSerializer(many=True, help_text="Worst agreement first.")
    alerts = JudgeFiguresSerializer(many=True)


class QuotaSerializer(serializers.Serializer):
    """A judge's quota (null: no limit)."""

    quota = serializers.IntegerField(min_value=0, max_value=services.MAX_QUOTA, allow_null=True)


class RemovedSerializer(serializers.Serializer):
    """How many labels were removed."""

    removed = serializers.IntegerField()


# --- helpers -----------------------------------------------------------------------------------


def _pair_json(view: PairView, *, show_names: bool) -> dict[str, Any]:
    """Serialise one pair; hide judge names and ids from non-coordinators."""
    labels = [
        {
            "judge_name": label.judge_name if show_names else f"Judge {i}",
            "judge_id": label.judge_id if show_names else None,
            "judge_kind": label.judge_kind,
            "status": label.status,
            "grade": label.grade,
            "note": label.note,
            "evidence": label.evidence or [],
            "guidelines_version": label.guidelines_version,
            "judge_version": (label.judge_version or None) if show_names else None,
        }
        for i, label in enumerate(view.labels, start=1)
    ]
    data = PairSerializer(view).data
    data["labels"] = PairLabelSerializer(labels, many=True).data
    if not show_names and data["live_grade"] is not None:
        data["live_grade"]["judge_ids"] = []
    return data


def _settings(collection: Any) -> dict[str, Any]:
    """Return a collection's aggregation settings with the policy catalogue and history."""
    return {
        "aggregation_policy": collection.aggregation_policy,
        "judges_per_pair": collection.judges_per_pair,
        "max_judges_per_pair": collection.max_judges_per_pair,
        "disagreement_spread": collection.disagreement_spread,
        "agreement_alert_threshold": collection.agreement_alert_threshold,
        "llm_hint": collection.llm_hint,
        "evidence": collection.evidence,
        "evidence_from_grade": collection.evidence_from_grade,
        "judgments_version": collection.judgments_version,
        "policies": list(aggregation.POLICIES.values()),
        "history": PolicyChange.objects.filter(collection=collection).select_related("actor"),
    }


QUERY = OpenApiParameter("query", OpenApiTypes.STR, description="Query id (qid).")
DOCUMENT = OpenApiParameter("document", OpenApiTypes.STR, description="Document id (docno).")
JUDGE_ID = OpenApiParameter("judge_id", OpenApiTypes.INT, OpenApiParameter.PATH)


# --- views -------------------------------------------------------------------------------------


@extend_schema_view(
    get=extend_schema(
        summary="List the pairs judges disagree on",
        description="Coordinators and adjudicators. Pairs with two or more grades that "
        "spread by at least `min_spread` (default: the collection's disagreement spread), "
        "narrowed by `cut` (grades on both sides of it) and `no_majority` (three or more "
        "grades, none with a strict majority); sorted by spread then by how many runs rank "
        "the document in their top 10 (`sort=impact`: the other way round). Adjudicated "
        "pairs only with `include_adjudicated=true`. Judge names for coordinators only.",
        parameters=[
            SLUG,
            OpenApiParameter("min_spread", OpenApiTypes.INT, description="1–4."),
            OpenApiParameter(
                "cut",
                OpenApiTypes.INT,
                description="1–4: only pairs some judges grade below it and others at or above it.",
            ),
            OpenApiParameter("no_majority", OpenApiTypes.BOOL),
            OpenApiParameter("sort", OpenApiTypes.STR, enum=["spread", "impact"]),
            OpenApiParameter("include_adjudicated", OpenApiTypes.BOOL),
            OpenApiParameter(
                "limit", OpenApiTypes.INT, description=f"At most {MAX_PAGE_SIZE}; 100."
            ),
            OpenApiParameter("offset", OpenApiTypes.INT),
        ],
        responses={200: DisagreementListSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class DisagreementListView(CollectionScopedView):
    """The disagreement queue."""

    serializer_class = DisagreementListSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": ADJUDICATING}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the queue, a page of it."""
        fields = {
            "min_spread": serializers.IntegerField(min_value=1, max_value=4, required=False),
            "cut": serializers.IntegerField(min_value=1, max_value=4, required=False),
            "no_majority": serializers.BooleanField(required=False, default=False),
            "sort": serializers.ChoiceField(choices=["spread", "impact"], required=False),
            "include_adjudicated": serializers.BooleanField(required=False, default=False),
        }
        params = type("DisagreementParams", (serializers.Serializer,), fields)(
            data=request.query_params
        )
        params.is_valid(raise_exception=True)
        data = params.validated_data
        limit, offset = page_bounds(request.query_params)
        rows = selectors_disagreement.disagreements(
            collection=self.collection,
            min_spread=data.get("min_spread"),
            cut=data.get("cut"),
            no_majority=data["no_majority"],
            include_adjudicated=data["include_adjudicated"],
            sort=data.get("sort") or "spread",
        )
        page = rows[offset : offset + limit]
        show = self.is_coordinator
        return Response(
            {"count": len(rows), "results": [_pair_json(v, show_names=show) for v in page]}
        )


@extend_schema_view(
    get=extend_schema(
        summary="Show one pair: every label, the live grade and its provenance",
        description="Coordinators and adjudicators. The live grade names its policy, "
        "whether an adjudication sets it and (coordinators) the judges it used.",
        parameters=[SLUG, QUERY, DOCUMENT],
        responses={200: PairSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class PairDetailView(CollectionScopedView):
    """One pair, as an adjudicator sees it."""

    serializer_class = PairSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": ADJUDICATING}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the pair."""
        params = PairParamsSerializer(data=request.query_params)
        params.is_valid(raise_exception=True)
        query, document = _pair(self.collection, params.validated_data)
        view = selectors_disagreement.pair_view(
            collection=self.collection, query=query, document=document
        )
        return Response(_pair_json(view, show_names=self.is_coordinator))


def _pair(collection: Any, data: Any) -> tuple[Query, Document]:
    """Return the query and document named by external ids in ``data`` (400 if unknown)."""
    errors = {}
    query_id, document_id = data.get("query"), data.get("document")
    query = Query.objects.filter(collection=collection, external_id=query_id).first()
    document = Document.objects.filter(collection=collection, external_id=document_id).first()
    if query is None:
        errors["query"] = f"Unknown query id {query_id!r}."
    if document is None:
        errors["document"] = f"Unknown document id {document_id!r}."
    if errors:
        raise exceptions.ValidationError(errors)
    return query, document


@extend_schema_view(
    get=extend_schema(
        summary="List the adjudications in force",
        description="A page of them (`limit`, `offset`), by query and document id.",
        parameters=[SLUG, *page_parameters()],
        responses={200: AdjudicationSerializer(many=True), **error_responses(400, 401, 403, 404)},
    ),
    post=extend_schema(
        summary="Adjudicate a pair",
        description="Coordinators and adjudicators. Sets the pair's final grade with a "
        "reason; it overrides the aggregated grade until revoked, replaces an earlier "
        "adjudication, is kept in the pair's history (channel `adjudication`) and moves "
        "every run's scores before the response.",
        parameters=[SLUG],
        request=AdjudicationCreateSerializer,
        responses={201: AdjudicationSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class AdjudicationListCreateView(CollectionScopedView):
    """Adjudications of a collection (a page of them: one may exist per pooled pair)."""

    serializer_class = AdjudicationSerializer
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": ADJUDICATING, "POST": ADJUDICATING}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return a page of the adjudications in force."""
        rows = (
            Adjudication.objects.filter(collection=self.collection, revoked_at__isnull=True)
            .select_related("query", "document", "adjudicator")
            .order_by("query__external_id", "document__external_id", "pk")
        )
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(AdjudicationSerializer(page, many=True).data)

    def post(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Record an adjudication."""
        body = AdjudicationCreateSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        query, document = _pair(self.collection, body.validated_data)
        adjudication = services.adjudication_record(
            query=query,
            document=document,
            grade=body.validated_data["grade"],
            reason=body.validated_data["reason"],
            actor=request.user,
        )
        return Response(AdjudicationSerializer(adjudication).data, status=status.HTTP_201_CREATED)


@extend_schema_view(
    delete=extend_schema(
        summary="Revoke an adjudication",
        description="The pair's aggregated grade is live again; scores move.",
        parameters=[SLUG],
        responses={204: None, **error_responses(400, 401, 403, 404)},
    )
)
class AdjudicationDetailView(CollectionScopedView):
    """One adjudication."""

    serializer_class = AdjudicationSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"DELETE": ADJUDICATING}

    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Revoke it."""
        adjudication = get_object_or_404(Adjudication, pk=kwargs["pk"], collection=self.collection)
        services.adjudication_revoke(adjudication=adjudication, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    get=extend_schema(
        summary="Show the aggregation settings, the policies and the policy history",
        parameters=[SLUG],
        responses={200: AggregationSettingsSerializer, **error_responses(401, 403, 404)},
    ),
    patch=extend_schema(
        summary="Change the aggregation settings",
        description="Coordinators. A new policy is recorded, bumps the judgment-list "
        "version and rescores every run in the background (each run's `scored_version` "
        "shows the progress).",
        parameters=[SLUG],
        request=AggregationSettingsSerializer(partial=True),
        responses={200: AggregationSettingsSerializer, **error_responses(400, 401, 403, 404)},
    ),
)
class AggregationSettingsView(CollectionSettingView):
    """How a collection aggregates and assigns (PATCH: some settings, all or nothing)."""

    serializer_class = AggregationSettingsSerializer
    write_method = "patch"
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS, "PATCH": COORDINATORS}

    def current(self) -> dict[str, Any]:
        """Return the settings, the policies and the history."""
        return _settings(self.collection)

    def change(self, data: dict[str, Any]) -> None:
        """Record the new policy (and rescore, when it changes what enters the live list)."""
        services.aggregation_settings_update(
            collection=self.collection, actor=self.request.user, **data
        )


@extend_schema_view(
    get=extend_schema(
        summary="Show each judge's agreement and the worst queries",
        description="Coordinators. Per judge: agreement and bias against the other "
        "judges and against adjudicated grades, share of can't-judge, median seconds, "
        "Dawid–Skene reliability, and whether it is below the alert threshold. Per "
        "query: raw agreement, worst first.",
        parameters=[SLUG],
        responses={200: ActionableSerializer, **error_responses(401, 403, 404)},
    )
)
class JudgeAgreementView(CollectionScopedView):
    """Agreement you can act on."""

    serializer_class = ActionableSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the figures."""
        report = selectors_agreement_judges.actionable_agreement(collection=self.collection)
        return Response(ActionableSerializer(report).data)


def _judge_in(collection: Any, judge_id: int) -> Judge:
    """Return the judge if it labelled pairs of, or is a judge in, the collection (else 404)."""
    judge = Judge.objects.filter(pk=judge_id).first()
    if judge is None or not (
        judge.judgments.filter(collection=collection).exists()
        or Membership.objects.filter(collection=collection, user_id=judge.user_id).exists()
    ):
        raise exceptions.NotFound("No such judge in this collection.")
    return judge


@extend_schema_view(
    delete=extend_schema(
        summary="Remove every label of one judge",
        description="Coordinators. History is kept (one delete event per label); the "
        "live list is recomputed and every run rescored in the background.",
        parameters=[SLUG, JUDGE_ID],
        responses={200: RemovedSerializer, **error_responses(401, 403, 404)},
    )
)
class JudgeLabelsView(CollectionScopedView):
    """One judge's labels in a collection."""

    serializer_class = RemovedSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"DELETE": COORDINATORS}

    def delete(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Remove them."""
        judge = _judge_in(self.collection, kwargs["judge_id"])
        removed = services.judge_labels_remove(
            collection=self.collection, judge=judge, actor=request.user
        )
        return Response({"removed": removed})


@extend_schema_view(
    put=extend_schema(
        summary="Set a judge's quota",
        description="Coordinators. The most pairs the judge grades in the collection "
        "(null: no limit).",
        parameters=[SLUG, JUDGE_ID],
        request=QuotaSerializer,
        responses={200: QuotaSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class JudgeQuotaView(CollectionScopedView):
    """A judge's quota."""

    serializer_class = QuotaSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"PUT": COORDINATORS}

    def put(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Set it."""
        judge = _judge_in(self.collection, kwargs["judge_id"])
        body = QuotaSerializer(data=request.data)
        body.is_valid(raise_exception=True)
        membership = services.judge_quota_set(
            collection=self.collection, judge=judge, quota=body.validated_data["quota"]
        )
        return Response({"quota": membership.quota})
