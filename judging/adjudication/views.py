"""Pages of part 9: the disagreement queue, adjudicating a pair, removing a judge's labels.

Thin views: validate, call one service or selector, render. Coordinators and
adjudicators see every grade of a pair (judge names for coordinators only); judges and
teams get 404 here, so judges never see others' grades.
"""

from __future__ import annotations

from dataclasses import replace

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from config.http import see_other
from judging import evidence, selectors
from judging.adjudication import selectors as selectors_disagreement
from judging.adjudication import services as services_adjudication
from judging.adjudication.forms import AdjudicationForm, DisagreementFilterForm
from judging.forms import add_service_errors
from judging.models import Document, Judge, Membership, Query

Role = Membership.Role
ADJUDICATING_ROLES = (Role.COORDINATOR, Role.ADJUDICATOR)
QUEUE_SHOWN = 200


def _anonymise(views: list, show_names: bool) -> None:
    """Replace judge names by "Judge 1", "Judge 2"… per pair unless names may be shown."""
    if show_names:
        return
    for view in views:
        view.labels = [
            type(label)(**{**label.__dict__, "judge_name": f"Judge {i}"})
            for i, label in enumerate(view.labels, start=1)
        ]


@login_required
@require_GET
def disagreement_list(request: HttpRequest, slug: str) -> HttpResponse:
    """List the pairs judges disagree on, most urgent first, to adjudicate them."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=ADJUDICATING_ROLES
    )
    roles = selectors.user_roles(user=request.user, collection=collection)
    form = DisagreementFilterForm(request.GET or None, grade_names=collection.grade_names)
    filters = form.filters()
    rows = selectors_disagreement.disagreements(collection=collection, **filters)
    shown = rows[:QUEUE_SHOWN]
    _anonymise(shown, Role.COORDINATOR in roles)
    return render(
        request,
        "judging/disagreement_list.html",
        {
            "collection": collection,
            "form": form,
            "rows": shown,
            "total": len(rows),
            "spread": filters["min_spread"] or collection.disagreement_spread,
            "is_coordinator": Role.COORDINATOR in roles,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def pair_adjudicate(
    request: HttpRequest, slug: str, query_id: int, document_id: int
) -> HttpResponse:
    """Show every grade of one pair and set (or revoke) its final grade."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=ADJUDICATING_ROLES
    )
    roles = selectors.user_roles(user=request.user, collection=collection)
    query = get_object_or_404(Query, pk=query_id, collection=collection)
    document = get_object_or_404(Document, pk=document_id, collection=collection)
    form = AdjudicationForm(
        request.POST if request.method == "POST" and "revoke" not in request.POST else None,
        grade_names=collection.grade_names,
    )
    view = selectors_disagreement.pair_view(collection=collection, query=query, document=document)
    here = reverse("judging:pair_adjudicate", args=[collection.slug, query.pk, document.pk])
    if request.method == "POST":
        if "revoke" in request.POST:
            if view.adjudication is not None:
                services_adjudication.adjudication_revoke(
                    adjudication=view.adjudication, actor=request.user
                )
                messages.success(request, "Adjudication revoked; the aggregated grade is live.")
            return see_other(here)
        if form.is_valid():
            try:
                services_adjudication.adjudication_record(
                    query=query,
                    document=document,
                    grade=form.cleaned_data["grade"],
                    reason=form.cleaned_data["reason"],
                    actor=request.user,
                )
            except ValidationError as error:
                add_service_errors(form, error)
            else:
                messages.success(
                    request,
                    f"Final grade {form.cleaned_data['grade']} set for "
                    f"{query.external_id} / {document.external_id}; scores updated.",
                )
                return see_other(here)
    _anonymise([view], Role.COORDINATOR in roles)
    text = evidence.document_text(document.body) if any(x.evidence for x in view.labels) else ""
    view.labels = [
        replace(label, evidence_context=tuple(evidence.in_context(label.evidence, text)))
        if label.evidence
        else label
        for label in view.labels
    ]
    return render(
        request,
        "judging/pair_adjudicate.html",
        {
            "collection": collection,
            "pair": view,
            "form": form,
            "history": selectors_disagreement.adjudication_history(query=query, document=document),
            "is_coordinator": Role.COORDINATOR in roles,
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def judge_labels_remove(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    """Let a coordinator remove every label of one judge (history kept, runs rescored)."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
    )
    judge = get_object_or_404(
        Judge.objects.filter(judgments__collection=collection).distinct(), pk=judge_id
    )
    if request.method == "POST":
        removed = services_adjudication.judge_labels_remove(
            collection=collection, judge=judge, actor=request.user
        )
        messages.success(
            request,
            f"Removed {removed} label{'s' if removed != 1 else ''} of {judge.name}; "
            "their history is kept and the runs are being rescored.",
        )
        return see_other(reverse("judging:collection_agreement", args=[collection.slug]))
    count = judge.judgments.filter(collection=collection).count()
    return render(
        request,
        "judging/judge_labels_remove.html",
        {"collection": collection, "judge": judge, "count": count},
    )
