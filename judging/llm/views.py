"""LLM judge pages for coordinators: start a job, follow it live, configure the judge."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.forms.models import model_to_dict
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.html import format_html
from django.views.decorators.http import require_GET, require_http_methods

from config.http import see_other
from judging import selectors
from judging.forms import add_service_errors
from judging.llm import judges as services_judges
from judging.llm import runner
from judging.llm import selectors as selectors_llm
from judging.llm import services as services_llm
from judging.llm.forms import LLMJobForm, LLMJudgeForm
from judging.llm.models import LLMJob
from judging.models import Collection, Judge, Membership
from judging.quality import selectors as selectors_quality
from judging.tabs import tab_context

COORDINATOR = (Membership.Role.COORDINATOR,)
#: Help of the Provider field when no provider is open to the user in the collection.
NO_PROVIDER_HELP = "None is open to this collection yet: see the note above."


def _judge_form(
    request: HttpRequest, collection: Collection, **kwargs: Any
) -> tuple[LLMJudgeForm, bool]:
    """Return the LLM judge form offering the providers open to the user in ``collection``.

    And whether there is none (the page then says who registers providers).
    """
    providers = selectors_llm.providers_in(collection=collection, user=request.user)
    form = LLMJudgeForm(request.POST or None, providers=providers, **kwargs)
    no_provider = not providers.exists()
    if no_provider:
        form.fields["llm_provider"].help_text = NO_PROVIDER_HELP
    return form, no_provider


#: The job page's tabs: the form (with the LLM judges), and the recent jobs in a list box.
LLM_JOB_TABS = [("start", "Start a job"), ("jobs", "Recent jobs")]


@login_required
@require_http_methods(["GET", "POST"])
def llm_job_create(request: HttpRequest, slug: str) -> HttpResponse:
    """Let a coordinator run an LLM judge over the pairs it has not graded yet."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=COORDINATOR)
    judges = selectors_llm.runnable_llm_judges(collection=collection)
    form = LLMJobForm(
        request.POST or None, judges=judges, initial={"judge": request.GET.get("judge")}
    )
    if request.method == "GET":
        _say_why_a_judge_cannot_run(request, collection, request.GET.get("judge"), judges)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            job = services_llm.llm_job_create(
                collection=collection,
                judge=data["judge"],
                concurrency=data["concurrency"],
                limit=data["limit"],
                queries=data["queries"],
                actor=request.user,
            )
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            services_llm.llm_job_start(job=job)
            return see_other(reverse("judging:llmjob_detail", args=[collection.slug, job.pk]))
    warnings = selectors_quality.version_warnings(collection=collection, judges=list(judges))
    jobs = list(selectors_llm.jobs_of(collection=collection)[:20])
    tabs = tab_context(request.GET, LLM_JOB_TABS if jobs else LLM_JOB_TABS[:1])
    return render(
        request,
        "judging/llmjob_create.html",
        {
            "collection": collection,
            "form": form,
            "judges": judges,
            "llm_judges": selectors_llm.llm_judges(collection=collection),
            "version_warnings": [
                (judge, warnings[judge.pk]) for judge in judges if judge.pk in warnings
            ],
            "no_provider": not selectors_llm.providers_in(
                collection=collection, user=request.user
            ).exists(),
            "jobs": jobs,
            **tabs,
        },
        status=400 if request.method == "POST" else 200,
    )


def _say_why_a_judge_cannot_run(
    request: HttpRequest, collection: Collection, judge_pk: str | None, runnable: Any
) -> None:
    """Add a message when ``?judge=`` names an LLM judge of the collection that cannot run.

    (*Run it on the pool* on the try page links here; without the message the page would
    show the form with another judge, or none, and no word on why.)
    """
    if (
        not judge_pk
        or not (judge_pk.isascii() and judge_pk.isdigit())
        or runnable.filter(pk=judge_pk).exists()
    ):
        return
    judge = selectors_llm.llm_judges(collection=collection).filter(pk=judge_pk).first()
    if judge is None:
        return
    edit = reverse("judging:judge_update", args=[collection.slug, judge.pk])
    messages.warning(
        request,
        format_html(
            "No job started: the LLM judge {} has no provider. "
            '<a href="{}">Choose its provider</a>, then run it.',
            judge.name,
            edit,
        ),
    )


#: Failure reasons the job page lists (the others are one click away), and rows per page
#: of the failures' and the outputs' pages.
FAILURE_GROUPS_SHOWN = 5
ROWS_PER_PAGE = 50


def _job_or_404(request: HttpRequest, slug: str, pk: int) -> tuple[Collection, LLMJob]:
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=COORDINATOR)
    job = selectors_llm.job_in(collection=collection, job_id=pk)
    if job is None:
        raise Http404("No such LLM job.")
    return collection, job


@login_required
@require_GET
def llm_job_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show a job's live progress, its failures grouped by reason (htmx polls the live part)."""
    collection, job = _job_or_404(request, slug, pk)
    template = (
        "judging/llmjob_progress.html"
        if request.headers.get("HX-Request") and request.GET.get("part") == "progress"
        else "judging/llmjob_detail.html"
    )
    groups = selectors_llm.failure_groups(job=job, limit=FAILURE_GROUPS_SHOWN)
    context = {
        "collection": collection,
        "job": job,
        "groups": groups,
        "more_reasons": (
            selectors_llm.failure_reasons(job=job) - len(groups)
            if len(groups) == FAILURE_GROUPS_SHOWN
            else 0
        ),
        "outputs": selectors_llm.job_outputs(collection=collection, job_id=job.pk).count(),
    }
    return render(request, template, context)


@login_required
@require_GET
def llm_job_failures(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """List a job's failed pairs (of one reason, ``?reason=``), a page at a time."""
    collection, job = _job_or_404(request, slug, pk)
    reason = request.GET.get("reason")
    failures = selectors_llm.job_failures(job=job, reason=reason)
    page = Paginator(failures, ROWS_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "judging/llmfailure_list.html",
        {"collection": collection, "job": job, "reason": reason, "page": page},
    )


@login_required
@require_GET
def llm_job_outputs(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """List the raw outputs of a job's grades (as ``GET …/llm-jobs/<id>/outputs/``), paged."""
    collection, job = _job_or_404(request, slug, pk)
    outputs = selectors_llm.job_outputs(collection=collection, job_id=job.pk)
    page = Paginator(outputs, ROWS_PER_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "judging/llmoutput_list.html",
        {"collection": collection, "job": job, "page": page},
    )


@login_required
@require_http_methods(["GET", "POST"])
def llm_judge_update(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Let a coordinator configure how Graded calls an LLM judge."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=COORDINATOR)
    judge = get_object_or_404(Judge, pk=pk, kind=Judge.Kind.LLM, collections=collection)
    form, no_provider = _judge_form(
        request, collection, initial=model_to_dict(judge, LLMJudgeForm.Meta.fields)
    )
    if request.method == "POST" and form.is_valid():
        config = services_judges.LLMJudgeConfig.of(judge).with_changes(form.cleaned_data)
        try:
            services_judges.llm_judge_update(judge=judge, config=config)
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            messages.success(request, f"Saved the LLM judge {judge.name}.")
            return see_other(reverse("judging:llmjob_create", args=[collection.slug]))
    return render(
        request,
        "judging/judge_update.html",
        {
            "collection": collection,
            "form": form,
            "judge": judge,
            "no_provider": no_provider,
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def llm_judge_create(request: HttpRequest, slug: str) -> HttpResponse:
    """Let a coordinator register an LLM judge for the collection (default prompt filled in)."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=COORDINATOR)
    form, no_provider = _judge_form(request, collection, initial=services_judges.DEFAULT_CONFIG)
    if request.method == "POST" and form.is_valid():
        config = services_judges.LLMJudgeConfig(
            name=form.cleaned_data["name"], model=form.cleaned_data["model"]
        ).with_changes(form.cleaned_data)
        try:
            judge = services_judges.llm_judge_create(config=config, collections=[collection])
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            messages.success(request, f"Registered the LLM judge {judge.name}; try it first.")
            return see_other(reverse("judging:judge_try", args=[collection.slug, judge.pk]))
    return render(
        request,
        "judging/judge_create.html",
        {
            "collection": collection,
            "form": form,
            "no_provider": no_provider,
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def llm_judge_try(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Try an LLM judge on a few pairs: the prompt as sent, the answer, the grade (no label)."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=COORDINATOR)
    judge = get_object_or_404(Judge, pk=pk, kind=Judge.Kind.LLM, collections=collection)
    trials, refusal = [], ""
    if request.method == "POST":
        try:
            trials = runner.try_judge(
                judge,
                runner.trial_pairs(collection=collection),
                collection=collection,
                user=request.user,
            )
        except ValidationError as error:
            refusal = "; ".join(error.messages)
    return render(
        request,
        "judging/judge_try.html",
        {
            "collection": collection,
            "judge": judge,
            "trials": trials,
            "refusal": refusal,
            "tried": request.method == "POST",
            "count": runner.TRY_PAIRS,
        },
    )
