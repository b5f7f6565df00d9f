"""Judging pages: thin views that validate, call a service or selectors, and render.

Every view needs a logged-in user and checks object-level access through
``selectors.collection_for_member`` (404 for non-members). Judging pages are for judges and
coordinators; team members get 404 there. A judge only ever sees their own labels.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from config.http import see_other
from config.params import whole_param
from judging import (
    evidence,
    selectors,
    selectors_card,
    selectors_pictures,
    services,
    services_undo,
)
from judging.agreement import selectors as selectors_agreement
from judging.agreement import selectors as selectors_agreement_judges
from judging.forms import (
    DocumentImportForm,
    JudgmentFilterForm,
    JudgmentForm,
    JudgmentUpdateForm,
    PoolEntryCreateForm,
    add_service_errors,
)
from judging.models import (
    Collection,
    Document,
    Judge,
    Judgment,
    JudgmentEvent,
    Membership,
    PoolEntry,
    Query,
)
from judging.quality import gold as gold_stats
from judging.quality import selectors as quality_selectors
from judging.rendering import highlight, render_body, render_guidelines
from judging.tabs import tab_context

Role = Membership.Role
JUDGING_ROLES = (Role.JUDGE, Role.COORDINATOR)
JUDGMENTS_PER_PAGE = 25  # a page of the list box, which scrolls by itself (issue 34)
SAVED_KEY = "judging_saved"


def _judge(request: HttpRequest) -> Judge:
    """Return the human judge of the logged-in user, creating it on first use."""
    judge = getattr(request.user, "judge", None)
    return judge if judge is not None else services.judge_for_user(user=request.user)


def _label_text(collection: Collection, judgment: Judgment | None) -> str:
    """Return a judge's own label as words: the grade's name or the status."""
    if judgment is None:
        return ""
    if judgment.status == Judgment.Status.GRADED and judgment.grade is not None:
        return f"{judgment.grade} · {collection.grade_names[judgment.grade]}"
    return judgment.get_status_display()


@login_required
@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """List the user's collections with their judging progress."""
    collections = selectors.collections_with_progress(
        user=request.user, judge=getattr(request.user, "judge", None)
    )
    can_create = request.user.is_staff or any("coordinator" in c.roles for c in collections)
    return render(
        request,
        "judging/collection_list.html",
        {"collections": collections, "can_create": can_create},
    )


#: The coordinator's collection page, a section at a time (page grammar, docs/ui.md).
COORDINATOR_TABS = [("overview", "Overview"), ("progress", "Progress"), ("stability", "Stability")]


@login_required
@require_GET
def collection_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show a collection's guidelines, the user's progress and, for coordinators, counts."""
    collection = selectors.collection_for_member(user=request.user, slug=slug)
    roles = selectors.user_roles(user=request.user, collection=collection)
    can_judge = bool(roles & set(JUDGING_ROLES))
    is_coordinator = Role.COORDINATOR in roles
    context = {
        "collection": collection,
        "roles": roles,
        "can_judge": can_judge,
        "is_coordinator": is_coordinator,
        "guidelines_html": render_guidelines(collection.guidelines),
        "progress": (
            selectors.judge_progress(judge=_judge(request), collection=collection)
            if can_judge
            else None
        ),
        "counts": selectors.collection_counts(collection=collection) if is_coordinator else None,
        "is_adjudicator": is_coordinator or Role.ADJUDICATOR in roles,
        "agreement_alerts": (
            selectors_agreement_judges.actionable_agreement(
                collection=collection, with_reliability=False
            ).alerts
            if is_coordinator
            else ()
        ),
    }
    if is_coordinator:  # the coordinator's page has tabs: the tools, progress, stability
        context.update(tab_context(request.GET, COORDINATOR_TABS))
        if context["tab"] == "progress":
            chart, series = selectors_pictures.progress_chart(collection=collection)
            context.update(progress_chart=chart, progress_series=series)
    return render(request, "judging/collection_detail.html", context)


def _render_card(
    request: HttpRequest,
    *,
    collection: Collection,
    judge: Judge,
    entry: PoolEntry | None,
    judgment: Judgment | None,
    previous_id: int | None,
    form: JudgmentForm | None = None,
    status: int = 200,
) -> HttpResponse:
    """Render the judging card for ``entry`` (or the "all done" state when it is None)."""
    if form is not None:
        note = form.data.get("note", "")
    else:
        note = judgment.note if judgment is not None else ""
    if form is not None and "evidence" in form.data:  # what the judge had marked, again
        evidence_json = form.data["evidence"]
    else:
        spans = judgment.evidence if judgment is not None and judgment.evidence else []
        evidence_json = json.dumps(spans, ensure_ascii=False)
    context = {
        "collection": collection,
        "entry": entry,
        "judgment": judgment,
        "current_label": _label_text(collection, judgment),
        # Opaque ids, never primary keys: those say in which order pairs were pooled.
        "previous_ref": selectors.pair_ref(previous_id) if previous_id else None,
        "entry_ref": selectors.pair_ref(entry.pk) if entry is not None else None,
        "progress": selectors.judge_progress(judge=judge, collection=collection),
        "form": form,
        "guidelines_html": render_guidelines(collection.guidelines),
        "note": note,
        "saved": request.session.pop(SAVED_KEY, "") if form is None else "",
        "evidence_on": collection.evidence != "off",
        "evidence_required": collection.evidence == "required",
        "evidence_json": evidence_json,
    }
    if entry is None:  # all done, or the judge's quota reached: the card says which
        quota = selectors.quota_state(judge=judge, collection_id=collection.pk)
        context["quota"] = quota if quota is not None and quota.left == 0 else None
    if entry is not None:
        query_text = entry.query.text
        document = entry.document
        in_query = selectors_card.query_progress(
            judge=judge,
            entry=entry,
            is_final=judgment is not None and judgment.status in selectors.FINAL_STATUSES,
            gold=collection.gold_rate > 0,
        )
        context.update(
            in_query=in_query,
            llm_hint=selectors_card.llm_hint(collection=collection, judge=judge, entry=entry),
            query=entry.query,
            document=document,
            title_html=highlight(document.title, query_text),
            body_html=render_body(document.body, query_text),
            extra=sorted(document.extra.items()) if isinstance(document.extra, dict) else [],
        )
    return render(request, "judging/judgment_create.html", context, status=status)


@login_required
@require_GET
def judge_next(request: HttpRequest, slug: str) -> HttpResponse:
    """Show the card of the next pair to judge, staying with the current query while it lasts."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=JUDGING_ROLES)
    judge = _judge(request)
    entry = selectors.next_pair(
        judge=judge,
        collection=collection,
        current_query_id=selectors.last_query_id(judge=judge, collection=collection),
    )
    judgment = selectors.judgment_of(judge=judge, entry=entry) if entry is not None else None
    previous_id = selectors.previous_entry_id(judge=judge, collection=collection, before=None)
    if entry is not None and previous_id == entry.pk:
        # A pair put off with "later" and judged last: go back past it.
        previous_id = selectors.previous_entry_id(
            judge=judge, collection=collection, before=judgment
        )
    return _render_card(
        request,
        collection=collection,
        judge=judge,
        entry=entry,
        judgment=judgment,
        previous_id=previous_id,
    )


@login_required
@require_http_methods(["GET", "POST"])
def judge_pair(request: HttpRequest, slug: str, entry_id: int) -> HttpResponse:
    """Show one pair's card (to go back or re-grade), or record the judge's label for it.

    ``entry_id`` is the pair's opaque id (:func:`judging.selectors.pair_ref`).
    """
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=JUDGING_ROLES)
    judge = _judge(request)
    pk = selectors.pair_pk(entry_id)
    if pk is None:
        raise Http404("No such pair.")
    entry = selectors.pool_entry_for_judge(collection=collection, entry_id=pk)
    judgment = selectors.judgment_of(judge=judge, entry=entry)
    form = None
    status = 200
    if request.method == "POST":
        status = 400
        form = JudgmentForm(request.POST)
        if form.is_valid():
            label = form.label(previous=judgment)
            shown = form.cleaned_data["llm_shown"]
            if shown:  # the card says it showed an LLM grade: only if the rule allows it
                shown = selectors_card.llm_hint_due(collection=collection, judge=judge, entry=entry)
            try:
                saved = services.judgment_record(
                    judge=judge,
                    query=entry.query,
                    document=entry.document,
                    channel=JudgmentEvent.Channel.BROWSER,
                    actor=request.user,
                    saw_llm_grade=shown,
                    evidence_rule=True,
                    **label,
                )
            except ValidationError as error:
                add_service_errors(form, error)
            except services.QuotaReached as refused:
                form.add_error(None, str(refused))
                status = 403
            else:
                request.session[SAVED_KEY] = (
                    f"Saved {_label_text(collection, saved)} for "
                    f"{entry.query.external_id} / {entry.document.external_id}."
                )
                return see_other(reverse("judging:judge_next", args=[collection.slug]))
    return _render_card(
        request,
        collection=collection,
        judge=judge,
        entry=entry,
        judgment=judgment,
        previous_id=selectors.previous_entry_id(
            judge=judge, collection=collection, before=judgment
        ),
        form=form,
        status=status,
    )


@login_required
@require_http_methods(["POST"])
def judge_undo(request: HttpRequest, slug: str) -> HttpResponse:
    """Undo the judge's last change (Ctrl+Z) and show that pair's card again."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=JUDGING_ROLES)
    try:
        entry = services_undo.judgment_undo_last(
            judge=_judge(request), collection=collection, actor=request.user
        )
    except services.QuotaReached as refused:  # undoing back to a final label counts
        request.session[SAVED_KEY] = f"Not undone. {refused}"
        return see_other(reverse("judging:judge_next", args=[collection.slug]))
    if entry is None:
        request.session[SAVED_KEY] = "Nothing to undo."
        return see_other(reverse("judging:judge_next", args=[collection.slug]))
    request.session[SAVED_KEY] = (
        f"Undone: {entry.query.external_id} / {entry.document.external_id} "
        "is back as it was before your last change."
    )
    return see_other(
        reverse("judging:judge_pair", args=[collection.slug, selectors.pair_ref(entry.pk)])
    )


@login_required
@require_GET
def judgment_list(request: HttpRequest, slug: str) -> HttpResponse:
    """List the judge's own judgments, newest first, filtered and paginated."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=JUDGING_ROLES)
    form = JudgmentFilterForm(request.GET, collection=collection)
    judgments = selectors.judgments_of_judge(
        judge=_judge(request), collection=collection, **form.filters()
    )
    page = Paginator(judgments, JUDGMENTS_PER_PAGE).get_page(request.GET.get("page"))
    for judgment in page:
        judgment.label_text = _label_text(collection, judgment)
    told = quality_selectors.standing_told(collection=collection, judge=_judge(request))
    context = {
        "collection": collection,
        "form": form,
        "page": page,
        "filtered": any(value is not None for value in form.filters().values()),
        # Never which pairs are gold, nor how many gold pairs, nor when the standing
        # moved, nor whether the judge is below the bar or still qualifying: only whether
        # labels count, as of the judge's last 20 pairs.
        "not_counted": told in (gold_stats.QUALIFYING, gold_stats.UNQUALIFIED),
    }
    return render(request, "judging/judgment_list.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def judgment_update(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Change one of the judge's own judgments (history records the change)."""
    collection = selectors.collection_for_member(user=request.user, slug=slug, roles=JUDGING_ROLES)
    judgment = get_object_or_404(
        selectors.judgments_of_judge(judge=_judge(request), collection=collection), pk=pk
    )
    initial = {"status": judgment.status, "grade": judgment.grade, "note": judgment.note}
    form = JudgmentUpdateForm(request.POST or None, collection=collection, initial=initial)
    if request.method == "POST" and form.is_valid():
        try:
            services.judgment_record(
                judge=judgment.judge,
                query=judgment.query,
                document=judgment.document,
                grade=form.cleaned_data["grade"],
                status=form.cleaned_data["status"],
                note=form.cleaned_data["note"],
                seconds=judgment.seconds,
                abstain_probability=judgment.abstain_probability,
                channel=JudgmentEvent.Channel.BROWSER,
                actor=request.user,
                evidence_rule=True,  # the spans stay; the collection's rule still applies
            )
        except ValidationError as error:
            if "evidence" in getattr(error, "message_dict", {}):
                error = ValidationError(
                    [
                        *error.message_dict["evidence"],
                        "Evidence is marked on the pair's judging card (open it from "
                        "“Judge” and go back to this pair).",
                    ]
                )
            add_service_errors(form, error)
        except services.QuotaReached as refused:
            form.add_error(None, str(refused))
        else:
            messages.success(
                request,
                f"Saved your judgment of {judgment.query.external_id} / "
                f"{judgment.document.external_id}.",
            )
            return see_other(reverse("judging:judgment_list", args=[collection.slug]))
    query_text, document = judgment.query.text, judgment.document
    context = {
        "collection": collection,
        "judgment": judgment,
        "form": form,
        "current_label": _label_text(collection, judgment),
        "title_html": highlight(document.title, query_text),
        "body_html": render_body(document.body, query_text),
    }
    return render(
        request,
        "judging/judgment_update.html",
        context,
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def pool_entry_create(request: HttpRequest, slug: str) -> HttpResponse:
    """Let a coordinator add (query id, document id) pairs to the pool, all or nothing."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
    )
    form = PoolEntryCreateForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        rows = form.cleaned_data["rows"]
        try:
            added = services.pool_add(
                collection=collection, pairs=rows, line_errors=form.cleaned_data["line_errors"]
            )
        except ValidationError as error:
            form.add_error("file" if form.cleaned_data.get("file") else "pairs", error)
        else:
            already = len({(r.query_external_id, r.document_external_id) for r in rows}) - added
            messages.success(
                request,
                f"Added {added} new pair{'s' if added != 1 else ''} to the pool"
                + (f" ({already} already pooled)." if already else "."),
            )
            return see_other(reverse("judging:collection_detail", args=[collection.slug]))
    return render(
        request,
        "judging/poolentry_create.html",
        {"collection": collection, "form": form},
        status=400 if request.method == "POST" else 200,
    )


MISSING_SHOWN = 200


@login_required
@require_http_methods(["GET", "POST"])
def document_import(request: HttpRequest, slug: str) -> HttpResponse:
    """List pooled documents without content and let a coordinator import documents.

    ``?format=txt`` returns every missing document id as plain text, one per line.
    """
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
    )
    missing = selectors.pooled_documents_without_content(collection=collection)
    if request.method == "GET" and request.GET.get("format") == "txt":
        ids = missing.values_list("external_id", flat=True)
        return HttpResponse("".join(f"{docno}\n" for docno in ids), content_type="text/plain")
    form = DocumentImportForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        try:
            summary = services.documents_import(
                collection=collection, rows=form.cleaned_data["rows"]
            )
        except ValidationError as error:
            form.add_error("file", error)
        else:
            messages.success(
                request, f"Imported documents: {summary.created} new, {summary.updated} updated."
            )
            return see_other(reverse("judging:document_import", args=[collection.slug]))
    shown = list(missing[: MISSING_SHOWN + 1])
    return render(
        request,
        "judging/document_import.html",
        {
            "collection": collection,
            "form": form,
            "missing": shown[:MISSING_SHOWN],
            "missing_count": missing.count() if len(shown) > MISSING_SHOWN else len(shown),
            "more_missing": len(shown) > MISSING_SHOWN,
        },
        status=400 if request.method == "POST" else 200,
    )


@login_required
@require_GET
def collection_agreement(request: HttpRequest, slug: str) -> HttpResponse:
    """Show coordinators the label coverage and the agreement between judges.

    ``?sort=`` orders the per-query coverage table (least complete first by default).
    """
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
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
    report = selectors_agreement.agreement_report(collection=collection, guidelines_version=version)
    queries, sort = selectors_agreement.sorted_query_coverage(
        report.coverage.queries, request.GET.get("sort")
    )
    tabs = tab_context(request.GET, AGREEMENT_TABS, fallback=_agreement_tab_meant(request.GET))
    context = {
        "collection": collection,
        "report": report,
        "queries": queries,
        "sort": sort,
        "sort_label": selectors_agreement.COVERAGE_SORTS[sort].lower(),
        "guidelines_version": version,
        "version_error": version_error,
        **tabs,
    }
    if tabs["tab"] in ("judges", "agreement"):
        context["actionable"] = selectors_agreement_judges.actionable_agreement(
            collection=collection
        )
        # Each picture beside the numbers it draws (issue 41): the grade mix with the judges'
        # grades, the κ heatmap and two judges' confusion matrix with the pairwise table.
        context["pictures"] = selectors_pictures.agreement_pictures(
            collection=collection,
            report=report,
            a=request.GET.get("a"),
            b=request.GET.get("b"),
            with_confusion=tabs["tab"] == "agreement",
        )
    return render(
        request,
        "judging/collection_agreement.html",
        context,
        status=400 if version_error else 200,
    )


#: The agreement page, a section at a time: what to act on first (page grammar, docs/ui.md).
#: The pictures are not a tab: each sits with the numbers it draws (issue 41).
AGREEMENT_TABS = [
    ("judges", "Judges"),
    ("coverage", "Coverage"),
    ("agreement", "Agreement"),
]


def _agreement_tab_meant(params: QueryDict) -> str | None:
    """Return the tab a link without one meant: a sort is coverage, a and b are pictures.

    ``part`` named one of the Agreement tab's tables when they were shown one at a time;
    ``tab=pictures`` the pictures' own tab, whose grade mix (``pic=mix``) is now on the
    Judges tab and whose heatmap and confusion matrix are on the Agreement tab.
    """
    if "part" in params:
        return "agreement"
    if "sort" in params:
        return "coverage"
    if params.get("tab") == "pictures":
        return "judges" if params.get("pic") == "mix" else "agreement"
    if "a" in params or "b" in params:
        return "agreement"
    return None


def _history_label(collection: Collection, label: dict | None) -> str:
    """Return a label recorded in history as words: the grade and its name, or the status."""
    if not label:
        return "—"
    grade, status = label.get("grade"), label.get("status", Judgment.Status.GRADED)
    if isinstance(grade, int):  # a judge's grade, or an adjudicated final grade
        names = collection.grade_names
        return f"{grade} · {names[grade]}" if 0 <= grade < len(names) else str(grade)
    return dict(Judgment.Status.choices).get(status, str(status))


@login_required
@require_GET
def judgment_history(
    request: HttpRequest, slug: str, query_id: int, document_id: int
) -> HttpResponse:
    """Show every change of the labels of one pair: who, the label, when, and through what.

    Coordinators see every judge's events with names; adjudicators see them with judges
    numbered (names are for coordinators); a judge sees only their own label's history
    (judging is blind), and a pair they never labelled is not found.
    """
    collection = selectors.collection_for_member(
        user=request.user,
        slug=slug,
        roles=(Role.JUDGE, Role.COORDINATOR, Role.ADJUDICATOR),
    )
    roles = selectors.user_roles(user=request.user, collection=collection)
    query = get_object_or_404(Query, pk=query_id, collection=collection)
    document = get_object_or_404(Document, pk=document_id, collection=collection)
    everyone = bool(roles & {Role.COORDINATOR, Role.ADJUDICATOR})
    events = selectors.pair_history(
        collection=collection,
        query_id=query.pk,
        document_id=document.pk,
        judge=None if everyone else _judge(request),
        show_names=Role.COORDINATOR in roles or not everyone,  # a judge's own name
    )
    if not everyone and not events:
        raise Http404("You have no label on this pair.")
    with_spans = any((e.after or e.before or {}).get("evidence") for e in events)
    text = evidence.document_text(document.body) if with_spans else ""
    rows = [
        {
            "event": event,
            "before": _history_label(collection, event.before),
            "after": _history_label(collection, event.after),
            "note": (event.after or {}).get("note") or (event.after or {}).get("reason") or "",
            # the spans the label had after the change (before it, for a deletion)
            "evidence": evidence.in_context(
                (event.after or event.before or {}).get("evidence"), text
            ),
        }
        for event in events
    ]
    context = {
        "collection": collection,
        "query": query,
        "document": document,
        "rows": rows,
        "everyone": everyone,
        "can_adjudicate": everyone,
        "is_coordinator": Role.COORDINATOR in roles,
    }
    return render(request, "judging/judgment_history.html", context)
