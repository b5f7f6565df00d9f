"""Label coverage and annotator agreement of a collection, for coordinators (API).

The numbers are those of the coordinators' page (:mod:`judging.agreement.selectors`). An
undefined coefficient is ``{"value": null, "reason": "..."}``; JSON never holds NaN.
"""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from config.params import whole_param
from judging.agreement import selectors as selectors_agreement
from judging.api.permissions import COORDINATORS
from judging.api.views import SLUG, CollectionScopedView
from judging.models import Judge

GROUPS = [group for group, _label, _kinds in selectors_agreement.GROUPS]


class CoefficientSerializer(serializers.Serializer):
    """A statistic, or null with the reason it is undefined for the data."""

    value = serializers.FloatField(allow_null=True, help_text="Null when undefined.")
    reason = serializers.CharField(
        allow_null=True, help_text="Why the value is undefined; null when it is defined."
    )


class QueryCoverageSerializer(serializers.Serializer):
    """How far the pool of one query is graded."""

    query = serializers.CharField(source="external_id", help_text="Query id (qid).")
    pooled = serializers.IntegerField(help_text="Pooled pairs of the query.")
    graded = serializers.IntegerField(help_text="Pooled pairs with at least one grade.")
    complete = serializers.IntegerField(
        help_text="Pooled pairs with at least judges_per_pair grades."
    )
    share_complete = serializers.FloatField(
        allow_null=True, help_text="complete / pooled; null for an empty pool."
    )


class CoverageSerializer(serializers.Serializer):
    """How far the whole pool is graded, in total and per query."""

    judges_per_pair = serializers.IntegerField()
    pool_pairs = serializers.IntegerField()
    graded_pairs = serializers.IntegerField(help_text="Pooled pairs with at least one grade.")
    complete_pairs = serializers.IntegerField(
        help_text="Pooled pairs with at least judges_per_pair grades."
    )
    share_complete = serializers.FloatField(
        allow_null=True, help_text="complete_pairs / pool_pairs; null for an empty pool."
    )
    queries = QueryCoverageSerializer(
        many=True, help_text="Every query, by query id (q2 before q10)."
    )


class JudgeRefSerializer(serializers.Serializer):
    """A judge."""

    id = serializers.IntegerField(source="judge_id")
    name = serializers.CharField()
    kind = serializers.ChoiceField(choices=Judge.Kind.choices)


class JudgeStatsSerializer(serializers.Serializer):
    """One judge's graded judgments in the collection."""

    judge = JudgeRefSerializer()
    grades = serializers.IntegerField(help_text="Graded judgments.")
    distribution = serializers.ListField(
        child=serializers.IntegerField(),
        min_length=5,
        max_length=5,
        help_text="How many of the judge's grades are 0, 1, 2, 3 and 4.",
    )
    mean_seconds = serializers.FloatField(
        allow_null=True,
        help_text="Mean seconds per graded pair (human judges who reported times; else null).",
    )


class GroupAgreementSerializer(serializers.Serializer):
    """Agreement among one group of judges over the pairs two or more of them graded."""

    group = serializers.ChoiceField(choices=GROUPS, help_text="human, llm or all judges.")
    judges = serializers.IntegerField(help_text="Judges of the group with at least one grade.")
    pairs = serializers.IntegerField(help_text="Pairs graded by at least two of them (used).")
    fleiss_kappa = CoefficientSerializer(help_text="Fleiss' kappa, grades as categories.")
    alpha_ordinal = CoefficientSerializer(help_text="Krippendorff's alpha, ordinal.")
    alpha_interval = CoefficientSerializer(help_text="Krippendorff's alpha, interval.")
    alpha_nominal = CoefficientSerializer(help_text="Krippendorff's alpha, nominal.")
    alpha_ratio = CoefficientSerializer(help_text="Krippendorff's alpha, ratio.")
    gwet_ac1 = CoefficientSerializer(
        help_text="Gwet's AC1, grades as categories (robust when most grades are 0)."
    )
    gwet_ac2 = CoefficientSerializer(help_text="Gwet's AC2 with quadratic weights.")


class PairAgreementSerializer(serializers.Serializer):
    """Agreement of two judges over the pairs both graded."""

    judge_a = JudgeRefSerializer(source="a", help_text="The human, for a human–LLM pair.")
    judge_b = JudgeRefSerializer(source="b")
    common_pairs = serializers.IntegerField(source="common", help_text="At least 1.")
    raw_agreement = serializers.FloatField(help_text="Share of common pairs with equal grades.")
    cohen_kappa = CoefficientSerializer(help_text="Cohen's kappa, unweighted.")
    cohen_kappa_quadratic = CoefficientSerializer(help_text="Cohen's kappa, quadratic weights.")
    cohen_kappa_linear = CoefficientSerializer(help_text="Cohen's kappa, linear weights.")


class AgreementReportSerializer(serializers.Serializer):
    """Coverage, judges and agreement of a collection (graded judgments only)."""

    collection = serializers.SlugField(help_text="The collection's slug.")
    guidelines_version = serializers.IntegerField(
        allow_null=True,
        help_text="The guidelines version whose labels the judge statistics and agreement "
        "count (null: every label).",
    )
    judgments_version = serializers.IntegerField(
        help_text="The collection's judgment-list version when read."
    )
    coverage = CoverageSerializer()
    judges = JudgeStatsSerializer(many=True, help_text="Humans first, then LLMs, by name.")
    overall = GroupAgreementSerializer(
        many=True, help_text="Three rows: human judges, LLM judges, all judges."
    )
    pairwise = PairAgreementSerializer(
        many=True,
        help_text="Every two judges with a common graded pair: human–LLM first, then "
        "human–human, then LLM–LLM.",
    )


@extend_schema_view(
    get=extend_schema(
        summary="Show label coverage and annotator agreement",
        description="Coordinators only. Graded judgments only (`cannot_judge` and `later` "
        "are not grades). Coverage of the judging pool in total and per query; every "
        "judge's grade distribution; Fleiss' kappa and Krippendorff's alpha (ordinal, "
        "interval) among human judges, LLM judges and all judges; and, for every two "
        "judges sharing a graded pair, raw agreement and Cohen's kappa (unweighted and "
        'quadratic). An undefined coefficient is `{"value": null, "reason": ...}`.',
        parameters=[
            SLUG,
            OpenApiParameter(
                "guidelines_version",
                int,
                description="Count only labels given under this guidelines version in the "
                "judge statistics and agreement (coverage counts every label).",
            ),
        ],
        responses={200: AgreementReportSerializer, **error_responses(400, 401, 403, 404)},
    )
)
class AgreementView(CollectionScopedView):
    """Coverage and agreement of a collection."""

    serializer_class = AgreementReportSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the report."""
        collection = self.collection
        version = whole_param(
            request.query_params,
            "guidelines_version",
            minimum=1,
            maximum=collection.guidelines_version,
        )
        report = selectors_agreement.agreement_report(
            collection=collection, guidelines_version=version
        )
        data = AgreementReportSerializer(
            {
                "collection": collection.slug,
                "judgments_version": collection.judgments_version,
                "guidelines_version": version,
                "coverage": report.coverage,
                "judges": report.judges,
                "overall": report.overall,
                "pairwise": report.pairwise,
            }
        ).data
        return Response(data)
