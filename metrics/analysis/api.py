"""Metrics API: one query of a run explained, and run comparison with significance tests.

Same rules as :mod:`metrics.api.views`: coordinators and team members only (judges get
403), runs another team owns are 404 until the leaderboard is published.
"""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import exceptions, serializers
from rest_framework.request import Request
from rest_framework.response import Response

from config.api import error_responses
from judging.api.views import SLUG
from judging.models import Query
from metrics import selectors as metrics_selectors
from metrics.analysis.compare import ComparisonError, compare_runs
from metrics.analysis.query import run_query_ranking
from metrics.analysis.views import ndcg_labels
from metrics.api.views import JUDGES_SEE_NO_RUNS, RUN_ID, MetricsScopedView
from metrics.engine.errors import MeasureError
from metrics.live.scoring import MeasureLabel, measure_labels
from metrics.views import _measure_labels


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
        help_text="Judgment-list version the stored score was last written at; rescoring "
        "that leaves it unchanged does not rewrite it, so it is current whenever the run's "
        "scored_version is.",
    )
    pool_depth = serializers.IntegerField()
    judged_in_top = serializers.IntegerField()
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
            **error_responses(400, 401, 403, 404, e403=JUDGES_SEE_NO_RUNS),
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
            if not part.isdigit() or len(part) > 18:
                raise exceptions.ValidationError({name: [f"Not a run id: {part[:40]!r}."]})
            ids.append(int(part))
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
        labels, _unreadable = _measure_labels(self.collection)
        try:
            label = _pick(labels, params.get("measure"))
        except exceptions.ValidationError as exc:
            errors.update(exc.detail)
        if errors:
            raise exceptions.ValidationError(errors)
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
