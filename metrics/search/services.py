"""Writes of live search: configurations (versioned), *Try it*, and snapshots.

A configuration's content lives in :class:`SearchConfigVersion` rows: every change adds a
version and a snapshot names the version that made it. A snapshot's queries are sent by
:mod:`metrics.search.runner` in the background; when none is pending, the answers become
an ordinary run through :func:`metrics.services.run_submit` (pooled, scored, on the
leaderboard), after the documents the collection lacks were added from the mapped fields
through :func:`judging.services.documents_import` (never overwriting a document that has
content; the text policy applies).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import re
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from graded import textpolicy
from judging import background
from judging import services as judging_services
from judging.llm import services as llm_services
from judging.llm.egress import EgressRefused, check_base_url, guarded_client
from judging.models import Collection, Judge, Query
from metrics import services as metrics_services
from metrics.models import Run, Team
from metrics.search import client, limits, mapping, presets
from metrics.search.models import (
    SEARCH_KEY_ENV_MESSAGE,
    SEARCH_KEY_ENV_PATTERN,
    SearchConfiguration,
    SearchConfigVersion,
    SearchEndpoint,
    SearchSnapshot,
    SnapshotQuery,
)
from metrics.search.selectors import endpoint_open_to

#: Largest raw answer kept per query, compressed (bytes before compression).
RAW_KEEP_BYTES = 1_000_000
#: Queries *Try it* sends at most.
TRY_QUERIES = 3
#: A re-map of more queries than this maps them in the background (the answer is 202).
REMAP_INLINE_QUERIES = 500
#: Rows a background re-map maps per transaction.
REMAP_BATCH = 500


def credential_for(endpoint: SearchEndpoint) -> str:
    """Return the endpoint's credential from the operator's environment ("" for none).

    Raises ``ValidationError`` when the variable lacks the prefix (re-checked at every call)
    or is unset; the credential itself never appears in a message.
    """
    if endpoint.auth == client.AUTH_NONE or not endpoint.credential_env:
        return ""
    if not re.match(SEARCH_KEY_ENV_PATTERN, endpoint.credential_env):
        raise ValidationError(
            {"endpoint": f"The endpoint {endpoint.name}: {SEARCH_KEY_ENV_MESSAGE}"}
        )
    secret = os.environ.get(endpoint.credential_env, "")
    if not secret:
        raise ValidationError(
            {
                "endpoint": f"The endpoint {endpoint.name} has no credential: the operator must "
                f"set {endpoint.credential_env} where Graded runs."
            }
        )
    return secret


@dataclass(frozen=True)
class VersionFields:
    """What a configuration version holds, as a form or the API gives it."""

    endpoint: SearchEndpoint
    path: str
    template: Any
    depth: int = 100
    method: str = "POST"
    mapping: dict[str, str] | None = None


def _checked(
    fields: VersionFields, *, collection: Collection, user: AbstractBaseUser | None
) -> tuple[Any, dict[str, str]]:
    errors: dict[str, str] = {}
    if not endpoint_open_to(endpoint=fields.endpoint, collection=collection, user=user):
        errors["endpoint"] = "This endpoint is not open to this collection."
    path = fields.path or ""
    problem = textpolicy.text_problem(path, max_length=500, what="path")
    if problem:
        errors["path"] = problem
    elif "://" in path or path.startswith("//") or "\\" in path or "@" in path or "#" in path:
        errors["path"] = "Give a path on the endpoint (e.g. /my-index/_search), never a host."
    template = fields.template
    try:
        if isinstance(template, str):
            template = mapping.parse_template(template)
        else:
            import json

            template = mapping.parse_template(json.dumps(template))
    except mapping.TemplateError as exc:
        errors["template"] = str(exc)
    if fields.method not in ("GET", "POST"):
        errors["method"] = "GET or POST."
    if not isinstance(fields.depth, int) or not 1 <= fields.depth <= 1000:
        errors["depth"] = "Depth k must be 1–1000."
    full = presets.mapping_for(fields.endpoint.kind, fields.mapping)
    problems = mapping.check_mapping(full)
    if problems:
        errors["mapping"] = "; ".join(f"{k}: {v}" for k, v in problems.items())
    if errors:
        raise ValidationError(errors)
    return template, full


def _add_version(
    configuration: SearchConfiguration,
    fields: VersionFields,
    user: AbstractBaseUser | None,
) -> SearchConfigVersion:
    template, full = _checked(fields, collection=configuration.collection, user=user)
    SearchConfiguration.objects.select_for_update().filter(pk=configuration.pk).first()
    last = configuration.versions.order_by("-number").values_list("number", flat=True).first()
    method = "GET" if fields.endpoint.kind == presets.SOLR else fields.method
    return SearchConfigVersion.objects.create(
        configuration=configuration,
        number=(last or 0) + 1,
        endpoint=fields.endpoint,
        method=method,
        path=fields.path,
        template=template,
        depth=fields.depth,
        mapping=full,
        created_by=user,
    )


@transaction.atomic
def configuration_create(
    *,
    collection: Collection,
    name: str,
    team: Team,
    fields: VersionFields,
    user: AbstractBaseUser | None,
) -> SearchConfiguration:
    """Create a configuration and its version 1; raise ``ValidationError`` by field."""
    name = (name or "").strip()
    problem = (
        textpolicy.name_problem(name, what="name") if name else "A configuration needs a name."
    )
    errors: dict[str, str] = {}
    if problem:
        errors["name"] = problem
    elif collection.search_configurations.filter(name=name).exists():
        errors["name"] = "A configuration of this collection already has this name."
    if team.collection_id != collection.pk:
        errors["team"] = "The team does not take part in this collection."
    try:
        _checked(fields, collection=collection, user=user)
    except ValidationError as exc:
        errors.update({k: " ".join(v) for k, v in exc.message_dict.items()})
    if errors:
        raise ValidationError(errors)
    configuration = SearchConfiguration.objects.create(
        collection=collection, name=name, team=team, created_by=user
    )
    _add_version(configuration, fields, user)
    return configuration


@transaction.atomic
def configuration_change(
    *, configuration: SearchConfiguration, fields: VersionFields, user: AbstractBaseUser | None
) -> SearchConfigVersion:
    """Record a change as a new version (earlier versions and their snapshots stay)."""
    return _add_version(configuration, fields, user)


def query_fields(query: Query) -> mapping.QueryFields:
    """Return what templates may put of ``query``."""
    return mapping.QueryFields(
        query_id=query.external_id,
        query_text=query.text,
        description=query.description,
        narrative=query.narrative,
    )


def build_request(version: SearchConfigVersion, query: Query, secret: str) -> client.Request:
    """Return the request ``version`` sends for ``query``."""
    endpoint = version.endpoint
    payload = mapping.render(version.template, query_fields(query), version.depth)
    return client.build_request(
        base_url=check_base_url(endpoint.base_url),
        method=version.method,
        path=version.path,
        payload=payload,
        auth=endpoint.auth,
        secret=secret,
        as_params=endpoint.kind == presets.SOLR,
    )


def run_async(work: Any) -> Any:
    """Run a coroutine to its end in a thread of its own (a caller may own an event loop)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, work).result()


def try_configuration(
    *, version: SearchConfigVersion, queries: list[Query], user: AbstractBaseUser | None
) -> list[dict[str, Any]]:
    """Send up to three queries; return per query the request (masked), answer and ranking.

    Nothing is stored. Raises ``ValidationError`` when the endpoint is not open or has no
    credential.
    """
    endpoint = version.endpoint
    if not endpoint_open_to(
        endpoint=endpoint, collection=version.configuration.collection, user=user
    ):
        raise ValidationError({"endpoint": "This endpoint is not open to this collection."})
    secret = credential_for(endpoint)
    chosen = queries[:TRY_QUERIES]

    shared = limits.SharedLimits(
        endpoint.pk, concurrency=endpoint.concurrency, per_second=endpoint.rate_limit
    )

    async def one(http, query: Query) -> dict[str, Any]:
        item: dict[str, Any] = {"query_id": query.external_id}
        try:
            request = build_request(version, query, secret)
        except EgressRefused as exc:
            return {**item, "error": str(exc)}
        item["request"] = request.shown()
        try:
            async with shared.slot():  # the endpoint's limits hold for tries too
                answer = await client.send(
                    http, request, timeout=endpoint.timeout_seconds, retries=client.Retries(1)
                )
        except client.SearchFailed as exc:
            return {**item, "error": exc.reason, "status": exc.status, "raw": exc.raw}
        mapped = mapping.map_answer(
            answer.data, version.mapping, kind=endpoint.kind, k=version.depth
        )
        return {
            **item,
            "status": answer.status,
            "raw": client.excerpt(answer.raw) if len(answer.raw) > 20_000 else answer.raw,
            "hits": [hit.__dict__ for hit in mapped.hits],
            "errors": mapped.errors,
        }

    async def main() -> list[dict[str, Any]]:
        async with guarded_client(endpoint.egress_policy(), verify=endpoint.verify_tls) as http:
            return list(await asyncio.gather(*(one(http, q) for q in chosen)))

    return run_async(main())


@transaction.atomic
def snapshot_start(
    *,
    configuration: SearchConfiguration,
    user: AbstractBaseUser | None,
    tag: str = "",
    query_ids: list[str] | None = None,
    origin: str = SearchSnapshot.Origin.RUN,
) -> SearchSnapshot:
    """Queue a snapshot of the configuration's current version over the collection's queries.

    ``query_ids`` (external ids) chooses a query set; ``origin`` is ``run`` (a person's
    *Run it*) or ``schedule`` (:mod:`metrics.schedules`). Raises ``ValidationError`` by
    field.
    """
    version = configuration.current
    collection = configuration.collection
    assert version is not None
    if not endpoint_open_to(endpoint=version.endpoint, collection=collection, user=user):
        raise ValidationError({"endpoint": "This endpoint is not open to this collection."})
    credential_for(version.endpoint)
    if not (tag or "").strip():  # made: two snapshots in one second get -2, -3, …
        tag = unused_tag(
            collection,
            f"{configuration.name}-v{version.number}-{timezone.now():%Y%m%d%H%M%S}"[:95],
        )
    tag = tag.strip()
    problem = textpolicy.name_problem(tag, what="tag")
    if problem:
        raise ValidationError({"tag": problem})
    _tag_free(collection, tag)
    queries = collection.queries.all()
    if query_ids is not None:
        queries = queries.filter(external_id__in=query_ids)
        missing = sorted(set(query_ids) - set(queries.values_list("external_id", flat=True)))
        if missing:
            names = ", ".join(textpolicy.echo(m) for m in missing[:10])
            raise ValidationError({"query_ids": f"Not in the collection: {names}."})
    ids = list(queries.values_list("pk", flat=True))
    if not ids:
        raise ValidationError({"query_ids": "There are no queries to send."})
    snapshot = SearchSnapshot.objects.create(
        collection=collection,
        version=version,
        tag=tag,
        total=len(ids),
        started_by=user,
        origin=origin,
    )
    SnapshotQuery.objects.bulk_create(
        [SnapshotQuery(snapshot=snapshot, query_id=pk) for pk in ids], batch_size=1000
    )
    background.start_after_commit(
        "metrics.run_search_snapshot", snapshot.pk, thread_name=f"search-snapshot-{snapshot.pk}"
    )
    return snapshot


#: What a retry or a re-map copies of an old snapshot's query row.
_COPIED = (
    "status",
    "hits",
    "errors",
    "error",
    "retryable",
    "raw",
    "raw_truncated",
    "attempts",
    "latency_ms",
)


def _finished(snapshot: SearchSnapshot) -> SearchSnapshot:
    """Return the snapshot locked, refusing one that is still queued or running."""
    snapshot = SearchSnapshot.objects.select_for_update().get(pk=snapshot.pk)
    if snapshot.status not in (SearchSnapshot.Status.DONE, SearchSnapshot.Status.FAILED):
        raise ValidationError(
            {
                "source": f"Snapshot {textpolicy.echo(snapshot.tag)} is still {snapshot.status}; "
                "wait until it has finished."
            }
        )
    return snapshot


def _derived_tag(snapshot: SearchSnapshot, tag: str, suffix: str) -> str:
    """Return the new snapshot's tag: the one given, else the source's with ``suffix``.

    A made tag is the first of ``<tag>-<suffix>``, ``<tag>-<suffix>-2``, … that no run
    or snapshot of the collection has (the source is locked, so two retries of one
    snapshot cannot both take the same).
    """
    if not (tag or "").strip():
        tag = unused_tag(snapshot.collection, f"{snapshot.tag[:85]}-{suffix}")
    tag = tag.strip()
    problem = textpolicy.name_problem(tag, what="tag")
    if problem:
        raise ValidationError({"tag": problem})
    _tag_free(snapshot.collection, tag)
    return tag


def unused_tag(collection: Collection, base: str) -> str:
    """Return the first of ``base``, ``base-2``, … that no run or snapshot of it has."""
    taken = set(
        Run.objects.filter(collection=collection, tag__startswith=base).values_list(
            "tag", flat=True
        )
    ) | set(
        SearchSnapshot.objects.filter(collection=collection, tag__startswith=base).values_list(
            "tag", flat=True
        )
    )
    return next(
        t for n in range(1, len(taken) + 2) if (t := base if n == 1 else f"{base}-{n}") not in taken
    )


def _tag_free(collection: Collection, tag: str) -> None:
    """Refuse a tag a run of the collection already has (its run would be refused at the end)."""
    if Run.objects.filter(collection=collection, tag=tag).exists():
        raise ValidationError(
            {"tag": f"Tag {textpolicy.echo(tag)} is already used in this collection."}
        )


def _check_open(
    version: SearchConfigVersion, collection: Collection, user: AbstractBaseUser | None
) -> None:
    """Refuse an endpoint that is not open to ``user`` in ``collection``."""
    if not endpoint_open_to(endpoint=version.endpoint, collection=collection, user=user):
        raise ValidationError({"endpoint": "This endpoint is not open to this collection."})


@transaction.atomic
def snapshot_retry(
    *,
    snapshot: SearchSnapshot,
    user: AbstractBaseUser | None,
    query_ids: list[str] | None = None,
    tag: str = "",
) -> SearchSnapshot:
    """Queue a new snapshot that sends the failed (or unsent) queries of ``snapshot`` again.

    A snapshot's run is a submitted run, never rewritten, so a retry is a new snapshot of
    the same version: the answered queries' rankings are copied (not sent again), the
    queries to retry — every failed or unsent one, or the ``query_ids`` chosen among them
    (one query can be retried alone) — are sent, and the others that failed stay failed
    with their errors. Its run is a new run beside the old one. Raises
    ``ValidationError`` by field.
    """
    source = _finished(snapshot)
    _check_open(source.version, source.collection, user)
    credential_for(source.version.endpoint)
    rows = list(source.queries.select_related("query"))
    again = {r.query.external_id for r in rows if r.status != SnapshotQuery.Status.DONE}
    if query_ids is not None:
        if not query_ids:
            raise ValidationError({"query_ids": "Choose at least one query to retry."})
        wrong = sorted(set(query_ids) - again)
        if wrong:
            names = ", ".join(textpolicy.echo(q) for q in wrong[:10])
            raise ValidationError(
                {"query_ids": f"Not a failed or unsent query of this snapshot: {names}."}
            )
        again = set(query_ids)
    if not again:
        raise ValidationError({"query_ids": "No query of this snapshot failed; nothing to retry."})
    retry = SearchSnapshot.objects.create(
        collection=source.collection,
        version=source.version,
        tag=_derived_tag(source, tag, "retry"),
        total=len(rows),
        started_by=user,
        origin=SearchSnapshot.Origin.RETRY,
        source=source,
    )
    copies = []
    for row in rows:
        if row.query.external_id in again:
            copies.append(SnapshotQuery(snapshot=retry, query_id=row.query_id))
        else:
            copies.append(
                SnapshotQuery(
                    snapshot=retry,
                    query_id=row.query_id,
                    **{name: getattr(row, name) for name in _COPIED},
                )
            )
    SnapshotQuery.objects.bulk_create(copies, batch_size=1000)
    background.start_after_commit(
        "metrics.run_search_snapshot", retry.pk, thread_name=f"search-snapshot-{retry.pk}"
    )
    return retry


def _same_request(old: SearchConfigVersion, new: SearchConfigVersion) -> str:
    """Return why ``new`` cannot re-map ``old``'s answers ("" when it can)."""
    for name, label in (
        ("endpoint_id", "endpoint"),
        ("method", "method"),
        ("path", "path"),
        ("template", "request template"),
    ):
        if getattr(old, name) != getattr(new, name):
            return (
                f"The {label} changed between v{old.number} and v{new.number}, so the kept "
                "answers are not what it would get: run it again instead."
            )
    if new.depth > old.depth:
        return (
            f"v{new.number} keeps {new.depth} hits per query but the kept answers were "
            f"asked for {old.depth}: run it again instead."
        )
    return ""


def remap_problem(*, snapshot: SearchSnapshot) -> str:
    """Return why ``snapshot`` cannot be re-mapped now ("" when it can), for the page."""
    if snapshot.status not in (SearchSnapshot.Status.DONE, SearchSnapshot.Status.FAILED):
        return "It is still running."
    current = snapshot.version.configuration.current
    if current is None or current.pk == snapshot.version_id:
        return "Its version is the configuration's current one; change the mapping first."
    return _same_request(snapshot.version, current)


@transaction.atomic
def snapshot_remap(
    *, snapshot: SearchSnapshot, user: AbstractBaseUser | None, tag: str = ""
) -> SearchSnapshot:
    """Map ``snapshot``'s kept raw answers again with its configuration's current version.

    No query is sent: for a change of the response mapping (or a smaller depth), the new
    snapshot maps each kept answer with the current version and becomes a run at once; a
    snapshot of more than :data:`REMAP_INLINE_QUERIES` queries is returned queued and mapped
    in the background (:func:`remap_work`). The request must be the one that got the
    answers. A query whose answer was cut at :data:`RAW_KEEP_BYTES` or not kept fails,
    saying so; a query that failed stays failed.
    Raises ``ValidationError`` by field.
    """
    source = _finished(snapshot)
    version = source.version.configuration.current
    assert version is not None
    _check_open(version, source.collection, user)
    reason = (
        f"v{version.number} made this snapshot; change the mapping (a new version) first."
        if version.pk == source.version_id
        else _same_request(source.version, version)
    )
    if reason:
        raise ValidationError({"source": reason})
    rows = list(source.queries.select_related("query"))
    background_work = len(rows) > REMAP_INLINE_QUERIES
    remap = SearchSnapshot.objects.create(
        collection=source.collection,
        version=version,
        tag=_derived_tag(source, tag, f"v{version.number}"),
        total=len(rows),
        started_by=user,
        origin=SearchSnapshot.Origin.REMAP,
        source=source,
        status=SearchSnapshot.Status.QUEUED if background_work else SearchSnapshot.Status.RUNNING,
    )
    copies = []
    for row in rows:
        copy = SnapshotQuery(snapshot=remap, query_id=row.query_id, attempts=0)
        copy.raw, copy.raw_truncated = row.raw, row.raw_truncated
        copy.status, copy.error, copy.retryable = row.status, row.error, row.retryable
        answered = row.status == SnapshotQuery.Status.DONE
        if background_work and answered:
            copy.status = SnapshotQuery.Status.PENDING  # mapped by the task, from ``raw``
        else:
            _remap_row(copy, version, answered=answered)
        copies.append(copy)
    SnapshotQuery.objects.bulk_create(copies, batch_size=1000)
    if background_work:
        background.start_after_commit(
            "metrics.remap_search_snapshot", remap.pk, thread_name=f"search-remap-{remap.pk}"
        )
        return remap
    SearchSnapshot.objects.filter(pk=remap.pk).update(
        done=sum(c.status == SnapshotQuery.Status.DONE for c in copies),
        failed=sum(c.status == SnapshotQuery.Status.FAILED for c in copies),
    )
    return snapshot_finish(snapshot=remap)


def _remap_row(copy: SnapshotQuery, version: SearchConfigVersion, *, answered: bool) -> None:
    """Set a copied query row's outcome under ``version``; ``answered``: its source's was.

    An answered row is mapped from its kept raw answer (it fails, saying so, if the answer
    was cut at :data:`RAW_KEEP_BYTES`, pruned, or is not JSON); a row that failed stays
    failed; a row its source never sent fails.
    """
    if not answered:
        if copy.status == SnapshotQuery.Status.PENDING:  # never sent (the source stopped)
            copy.status, copy.error = (
                SnapshotQuery.Status.FAILED,
                "Not sent by the source snapshot.",
            )
        return
    if copy.raw and not copy.raw_truncated:
        try:
            data = json.loads(raw_text(copy))
        except (ValueError, RecursionError) as exc:
            copy.status = SnapshotQuery.Status.FAILED
            copy.error = f"The kept answer is not JSON ({exc})."
            return
        mapped = mapping.map_answer(
            data, version.mapping, kind=version.endpoint.kind, k=version.depth
        )
        copy.status = SnapshotQuery.Status.DONE
        copy.hits = [hit.__dict__ for hit in mapped.hits]
        copy.errors = mapped.errors[:100]
        return
    copy.status = SnapshotQuery.Status.FAILED
    copy.error = (
        f"The kept answer was cut at {RAW_KEEP_BYTES:,} bytes and cannot be mapped again"
        if copy.raw
        else "The answer was not kept (pruned) and cannot be mapped again"
    ) + "; run the configuration again for this query."


def remap_work(snapshot: SearchSnapshot, *, batch: int = REMAP_BATCH) -> SearchSnapshot:
    """Map a queued re-map's pending rows in batches (the Celery task's work), then finish.

    Each batch is written in its own transaction, so a worker killed mid-way loses at
    most one batch: the task is acknowledged late and, run again, maps what is pending.
    """
    SearchSnapshot.objects.filter(
        pk=snapshot.pk, status__in=[SearchSnapshot.Status.QUEUED, SearchSnapshot.Status.RUNNING]
    ).update(status=SearchSnapshot.Status.RUNNING)
    snapshot = SearchSnapshot.objects.select_related("version__endpoint").get(pk=snapshot.pk)
    if snapshot.status != SearchSnapshot.Status.RUNNING:
        return snapshot
    version = snapshot.version
    while True:
        with transaction.atomic():
            rows = list(
                snapshot.queries.filter(status=SnapshotQuery.Status.PENDING)
                .select_for_update()
                .order_by("pk")[:batch]
            )
            if not rows:
                break
            for row in rows:
                _remap_row(row, version, answered=True)
            SnapshotQuery.objects.bulk_update(rows, ["status", "error", "hits", "errors"])
    counts = snapshot.queries.values_list("status", flat=True)
    SearchSnapshot.objects.filter(pk=snapshot.pk).update(
        done=sum(status == SnapshotQuery.Status.DONE for status in counts),
        failed=sum(status == SnapshotQuery.Status.FAILED for status in counts),
    )
    return snapshot_finish(snapshot=snapshot)


@transaction.atomic
def raw_answers_prune(*, days: int | None = None, now: datetime | None = None) -> int:
    """Drop the raw answers of snapshots finished more than ``days`` ago; return how many.

    ``days`` defaults to ``GRADED_SEARCH_ANSWERS_KEEP_DAYS`` (0: keep for ever). The mapped
    rankings, errors and runs stay; only *Re-map* needs the raw answers, and it then says
    that a query's answer was not kept.
    """
    days = settings.GRADED_SEARCH_ANSWERS_KEEP_DAYS if days is None else days
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    old = SearchSnapshot.objects.filter(finished_at__lt=cutoff).values("pk")
    return SnapshotQuery.objects.filter(snapshot__in=old, raw__isnull=False).update(
        raw=None, raw_truncated=False
    )


def keep_raw(raw: str) -> tuple[bytes, bool]:
    """Return the raw answer compressed, cut at :data:`RAW_KEEP_BYTES`, and whether it was."""
    data = raw.encode("utf-8", "replace")
    return zlib.compress(data[:RAW_KEEP_BYTES], 6), len(data) > RAW_KEEP_BYTES


def raw_text(row: SnapshotQuery) -> str:
    """Return a snapshot query's kept raw answer."""
    return zlib.decompress(bytes(row.raw)).decode("utf-8", "replace") if row.raw else ""


def _document_rows(collection: Collection, hits: list[dict[str, Any]]) -> list[Any]:
    """Return import rows for mapped documents the collection lacks (or knows by id only)."""
    by_docno: dict[str, dict[str, Any]] = {}
    for hit in hits:
        if hit.get("title") or hit.get("body"):
            by_docno.setdefault(hit["docno"], hit)
    if not by_docno:
        return []
    have = set(
        collection.documents.filter(external_id__in=list(by_docno), has_content=True).values_list(
            "external_id", flat=True
        )
    )
    rows = []
    for number, (docno, hit) in enumerate(sorted(by_docno.items()), start=1):
        if docno in have or textpolicy.id_problem(docno, "docno"):
            continue
        title = hit.get("title") or ""
        body = hit.get("body") or ""
        if textpolicy.text_problem(title) or textpolicy.text_problem(body):
            continue  # refused text: the document stays known by id only
        url = hit.get("url") or ""
        url = "" if textpolicy.url_problem(url) else url
        image = hit.get("image_url") or ""
        extra = {} if not image or textpolicy.url_problem(image) else {"image_url": image}
        rows.append(
            judging_services.DocumentRow(
                line=number, external_id=docno, title=title, body=body, url=url, extra=extra
            )
        )
    return rows


@transaction.atomic
def snapshot_finish(*, snapshot: SearchSnapshot) -> SearchSnapshot:
    """Turn a snapshot whose queries are all answered or failed into a run (once)."""
    snapshot = SearchSnapshot.objects.select_for_update().get(pk=snapshot.pk)
    if snapshot.status in (SearchSnapshot.Status.DONE, SearchSnapshot.Status.FAILED):
        return snapshot
    rows = list(snapshot.queries.select_related("query").order_by("query__external_id"))
    if any(r.status == SnapshotQuery.Status.PENDING for r in rows):
        return snapshot
    answered = [r for r in rows if r.status == SnapshotQuery.Status.DONE and r.hits]
    snapshot.done = sum(r.status == SnapshotQuery.Status.DONE for r in rows)
    snapshot.failed = sum(r.status == SnapshotQuery.Status.FAILED for r in rows)
    snapshot.finished_at = timezone.now()
    if not answered:
        snapshot.status = SearchSnapshot.Status.FAILED
        snapshot.error = snapshot.error or "No query returned any hit; no run was made."
        snapshot.save()
        return snapshot
    hits = [hit for r in answered for hit in r.hits]
    documents = _document_rows(snapshot.collection, hits)
    if documents:
        judging_services.documents_import(collection=snapshot.collection, rows=documents)
    lines = []
    for r in answered:
        count = len(r.hits)
        for rank, hit in enumerate(r.hits, start=1):
            score = hit.get("score")
            value = float(score) if score is not None else float(count - rank + 1)
            lines.append(f"{r.query.external_id} Q0 {hit['docno']} {rank} {value!r} {snapshot.tag}")
    version = snapshot.version
    description = f"Snapshot of {version.configuration.name} v{version.number}."
    if snapshot.origin != SearchSnapshot.Origin.RUN and snapshot.source is not None:
        description += f" {snapshot.get_origin_display()} of snapshot {snapshot.source.tag}."
    if snapshot.failed:
        description += f" {snapshot.failed} of {snapshot.total} queries failed."
    try:
        run = metrics_services.run_submit(
            collection=snapshot.collection,
            team=version.configuration.team,
            tag=snapshot.tag,
            content=("\n".join(lines) + "\n").encode(),
            filename=f"{snapshot.tag}.txt",
            user=snapshot.started_by,
            description=description,
        )
    except metrics_services.RunRejected as exc:
        snapshot.status = SearchSnapshot.Status.FAILED
        snapshot.error = "The run was refused: " + "; ".join(
            str(e.get("message")) for e in exc.errors[:3]
        )
        snapshot.save()
        return snapshot
    snapshot.run = run
    snapshot.status = SearchSnapshot.Status.DONE
    _auto_judge(snapshot, [r.query.external_id for r in answered])
    snapshot.save()
    return snapshot


def _auto_judge(snapshot: SearchSnapshot, query_ids: list[str]) -> None:
    """Start the configuration's LLM judge on the snapshot's queries' unlabelled pairs.

    The job grades every pooled pair of those queries the judge has not labelled yet (the
    snapshot's new pairs joined the pool through the run), within its provider's budget,
    after this transaction commits. A judge that cannot start says why on the snapshot;
    the snapshot itself is done either way.
    """
    judge = snapshot.version.configuration.auto_judge
    if judge is None:
        return
    try:
        job = llm_services.llm_job_create(
            collection=snapshot.collection,
            judge=judge,
            queries=query_ids,
            actor=snapshot.started_by,
        )
    except ValidationError as exc:
        snapshot.auto_note = "The LLM judge did not start: " + " ".join(exc.messages)
        return
    llm_services.llm_job_start(job=job)
    snapshot.auto_job = job


@transaction.atomic
def configuration_auto_judge(
    *, configuration: SearchConfiguration, judge: Judge | None, user: AbstractBaseUser
) -> SearchConfiguration:
    """Set (or clear, ``None``) the LLM judge that grades each snapshot's new pairs.

    Raises ``ValidationError`` on ``auto_judge`` for a judge that is not an LLM judge of
    the collection, cannot run, or whose provider is not open to the collection.
    """
    if judge is not None:
        if (
            judge.kind != Judge.Kind.LLM
            or not judge.collections.filter(pk=configuration.collection_id).exists()
        ):
            raise ValidationError({"auto_judge": "Choose an LLM judge of this collection."})
        try:
            llm_services.check_runnable(judge)
            llm_services.check_open_to(judge=judge, collection=configuration.collection, user=user)
        except ValidationError as exc:
            raise ValidationError({"auto_judge": " ".join(exc.messages)}) from None
    configuration.auto_judge = judge
    configuration.save(update_fields=["auto_judge"])
    return configuration


@transaction.atomic
def snapshot_fail(*, snapshot: SearchSnapshot, reason: str) -> None:
    """End a snapshot with one clear reason (its pending queries are left unsent)."""
    SearchSnapshot.objects.filter(pk=snapshot.pk).exclude(status=SearchSnapshot.Status.DONE).update(
        status=SearchSnapshot.Status.FAILED, error=reason[:1000], finished_at=timezone.now()
    )


@transaction.atomic
def snapshot_query_record(
    *, row: SnapshotQuery, result: client.Answer | client.SearchFailed, version: SearchConfigVersion
) -> SnapshotQuery:
    """Record one query's answer (mapped) or failure."""
    if isinstance(result, client.SearchFailed):
        row.status = SnapshotQuery.Status.FAILED
        row.error = result.reason[:2000]
        row.retryable = result.retryable
        row.attempts = result.attempts
        row.raw, row.raw_truncated = keep_raw(result.raw) if result.raw else (None, False)
    else:
        mapped = mapping.map_answer(
            result.data, version.mapping, kind=version.endpoint.kind, k=version.depth
        )
        row.status = SnapshotQuery.Status.DONE
        row.hits = [hit.__dict__ for hit in mapped.hits]
        row.errors = mapped.errors[:100]
        row.error = ""
        row.attempts = result.attempts
        row.latency_ms = result.latency_ms
        row.raw, row.raw_truncated = keep_raw(result.raw)
    row.save()
    SearchSnapshot.objects.filter(pk=row.snapshot_id).update(
        done=SnapshotQuery.objects.filter(
            snapshot_id=row.snapshot_id, status=SnapshotQuery.Status.DONE
        ).count(),
        failed=SnapshotQuery.objects.filter(
            snapshot_id=row.snapshot_id, status=SnapshotQuery.Status.FAILED
        ).count(),
    )
    return row
