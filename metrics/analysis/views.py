"""The per-query ranked-list page of a run: top k, live grades, NDCG terms, the ideal."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from judging.models import Collection, Query
from metrics.analysis.query import run_query_ranking
from metrics.forms import MeasureForm
from metrics.live.scoring import MeasureLabel, measure_labels
from metrics.selectors import run_for_viewer
from metrics.views import _base_context, _collection_and_viewer, _measure_labels

DEFAULT_NDCG = "nDCG@10"


def ndcg_labels(collection: Collection) -> list[MeasureLabel]:
    """Return the collection's NDCG measures, or the default nDCG@10 when it has none."""
    labels, _unreadable = _measure_labels(collection)
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
