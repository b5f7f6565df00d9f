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
import os
import re
import zlib
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from graded import textpolicy
from judging import background
from judging import services as judging_services
from judging.llm.egress import EgressRefused, check_base_url, guarded_client
from judging.models import Collection, Query
from metrics import services as metrics_services
from metrics.models import Team
from metrics.search import client, mapping, presets
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

    async def one(http, query: Query) -> dict[str, Any]:
        item: dict[str, Any] = {"query_id": query.external_id}
        try:
            request = build_request(version, query, secret)
        except EgressRefused as exc:
            return {**item, "error": str(exc)}
        item["request"] = request.shown()
        try:
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
) -> SearchSnapshot:
    """Queue a snapshot of the configuration's current version over the collection's queries.

    ``query_ids`` (external ids) chooses a query set. Raises ``ValidationError`` by field.
    """
    version = configuration.current
    collection = configuration.collection
    assert version is not None
    if not endpoint_open_to(endpoint=version.endpoint, collection=collection, user=user):
        raise ValidationError({"endpoint": "This endpoint is not open to this collection."})
    credential_for(version.endpoint)
    tag = (tag or "").strip() or (
        f"{configuration.name}-v{version.number}-{timezone.now():%Y%m%d%H%M%S}"
    )[:100]
    problem = textpolicy.name_problem(tag, what="tag")
    if problem:
        raise ValidationError({"tag": problem})
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
        collection=collection, version=version, tag=tag, total=len(ids), started_by=user
    )
    SnapshotQuery.objects.bulk_create(
        [SnapshotQuery(snapshot=snapshot, query_id=pk) for pk in ids], batch_size=1000
    )
    background.start_after_commit(
        "metrics.run_search_snapshot", snapshot.pk, thread_name=f"search-snapshot-{snapshot.pk}"
    )
    return snapshot


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
    snapshot.save()
    return snapshot


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
