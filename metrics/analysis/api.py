"""Metrics API of the analyses: one query explained, run comparison, LLM against humans.

One query of a run explained; run comparison with significance tests; LLM judges against
human judges (the figures of the coordinators' page).

Same rules as :mod:`metrics.api.views`: coordinators and team members only (judges get
403), runs another team owns are 404 until the leaderboard is published.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

from django.core.exceptions import ValidationError as DjangoValidationError
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

from config.api import FiniteFloatField, error_responses
from config.params import MAX_ROW_ID, parse_whole
from judging.agreement.api import CoefficientSerializer, JudgeRefSerializer
from judging.agreement.selectors import llm_checks
from judging.api.views import SLUG, CollectionScopedView
from judging.models import Query
from metrics import selectors as metrics_selectors
from metrics.analysis import difficulty
from metrics.analysis import llm_agreement as selectors
from metrics.analysis.compare import (
    MAX_PAIR_RUNS,
    PAIRED_TEST,
    ComparisonError,
    compare_all_pairs,
    compare_runs,
    pair_runs,
)
from metrics.analysis.query import run_query_ranking
from metrics.analysis.views import ndcg_labels
from metrics.api.permissions import COORDINATORS
from metrics.api.views import JUDGES_SEE_NO_RUNS, RUN_ID, MetricsScopedView
from metrics.engine.errors import MeasureError
from metrics.engine.pairs import CORRECTIONS
from metrics.live.scoring import MeasureLabel, measure_labels
from metrics.pool import selectors as pool_selectors
from metrics.selectors import measure_labels_of

NO_PER_QUERY = (
    "Judges never see runs; teams get 403 while the collection's score visibility hides "
    "per-query scores (until the judgments are published)."
)


def _finite(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def _pick(labels: list[MeasureLabel], name: str | None, field: str = "measure") -> MeasureLabel:
    """Return the label named ``name`` (as configured or canonical); the first if None."""
    if not name:
        return labels[0]
    for label in labels:
        if name in (label.requested, label.canonical):
            return label
    try:
        wanted = {label.canonical for label in measure_labels([name])}
    except MeasureError as exc:
        raise exceptions.ValidationError({field: [str(exc)]}) from exc
    for label in labels:
        if label.canonical in wanted:
            return label
    choices = ", ".join(label.requested for label in labels)
    raise exceptions.ValidationError(
        {field: [f"Not one of this collection's measures: {choices}."]}
    )


# --- one query of a run ------------------------------------------------------------------


class RankedDocumentSerializer(serializers.Serializer):
    """One ranked document with its live grade and NDCG term."""

    rank = serializers.IntegerField()
    docno = serializers.CharField()
    title = serializers.CharField()
    grade = serializers.FloatField(
        allow_null=True, help_text="Live grade; null = unjudged (or grades not shown)."
    )
    gain = serializers.FloatField(allow_null=True, help_text="Null when grades are not shown.")
    discount = serializers.FloatField()
    contribution = serializers.FloatField(
        allow_null=True, help_text="gain × discount, its share of the DCG; null when hidden."
    )
    pooled = serializers.BooleanField(
        help_text="In the run's top pool_depth and in the judges' pool."
    )
    run_rank = serializers.IntegerField(allow_null=True, help_text="Rank in the run, if any.")


class RunQuerySerializer(serializers.Serializer):
    """A run's ranked list for one query next to the ideal ranking."""

    run = serializers.CharField(source="run.tag")
    run_id = serializers.IntegerField(source="run.pk")
    qid = serializers.CharField(source="query.external_id")
    query = serializers.CharField(source="query.text")
    measure = serializers.CharField(source="measure.canonical")
    cutoff = serializers.IntegerField()
    retrieved = serializers.IntegerField()
    ndcg = serializers.FloatField(allow_null=True, help_text="From the live grades.")
    dcg = serializers.FloatField(allow_null=True, help_text="Null when grades are not shown.")
    ideal_dcg = serializers.FloatField(allow_null=True, help_text="Null when grades are not shown.")
    grades_shown = serializers.BooleanField(
        help_text="False for a team while the judgment list is unpublished: then no grade, "
        "gain, contribution, DCG or ideal ranking is given (scores are)."
    )
    stored_score = serializers.FloatField(
        source="stored", allow_null=True, help_text="The score stored at stored_version."
    )
    stored_version = serializers.IntegerField(
        allow_null=True,
        help_text="Judgment-list version the query's scores were last written at (every "
        "run's at once); null when the query does not score the run.",
    )
    pool_depth = serializers.IntegerField()
    judged_in_top = serializers.IntegerField(
        allow_null=True, help_text="Null while your score visibility hides per-query values."
    )
    scores_shown = serializers.BooleanField(
        help_text="False while your collection's score visibility hides per-query values: "
        "then ndcg, stored_score, stored_version and judged_in_top are null."
    )
    ranked = RankedDocumentSerializer(many=True)
    ideal = RankedDocumentSerializer(many=True)


@extend_schema_view(
    get=extend_schema(
        summary="Explain one query of a run",
        description="Teams see grades only once the judgment list is published "
        "(`grades_shown`); until then scores only. "
        "The run's top k for the query with each document's live grade (null: "
        "unjudged), its gain, discount and contribution to NDCG@k, the ideal ranking, and "
        "which documents the run pooled. `measure` picks one of the collection's NDCG "
        "measures (configured or canonical name; default the first).",
        parameters=[
            SLUG,
            RUN_ID,
            OpenApiParameter(
                "qid", OpenApiTypes.STR, OpenApiParameter.PATH, description="Query id."
            ),
            OpenApiParameter("measure", OpenApiTypes.STR, description="An NDCG measure."),
        ],
        responses={
            200: RunQuerySerializer,
            **error_responses(400, 401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
        },
    )
)
class RunQueryView(MetricsScopedView):
    """One query of one visible run, explained."""

    serializer_class = RunQuerySerializer
    pagination_class = None

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the query's ranked list and ideal ranking."""
        run = metrics_selectors.run_for_viewer(
            collection=self.collection, who=self.who, run_id=self.kwargs["pk"]
        )
        query = Query.objects.filter(
            collection=self.collection, external_id=self.kwargs["qid"]
        ).first()
        if query is None:
            raise exceptions.NotFound("The collection has no such query.")
        label = _pick(ndcg_labels(self.collection), request.query_params.get("measure"))
        ranking = run_query_ranking(run=run, query=query, label=label, who=self.who)
        return Response(RunQuerySerializer(ranking).data)


# --- comparison --------------------------------------------------------------------------


class ComparedRunSerializer(serializers.Serializer):
    """One run against the baseline: deltas, tests (raw and Holm-adjusted) and the interval."""

    run = serializers.CharField()
    run_id = serializers.IntegerField()
    mean = serializers.FloatField()
    mean_diff = serializers.FloatField(help_text="Mean of run − baseline.")
    ci_low = serializers.FloatField(help_text="Bootstrap interval of the mean difference.")
    ci_high = serializers.FloatField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    t_statistic = serializers.FloatField(allow_null=True)
    wilcoxon_statistic = serializers.FloatField(allow_null=True)
    p_values = serializers.DictField(child=serializers.FloatField(allow_null=True))
    p_values_adjusted = serializers.DictField(child=serializers.FloatField(allow_null=True))
    deltas = serializers.DictField(
        child=serializers.FloatField(), help_text="Per qid: run − baseline."
    )


class ComparisonSerializer(serializers.Serializer):
    """A baseline against one or more runs on one measure."""

    measure = serializers.CharField()
    baseline = serializers.CharField()
    baseline_id = serializers.IntegerField()
    baseline_mean = serializers.FloatField()
    queries = serializers.ListField(child=serializers.CharField())
    left_out = serializers.ListField(child=serializers.CharField())
    holm = serializers.BooleanField(help_text="Whether p-values were Holm-adjusted.")
    seed = serializers.IntegerField()
    permutations = serializers.IntegerField()
    resamples = serializers.IntegerField()
    confidence = serializers.FloatField()
    runs = ComparedRunSerializer(many=True)


@extend_schema_view(
    get=extend_schema(
        summary="Compare runs",
        description="Compare each of `runs` with `baseline` on one measure over the queries "
        "scored for all of them: per-query deltas, paired t-test, randomization test and "
        "Wilcoxon (Holm-adjusted when there are several runs), and a bootstrap interval of "
        "the mean difference. The seed is fixed, so results repeat.",
        parameters=[
            SLUG,
            OpenApiParameter("baseline", OpenApiTypes.INT, required=True, description="Run id."),
            OpenApiParameter(
                "runs", OpenApiTypes.STR, required=True, description="Run ids, comma-separated."
            ),
            OpenApiParameter("measure", OpenApiTypes.STR, description="Default: the first."),
        ],
        responses={
            200: ComparisonSerializer,
            **error_responses(400, 401, 403, 404, e403=NO_PER_QUERY),
        },
    )
)
class RunCompareView(MetricsScopedView):
    """Paired comparison of visible runs."""

    serializer_class = ComparisonSerializer
    pagination_class = None

    def _run_ids(self, name: str, raw: list[str]) -> list[int]:
        ids = []
        for part in ",".join(raw).split(","):
            part = part.strip()
            if not part:
                continue
            try:
                ids.append(parse_whole(part, name, minimum=1, maximum=MAX_ROW_ID))
            except DjangoValidationError:
                raise exceptions.ValidationError(
                    {name: [f"Not a run id: {part[:40]!r}."]}
                ) from None
        if not ids:
            raise exceptions.ValidationError({name: ["This parameter is required."]})
        return ids

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the comparison."""
        params = request.query_params
        errors: dict[str, list[str]] = {}
        ids: dict[str, list[int]] = {}
        for name in ("baseline", "runs"):
            try:
                ids[name] = self._run_ids(name, params.getlist(name))
            except exceptions.ValidationError as exc:
                errors.update(exc.detail)
        labels, _unreadable = measure_labels_of(self.collection)
        try:
            label = _pick(labels, params.get("measure"))
        except exceptions.ValidationError as exc:
            errors.update(exc.detail)
        if errors:
            raise exceptions.ValidationError(errors)
        self.per_query_or_403()
        if len(ids["baseline"]) != 1:
            raise exceptions.ValidationError({"baseline": ["Give exactly one baseline run."]})
        visible = {
            run.pk: run
            for run in metrics_selectors.visible_runs(collection=self.collection, who=self.who)
            .filter(pk__in=ids["baseline"] + ids["runs"])
            .select_related("team")
        }
        missing = [i for i in ids["baseline"] + ids["runs"] if i not in visible]
        if missing:
            raise exceptions.NotFound(f"No visible run with id {missing[0]}.")
        baseline = visible[ids["baseline"][0]]
        compared = [visible[i] for i in dict.fromkeys(ids["runs"]) if i != baseline.pk]
        try:
            result = compare_runs(baseline=baseline, runs=compared, measure=label.canonical)
        except ComparisonError as exc:
            raise exceptions.ValidationError({"runs": [str(exc)]}) from exc
        qids = [q.external_id for q in result.queries]
        body = {
            "measure": result.measure,
            "baseline": baseline.tag,
            "baseline_id": baseline.pk,
            "baseline_mean": rows_mean_b(result),
            "queries": qids,
            "left_out": [q.external_id for q in result.left_out],
            "holm": result.holm,
            "seed": result.seed,
            "permutations": result.permutations,
            "resamples": result.resamples,
            "confidence": result.confidence,
            "runs": [
                {
                    "run": row.run.tag,
                    "run_id": row.run.pk,
                    "mean": row.result.mean_a,
                    "mean_diff": row.result.mean_diff,
                    "ci_low": row.result.ci_low,
                    "ci_high": row.result.ci_high,
                    "wins": row.result.wins,
                    "losses": row.result.losses,
                    "ties": row.result.ties,
                    "t_statistic": _finite(row.result.t_statistic),
                    "wilcoxon_statistic": _finite(row.result.wilcoxon_statistic),
                    "p_values": {k: _finite(v) for k, v in row.raw.items()},
                    "p_values_adjusted": {k: _finite(v) for k, v in row.adjusted.items()},
                    "deltas": dict(zip(qids, (float(d) for d in row.deltas), strict=True)),
                }
                for row in result.rows
            ],
        }
        return Response(ComparisonSerializer(body).data)


def rows_mean_b(result: Any) -> float:
    """Return the baseline's mean over the compared queries."""
    return float(result.rows[0].result.mean_b)


# --- every pair of the chosen runs ---------------------------------------------------------


class PairedRunSerializer(serializers.Serializer):
    """One run of an all-pairs comparison, best mean first, with its letters."""

    run = serializers.CharField(source="run.tag")
    run_id = serializers.IntegerField(source="run.pk")
    rank = serializers.IntegerField(help_text="1 = the highest mean on the compared queries.")
    mean = serializers.FloatField(help_text="Mean over the compared queries.")
    groups = serializers.CharField(
        source="letters",
        help_text='Letters as the page prints them ("ab"): two runs share a letter exactly '
        "when this correction cannot tell them apart (compact letter display).",
    )
    group_numbers = serializers.SerializerMethodField(help_text="The letters as 1 = a, 2 = b, …")

    @extend_schema_field(serializers.ListField(child=serializers.IntegerField()))
    def get_group_numbers(self, run: Any) -> list[int]:
        """Return the run's letters as 1-based numbers."""
        return [g + 1 for g in run.groups]


class RunPairSerializer(serializers.Serializer):
    """Two runs compared: ``a`` has the higher mean, differences are a − b."""

    a = serializers.CharField(source="upper.run.tag", help_text="Run tag (the higher mean).")
    a_id = serializers.IntegerField(source="upper.run.pk")
    b = serializers.CharField(source="lower.run.tag")
    b_id = serializers.IntegerField(source="lower.run.pk")
    mean_diff = serializers.FloatField(source="pair.difference", help_text="Mean of a − b.")
    ci_low = serializers.FloatField(source="pair.low", help_text="See `interval`.")
    ci_high = serializers.FloatField(source="pair.high")
    t_statistic = FiniteFloatField(
        source="pair.t_statistic",
        help_text="Paired t-test; null where the differences do not vary (t = ±∞, p = 0).",
    )
    p_value = serializers.FloatField(
        source="pair.p_value", help_text="Paired t-test, two-sided, not corrected."
    )
    p_value_corrected = serializers.FloatField(
        source="pair.corrected",
        help_text="Holm-adjusted p-value (holm) or Tukey's HSD p-value (tukey).",
    )
    q_statistic = FiniteFloatField(
        source="pair.q_statistic",
        help_text="Tukey's studentized range statistic; null under holm, and where the "
        "runs leave no residual variance (q = ∞, p = 0).",
    )
    significant = serializers.BooleanField(
        source="pair.significant", help_text="p_value_corrected ≤ alpha."
    )


class AllPairsSerializer(serializers.Serializer):
    """Every pair of the chosen runs on one measure, with the correction named."""

    measure = serializers.CharField()
    correction = serializers.ChoiceField(choices=list(CORRECTIONS))
    correction_name = serializers.CharField(help_text="The correction in words, with its family.")
    test = serializers.CharField(help_text="The test behind p_value.")
    interval = serializers.CharField(
        source="interval_name", help_text="What ci_low and ci_high are."
    )
    alpha = serializers.FloatField()
    confidence = serializers.FloatField(source="result.confidence")
    df = serializers.IntegerField(
        source="result.df", help_text="Degrees of freedom of the test and the interval."
    )
    critical_value = serializers.FloatField(
        source="result.critical",
        help_text="t(1 − alpha/2; n − 1) under holm; the studentized range's q(1 − alpha; k, "
        "df) under tukey.",
    )
    residual_variance = FiniteFloatField(
        source="result.residual_variance",
        help_text="Tukey: the two-way ANOVA's residual mean square; null under holm.",
    )
    queries = serializers.ListField(child=serializers.CharField())
    left_out = serializers.ListField(child=serializers.CharField())
    significant_pairs = serializers.IntegerField()
    runs = PairedRunSerializer(many=True)
    pairs = RunPairSerializer(many=True)


@extend_schema_view(
    get=extend_schema(
        summary="Compare every pair of runs",
        description="Every pair of `runs` (default: every visible scored run with a score "
        "on the measure) on one measure, over the queries scored for all of them: the mean "
        "difference, an interval of it, the paired t-test's p-value and a p-value corrected "
        "for testing every pair. `correction` holm (default): the t-test's p-values "
        "Holm-adjusted over all k(k − 1)/2 pairs, the test the leaderboard's letters use; "
        "intervals are each pair's t interval. tukey: Tukey's HSD with the topics as blocks "
        "(studentized range on the two-way ANOVA's residual variance) and its simultaneous "
        "intervals. `runs` are ordered by mean and carry their letters (`groups`): runs "
        f"sharing a letter cannot be told apart. At most {MAX_PAIR_RUNS} runs.",
        parameters=[
            SLUG,
            OpenApiParameter(
                "runs",
                OpenApiTypes.STR,
                description="Run ids, comma-separated (or repeated); default: every visible "
                "scored run with a score on the measure.",
            ),
            OpenApiParameter("measure", OpenApiTypes.STR, description="Default: the first."),
            OpenApiParameter(
                "correction",
                OpenApiTypes.STR,
                enum=list(CORRECTIONS),
                description="holm (default) or tukey.",
            ),
        ],
        responses={
            200: AllPairsSerializer,
            **error_responses(400, 401, 403, 404, e403=NO_PER_QUERY),
        },
    )
)
class RunPairsView(RunCompareView):
    """Every pair of visible runs compared (the compare page's all-pairs view)."""

    serializer_class = AllPairsSerializer

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the comparison of every pair."""
        params = request.query_params
        errors: dict[str, list[str]] = {}
        ids: list[int] | None = None
        if params.getlist("runs"):
            try:
                ids = list(dict.fromkeys(self._run_ids("runs", params.getlist("runs"))))
            except exceptions.ValidationError as exc:
                errors.update(exc.detail)
            else:
                if len(ids) > MAX_PAIR_RUNS:  # refused before any run is read
                    errors["runs"] = [f"Choose at most {MAX_PAIR_RUNS} runs; {len(ids)} given."]
        labels, _unreadable = measure_labels_of(self.collection)
        try:
            label = _pick(labels, params.get("measure"))
        except exceptions.ValidationError as exc:
            errors.update(exc.detail)
        correction = params.get("correction") or CORRECTIONS[0]
        if correction not in CORRECTIONS:
            errors["correction"] = [f"Not one of: {', '.join(CORRECTIONS)}."]
        if errors:
            raise exceptions.ValidationError(errors)
        self.per_query_or_403()
        if ids is None:
            runs = pair_runs(collection=self.collection, who=self.who, measure=label.canonical)
        else:
            visible = {
                run.pk: run
                for run in metrics_selectors.visible_runs(
                    collection=self.collection, who=self.who
                ).filter(pk__in=ids)
            }
            missing = [i for i in ids if i not in visible]
            if missing:
                raise exceptions.NotFound(f"No visible run with id {missing[0]}.")
            runs = [visible[i] for i in ids]
        try:
            result = compare_all_pairs(runs=runs, measure=label.canonical, correction=correction)
        except ComparisonError as exc:
            raise exceptions.ValidationError({"runs": [str(exc)]}) from exc
        body = {
            "measure": result.measure,
            "correction": result.correction,
            "correction_name": result.correction_name,
            "test": PAIRED_TEST,
            "interval_name": result.interval_name,
            "alpha": result.alpha,
            "result": result.result,
            "queries": [q.external_id for q in result.queries],
            "left_out": [q.external_id for q in result.left_out],
            "significant_pairs": result.significant_pairs,
            "runs": result.runs,
            "pairs": result.pairs,
        }
        return Response(AllPairsSerializer(body).data)


# --- LLM judges against human judges (API): the figures of the coordinators' page ---
#
# See :mod:`metrics.analysis.llm_agreement` for what is computed. A figure that is
# undefined, or withheld because there is not enough data, is ``{"value": null, "reason":
# "..."}``; JSON never holds NaN.


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


class CutKappaSerializer(serializers.Serializer):
    """Cohen's κ with both gradings made binary at one relevance cut."""

    cut = serializers.IntegerField(help_text="Relevant: grade at or above this.")
    label = serializers.CharField(help_text="e.g. `0–1 | 2–4`.")
    kappa = CoefficientSerializer()


class QueryTauSerializer(serializers.Serializer):
    """Kendall's τ-b of the two gradings over one query's shared pairs."""

    query = serializers.CharField()
    pairs = serializers.IntegerField()
    tau = serializers.FloatField(
        allow_null=True, help_text="Null: fewer than two pairs, or one side all one grade."
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
    gwet_ac2 = CoefficientSerializer(
        help_text="Gwet's AC2, quadratic weights (robust when most grades are 0)."
    )
    binary_kappa = CutKappaSerializer(
        many=True, help_text="κ at each relevance cut, as the TREC LLMJudge challenge reports."
    )
    query_tau = QueryTauSerializer(many=True, help_text="Per query, natural order.")
    mean_query_tau = CoefficientSerializer(help_text="Mean of the defined per-query τ-b.")
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


class CheckFiguresSerializer(serializers.Serializer):
    """Agreement of human checks with the LLM grade the card shows (lower median)."""

    label = serializers.CharField()
    checks = serializers.IntegerField()
    exact = FiniteFloatField()
    kappa = FiniteFloatField(help_text="Cohen's κ, quadratic weights.")


class LlmChecksSerializer(serializers.Serializer):
    """Human checks of LLM grades."""

    groups = CheckFiguresSerializer(many=True)
    curve = CheckFiguresSerializer(many=True, help_text="Over the first n checks.")


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
    checks = LlmChecksSerializer(
        help_text="Human checks of LLM grades: by provenance (assisted, blind, not "
        "recorded) and as they accumulated."
    )


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
            "checks": llm_checks(
                collection=collection, audit=pool_selectors.audit_sample(collection=collection)
            ),
        }
        return Response(LlmAgreementSerializer(data).data)


# --- topic difficulty ---------------------------------------------------------------------


class TopicDifficultySerializer(serializers.Serializer):
    """One live query's difficulty over the visible runs."""

    query = serializers.CharField(source="query.external_id")
    text = serializers.CharField(source="query.text")
    difficulty = FiniteFloatField(
        help_text="Share of runs with sNDCG@k above 0 (beating a random reranking of the "
        "pool); null when no run is scored."
    )
    difficulty_class = serializers.CharField(
        allow_null=True, help_text="easy, medium or hard (Gienapp et al., CIKM 2020)."
    )
    rndcg = FiniteFloatField(help_text="Expected NDCG@k of a random reranking of the pool.")
    median_sndcg = FiniteFloatField(source="median")
    beating_random = serializers.IntegerField(help_text="Runs with sNDCG@k above 0.")
    pool_size = serializers.IntegerField(help_text="Judged documents of the query.")
    judged = FiniteFloatField(help_text="Mean share of the runs' top k that is judged.")
    thin_reason = serializers.CharField(
        allow_null=True, help_text="Why the query is too thin to standardize against."
    )
    sndcg = serializers.ListField(
        child=FiniteFloatField(),
        help_text="sNDCG@k of each run, in the order of `runs`; null where undefined.",
    )


class DifficultyRunSerializer(serializers.Serializer):
    """A run the difficulty is measured over."""

    run_id = serializers.IntegerField(source="pk")
    tag = serializers.CharField()


class DifficultySerializer(serializers.Serializer):
    """Topic difficulty of the live queries."""

    k = serializers.IntegerField()
    judgments_version = serializers.IntegerField()
    runs = DifficultyRunSerializer(many=True, help_text="The runs you may see, by tag.")
    topics = TopicDifficultySerializer(many=True)


@extend_schema_view(
    get=extend_schema(
        summary="Show topic difficulty",
        description="Per live query (one with a live grade): every visible run's "
        "standardized NDCG@10 (0 = a random reranking of the judged pool), the share of runs "
        "beating random (the difficulty ratio), its class, the expected NDCG@10 of a random "
        "reranking (RNDCG) and why a query is too thin to standardize against. Coordinators "
        "and team members; teams see their own runs until the leaderboard is published.",
        parameters=[
            SLUG,
            OpenApiParameter(
                "sort",
                OpenApiTypes.STR,
                enum=list(difficulty.SORTS),
                description="Default: difficulty (hardest first).",
            ),
        ],
        responses={
            200: DifficultySerializer,
            **error_responses(400, 401, 403, 404, e403=NO_PER_QUERY),
        },
    )
)
class DifficultyView(MetricsScopedView):
    """Topic difficulty over the runs the user may see."""

    serializer_class = DifficultySerializer
    pagination_class = None

    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        """Return the report, sorted."""
        params = type(
            "DifficultyParams",
            (serializers.Serializer,),
            {"sort": serializers.ChoiceField(choices=list(difficulty.SORTS), default="difficulty")},
        )(data=request.query_params)
        params.is_valid(raise_exception=True)
        self.per_query_or_403()
        runs = list(
            metrics_selectors.visible_runs(collection=self.collection, who=self.who).order_by("tag")
        )
        report = difficulty.topic_difficulty(
            collection=self.collection, runs=runs, k=difficulty.DEFAULT_K
        )
        body = {
            "k": report.k,
            "judgments_version": self.collection.judgments_version,
            "runs": runs,
            "topics": difficulty.sort_topics(report.topics, params.validated_data["sort"]),
        }
        return Response(DifficultySerializer(body).data)
