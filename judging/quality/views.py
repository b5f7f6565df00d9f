"""The *Judges* and *Gold pairs* pages: attention signals, and accuracy against gold."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from config.http import see_other
from config.params import whole_param
from judging import selectors
from judging.forms import add_service_errors
from judging.llm.judges import judge_version
from judging.models import Collection, Judge, Membership
from judging.quality import attention, services
from judging.quality import selectors as selectors_quality
from judging.quality.forms import GoldPairForm, GoldRateForm, QualificationForm
from judging.quality.models import CanaryCheck, GoldPair, VersionCheck
from judging.tabs import tab_context


@login_required
@require_GET
def judge_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Show coordinators every judge's attention signals, flagged judges first."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    rows = selectors_quality.judge_attention(collection=collection)
    gold = selectors_quality.gold_report(collection=collection)
    standings = {row.judge_id: row for row in gold}
    return render(
        request,
        "judging/judge_list.html",
        {
            "collection": collection,
            "gold": gold,
            "gold_alerts": sum(1 for row in gold if row.alert),
            "attention": [(row, standings.get(row.judge_id)) for row in rows],
            "trend": selectors_quality.GOLD_TREND,
            "canaries": selectors_quality.canary_rates(collection=collection),
            "llm_judges": Judge.objects.filter(kind=Judge.Kind.LLM, collections=collection),
            "rows": rows,
            "flagged": sum(1 for row in rows if row.signals.flags),
            "min_labels": attention.MIN_LABELS,
            "z_flag": attention.Z_FLAG,
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def gold_list(request: HttpRequest, slug: str) -> HttpResponse:
    """Show coordinators the gold pairs and each judge's accuracy; mark a pair as gold."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    rate_posted = request.method == "POST" and "percent" in request.POST
    rate_form = GoldRateForm(
        request.POST if rate_posted else None,
        initial={"percent": round(collection.gold_rate * 100)},
    )
    if rate_posted and rate_form.is_valid():
        services.gold_rate_set(collection=collection, rate=rate_form.cleaned_data["percent"] / 100)
        messages.success(request, f"{rate_form.cleaned_data['percent']}% of pairs served are gold.")
        return see_other(_gold_tab(collection, "mixing"))
    bar_posted = request.method == "POST" and "qualification_pairs" in request.POST
    bar_form = QualificationForm(
        request.POST if bar_posted else None,
        initial={
            "qualification_pairs": collection.qualification_pairs,
            "qualification_percent": round(collection.qualification_share * 100),
        },
    )
    preview = None
    if bar_posted and bar_form.is_valid():
        data = bar_form.cleaned_data
        preview = selectors_quality.bar_effect(
            collection=collection,
            pairs=data["qualification_pairs"],
            share=data["qualification_percent"] / 100,
        )
    if preview is not None and "preview" not in request.POST:
        try:
            changed = services.qualification_set(
                collection=collection,
                pairs=data["qualification_pairs"],
                share=data["qualification_percent"] / 100,
                confirm=data["confirm"],
            )
        except ValidationError as error:
            add_service_errors(bar_form, error)
        else:
            if not changed:
                messages.info(request, "The qualification bar is unchanged.")
            elif data["qualification_pairs"]:
                messages.success(
                    request,
                    f"Labels count after {data['qualification_pairs']} gold pairs at "
                    f"{data['qualification_percent']}% exact: {preview.judges_left_out} of "
                    f"{preview.judges} judges left out for now, {preview.lines_after} of "
                    f"{preview.lines_now} lines kept; scores are being recomputed.",
                )
            else:
                messages.success(request, "Qualification is off: every judge's labels count.")
            return see_other(_gold_tab(collection, "qualification"))
    form = GoldPairForm(
        request.POST if request.method == "POST" and not rate_posted and not bar_posted else None,
        collection=collection,
        initial=GoldPairForm.initial_from(request.GET),
    )
    if form.is_bound and form.is_valid():
        data = form.cleaned_data
        try:
            gold = services.gold_set(
                query=data["qid"],
                document=data["docno"],
                grade=data["grade"],
                reason=data["reason"],
                actor=request.user,
                pool_now=data["pool_now"],
            )
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            waits = not selectors_quality.gold_is_pooled(gold=gold)
            messages.success(
                request,
                f"{gold.query.external_id} / {gold.document.external_id} is gold with grade "
                f"{gold.grade}."
                + (" It enters the pool with the next pairs pooled." if waits else ""),
            )
            return see_other(_gold_tab(collection, "pairs"))
    pairs = Paginator(selectors_quality.gold_pairs(collection=collection), 50).get_page(
        request.GET.get("page")
    )
    try:
        version = whole_param(
            request.GET,
            "guidelines_version",
            minimum=1,
            maximum=collection.guidelines_version,
        )
        version_error = None
    except ValidationError as error:
        version, version_error = None, error.message_dict["guidelines_version"][0]
    report = selectors_quality.gold_report(collection=collection, guidelines_version=version)
    posted_tab = None
    if request.method == "POST":  # a form comes back to its own tab, with its errors
        posted_tab = "mixing" if rate_posted else "qualification" if bar_posted else "pairs"
    tabs = tab_context(request.GET, GOLD_TABS, chosen=posted_tab)
    if not bar_posted:  # the confirmation box comes with a preview or a refusal only
        del bar_form.fields["confirm"]
    previewing = preview is not None
    if preview is None and tabs["tab"] == "qualification":  # what the bar in force does
        preview = selectors_quality.bar_effect(
            collection=collection,
            pairs=collection.qualification_pairs,
            share=collection.qualification_share,
        )
    return render(
        request,
        "judging/goldpair_list.html",
        {
            "collection": collection,
            "form": form,
            "rate_form": rate_form,
            "bar_form": bar_form,
            "pairs": pairs,
            "report": report,
            "graded_gold": sum(1 for row in report if row.accuracy.n),
            "guidelines_version": version,
            "versions": range(collection.guidelines_version, 0, -1),
            "version_error": version_error,
            "trend": selectors_quality.GOLD_TREND,
            "below": sum(1 for row in report if row.alert),
            "effect": preview,
            "previewing": previewing,
            **tabs,
        },
        status=400
        if (request.method == "POST" and "preview" not in request.POST) or version_error
        else 200,
    )


#: The Gold pairs page, a section at a time (page grammar, docs/ui.md).
GOLD_TABS = [
    ("accuracy", "Accuracy"),
    ("pairs", "Pairs"),
    ("qualification", "Qualification"),
    ("mixing", "Mixing"),
]


def _gold_tab(collection: Collection, tab: str) -> str:
    """Return the address of one tab of the Gold pairs page."""
    return reverse("judging:gold_list", args=[collection.slug]) + f"?tab={tab}"


@login_required
@require_POST
def gold_delete(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Unmark one gold pair."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    gold = get_object_or_404(GoldPair, pk=pk, collection=collection)
    services.gold_remove(gold=gold)
    messages.success(request, "The pair is no longer gold; judges' labels of it stay.")
    return see_other(_gold_tab(collection, "pairs"))


def _part(request: HttpRequest, page: str, part: str) -> str:
    """Return ``part`` for htmx's poll of a check's live part, else the whole ``page``."""
    if request.headers.get("HX-Request") and request.GET.get("part") == "progress":
        return part
    return page


@login_required
@require_POST
def canary_check_create(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Queue a canary check of one LLM judge and go to its page (which waits for it)."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    judge = get_object_or_404(Judge, pk=pk, kind=Judge.Kind.LLM, collections=collection)
    try:
        check = services.canary_check_start(collection=collection, judge=judge, user=request.user)
    except ValidationError as error:
        messages.error(request, "The check could not run: " + "; ".join(error.messages))
        return see_other(reverse("judging:judge_list", args=[collection.slug]))
    return see_other(reverse("judging:canary_check_detail", args=[collection.slug, check.pk]))


@login_required
@require_GET
def canary_check_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show one canary check: its state while it runs, then every canary and its answer."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    check = get_object_or_404(
        CanaryCheck.objects.select_related("judge"), pk=pk, collection=collection
    )
    results = list(check.results.all()) if check.status == CanaryCheck.Status.DONE else []
    return render(
        request,
        _part(request, "judging/canarycheck_detail.html", "judging/canarycheck_progress.html"),
        {
            "collection": collection,
            "check": check,
            "results": results,
            "failed": sum(1 for r in results if r.failed),
        },
    )


@login_required
@require_http_methods(["GET", "POST"])
def version_list(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show an LLM judge's versions side by side; check the current one before it runs."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    judge = get_object_or_404(Judge, pk=pk, kind=Judge.Kind.LLM, collections=collection)
    if request.method == "POST":
        try:
            check = services.version_check_start(
                collection=collection, judge=judge, user=request.user
            )
        except ValidationError as error:
            messages.error(request, "The check could not run: " + "; ".join(error.messages))
            return see_other(reverse("judging:version_list", args=[collection.slug, judge.pk]))
        return see_other(reverse("judging:version_check_detail", args=[collection.slug, check.pk]))
    return render(
        request,
        "judging/versioncheck_list.html",
        {
            "collection": collection,
            "judge": judge,
            "current": judge_version(judge),
            "rows": selectors_quality.version_report(collection=collection, judge=judge),
            "open_checks": selectors_quality.open_checks(collection=collection, judge=judge),
            "margin": selectors_quality.KAPPA_DROP,
        },
    )


@login_required
@require_GET
def version_check_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show one version check: its state while it runs, then its row of the versions table."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,)
    )
    check = get_object_or_404(
        VersionCheck.objects.select_related("judge", "collection"), pk=pk, collection=collection
    )
    return render(
        request,
        _part(request, "judging/versioncheck_detail.html", "judging/versioncheck_progress.html"),
        {
            "collection": collection,
            "check": check,
            "row": selectors_quality.version_row(check=check),
            "current": judge_version(check.judge),
            "margin": selectors_quality.KAPPA_DROP,
        },
    )
