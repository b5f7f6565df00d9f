"""Metrics pages: leaderboard, run submission, run detail, comparison and topic difficulty.

Thin views: they check access, validate input with a form, call selectors or a service
and render. Access: coordinators see every run; team members see their own team's runs,
and every run once the leaderboard is published; judges (only) get 404 on every page here,
so judging stays blind. Charts are SVG rendered on the server by :mod:`metrics.charts`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_http_methods

from config.http import see_other
from judging.adjudication.services import aggregation_settings_update, quotas_save
from judging.aggregation import POLICIES
from judging.models import Collection, Membership, PolicyChange, Query
from judging.selectors import collection_for_member
from judging.tabs import tab_context
from judging.templatetags.policies import policy_label
from metrics import charts
from metrics.analysis.compare import (
    ComparisonError,
    RunComparison,
    compare_all_pairs,
    compare_runs,
    pair_runs,
)
from metrics.analysis.difficulty import (
    DEFAULT_K,
    SORTS,
    THIN_JUDGED_SHARE,
    THIN_POOL_SIZE,
    empty_report,
    sort_topics,
    topic_difficulty,
)
from metrics.engine.measures import NICKNAMES
from metrics.forms import (
    AggregationSettingsForm,
    AllPairsForm,
    CardSettingsForm,
    CompareForm,
    LeaderboardSettingsForm,
    MeasureForm,
    RepoolForm,
    RunSubmitForm,
)
from metrics.live.scoring import MeasureLabel, canonical_names, expand_measure_sets
from metrics.models import Run, Team
from metrics.pool.forms import PoolingPolicyForm, strategy_fields
from metrics.pool.models import RECOMMENDATION, STRATEGY_CHOICES, strategy_name
from metrics.pool.selectors import pooling_history, pooling_policy, pooling_values
from metrics.pool.services import pooling_policy_set
from metrics.pool.strategies import RECOMMENDED
from metrics.selectors import (
    BOOTSTRAP_CONFIDENCE,
    PROVENANCES,
    Interval,
    Viewer,
    any_stale,
    coverage_label,
    leaderboard,
    live_state,
    measure_labels_of,
    rescore_progress,
    run_for_owner,
    run_for_viewer,
    run_per_query,
    viewer,
    visible_runs,
)
from metrics.services import (
    RunRejected,
    collection_settings_update,
    run_submit,
    runs_repool,
    visibility_and_publication_update,
)
from metrics.visibility.forms import ScoreVisibilityForm
from metrics.visibility.selectors import budgets
from metrics.visibility.selectors import rules as visibility_rules
from metrics.visibility.services import FIELDS as VISIBILITY_FIELDS
from metrics.visibility.services import BudgetExhausted

Role = Membership.Role
RUN_ROLES = (Role.COORDINATOR, Role.TEAM)


def _collection_and_viewer(request: HttpRequest, slug: str) -> tuple[Collection, Viewer]:
    """Return the collection and what the user may see of it; 404 for judges and strangers."""
    collection = collection_for_member(user=request.user, slug=slug, roles=RUN_ROLES)
    return collection, viewer(user=request.user, collection=collection)


def _measure_sets_note(names: list[str]) -> str:
    """Return what the trec_eval sets among ``names`` became (" all_trec: 96 measures; …")."""
    notes = []
    for name in dict.fromkeys(n.strip() for n in names):
        if name not in NICKNAMES:
            continue
        expansion = expand_measure_sets([name])
        by_reason: dict[str, list[str]] = {}
        for member, reason in expansion.left_out.items():
            if member != "runid":
                by_reason.setdefault(reason, []).append(member)
        left = "; ".join(f"{', '.join(ms)}: {reason}" for reason, ms in by_reason.items())
        count = len(canonical_names(expansion.names))
        notes.append(
            f" {name}: {count} measures"
            + (f"; left out {left} (manage.py evaluate prints them)." if left else ".")
        )
    return "".join(notes)


def _is_low(value: float | None, threshold: float) -> bool:
    """Return whether a coverage value is known and below the threshold."""
    return value is not None and not math.isnan(value) and value < threshold


def _base_context(collection: Collection, who: Viewer, active: str) -> dict:
    """Return what every metrics page needs for its header and tabs."""
    return {"collection": collection, "who": who, "active": active}


#: Seconds between two polls of an open leaderboard or run page.
LIVE_POLL_SECONDS = 2


def _live(request: HttpRequest, collection: Collection, who: Viewer) -> tuple[str, bool]:
    """Return the page's live token and whether a poll (``?live=<token>``) saw no change.

    An open leaderboard or run page asks every :data:`LIVE_POLL_SECONDS` with the token
    it was rendered with; an unchanged page answers 204 (htmx leaves the page alone),
    a changed one is rendered again and htmx swaps its live part in.
    """
    token = live_state(collection=collection, who=who)
    return token, request.GET.get("live") == token


def _live_context(token: str) -> dict:
    """Return what the live part of a page needs to poll."""
    return {"live_token": token, "live_poll_seconds": LIVE_POLL_SECONDS}


@dataclass(frozen=True)
class LeaderboardLine:
    """One leaderboard row ready to render: rank, run, coverage and the measure cells."""

    rank: int
    run: Run
    stale: bool
    own: bool
    coverage: float | None
    low_coverage: bool
    cells: list[tuple[MeasureLabel, float | None]]
    interval: Interval | None = None
    human_only: float | None = None
    human_rank: int | None = None
    #: The bias-corrected mean of each cell's measure (``metrics.analysis.ppi.PPICell``).
    ppi_cells: tuple = ()


#: Measure columns the leaderboard shows until the viewer picks others (the sorted one is
#: always shown, too): enough to compare at a glance, few enough to fit at 1366 px.
DEFAULT_SHOWN_COLUMNS = 6


#: The cookie in which the leaderboard's column chooser remembers the shown measures.
COLUMNS_COOKIE = "graded_columns_leaderboard"


def _remembered_columns(request: HttpRequest) -> list[str] | None:
    """Return the measure names the column chooser remembered, or None (none or unreadable).

    The cookie is the browser's, so anything may be in it: only a JSON list of strings of
    sensible size counts.
    """
    raw = request.COOKIES.get(COLUMNS_COOKIE)
    if not raw or len(raw) > 4000:
        return None
    try:
        names = json.loads(unquote(raw))
    except (ValueError, RecursionError):  # RecursionError: "[[[[…" nested past the limit
        return None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return names


def _shown_columns(
    request: HttpRequest,
    columns: list[MeasureLabel],
    by_name: dict[str, MeasureLabel],
    sort: MeasureLabel | None,
) -> list[MeasureLabel]:
    """Return the measure columns to show, in the collection's order.

    The column chooser sends ``chosen=1`` and one ``show`` per ticked measure (names the
    collection does not have are ignored). Without them, the last choice the browser
    remembered (the cookie :data:`COLUMNS_COOKIE`, a JSON list of names written by
    static/js/columns.js) applies, and without that the first
    :data:`DEFAULT_SHOWN_COLUMNS`. The measure the board is sorted by always shows.
    """
    remembered = _remembered_columns(request)
    if "chosen" in request.GET:
        wanted = {by_name[name] for name in request.GET.getlist("show") if name in by_name}
    elif remembered is not None:
        wanted = {by_name[name] for name in remembered if name in by_name}
    else:
        wanted = set(columns[:DEFAULT_SHOWN_COLUMNS])
    if sort is not None:
        wanted.add(sort)
    return [label for label in columns if label in wanted]


@login_required
@require_GET
def run_leaderboard(request: HttpRequest, slug: str) -> HttpResponse:
    """Show the visible runs × the collection's measures, sortable by any measure."""
    collection, who = _collection_and_viewer(request, slug)
    token, unchanged = _live(request, collection, who)
    if unchanged:
        return HttpResponse(status=204)
    labels, unreadable = measure_labels_of(collection)
    coverage = coverage_label(labels)
    columns = [label for label in labels if label is not coverage]
    by_name = {label.canonical: label for label in labels}
    by_name |= {label.requested: label for label in labels}
    sort = by_name.get(request.GET.get("sort", ""), columns[0] if columns else coverage)
    shown = _shown_columns(request, columns, by_name, sort)
    provenance = request.GET.get("provenance", "all")
    if provenance not in PROVENANCES:
        provenance = "all"
    board = leaderboard(
        collection=collection,
        who=who,
        measures=[label.canonical for label in labels],
        sort=sort.canonical if sort else None,
        provenance=provenance,
    )
    threshold = collection.coverage_threshold
    lines = []
    for rank, row in enumerate(board.rows, start=1):
        cov = row.scores.get(coverage.canonical) if coverage else None
        lines.append(
            LeaderboardLine(
                rank=rank,
                run=row.run,
                stale=row.stale,
                own=row.run.team_id in who.team_ids,
                coverage=cov,
                low_coverage=_is_low(cov, threshold),
                cells=[(label, row.scores.get(label.canonical)) for label in shown],
                interval=row.interval,
                human_only=row.human_only,
                human_rank=row.human_rank,
                ppi_cells=tuple(row.ppi.get(label.canonical) for label in shown),
            )
        )
    context = (
        _base_context(collection, who, "leaderboard")
        | {
            "board": board,
            "lines": lines,
            "columns": shown,
            "measure_columns": columns,
            "choices": [
                (label.requested, label.requested, label in shown, label == sort)
                for label in columns
            ],
            "coverage": coverage,
            "labels": labels,
            "unreadable": unreadable,
            "sort": sort,
            "threshold_percent": round(threshold * 100),
            "confidence_percent": round(BOOTSTRAP_CONFIDENCE * 100),
            "alpha": round(1.0 - BOOTSTRAP_CONFIDENCE, 4),
            "intervals": any(line.interval for line in lines),
        }
        | _live_context(token)
    )
    return render(request, "metrics/run_leaderboard.html", context)


@login_required
@require_http_methods(["GET", "POST"])
def run_create(request: HttpRequest, slug: str) -> HttpResponse:
    """Upload a run for one of the user's teams; list every problem, or go to the run."""
    collection, who = _collection_and_viewer(request, slug)
    teams = Team.objects.filter(collection=collection, members=request.user).order_by("name")
    if not who.may_submit:
        if who.is_coordinator:
            # Not a debug 404: say who submits runs and how to become one of them.
            return render(
                request,
                "metrics/run_create_no_team.html",
                {
                    "collection": collection,
                    "who": who,
                    "team_count": Team.objects.filter(collection=collection).count(),
                },
                status=403 if request.method == "POST" else 200,  # a POST writes nothing
            )
        raise Http404("You are not in a team of this collection.")
    posted = request.method == "POST"
    status = 400 if posted else 200
    form = RunSubmitForm(
        request.POST if posted else None, request.FILES if posted else None, teams=teams
    )
    if posted and form.is_valid():
        upload = form.cleaned_data["file"]
        if upload.size > settings.GRADED_RUN_MAX_BYTES:
            form.add_error(
                "file",
                f"File is {upload.size} bytes; the limit is {settings.GRADED_RUN_MAX_BYTES}.",
            )
        else:
            try:
                run = run_submit(
                    collection=collection,
                    team=form.selected_team(),
                    tag=form.cleaned_data["tag"],
                    content=upload.read(),
                    filename=upload.name,
                    user=request.user,
                    description=form.cleaned_data["description"],
                )
            except BudgetExhausted as refused:
                form.add_error(None, refused.message)
                status = 429
            except RunRejected as rejected:
                form.add_rejection(rejected.errors)
            else:
                messages.success(
                    request,
                    f"Run {run.tag} was submitted and scored. It added {run.pairs_pooled} "
                    f"new pair{'' if run.pairs_pooled == 1 else 's'} to the judges' pool "
                    f"(unjudged documents of its top {collection.pool_depth}).",
                )
                url = reverse("metrics:run_detail", args=[collection.slug, run.pk])
                if request.headers.get("X-Requested-With") == "XMLHttpRequest":
                    # upload.js opens the run page itself (a followed redirect would eat
                    # the message above).
                    return HttpResponse(status=201, headers={"Location": url})
                return see_other(url)
    context = _base_context(collection, who, "submit") | {
        "budgets": budgets(collection=collection, teams=teams),
        "form": form,
        "max_megabytes": settings.GRADED_RUN_MAX_BYTES // (1024 * 1024),
    }
    return render(
        request,
        "metrics/run_create.html",
        context,
        status=status,
    )


@dataclass(frozen=True)
class QueryLine:
    """One query of a run's per-query table."""

    query: Query
    retrieved: int
    coverage: float | None
    low_coverage: bool
    #: (measure, value) per measure column, in the columns' order.
    cells: list[tuple[MeasureLabel, float | None]]
    interval: Interval | None = None


#: A run page's tabs: the per-query chart, the per-query table, every measure's mean and
#: the run's particulars; without per-query scores (the score visibility hides them) only
#: the last two.
RUN_TABS = [
    ("chart", "Chart"),
    ("queries", "Queries"),
    ("measures", "Measures"),
    ("about", "About"),
]
RUN_TABS_WITHOUT_QUERIES = [("measures", "Measures"), ("about", "About")]


def _nan_to_none(value: float) -> float | None:
    """Return None for NaN, the float otherwise."""
    value = float(value)
    return None if math.isnan(value) else value


@login_required
@require_GET
def run_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show a run: metadata, mean scores, per-query scores and a chart of one measure."""
    collection, who = _collection_and_viewer(request, slug)
    run = run_for_viewer(collection=collection, who=who, run_id=pk)
    token, unchanged = _live(request, collection, who)
    if unchanged:
        return HttpResponse(status=204)
    labels, unreadable = measure_labels_of(collection)
    form = MeasureForm(request.GET or None, labels=labels)
    chosen = form.label()
    coverage = coverage_label(labels)
    columns = [label for label in labels if label is not coverage]
    policy = who.policy
    per_query = run_per_query(
        run=run,
        measures=[label.canonical for label in labels],
        shown=policy.shows_per_query,
    )
    means = policy.means([run], [label.canonical for label in labels])[run.pk]
    threshold = collection.coverage_threshold
    version = collection.judgments_version
    lines = []
    for i, query in enumerate(per_query.queries):
        cov = _nan_to_none(per_query.values[coverage.canonical][i]) if coverage else None
        lines.append(
            QueryLine(
                query=query,
                retrieved=per_query.retrieved[i],
                coverage=cov,
                low_coverage=_is_low(cov, threshold),
                cells=[(c, _nan_to_none(per_query.values[c.canonical][i])) for c in columns],
            )
        )
    tabs = tab_context(
        request.GET, RUN_TABS if policy.shows_per_query else RUN_TABS_WITHOUT_QUERIES
    )
    chart = None
    if chosen is not None and lines and tabs["tab"] == "chart":
        chart = mark_safe(  # charts.bar_chart escapes all text
            charts.for_screens(
                lambda width: charts.bar_chart(
                    [line.query.external_id for line in lines],
                    per_query.values[chosen.canonical].tolist(),
                    title=f"{chosen.requested} per query — {run.tag}",
                    value_label=chosen.requested,
                    notes=[line.query.text for line in lines],
                    flagged=[line.low_coverage for line in lines],
                    flag_text=f"Judged@10 below {round(threshold * 100)}%",
                    width=width,
                )
            )
        )
    context = (
        _base_context(collection, who, "leaderboard")
        | {
            "run": run,
            "stale": run.scored_version < version,
            "may_download": bool(run.source_file)
            and (who.is_coordinator or run.team_id in who.team_ids),
            "labels": labels,
            "unreadable": unreadable,
            "columns": columns,
            "coverage": coverage,
            "summary": [(label, means.get(label.canonical)) for label in labels],
            "score_note": policy.note,
            "lines": lines,
            "low_count": sum(line.low_coverage for line in lines),
            "form": form,
            "chosen": chosen,
            "chart": chart,
            "threshold_percent": round(threshold * 100),
        }
        | tabs
        | _live_context(token)
    )
    return render(request, "metrics/run_detail.html", context)


@login_required
@require_GET
def run_file(request: HttpRequest, slug: str, pk: int) -> FileResponse:
    """Send the run file as submitted, to its team's members and coordinators."""
    collection, who = _collection_and_viewer(request, slug)
    run = run_for_owner(collection=collection, who=who, run_id=pk)
    if not run.source_file:
        raise Http404("The run file is not kept.")
    try:
        handle = run.source_file.open("rb")
    except FileNotFoundError as exc:
        raise Http404("The run file is missing.") from exc
    return FileResponse(
        handle, as_attachment=True, filename=PurePosixPath(run.source_file.name).name
    )


#: The comparison's tabs: the table of tests, or the per-query differences as a chart.
#: The p-value under which the comparison's key numbers count a run as better or worse.
SIGNIFICANCE = 0.05


@login_required
@require_GET
def run_compare(request: HttpRequest, slug: str) -> HttpResponse:
    """Compare run A with run B, a baseline with several runs, or every pair, on one measure."""
    collection, who = _collection_and_viewer(request, slug)
    labels, unreadable = measure_labels_of(collection)
    runs = visible_runs(collection=collection, who=who).order_by("tag")
    get = request.GET
    every_pair = "pairs" in get
    submitted = not every_pair and (
        "measure" in get or {"a", "b"} <= get.keys() or {"baseline", "runs"} <= get.keys()
    )
    if submitted:
        form = CompareForm(get, runs=runs, labels=labels)
    else:  # a link such as the run page's "Compare…" only preselects runs
        form = CompareForm(initial={} if every_pair else get.dict(), runs=runs, labels=labels)
    pairs_form = AllPairsForm(get if every_pair else None, runs=runs, labels=labels)
    comparison = error = chosen = all_pairs = None
    delta_charts: list[str | None] = []
    if not who.policy.shows_per_query:
        pass  # a comparison is per-query deltas: the template says why there is none
    elif every_pair:
        if pairs_form.is_valid() and (chosen := pairs_form.label()) is not None:
            chosen_runs = list(pairs_form.cleaned_data["runs"]) or pair_runs(
                collection=collection, who=who, measure=chosen.canonical
            )
            try:
                all_pairs = compare_all_pairs(
                    runs=chosen_runs,
                    measure=chosen.canonical,
                    correction=pairs_form.chosen_correction(),
                )
            except ComparisonError as exc:
                error = str(exc)
    elif form.is_bound and form.is_valid() and (chosen := form.label()) is not None:
        try:
            comparison = compare_runs(
                baseline=form.cleaned_data["baseline"],
                runs=form.cleaned_data["compared"],
                measure=chosen.canonical,
            )
        except ComparisonError as exc:
            error = str(exc)
        else:
            names = [q.external_id for q in comparison.queries]
            delta_charts = [
                mark_safe(  # charts.delta_chart escapes all text
                    charts.for_screens(
                        lambda width, row=row: charts.delta_chart(
                            names,
                            row.deltas,
                            title=f"{chosen.requested}: {row.run.tag} − {comparison.baseline.tag}",
                            a_name=row.run.tag,
                            b_name=comparison.baseline.tag,
                            width=width,
                        )
                    )
                )
                for row in comparison.rows
            ]
    compared_runs = (
        [comparison.baseline, *(row.run for row in comparison.rows)]
        if comparison
        else [r.run for r in all_pairs.runs]
        if all_pairs
        else []
    )
    context = _base_context(collection, who, "compare") | {
        "form": form,
        "pairs_form": pairs_form,
        "labels": labels,
        "unreadable": unreadable,
        "chosen": chosen,
        "comparison": comparison,
        "all_pairs": all_pairs,
        "every_pair": every_pair,
        "rows": list(zip(comparison.rows, delta_charts, strict=True)) if comparison else [],
        # The chart's numbers beside it (issue 41): each query's difference per run, signed.
        "per_query": [
            (query, [float(row.deltas[i]) for row in comparison.rows])
            for i, query in enumerate(comparison.queries)
        ]
        if comparison
        else [],
        "error": error,
        "several": "baseline" in get and comparison is None,
        "better": _significant(comparison, better=True),
        "worse": _significant(comparison, better=False),
        "stale": bool(compared_runs) and any_stale(collection=collection, runs=compared_runs),
    }
    return render(request, "metrics/run_compare.html", context)


def _significant(comparison: RunComparison | None, *, better: bool) -> int:
    """Count the runs significantly better (or worse) than the baseline (t-test, p ≤ 0.05).

    The p-value is the one the table shows: Holm-adjusted when several runs meet one
    baseline.
    """
    if comparison is None:
        return 0
    return sum(
        row.adjusted["t"] <= SIGNIFICANCE and (row.result.mean_diff > 0) == better
        for row in comparison.rows
        if row.result.mean_diff != 0
    )


#: Queries per page of the topic difficulty table (and its box plot).
DIFFICULTY_PAGE_SIZE = 10

#: The topic difficulty page's tabs: the table, or the same page of queries as a box plot.
DIFFICULTY_TABS = [("table", "Table"), ("chart", "Box plot")]


@login_required
@require_GET
def query_difficulty(request: HttpRequest, slug: str) -> HttpResponse:
    """Show per live query the runs' sNDCG@10 box plot, difficulty ratio and RNDCG@10."""
    collection, who = _collection_and_viewer(request, slug)
    sort = request.GET.get("sort", "difficulty")
    if sort not in SORTS:
        sort = "difficulty"
    runs = list(visible_runs(collection=collection, who=who).order_by("tag"))
    if who.policy.shows_per_query:
        report = topic_difficulty(collection=collection, runs=runs, k=DEFAULT_K)
    else:  # per-query scores and each pool's grades: nothing of it may be shown
        runs = []
        report = empty_report(k=DEFAULT_K)
    every = sort_topics(report.topics, sort)
    page = Paginator(every, DIFFICULTY_PAGE_SIZE).get_page(request.GET.get("page"))
    topics = list(page.object_list)
    tabs = tab_context(request.GET, DIFFICULTY_TABS)
    chart = None
    if topics and runs and tabs["tab"] == "chart":
        groups = [
            charts.BoxGroup(
                t.query.external_id,
                t.sndcg.tolist(),
                note=t.query.text,
                annotation="–" if math.isnan(t.difficulty) else f"{t.difficulty:.2f}",
                muted=t.thin_reason is not None,
            )
            for t in topics
        ]
        chart = mark_safe(  # charts.box_plot escapes all text
            charts.for_screens(
                lambda width: charts.box_plot(
                    groups,
                    annotation_label="difficulty",
                    title=f"sNDCG@{report.k} of {len(runs)} runs per query",
                    value_label=f"sNDCG@{report.k} (0 = random reranking of the pool)",
                    width=width,
                )
            )
        )
    context = (
        _base_context(collection, who, "difficulty")
        | {
            "report": report,
            "topics": topics,
            "page": page,
            "topic_count": len(every),
            "rated_count": sum(t.difficulty_class is not None and not t.thin_reason for t in every),
            "chart": chart,
            "sort": sort,
            "sorts": SORTS,
            "thin_count": sum(t.thin_reason is not None for t in every),
            "thin_pool": THIN_POOL_SIZE,
            "thin_judged_percent": round(100 * THIN_JUDGED_SHARE),
        }
        | tabs
    )
    return render(request, "metrics/query_difficulty.html", context)


AGGREGATION_FIELDS = (
    "aggregation_policy",
    "judges_per_pair",
    "max_judges_per_pair",
    "disagreement_spread",
    "agreement_alert_threshold",
    "llm_hint",
    "evidence",
    "evidence_from_grade",
)
#: The aggregation settings the judging card's tab shows (the rest are on the aggregation tab).
CARD_FIELDS = ("llm_hint", "evidence", "evidence_from_grade")


#: The settings page's tabs (judging.tabs), one form each, and the form action each saves.
SETTINGS_TABS = (
    ("measures", "Measures"),
    ("visibility", "Visibility"),
    ("depth", "Pool depth"),
    ("pooling", "Pooling"),
    ("aggregation", "Aggregation"),
    ("card", "Card"),
    ("quotas", "Quotas"),
)
SETTINGS_TAB_OF_ACTION = {
    "settings": "measures",
    "visibility": "visibility",
    "repool": "depth",
    "pooling": "pooling",
    "aggregation": "aggregation",
    "card": "card",
    "quota": "quotas",
}


def settings_url(collection: Collection, tab: str) -> str:
    """Return the address of one tab of a collection's settings page."""
    return reverse("metrics:collection_update", args=[collection.slug]) + f"?tab={tab}"


@login_required
@require_http_methods(["GET", "POST"])
def collection_update(request: HttpRequest, slug: str) -> HttpResponse:
    """Let a coordinator change the leaderboard, score visibility, pooling and aggregation.

    One form a tab (``?tab=``); a form that posts comes back to its own tab, and a refused
    one is shown again there with its errors.
    """
    collection = collection_for_member(user=request.user, slug=slug, roles=(Role.COORDINATOR,))
    action = request.POST.get("action") if request.method == "POST" else None
    settings_form = LeaderboardSettingsForm(
        request.POST if action == "settings" else None,
        initial={
            "measures": "\n".join(collection.measures),
            "coverage_threshold": collection.coverage_threshold,
        },
    )
    repool_form = RepoolForm(
        request.POST if action == "repool" else None, initial={"depth": collection.pool_depth}
    )
    aggregation_form = AggregationSettingsForm(
        request.POST if action == "aggregation" else None,
        policies=[(p.name, p.label) for p in POLICIES.values()],
        initial={name: getattr(collection, name) for name in AGGREGATION_FIELDS},
    )
    card_form = CardSettingsForm(
        request.POST if action == "card" else None,
        initial={name: getattr(collection, name) for name in CARD_FIELDS},
    )
    pooling = pooling_policy(collection=collection)
    pooling_form = PoolingPolicyForm(
        request.POST if action == "pooling" else None,
        initial=pooling_values(collection=collection),
    )
    rules = visibility_rules(collection=collection)
    visibility_form = ScoreVisibilityForm(
        request.POST if action == "visibility" else None,
        initial={
            **{name: getattr(rules, name) for name in VISIBILITY_FIELDS},
            **{name: getattr(collection, name) for name in ScoreVisibilityForm.PUBLICATION_FIELDS},
        },
    )
    judge_memberships = list(
        Membership.objects.filter(collection=collection, role=Role.JUDGE)
        .select_related("user")
        .order_by("user__username")
    )
    try:
        if action == "quota":
            quotas_save(collection=collection, memberships=judge_memberships, data=request.POST)
            messages.success(request, "Quotas saved.")
            return see_other(settings_url(collection, "quotas"))
        if action == "aggregation" and aggregation_form.is_valid():
            change = aggregation_settings_update(
                collection=collection, actor=request.user, **aggregation_form.cleaned_data
            )
            messages.success(
                request,
                f"Aggregation policy now “{policy_label(change.policy)}”; every run is being "
                "rescored."
                if change
                else "Aggregation settings saved.",
            )
            return see_other(settings_url(collection, "aggregation"))
        if action == "card" and card_form.is_valid():
            aggregation_settings_update(
                collection=collection, actor=request.user, **card_form.cleaned_data
            )
            messages.success(request, "Judging card settings saved.")
            return see_other(settings_url(collection, "card"))
        if action == "settings" and settings_form.is_valid():
            data = settings_form.cleaned_data
            collection_settings_update(
                collection=collection,
                measures=data["measures"].splitlines(),
                coverage_threshold=data["coverage_threshold"],
            )
            sets = _measure_sets_note(data["measures"].splitlines())
            messages.success(request, f"Settings saved; every run was rescored.{sets}")
            return see_other(settings_url(collection, "measures"))
        if action == "visibility" and visibility_form.is_valid():
            visibility_and_publication_update(collection=collection, **visibility_form.cleaned_data)
            messages.success(request, "Score visibility, budget and publication saved.")
            return see_other(settings_url(collection, "visibility"))
        if action == "pooling" and pooling_form.is_valid():
            policy = pooling_policy_set(
                collection=collection, actor=request.user, **pooling_form.cleaned_data
            )
            messages.success(
                request,
                f"Pooling policy version {policy.version}: {strategy_name(policy.strategy)}, "
                f"{policy.planned_pairs} pairs planned."
                if policy
                else "The pooling policy is unchanged.",
            )
            return see_other(settings_url(collection, "pooling"))
        if action == "repool" and repool_form.is_valid():
            added = runs_repool(collection=collection, depth=repool_form.cleaned_data["depth"])
            messages.success(
                request, f"Pooled at depth {collection.pool_depth}: {added} new pairs."
            )
            return see_other(settings_url(collection, "depth"))
    except ValidationError as error:
        if action == "quota":
            messages.error(request, " ".join(error.messages))
            return see_other(settings_url(collection, "quotas"))
        form = {
            "settings": settings_form,
            "aggregation": aggregation_form,
            "card": card_form,
            "pooling": pooling_form,
            "visibility": visibility_form,
        }.get(action, repool_form)
        for field, problems in error.message_dict.items():
            form.add_error(field if field in form.fields else None, problems)
    posted = SETTINGS_TAB_OF_ACTION.get(action or "")
    # Quotas are per judge: the tab shows once the collection has judges.
    sections = [
        (key, label) for key, label in SETTINGS_TABS if key != "quotas" or judge_memberships
    ]
    tabs = tab_context(request.GET, sections, chosen=posted)
    context = {
        **_base_context(collection, viewer(user=request.user, collection=collection), "settings"),
        **tabs,
        "tabs_label": "Settings",
        "settings_form": settings_form,
        "visibility_form": visibility_form,
        "repool_form": repool_form,
        "pooling_form": pooling_form,
        "pooling_fields": strategy_fields(pooling_form),
        "strategies": [(value, label) for value, label in STRATEGY_CHOICES],
        "pooling_recommendation": RECOMMENDATION,
        "recommended_strategy": RECOMMENDED,
        "pooling": pooling,
        "aggregation_form": aggregation_form,
        "card_form": card_form,
        "judge_memberships": judge_memberships,
    }
    if tabs["tab"] == "pooling":
        context["pooling_history"] = pooling_history(collection=collection)[:10]
    if tabs["tab"] == "aggregation":
        context |= {
            # plain values: a policy is callable, and templates call what they can
            "policies": [
                {"name": p.name, "label": p.label, "description": p.description}
                for p in POLICIES.values()
            ],
            "policy_changes": PolicyChange.objects.filter(collection=collection)
            .select_related("actor")
            .order_by("-at", "-pk")[:10],
            "rescore_progress": rescore_progress(collection=collection),
        }
    return render(
        request,
        "metrics/collection_update.html",
        context,
        status=400 if request.method == "POST" else 200,
    )
