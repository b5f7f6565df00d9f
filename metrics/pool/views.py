"""The coordinators' pool pages: every pooled pair, and how stable the ranking is."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from judging.models import Membership
from judging.selectors import collection_for_member
from metrics.models import Run
from metrics.pool.forms import PoolFilterForm, StabilityForm
from metrics.pool.selectors import pool_counts, pool_entries, ranking_stability
from metrics.selectors import viewer

#: Pairs per page of the pool list (a phone shows each as a small card).
POOL_PAGE_SIZE = 25


@login_required
@require_GET
def pool_list(request: HttpRequest, slug: str) -> HttpResponse:
    """List the judging pool for coordinators, with filters and pages."""
    collection = collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    runs = Run.objects.filter(collection=collection).select_related("team").order_by("tag")
    form = PoolFilterForm(request.GET or None, runs=runs)
    entries = pool_entries(collection=collection, **form.filters())
    page = Paginator(entries, POOL_PAGE_SIZE).get_page(request.GET.get("page"))
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "pool",
        "form": form,
        "page": page,
        "counts": pool_counts(collection=collection),
        "filtered": form.is_bound and form.has_changed(),
    }
    return render(request, "metrics/poolentry_list.html", context)


@login_required
@require_GET
def stability_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show the stop rule: τ with the ranking N judgments ago and expected N ahead.

    With ``HX-Request`` (the collection page loads it into a panel) only the panel; a
    boosted link (``HX-Boosted``, the metrics tabs) gets the whole page.
    """
    collection = collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    form = StabilityForm(request.GET or None)
    stability = ranking_stability(collection=collection, **form.values())
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "stability",
        "form": form,
        "stability": stability,
    }
    if request.headers.get("HX-Request") and not request.headers.get("HX-Boosted"):
        return render(request, "metrics/_ranking_stability.html", context)
    return render(request, "metrics/rankingstability_detail.html", context)
