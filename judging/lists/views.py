"""Pages to create a collection, fill it from files, and download its judgment list.

Thin: validate with a form, call :mod:`judging.lists.services` or the export helpers,
render. The download shares :func:`judging.lists.downloads.export_response` with the REST API.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
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
from judging.lists.formats import Problems
from judging.lists.formats.common import describe
from judging.lists.forms import CollectionCreateForm, CollectionImportForm
from judging.models import Judge, Membership

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


#: The judge name the files are checked under when the form gives none (nothing is kept).
UNNAMED_JUDGE = "whose judgments?"


def _problem_lines(problems: Problems, kept: set[str]) -> list[str]:
    """Return the problems as lines, file by file; a kept file's lines say it was kept."""
    lines = []
    for item in problems.as_dicts():
        line = describe(item)
        lines.append(f"{line} (kept from your last try)" if item.get("part") in kept else line)
    return lines


@login_required
@require_http_methods(["GET", "POST"])
def collection_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Import topics, documents and judgments from files, all in one transaction.

    Every problem shows at once: the form's (a missing judge name, say) and every file's,
    since the files are checked, in a dry run, even when the form is wrong. A refused try
    keeps the files that passed their checks, as Label Studio's import dialog keeps the
    files it accepted: they are listed on the page, each can be left out, and the next
    try needs only the files that had problems (which are not kept, so their old errors
    never mix with a new file's). A kept file's problems in a later try say it was kept.
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
    valid = form.is_valid()
    data = form.cleaned_data  # the fields that passed, when the form did not
    given = form.files_given()
    uploads = {
        role: data.get(role) or (kept.open(role) if role in given else None)
        for role in services_files.PAGE_ROLES
    }
    from_kept = {r for r, u in uploads.items() if u is not None and not data.get(r)}
    options = {name: data.get(name) or "" for name in services_files.OPTIONS}
    options["judge_kind"] = options["judge_kind"] or Judge.Kind.HUMAN
    dry_run = bool(data.get("dry_run"))
    refused: set[str] = set()
    try:
        if valid and services_files.runs_in_background(uploads):
            job = services_files.file_import_start(
                collection=collection,
                uploads=uploads,
                options={**options, "dry_run": dry_run},
                actor=request.user,
            )
            target = reverse("judging:file_import_detail", args=[collection.slug, job.pk])
        elif valid:
            done = services_files.collection_files_import(
                collection=collection,
                files=services_files.CollectionFiles(**uploads, **options),
                actor=request.user,
                dry_run=dry_run,
            )
            dry = "Dry run, nothing written — would import " if dry_run else "Imported "
            messages.success(request, dry + "; ".join(services_files.files_report(done)) + ".")
            target = reverse("judging:collection_import", args=[collection.slug])
        elif given and not services_files.runs_in_background(uploads):
            # The form is wrong: still check the files (writing nothing) so that their
            # problems show now, beside the form's, not after the next try.
            options["judge_name"] = options["judge_name"].strip() or UNNAMED_JUDGE
            services_files.collection_files_import(
                collection=collection,
                files=services_files.CollectionFiles(**uploads, **options),
                actor=request.user,
                dry_run=True,
            )
    except services_lists.ImportRefused as error:
        refused = {p.part for p in error.problems.items if p.part}
        for line in _problem_lines(error.problems, from_kept):
            form.add_error(None, line)
    except ValidationError as error:
        add_service_errors(form, error)
    else:
        if valid:
            services_files.kept_files_delete(kept=kept)
            request.session.pop(key, None)
            return see_other(target)
    finally:
        for role, upload in uploads.items():
            if upload is not None and role not in request.FILES:
                upload.close()  # a kept file this request opened
    names = {r: (getattr(u, "name", "") or r) for r, u in uploads.items() if u is not None}
    drop = {role for role in services_files.PAGE_ROLES if form.data.get(f"forget_{role}")}
    kept = services_files.kept_files_store(
        kept=kept,
        uploads={
            role: request.FILES.get(role) if role not in refused else None
            for role in services_files.PAGE_ROLES
        },
        drop=drop | refused,
    )
    request.session[key] = kept.as_dict()
    form.offer_kept(kept.names, refused={r: Path(names[r]).name for r in refused if r in names})
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
        {
            "collection": collection,
            "job": job,
            "bytes_read": bytes_read,
            "stale_minutes": round(settings.GRADED_IMPORT_STALE_SECONDS / 60, 1),
        },
    )


@login_required
@require_http_methods(["POST"])
def file_import_retry(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Queue an interrupted background import again; back to its page."""
    collection = selectors.collection_for_member(
        user=request.user, slug=slug, roles=(Role.COORDINATOR,)
    )
    job, _ = selectors.file_import_with_progress(collection=collection, import_id=pk)
    try:
        job = services_files.file_import_retry(job=job)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        if job.status == job.Status.FAILED:
            messages.error(request, job.problems[0])
        else:
            messages.success(request, f"Import {job.pk} is queued again.")
    return see_other(reverse("judging:file_import_detail", args=[collection.slug, job.pk]))
