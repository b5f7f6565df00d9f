"""Analysis pages: a run's per-query ranked list, and LLM judges against human judges.

The per-query page shows the top k, live grades, NDCG terms and the ideal. The
LLM-vs-human page (coordinators only) shows how far each LLM judge's grades can be trusted.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET

from judging.agreement.selectors import llm_checks
from judging.chart_text import for_screens
from judging.models import Collection, Membership, Query
from judging.selectors import collection_for_member
from judging.tabs import tab_context
from metrics.analysis.charts import confusion_heatmap, score_scatter
from metrics.analysis.llm_agreement import Comparison, LlmJudgeReport, llm_agreement_report
from metrics.analysis.query import run_query_ranking
from metrics.forms import MeasureForm
from metrics.live.scoring import MeasureLabel, measure_labels
from metrics.pool import selectors as pool_selectors
from metrics.selectors import measure_labels_of, run_for_viewer
from metrics.views import _base_context, _collection_and_viewer

DEFAULT_NDCG = "nDCG@10"


def ndcg_labels(collection: Collection) -> list[MeasureLabel]:
    """Return the collection's NDCG measures, or the default nDCG@10 when it has none."""
    labels, _unreadable = measure_labels_of(collection)
    ndcg = [label for label in labels if label.canonical.startswith("nDCG(")]
    return ndcg or measure_labels([DEFAULT_NDCG])


def query_of(collection: Collection, query_pk: int) -> Query:
    """Return the collection's query ``query_pk`` or raise 404."""
    query = Query.objects.filter(collection=collection, pk=query_pk).first()
    if query is None:
        raise Http404("No such query.")
    return query


@login_required
@require_GET
def run_query(request: HttpRequest, slug: str, pk: int, query_pk: int) -> HttpResponse:
    """Show one query of a run: its top k, each document's grade and NDCG term, the ideal."""
    collection, who = _collection_and_viewer(request, slug)
    run = run_for_viewer(collection=collection, who=who, run_id=pk)
    query = query_of(collection, query_pk)
    labels = ndcg_labels(collection)
    form = MeasureForm(request.GET or None, labels=labels)
    chosen = form.label()
    ranking = run_query_ranking(run=run, query=query, label=chosen, who=who)
    # The run's ranking and the ideal one side by side (they are read together, issue 41);
    # the ideal only while grades may be shown (docs/security.md).
    context = _base_context(collection, who, "leaderboard") | {
        "run": run,
        "query": query,
        "labels": labels,
        "chosen": chosen,
        "form": form,
        "r": ranking,
        "stale": run.scored_version < collection.judgments_version,
    }
    return render(request, "metrics/run_query.html", context)


# --- The LLM-vs-human page: how far each LLM judge's grades can be trusted (coordinators only) ---
#
# A thin view: it checks that the user coordinates the collection (404 otherwise, so judges
# never see other judges' grades), reads :func:`~metrics.analysis.llm_agreement.
# llm_agreement_report` and renders the charts of :mod:`metrics.analysis.charts`.


@dataclass(frozen=True)
class ComparisonCharts:
    """One comparison with its charts (None when there is nothing to draw)."""

    comparison: Comparison
    heatmap: SafeString | None
    scatter: SafeString | None


@dataclass(frozen=True)
class JudgeSection:
    """One LLM judge's section of the page."""

    report: LlmJudgeReport
    comparisons: list[ComparisonCharts]

    @property
    def key(self) -> str:
        """Return the section's tab key (``llm-<judge id>``)."""
        return f"llm-{self.report.judge.judge_id}"


def _charts(judge: LlmJudgeReport, comparison: Comparison) -> ComparisonCharts:
    """Draw the heatmap and the scatter plot of one comparison."""
    versus = f"{judge.judge.name} vs {comparison.label}"
    heatmap = None
    if comparison.confusion is not None:
        heatmap = mark_safe(  # confusion_heatmap escapes all text
            confusion_heatmap(
                comparison.confusion,
                title=f"Confusion matrix, {versus}",
                row_name="Human",
                column_name="LLM",
            )
        )
    scatter = None
    systems = comparison.ranking.systems
    if systems:
        scatter = mark_safe(  # score_scatter escapes all text
            for_screens(
                lambda size: score_scatter(
                    [f"{s.tag} ({s.team})" for s in systems],
                    [float("nan") if s.human is None else s.human for s in systems],
                    [float("nan") if s.llm is None else s.llm for s in systems],
                    title=f"Runs' nDCG@10 under human and LLM grades, {versus}",
                    x_label="nDCG@10, human grades",
                    y_label="nDCG@10, LLM grades",
                    size=size,
                ),
                wide=420,
                narrow=320,
            )
        )
    return ComparisonCharts(comparison, heatmap, scatter)


@login_required
@require_GET
def judge_compare(request: HttpRequest, slug: str) -> HttpResponse:
    """Show coordinators every LLM judge against the human consensus and each human judge."""
    collection = collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    report = llm_agreement_report(collection=collection)
    sections = [
        JudgeSection(judge, [_charts(judge, c) for c in judge.comparisons])
        for judge in report.judges
    ]
    # One LLM judge a tab (its figures in a list box), then the human checks (page grammar).
    tabs = tab_context(
        request.GET,
        [(section.key, section.report.judge.name) for section in sections]
        + [("checks", "Human checks")],
    )
    return render(
        request,
        "metrics/judge_compare.html",
        {
            "collection": collection,
            "report": report,
            "sections": sections,
            **tabs,
            "checks": llm_checks(
                collection=collection, audit=pool_selectors.audit_sample(collection=collection)
            ),
        },
    )
