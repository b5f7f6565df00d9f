"""LLM judges against human judges (API): the figures of the coordinators' page.

See :mod:`metrics.analysis.llm_agreement` for what is computed. A figure that is
undefined, or withheld because there is not enough data, is ``{"value": null, "reason":
"..."}``; JSON never holds NaN.
"""

from __future__ import annotations

from typing import Any, ClassVar

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from judging.agreement.api import CoefficientSerializer, JudgeRefSerializer
from judging.api.views import SLUG, CollectionScopedView
from metrics.analysis import llm_agreement as selectors
from metrics.api.permissions import COORDINATORS


class LlmQueryScoreSerializer(serializers.Serializer):
    """One query's mean nDCG@10 over the runs under each labelling."""

    query = serializers.CharField(help_text="Query id (qid).")
    human = serializers.FloatField(allow_null=True, help_text="Under the human grades.")
    llm = serializers.FloatField(allow_null=True, help_text="Under the LLM's grades.")


class LlmSystemScoreSerializer(serializers.Serializer):
    """One run's mean nDCG@10 under each labelling and its rank under each (1 = best)."""

    run = serializers.IntegerField(source="run_id", help_text="Run id.")
    tag = serializers.CharField()
    team = serializers.CharField()
    human = serializers.FloatField(allow_null=True, help_text="Under the human grades.")
    llm = serializers.FloatField(allow_null=True, help_text="Under the LLM's grades.")
    human_rank = serializers.IntegerField()
    llm_rank = serializers.IntegerField()


class LlmRankingCheckSerializer(serializers.Serializer):
    """Per-query and per-run nDCG@10 under both labellings and their rank correlations."""

    queries = serializers.IntegerField(help_text="Queries with shared pairs.")
    runs = serializers.IntegerField(help_text="Runs scored.")
    per_query = LlmQueryScoreSerializer(
        many=True, help_text="By query id; empty when there is not enough data."
    )
    query_kendall_tau_b = CoefficientSerializer(
        source="query_tau_b", help_text="Kendall's tau-b between the two query orders."
    )
    systems = LlmSystemScoreSerializer(
        many=True, help_text="Best first under human grades; empty when not enough data."
    )
    system_kendall_tau_b = CoefficientSerializer(
        source="system_tau_b", help_text="Kendall's tau-b between the two leaderboards."
    )
    system_tau_ap = CoefficientSerializer(
        help_text="AP rank correlation (Yilmaz et al. 2008) of the LLM leaderboard against "
        "the human one (top-weighted, not symmetric)."
    )


class LlmReferenceSerializer(serializers.Serializer):
    """What the LLM is compared with: the human consensus or one human judge."""

    type = serializers.ChoiceField(
        source="kind", choices=["consensus", "judge"], help_text="Consensus or one judge."
    )
    label = serializers.CharField()
    judge = JudgeRefSerializer(
        source="reference", allow_null=True, help_text="The human judge; null for consensus."
    )


class LlmComparisonSerializer(serializers.Serializer):
    """One LLM judge against one reference, on the pairs both graded."""

    reference = LlmReferenceSerializer(source="*")
    pairs = serializers.IntegerField(help_text="Shared pairs (graded by both).")
    exact_agreement = CoefficientSerializer(source="exact")
    within_one_agreement = CoefficientSerializer(source="within_one")
    mean_signed_difference = CoefficientSerializer(
        help_text="Mean of LLM grade minus human grade: positive, the LLM grades higher."
    )
    cohen_kappa_quadratic = CoefficientSerializer()
    alpha_ordinal = CoefficientSerializer(help_text="Krippendorff's alpha, ordinal.")
    confusion_matrix = serializers.ListField(
        source="confusion",
        child=serializers.ListField(child=serializers.IntegerField()),
        allow_null=True,
        help_text="5 × 5 counts: row = human grade 0–4, column = LLM grade 0–4; null when "
        "there is not enough data.",
    )
    confusion_reason = serializers.CharField(
        allow_null=True, help_text="Why the matrix is null; null when it is given."
    )
    ranking = LlmRankingCheckSerializer()


class LlmJudgeAgreementSerializer(serializers.Serializer):
    """One LLM judge and its comparisons: the human consensus first, then each human."""

    judge = JudgeRefSerializer()
    model = serializers.CharField()
    grades = serializers.IntegerField(help_text="The LLM's graded judgments here.")
    comparisons = LlmComparisonSerializer(many=True)


class LlmAgreementSerializer(serializers.Serializer):
    """Every LLM judge of a collection against the human judges."""

    collection = serializers.SlugField()
    judgments_version = serializers.IntegerField()
    aggregation_policy = serializers.CharField(
        source="policy", help_text="The policy that builds the human consensus."
    )
    fractional_policy = serializers.BooleanField(
        help_text="True when the consensus may be fractional (then rounded, halves down, "
        "for every figure but the mean signed difference and nDCG)."
    )
    measure = serializers.CharField(help_text="Canonical name of the ranking checks' measure.")
    min_pairs = serializers.IntegerField(help_text="Shared pairs needed for figures.")
    min_queries = serializers.IntegerField(help_text="Queries needed for the ranking checks.")
    runs = serializers.IntegerField()
    human_judges = serializers.IntegerField(help_text="Human judges with graded pairs.")
    consensus_pairs = serializers.IntegerField(help_text="Pairs with a human consensus grade.")
    llm_judges = LlmJudgeAgreementSerializer(source="judges", many=True, help_text="By name.")


@extend_schema_view(
    get=extend_schema(
        summary="Compare LLM judges with human judges",
        description="Coordinators only. For every LLM judge, against the human consensus "
        "(the collection's aggregation policy over human grades) and each human judge, on "
        "the pairs both graded: exact and within-one agreement, mean signed difference "
        "(LLM minus human), Cohen's kappa (quadratic), Krippendorff's alpha (ordinal), the "
        "5 × 5 confusion matrix, and the ranking checks: every run scored with nDCG@10 "
        "under each labelling, Kendall's tau-b of the query order and Kendall's tau-b and "
        "tau_AP of the two leaderboards. Below `min_pairs` shared pairs (`min_queries` "
        'queries for the ranking checks) a figure is `{"value": null, "reason": '
        '"Not enough data: ..."}`.',
        parameters=[SLUG],
        responses={200: LlmAgreementSerializer, **error_responses(401, 403, 404)},
    )
)
class LlmAgreementView(CollectionScopedView):
    """LLM judges against human judges, for coordinators."""

    serializer_class = LlmAgreementSerializer
    pagination_class = None
    role_rules: ClassVar[dict[str, frozenset[str]]] = {"GET": COORDINATORS}

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the report."""
        collection = self.collection
        report = selectors.llm_agreement_report(collection=collection)
        data = {
            "collection": collection.slug,
            "judgments_version": collection.judgments_version,
            **{
                name: getattr(report, name)
                for name in (
                    "policy",
                    "fractional_policy",
                    "measure",
                    "min_pairs",
                    "min_queries",
                    "runs",
                    "human_judges",
                    "consensus_pairs",
                    "judges",
                )
            },
        }
        return Response(LlmAgreementSerializer(data).data)
