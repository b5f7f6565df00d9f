"""Write side of metrics: run submission, pooling and (re)scoring against the live list.

Scoring keeps, per run, the sum and count of every measure's per-query values over the
queries of the live judgment list, so that rescoring one query updates each run's mean in
constant time; a full rescore recomputes the sums from scratch.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from judging import services as judging_services
from judging.models import Collection, Document, LiveGrade, Membership, PoolEntry

from . import scoring
from .models import RANKING_DTYPE, Run, RunQuery, Team


@dataclass
class RunRejected(Exception):
    """A submission was refused; ``errors`` lists every problem (``line`` when known)."""

    errors: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        """Return the problems, one per line."""
        return "\n".join(
            f"line {e['line']}: {e['message']}" if e.get("line") else e["message"]
            for e in self.errors
        )


def _first_lines(text: str, qids: set[str]) -> dict[str, int]:
    """Return the first line number on which each of ``qids`` appears (TREC or JSON lines)."""
    found: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        head = line.split(None, 1)[0] if line.strip() else ""
        for qid in qids - found.keys():
            if head == qid or f'"{qid}"' in line:
                found[qid] = number
        if len(found) == len(qids):
            break
    return found


@transaction.atomic
def run_submit(
    *,
    collection: Collection,
    team: Team,
    tag: str,
    content: bytes,
    filename: str,
    user: AbstractBaseUser | None,
    description: str = "",
) -> Run:
    """Validate, store, pool and score a run; all or nothing.

    Raises ``RunRejected`` listing every problem: a tag already used in the collection, a
    file over the size limit, anything the engine's reader refuses (with line numbers), and
    queries unknown to the collection. Documents unknown to the collection are allowed:
    they are recorded as id-only documents (unjudged) and counted.
    """
    errors: list[dict[str, Any]] = []
    tag = tag.strip()
    if not tag:
        errors.append({"field": "tag", "message": "A run needs a tag."})
    elif Run.objects.filter(collection=collection, tag=tag).exists():
        errors.append(
            {"field": "tag", "message": f"Tag {tag!r} is already used in this collection."}
        )
    if team.collection_id != collection.pk:
        errors.append({"field": "team", "message": "The team does not take part here."})
    if len(content) > settings.GRADED_RUN_MAX_BYTES:
        errors.append(
            {
                "field": "file",
                "message": f"File is {len(content)} bytes; the limit is "
                f"{settings.GRADED_RUN_MAX_BYTES}.",
            }
        )
    if errors:
        raise RunRejected(errors)
    try:
        parsed = scoring.read_run(content, name=filename)
    except scoring.InputError as exc:
        raise RunRejected(scoring.error_items(exc)) from exc
    queries = dict(collection.queries.values_list("external_id", "pk"))
    unknown = sorted(set(parsed.qids) - queries.keys())
    if unknown:
        lines = _first_lines(content.decode("utf-8", "replace"), set(unknown))
        raise RunRejected(
            [
                {"line": lines.get(q), "message": f"query {q!r} is not in the collection"}
                for q in unknown
            ]
        )
    doc_pks, unknown_count = _document_pks(collection, parsed.docnos)
    run = Run(
        collection=collection,
        team=team,
        tag=tag,
        description=description,
        submitted_by=user,
        source_format=parsed.format,
        query_count=len(parsed.qids),
        line_count=parsed.line_count,
        unknown_document_count=unknown_count,
    )
    run.source_file.save(filename.rsplit("/", 1)[-1] or "run.txt", ContentFile(content), save=False)
    stored = run.source_file.name
    try:
        run.save()
        rankings = [
            RunQuery(
                run=run,
                query_id=queries[qid],
                ranking=doc_pks[doc_index].astype(RANKING_DTYPE).tobytes(),
                retrieved=len(doc_index),
            )
            for qid, doc_index in zip(parsed.qids, parsed.rankings, strict=True)
        ]
        RunQuery.objects.bulk_create(rankings, batch_size=500)
        pool_from_run(run=run, depth=collection.pool_depth, rankings=rankings)
        runs_score(collection=collection, run_ids=[run.pk])
    except BaseException:
        run.source_file.storage.delete(stored)  # the database rolls back; so does the file
        raise
    run.refresh_from_db()
    return run


def _document_pks(collection: Collection, docnos: list[str]) -> tuple[np.ndarray, int]:
    """Map docnos to document pks, creating id-only documents for unknown ones.

    Small runs look their documents up by id; large ones read the collection's whole id
    map in one pass, which is faster than a huge ``IN`` list.
    """
    documents = Document.objects.filter(collection=collection)
    if len(docnos) <= 10_000:
        documents = documents.filter(external_id__in=docnos)
    known = dict(documents.values_list("external_id", "pk"))
    missing = [d for d in docnos if d not in known]
    if missing:
        Document.objects.bulk_create(
            [Document(collection=collection, external_id=d, has_content=False) for d in missing],
            batch_size=2000,
        )
        known.update(
            Document.objects.filter(collection=collection, external_id__in=missing).values_list(
                "external_id", "pk"
            )
        )
    return np.fromiter((known[d] for d in docnos), dtype=np.int64, count=len(docnos)), len(missing)


@transaction.atomic
def pool_from_run(*, run: Run, depth: int, rankings: Iterable[RunQuery] | None = None) -> int:
    """Add the run's unjudged top-``depth`` documents per query to the pool; return how many.

    "Unjudged" means the pair has no grade in the live judgment list. Id-only documents are
    pooled too; they are listed for import on the collection page and never shown to judges.
    """
    if rankings is None:
        rankings = RunQuery.objects.filter(run=run, retrieved__gt=0).only("query_id", "ranking")
    candidates = {
        (r.query_id, int(d))
        for r in rankings
        for d in np.frombuffer(bytes(r.ranking), dtype=RANKING_DTYPE)[:depth]
    }
    query_ids = {q for q, _ in candidates}
    judged = set(
        LiveGrade.objects.filter(
            collection_id=run.collection_id, query_id__in=query_ids
        ).values_list("query_id", "document_id")
    )
    return judging_services.pool_add_ids(
        collection=run.collection, pairs=candidates - judged, source=PoolEntry.Source.RUN
    )


@transaction.atomic
def runs_score(
    *,
    collection: Collection,
    run_ids: Iterable[int] | None = None,
    query_ids: Iterable[int] | None = None,
) -> int:
    """Score runs of ``collection`` against the live judgment list; return the version used.

    With ``query_ids`` only those queries are rescored and each run's means are updated
    incrementally; without, every query is rescored and the means recomputed from scratch.
    Takes the collection's row lock, so the live list and its version are read consistently
    and an older rescore can never overwrite a newer one.
    """
    locked = (
        Collection.objects.select_for_update()
        .filter(pk=collection.pk)
        .values("judgments_version", "measures")
        .get()
    )
    version, measures = locked["judgments_version"], locked["measures"]
    names = scoring.canonical_names(measures)
    runs = Run.objects.filter(collection=collection)
    if run_ids is not None:
        runs = runs.filter(pk__in=list(run_ids))
    runs = {r.pk: r for r in runs.only("pk", "score_sums")}
    if not runs:
        return version
    full = query_ids is None
    live = LiveGrade.objects.filter(collection=collection)
    if not full:
        query_ids = sorted(set(query_ids))
        live = live.filter(query_id__in=query_ids)
    grades_by_query = scoring.live_grades_by_query(
        live.order_by("query_id", "document_id").values_list("query_id", "document_id", "grade")
    )
    rows = RunQuery.objects.filter(run_id__in=runs.keys())
    if not full:
        rows = rows.filter(query_id__in=query_ids)
    rows = list(rows.only("pk", "run_id", "query_id", "ranking", "retrieved", "scores"))
    present = {(r.run_id, r.query_id) for r in rows}
    empty = [
        RunQuery(run_id=run_id, query_id=q, ranking=b"", retrieved=0)
        for run_id in runs
        for q in grades_by_query
        if (run_id, q) not in present
    ]
    rows.extend(RunQuery.objects.bulk_create(empty, batch_size=1000))
    values = scoring.evaluate_rows(rows=rows, grades_by_query=grades_by_query, measures=measures)
    sums: dict[int, dict[str, list[float]]] = {
        run_id: {} if full else {k: list(v) for k, v in run.score_sums.items()}
        for run_id, run in runs.items()
    }
    for i, row in enumerate(rows):
        old = {} if full else (row.scores or {})
        new = (
            {name: _finite(values[name][i]) for name in names}
            if row.query_id in grades_by_query
            else {}
        )
        run_sums = sums[row.run_id]
        for name in names:
            total = run_sums.setdefault(name, [0.0, 0])
            if old.get(name) is not None:
                total[0] -= old[name]
                total[1] -= 1
            if new.get(name) is not None:
                total[0] += new[name]
                total[1] += 1
        row.scores = new
        row.version = version
    RunQuery.objects.bulk_update(rows, ["scores", "version"], batch_size=1000)
    now = timezone.now()
    updated = []
    for run_id, run in runs.items():
        run_sums = {name: sums[run_id].get(name, [0.0, 0]) for name in names}
        run.score_sums = run_sums
        run.scores = {
            name: (total / count if count else None) for name, (total, count) in run_sums.items()
        }
        run.scored_version, run.scored_at, run.status = version, now, Run.Status.SCORED
        updated.append(run)
    Run.objects.bulk_update(
        updated, ["score_sums", "scores", "scored_version", "scored_at", "status"]
    )
    return version


def _finite(value: float) -> float | None:
    """Return ``value`` as a float, or None for NaN (a query left out of the mean)."""
    value = float(value)
    return None if value != value else value


def runs_rescore_after_change(*, collection_id: int, query_ids: Iterable[int]) -> None:
    """Rescore every run of the collection for the given queries (signal receiver's work)."""
    collection = Collection.objects.get(pk=collection_id)
    if Run.objects.filter(collection=collection).exists():
        runs_score(collection=collection, query_ids=query_ids)


@transaction.atomic
def team_create(
    *, collection: Collection, name: str, members: Iterable[AbstractBaseUser] = ()
) -> Team:
    """Create a team in ``collection`` and give its members the collection's team role."""
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A team needs a name."})
    if Team.objects.filter(collection=collection, name=name).exists():
        raise ValidationError({"name": f"Team {name!r} already exists in this collection."})
    team = Team.objects.create(collection=collection, name=name)
    for user in members:
        team_member_add(team=team, user=user)
    return team


@transaction.atomic
def team_member_add(*, team: Team, user: AbstractBaseUser) -> None:
    """Add ``user`` to ``team`` (idempotent), granting the collection's team role."""
    team.members.add(user)
    judging_services.membership_grant(
        collection=team.collection, user=user, role=Membership.Role.TEAM
    )


@transaction.atomic
def run_update(*, run: Run, tag: str | None = None, description: str | None = None) -> Run:
    """Rename a run or change its description; a tag stays unique in its collection."""
    if tag is not None:
        tag = tag.strip()
        if not tag:
            raise ValidationError({"tag": "A run needs a tag."})
        taken = Run.objects.filter(collection_id=run.collection_id, tag=tag).exclude(pk=run.pk)
        if taken.exists():
            raise ValidationError({"tag": f"Tag {tag!r} is already used in this collection."})
        run.tag = tag
    if description is not None:
        run.description = description
    run.save(update_fields=["tag", "description"])
    return run


@transaction.atomic
def run_delete(*, run: Run) -> None:
    """Delete a run, its stored rankings and its kept file; pooled pairs stay in the pool."""
    stored = run.source_file.name
    storage = run.source_file.storage
    run.delete()
    if stored:
        transaction.on_commit(lambda: storage.delete(stored))


@transaction.atomic
def collection_settings_update(
    *,
    collection: Collection,
    measures: list[str] | None = None,
    coverage_threshold: float | None = None,
    leaderboard_published: bool | None = None,
) -> Collection:
    """Change a collection's leaderboard settings; a new measure set rescores every run.

    Every measure name is checked with the engine first; unknown names raise
    ``ValidationError`` on ``measures`` naming each bad entry, and nothing changes.
    """
    fields: list[str] = []
    if measures is not None:
        cleaned = [m.strip() for m in measures if m.strip()]
        if not cleaned:
            raise ValidationError({"measures": "Give at least one measure."})
        problems = []
        for number, name in enumerate(cleaned, start=1):
            try:
                scoring.measure_labels([name])
            except scoring.MeasureError as exc:
                problems.append(f"line {number}: {name!r}: {exc}")
        if problems:
            raise ValidationError({"measures": problems})
        collection.measures = cleaned
        fields.append("measures")
    if coverage_threshold is not None:
        if not 0.0 <= coverage_threshold <= 1.0:
            raise ValidationError({"coverage_threshold": "Must be between 0 and 1."})
        collection.coverage_threshold = coverage_threshold
        fields.append("coverage_threshold")
    if leaderboard_published is not None:
        collection.leaderboard_published = leaderboard_published
        fields.append("leaderboard_published")
    if fields:
        collection.save(update_fields=fields)
    if "measures" in fields:
        runs_score(collection=collection)
    return collection


@transaction.atomic
def runs_repool(*, collection: Collection, depth: int) -> int:
    """Pool every run's unjudged top-``depth`` documents; remember the depth; return added."""
    if depth < 1:
        raise ValidationError({"depth": "Pool depth must be at least 1."})
    collection.pool_depth = depth
    collection.save(update_fields=["pool_depth"])
    return sum(
        pool_from_run(run=run, depth=depth)
        for run in Run.objects.filter(collection=collection).select_related("collection")
    )
