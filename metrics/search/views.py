"""Pages of live search (coordinators): configurations, *Try it*, *Run it*, snapshots."""

from __future__ import annotations

import json
from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.db.models import QuerySet
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods

from judging.models import Collection, Judge, Membership
from judging.selectors import collection_for_member
from metrics import charts
from metrics import services as metrics_services
from metrics.models import Team
from metrics.schedules.models import SearchSchedule
from metrics.search import selectors, services
from metrics.search.forms import ConfigurationForm, DiffForm, SnapshotForm
from metrics.selectors import measure_labels_of, viewer


def _scope(request: HttpRequest, slug: str) -> tuple[Collection, QuerySet[Team] | None]:
    """Return the collection and the teams whose configurations the user may use.

    None: every team (a coordinator). A team member gets their own teams where the
    collection lets teams write configurations; anyone else the usual refusal.
    """
    collection = collection_for_member(user=request.user, slug=slug)
    teams = selectors.search_teams(collection=collection, user=request.user)
    if teams is not None and not teams.exists():
        collection_for_member(user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,))
    return collection, teams


def _form(
    request: HttpRequest, collection: Collection, teams: QuerySet[Team] | None, **kwargs: Any
) -> ConfigurationForm:
    return ConfigurationForm(
        request.POST if request.method == "POST" else None,
        teams=teams if teams is not None else Team.objects.filter(collection=collection),
        endpoints=selectors.endpoints_in(collection=collection, user=request.user),
        **kwargs,
    )


def _trend(series: list, measure: Any) -> SafeString | None:
    """Return the chart of each configuration's score over its snapshots, if there is one."""
    if not series or measure is None:
        return None
    return mark_safe(  # charts.line_chart escapes every text
        charts.for_screens(
            lambda width: charts.line_chart(
                series,
                title=f"{measure.requested} per snapshot, per configuration",
                x_label="snapshot (1 = the oldest shown)",
                y_label=measure.requested,
                width=width,
            )
        )
    )


def _fields(form: ConfigurationForm) -> services.VersionFields:
    data = form.cleaned_data
    return services.VersionFields(
        endpoint=data["endpoint"],
        path=data["path"],
        method=data["method"],
        template=data["template"],
        depth=data["depth"],
        mapping=data["mapping"],
    )


def _add_errors(form: ConfigurationForm, exc: ValidationError) -> None:
    for field, messages in exc.message_dict.items():
        form.add_error(field if field in form.fields else None, " ".join(messages))


@login_required
@require_http_methods(["GET", "POST"])
def configuration_list(request: HttpRequest, slug: str) -> HttpResponse:
    """List configurations and snapshots; create a configuration."""
    collection, teams = _scope(request, slug)
    if request.method == "POST" and request.POST.get("action") == "teams":
        if teams is not None:
            raise PermissionDenied("Only a coordinator decides whether teams configure engines.")
        metrics_services.collection_settings_update(
            collection=collection, search_by_teams=request.POST.get("search_by_teams") == "on"
        )
        return redirect("metrics:search", collection.slug)
    form = _form(request, collection, teams)
    if request.method == "POST" and form.is_valid():
        try:
            configuration = services.configuration_create(
                collection=collection,
                name=form.cleaned_data["name"],
                team=form.cleaned_data["team"],
                fields=_fields(form),
                user=request.user,
            )
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            return redirect("metrics:search_configuration", collection.slug, configuration.pk)
    snapshots = list(selectors.snapshots_of(collection=collection, teams=teams)[:50])
    scores = selectors.snapshot_scores(collection=collection, snapshots=snapshots)
    measure, coverage = selectors.score_labels(collection)
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "search",
        "form": form,
        "configurations": selectors.configurations_of(collection=collection, teams=teams),
        "snapshots": [(snapshot, scores.get(snapshot.pk)) for snapshot in snapshots],
        "is_coordinator": teams is None,
        "trend": _trend(selectors.score_series(snapshots=snapshots, scores=scores), measure),
        "live_measure": measure.requested if measure else None,
        "live_coverage": coverage.requested if coverage else None,
    }
    return render(
        request,
        "metrics/searchconfiguration_list.html",
        context,
        status=400 if form.errors else 200,
    )


@login_required
@require_http_methods(["GET", "POST"])
def configuration_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show a configuration; save a new version, *Try it* or *Run it*."""
    collection, teams = _scope(request, slug)
    configuration = (
        selectors.configurations_of(collection=collection, teams=teams).filter(pk=pk).first()
    )
    if configuration is None:
        raise Http404("No such configuration.")
    current = configuration.current
    initial = {
        "name": configuration.name,
        "team": configuration.team_id,
        "endpoint": current.endpoint.name,
        "path": current.path,
        "method": current.method,
        "template": json.dumps(current.template, indent=1),
        "depth": current.depth,
        "mapping": json.dumps(current.mapping),
    }
    action = request.POST.get("action", "") if request.method == "POST" else ""
    form = _form(request, collection, teams, initial=initial) if action in ("", "save") else None
    if form is None:
        form = ConfigurationForm(
            None,
            teams=Team.objects.filter(collection=collection),
            endpoints=selectors.endpoints_in(collection=collection, user=request.user),
            initial=initial,
        )
    form.fields["name"].disabled = form.fields["team"].disabled = True
    run_form = SnapshotForm(request.POST if action == "run" else None)
    tried: list[dict[str, Any]] | None = None
    problem = ""
    status = 200
    try:
        if action == "save" and form.is_valid():
            services.configuration_change(
                configuration=configuration, fields=_fields(form), user=request.user
            )
            return redirect("metrics:search_configuration", collection.slug, configuration.pk)
        if action == "try":
            queries = list(collection.queries.order_by("external_id")[: services.TRY_QUERIES])
            tried = services.try_configuration(version=current, queries=queries, user=request.user)
        if action == "auto_judge":
            if teams is not None:
                raise PermissionDenied("Only a coordinator chooses the LLM judge of new pairs.")
            wanted = request.POST.get("auto_judge", "")
            judge = None
            if wanted:
                judge = (
                    Judge.objects.filter(pk=wanted).first()
                    if wanted.isascii() and wanted.isdigit() and len(wanted) < 12
                    else None
                )
                if judge is None:
                    raise ValidationError({"auto_judge": "Choose an LLM judge of this collection."})
            services.configuration_auto_judge(
                configuration=configuration, judge=judge, user=request.user
            )
            return redirect("metrics:search_configuration", collection.slug, configuration.pk)
        if action == "run" and run_form.is_valid():
            snapshot = services.snapshot_start(
                configuration=configuration, user=request.user, tag=run_form.cleaned_data["tag"]
            )
            return redirect("metrics:search_snapshot", collection.slug, snapshot.pk)
    except ValidationError as exc:
        if action == "save":
            _add_errors(form, exc)
        else:
            problem = " ".join(exc.messages)
        status = 400
    if form.errors or run_form.errors:
        status = 400
    for item in tried or []:
        if item.get("request"):
            item["request_text"] = json.dumps(item["request"], indent=1, ensure_ascii=False)
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "search",
        "configuration": configuration,
        "current": current,
        "versions": configuration.versions.select_related("endpoint").order_by("-number"),
        "form": form,
        "run_form": run_form,
        "tried": tried,
        "problem": problem,
        "schedule": SearchSchedule.objects.filter(configuration=configuration).first(),
        "llm_judges": collection.llm_judges.filter(kind=Judge.Kind.LLM).order_by("name"),
        "is_coordinator": teams is None,
    }
    return render(request, "metrics/searchconfiguration_detail.html", context, status=status)


@login_required
@require_http_methods(["GET", "POST"])
def snapshot_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show a snapshot's progress, outcome and failed queries; retry them, or re-map it.

    ``action=retry`` sends the failed (and unsent) queries again in a new snapshot, or the
    one named by ``query``; ``action=remap`` maps the kept answers with the
    configuration's current version. Either redirects to the new snapshot; a refusal is
    shown here with a 400.
    """
    collection, teams = _scope(request, slug)
    snapshot = selectors.snapshots_of(collection=collection, teams=teams).filter(pk=pk).first()
    if snapshot is None:
        raise Http404("No such snapshot.")
    problem = ""
    action = request.POST.get("action", "") if request.method == "POST" else ""
    if request.method == "POST":
        try:
            if action == "retry":
                one = request.POST.get("query", "")
                made = services.snapshot_retry(
                    snapshot=snapshot, user=request.user, query_ids=[one] if one else None
                )
            elif action == "remap":
                made = services.snapshot_remap(snapshot=snapshot, user=request.user)
            else:
                raise ValidationError({"action": "Choose retry or remap."})
        except ValidationError as exc:
            problem = " ".join(exc.messages)
        else:
            return redirect("metrics:search_snapshot", collection.slug, made.pk)
    current = snapshot.version.configuration.current
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "search",
        "snapshot": snapshot,
        "failed": selectors.failed_queries(snapshot=snapshot)[:500],
        "unsent": selectors.unsent_count(snapshot=snapshot),
        "running": snapshot.status in ("queued", "running"),
        "current": current,
        "remap_problem": services.remap_problem(snapshot=snapshot),
        "problem": problem,
        "live": selectors.snapshot_scores(collection=collection, snapshots=[snapshot]).get(
            snapshot.pk
        ),
    }
    return render(
        request, "metrics/searchsnapshot_detail.html", context, status=400 if problem else 200
    )


@login_required
@require_http_methods(["GET"])
def snapshot_diff(request: HttpRequest, slug: str) -> HttpResponse:
    """Compare two snapshots query by query (``?a=`` the baseline, ``?b=``, measure, k).

    Without a choice, the two newest snapshots that became runs (the older as baseline).
    """
    collection, teams = _scope(request, slug)
    labels, _unreadable = measure_labels_of(collection)
    measures = [label.requested for label in labels]
    snapshots = selectors.snapshots_with_runs(collection=collection, teams=teams)
    params: Any = request.GET
    if not {"a", "b"} & params.keys():
        newest = list(snapshots[:2])
        params = None
        if len(newest) == 2 and measures:
            params = {"a": newest[1].pk, "b": newest[0].pk, "measure": measures[0]}
            params["k"] = request.GET.get("k", selectors.DIFF_K)
    form = DiffForm(params, snapshots=snapshots, measures=measures)
    result = chosen = None
    if form.is_bound and form.is_valid():
        chosen = next(label for label in labels if label.requested == form.cleaned_data["measure"])
        result = selectors.snapshot_diff(
            a=form.cleaned_data["a"],
            b=form.cleaned_data["b"],
            measure=chosen.canonical,
            k=form.cleaned_data["k"] or selectors.DIFF_K,
        )
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "search",
        "form": form,
        "diff": result,
        "chosen": chosen,
        "row": result.comparison.rows[0] if result and result.comparison else None,
    }
    status = 400 if form.is_bound and form.errors else 200
    return render(request, "metrics/searchsnapshot_diff.html", context, status=status)
