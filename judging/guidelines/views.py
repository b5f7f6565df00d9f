"""The guidelines page: change what judges read, and see each version's labels and agreement."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods

from config.http import see_other
from judging import selectors
from judging.forms import add_service_errors
from judging.guidelines import selectors as selectors_guidelines
from judging.guidelines import services
from judging.guidelines.forms import GuidelinesForm, QueryInstructionsForm
from judging.models import Membership
from judging.tabs import tab_context

Role = Membership.Role


#: The guidelines page, a section at a time: the versions, then the two ways to change them.
GUIDELINES_TABS = [("versions", "Versions"), ("guidelines", "Guidelines"), ("query", "Query texts")]


@login_required
@require_http_methods(["GET", "POST"])
def guidelines_versions(request: HttpRequest, slug: str) -> HttpResponse:
    """Show the versions of the guidelines; let coordinators change them or a query's texts."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
    )
    posted = request.POST if request.method == "POST" else None
    which = request.POST.get("change") if posted else None
    guidelines_form = GuidelinesForm(
        posted if which == "guidelines" else None,
        initial={"guidelines": collection.guidelines},
        prefix="g",
    )
    query_form = QueryInstructionsForm(
        posted if which == "query" else None, collection=collection, prefix="q"
    )
    form = guidelines_form if which == "guidelines" else query_form if which == "query" else None
    if form is not None and form.is_valid():
        data = form.cleaned_data
        try:
            if form is guidelines_form:
                version = services.guidelines_update(
                    collection=collection,
                    guidelines=data["guidelines"],
                    note=data["note"],
                    actor=request.user,
                )
            else:
                version = services.query_instructions_update(
                    query=data["query"],
                    description=data["description"],
                    narrative=data["narrative"],
                    note=data["note"],
                    actor=request.user,
                )
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            if version is None:
                messages.info(request, "Nothing changed: the text is the same as now.")
            else:
                messages.success(
                    request, f"Version {version.number} is in force; new labels record it."
                )
            return see_other(reverse("judging:guidelines_versions", args=[collection.slug]))
    versions, unversioned = selectors_guidelines.guideline_versions(collection=collection)
    # A form posted comes back to its own tab, with its errors (page grammar, docs/ui.md).
    posted_tab = (which or "") if posted is not None else None
    return render(
        request,
        "judging/guidelineversion_list.html",
        {
            "collection": collection,
            "guidelines_form": guidelines_form,
            "query_form": query_form,
            "versions": versions,
            "unversioned": unversioned,
            **tab_context(request.GET, GUIDELINES_TABS, chosen=posted_tab),
        },
        status=400 if form is not None or (posted is not None and which is None) else 200,
    )
