"""Pages to create a collection, fill it from files, and download its judgment list.

Thin: validate with a form, call :mod:`judging.lists.services` or the export helpers,
render. The download shares :func:`judging.lists.downloads.export_response` with the REST API.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods

from config.http import see_other
from judging import selectors
from judging.api.selectors import is_coordinator_anywhere
from judging.forms import add_service_errors
from judging.imports import services as services_files
from judging.lists import downloads, exports
from judging.lists import services as services_lists
from judging.lists.forms import CollectionCreateForm, CollectionImportForm
from judging.models import Membership

Role = Membership.Role


@login_required
@require_GET
def judgment_list_download(request: HttpRequest, slug: str) -> HttpResponse:
    """Download the judgment list (same parameters and rules as the REST export)."""
    collection = selectors.collection_for_member(user=request.user, slug=slug)
    roles = selectors.user_roles(user=request.user, collection=collection)
    try:
        spec = exports.export_spec(request.GET)
    except ValidationError as error:
        return HttpResponse("; ".join(error.messages), status=400, content_type="text/plain")
    reason = exports.may_export(collection=collection, roles=roles, raw=spec.raw)
    if reason:
        raise PermissionDenied(reason)
    return downloads.export_response(request, collection=collection, spec=spec)


@login_required
@require_http_methods(["GET", "POST"])
def collection_create(request: HttpRequest) -> HttpResponse:
    """Let staff and coordinators create a collection (they become its coordinator)."""
    if not (request.user.is_staff or is_coordinator_anywhere(user=request.user)):
        raise PermissionDenied("Creating collections needs the coordinator role somewhere.")
    form = CollectionCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            collection = services_lists.collection_create(creator=request.user, **form.cleaned_data)
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            messages.success(request, "Collection created; now import its topics and documents.")
            return see_other(reverse("judging:collection_import", args=[collection.slug]))
    return render(
        request,
        "judging/collection_create.html",
        {"form": form},
        status=400 if request.method == "POST" else 200,
    )


def _kept_key(collection_pk: int) -> str:
    """Return the session key of the files kept for a collection's Import files page."""
    return f"graded-import-kept-{collection_pk}"


@login_required
@require_http_methods(["GET", "POST"])
def collection_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Import topics, documents and judgments from files, all in one transaction.

    A refused try keeps its files on the server (named in the session), so the next try
    only replaces the files that were wrong.
    """
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
    )
    key = _kept_key(collection.pk)
    kept = services_files.KeptFiles.from_dict(request.session.get(key))
    form = CollectionImportForm(request.POST or None, request.FILES or None, kept=kept.names)
    if request.method != "POST":
        context = {"collection": collection, "form": form}
        return render(request, "judging/collection_import.html", context)
    if form.is_valid():
        data = form.cleaned_data
        given = form.files_given()
        uploads = {
            role: data.get(role) or (kept.open(role) if role in given else None)
            for role in services_files.PAGE_ROLES
        }
        options = {name: data[name] for name in services_files.OPTIONS}
        try:
            if services_files.runs_in_background(uploads):
                job = services_files.file_import_start(
                    collection=collection,
                    uploads=uploads,
                    options={**options, "dry_run": data["dry_run"]},
                    actor=request.user,
                )
                target = reverse("judging:file_import_detail", args=[collection.slug, job.pk])
            else:
                done = services_files.collection_files_import(
                    collection=collection,
                    files=services_files.CollectionFiles(**uploads, **options),
                    actor=request.user,
                    dry_run=data["dry_run"],
                )
                dry = "Dry run, nothing written — would import " if data["dry_run"] else "Imported "
                messages.success(request, dry + "; ".join(services_files.files_report(done)) + ".")
                target = reverse("judging:collection_import", args=[collection.slug])
        except services_lists.ImportRefused as refused:
            for message in refused.problems.messages():
                form.add_error(None, message)
        except ValidationError as error:
            add_service_errors(form, error)
        else:
            services_files.kept_files_delete(kept=kept)
            request.session.pop(key, None)
            return see_other(target)
        finally:
            for role, upload in uploads.items():
                if upload is not None and role not in request.FILES:
                    upload.close()  # a kept file this request opened
    drop = [role for role in services_files.PAGE_ROLES if form.data.get(f"forget_{role}")]
    kept = services_files.kept_files_store(
        kept=kept,
        uploads={role: request.FILES.get(role) for role in services_files.PAGE_ROLES},
        drop=drop,
    )
    request.session[key] = kept.as_dict()
    form.offer_kept(kept.names)
    return render(
        request,
        "judging/collection_import.html",
        {"collection": collection, "form": form},
        status=400,
    )


@login_required
@require_http_methods(["GET"])
def file_import_detail(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Show a background import's progress (refreshing while it runs) or its outcome."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
    )
    job, bytes_read = selectors.file_import_with_progress(collection=collection, import_id=pk)
    return render(
        request,
        "judging/fileimport_detail.html",
        {"collection": collection, "job": job, "bytes_read": bytes_read},
    )
