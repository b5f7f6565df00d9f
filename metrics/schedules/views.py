"""Pages of scheduled evaluations (coordinators): a configuration's schedule, the alerts."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from judging.models import Collection, Membership
from judging.selectors import collection_for_member
from metrics.schedules import selectors, services
from metrics.schedules.forms import ScheduleForm
from metrics.schedules.models import SearchSchedule
from metrics.search import selectors as search_selectors
from metrics.search.models import SearchSnapshot
from metrics.selectors import measure_labels_of, viewer

#: Checks listed on a page.
CHECKS_SHOWN = 50


def _collection(request: HttpRequest, slug: str) -> Collection:
    return collection_for_member(user=request.user, slug=slug, roles=(Membership.Role.COORDINATOR,))


@login_required
@require_http_methods(["GET", "POST"])
def schedule_update(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Set, pause or remove a configuration's schedule; list its recent checks."""
    collection = _collection(request, slug)
    configuration = search_selectors.configurations_of(collection=collection).filter(pk=pk).first()
    if configuration is None:
        raise Http404("No such configuration.")
    schedule = SearchSchedule.objects.filter(configuration=configuration).first()
    labels, _ = measure_labels_of(collection)
    snapshots = SearchSnapshot.objects.filter(
        version__configuration=configuration, status=SearchSnapshot.Status.DONE, run__isnull=False
    ).order_by("-created_at")
    initial = {}
    if schedule is not None:
        initial = {
            "frequency": schedule.frequency,
            "cron": schedule.cron,
            "measure": schedule.measure,
            "direction": schedule.direction,
            "alpha": schedule.alpha,
            "baseline": schedule.baseline_id,
            "email": schedule.email,
            "webhook": schedule.webhook.name if schedule.webhook else None,
            "active": schedule.active,
        }
    action = request.POST.get("action", "save") if request.method == "POST" else ""
    form = ScheduleForm(
        request.POST if action == "save" else None,
        initial=initial,
        measures=[(label.canonical, label.requested) for label in labels],
        snapshots=snapshots,
        webhooks=services.webhooks_open_to(collection_id=collection.pk, user=request.user),
    )
    status = 200
    if action == "remove" and schedule is not None:
        services.schedule_delete(schedule=schedule)
        return redirect("metrics:search_schedule", collection.slug, configuration.pk)
    if action == "save":
        if form.is_valid():
            data = form.cleaned_data
            try:
                services.schedule_set(
                    configuration=configuration,
                    fields=services.ScheduleFields(
                        frequency=data["frequency"],
                        cron=data["cron"],
                        measure=data["measure"],
                        direction=data["direction"],
                        alpha=data["alpha"],
                        baseline=data["baseline"],
                        email=data["email"],
                        webhook=data["webhook"],
                        active=data["active"],
                    ),
                    user=request.user,
                )
                return redirect("metrics:search_schedule", collection.slug, configuration.pk)
            except ValidationError as exc:
                for field, messages in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, messages)
        status = 400
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "search",
        "configuration": configuration,
        "schedule": schedule,
        "form": form,
        "checks": list(
            selectors.checks_of(collection=collection).filter(
                schedule__configuration=configuration
            )[:CHECKS_SHOWN]
        ),
    }
    return render(request, "metrics/searchschedule_update.html", context, status=status)


@login_required
@require_GET
def alert_list(request: HttpRequest, slug: str) -> HttpResponse:
    """List the collection's alerts, then every check; a panel for the collection page."""
    collection = _collection(request, slug)
    context = {
        "collection": collection,
        "who": viewer(user=request.user, collection=collection),
        "active": "search",
        "alerts": list(selectors.checks_of(collection=collection, fired=True)[:CHECKS_SHOWN]),
        "schedules": list(selectors.schedules_of(collection=collection)),
    }
    if request.headers.get("HX-Request") and not request.headers.get("HX-Boosted"):
        return render(request, "metrics/_search_alerts_panel.html", context)
    context["checks"] = list(selectors.checks_of(collection=collection)[:CHECKS_SHOWN])
    return render(request, "metrics/schedulecheck_list.html", context)
