"""Write side of metrics: run submission, pooling and (re)scoring against the live list.

Scoring keeps, per run, the sum and count of every measure's per-query values over the
queries of the live judgment list, so that rescoring one query updates each run's mean in
constant time; a full rescore recomputes the sums from scratch.
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
import psycopg
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import connection, transaction
from django.db.models import Count, Max, Model
from django.db.models.functions import Coalesce
from django.db.models.signals import post_delete, post_save
from django.utils import timezone

from judging import services as judging_services
from judging.db import update_rows
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
    """Return the first line number on which each of ``qids`` appears.

    A TREC line starts with its qid; a JSON line names it as ``"qid"`` (or ``"query_id"``),
    quoted or as a number.
    """
    json_qid = {
        qid: re.compile(r'"(?:qid|query_id)"\s*:\s*"?' + re.escape(qid) + r'"?\s*[,}]')
        for qid in qids
    }
    found: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        head = line.split(None, 1)[0] if line.strip() else ""
        for qid in qids - found.keys():
            if head == qid or json_qid[qid].search(line):
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
    doc_pks, unknown_count = _document_pks(collection, parsed)
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
        # Scored in memory and inserted once (no write-then-update of 1,000 rows).
        runs_score(collection=collection, run_ids=[run.pk], new_rows=rankings)
        pool_from_run(run=run, depth=collection.pool_depth, rankings=rankings)
    except BaseException:
        run.source_file.storage.delete(stored)  # the database rolls back; so does the file
        raise
    run.refresh_from_db()
    return run


SMALL_RUN_DOCNOS = 10_000  # up to this many distinct docnos, look them up by id
_IN_CHUNK = 10_000  # docnos per IN list
_INDEX_CACHE_SIZE = 4  # collections whose docno index a process keeps


@dataclass(frozen=True)
class _DocnoIndex:
    """A collection's documents sorted by docno hash: hashes, pks and the docnos themselves.

    ``count`` and ``max_pk`` fingerprint the table state it was read from. New documents
    get larger pks and deletions lower the count, so either re-reads the index; a docno
    edited in place (the admin) is caught in this process by ``_forget_docno_index``, in
    other processes only when the fingerprint next changes.
    """

    count: int
    max_pk: int
    hashes: np.ndarray
    pks: np.ndarray
    docnos: pa.Array


_docno_indexes: OrderedDict[int, _DocnoIndex] = OrderedDict()
_docno_indexes_lock = threading.Lock()


def _read_docno_index(collection_id: int) -> _DocnoIndex:
    """Read every (pk, docno) of a collection in one pass (COPY on PostgreSQL)."""
    table = connection.ops.quote_name(Document._meta.db_table)
    sql = f"SELECT id, external_id FROM {table} WHERE collection_id = {int(collection_id)}"
    if connection.vendor == "postgresql":
        buffer = bytearray()
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as copy,
        ):
            for chunk in copy:
                buffer += chunk
        if buffer:
            table_ = pa_csv.read_csv(
                pa.BufferReader(bytes(buffer)),
                read_options=pa_csv.ReadOptions(column_names=["id", "docno"]),
                convert_options=pa_csv.ConvertOptions(
                    column_types={"id": pa.int64(), "docno": pa.large_binary()},
                    strings_can_be_null=False,
                ),
            )
            pks = table_.column("id").to_numpy()
            docnos = table_.column("docno").combine_chunks()
        else:
            pks, docnos = np.empty(0, dtype=np.int64), pa.array([], pa.large_binary())
    else:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            rows = cursor.fetchall()
        pks = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        docnos = pa.array([r[1].encode() for r in rows], pa.large_binary())
    hashes = scoring.docno_hashes(docnos)
    order = np.argsort(hashes, kind="stable")
    return _DocnoIndex(
        count=len(pks),
        max_pk=int(pks.max()) if len(pks) else 0,
        hashes=hashes[order],
        pks=pks[order],
        docnos=docnos.take(pa.array(order)),
    )


def _forget_docno_index(sender: type[Document], instance: Document, **_: Any) -> None:
    """Drop the cached docno index of a document's collection when it is saved or deleted."""
    with _docno_indexes_lock:
        _docno_indexes.pop(instance.collection_id, None)


post_save.connect(_forget_docno_index, sender=Document, dispatch_uid="metrics.docno_index.save")
post_delete.connect(_forget_docno_index, sender=Document, dispatch_uid="metrics.docno_index.delete")


def _docno_index(collection_id: int) -> _DocnoIndex:
    """Return the collection's docno index, re-read when its fingerprint changed."""
    count, max_pk = (
        Document.objects.filter(collection_id=collection_id)
        .aggregate(n=Count("pk"), top=Coalesce(Max("pk"), 0))
        .values()
    )
    with _docno_indexes_lock:
        index = _docno_indexes.get(collection_id)
    if index is None or (index.count, index.max_pk) != (count, max_pk):
        index = _read_docno_index(collection_id)
    with _docno_indexes_lock:
        _docno_indexes[collection_id] = index
        _docno_indexes.move_to_end(collection_id)
        while len(_docno_indexes) > _INDEX_CACHE_SIZE:
            _docno_indexes.popitem(last=False)
    return index


def _document_pks(collection: Collection, parsed: scoring.ParsedRun) -> tuple[np.ndarray, int]:
    """Map the run's distinct docnos to document pks, creating id-only documents as needed.

    Small runs look their documents up by id. Large ones use a per-process index of the
    collection (docno hashes sorted, with pks and docnos), re-read whenever the
    collection's document count or largest pk changed: docnos are hashed and searched in
    bulk, every hash match is confirmed by comparing the docnos themselves, and anything
    not confirmed is looked up by id before being created, so the result is exact.
    """
    values = parsed.docno_values
    n = len(values)
    pks = np.full(n, -1, dtype=np.int64)
    if n > SMALL_RUN_DOCNOS:
        index = _docno_index(collection.pk)
        if len(index.hashes):
            hashes = scoring.docno_hashes(values)
            at = scoring.sorted_search(index.hashes, hashes)
            at = np.minimum(at, len(index.hashes) - 1)
            candidates = np.flatnonzero(index.hashes[at] == hashes)
            if len(candidates):
                same = pc.equal(
                    index.docnos.take(pa.array(at[candidates])),
                    values.cast(pa.large_binary()).take(pa.array(candidates)),
                )
                confirmed = candidates[same.to_numpy(zero_copy_only=False)]
                pks[confirmed] = index.pks[at[confirmed]]
    unresolved = np.flatnonzero(pks < 0)
    if not len(unresolved):
        return pks, 0
    docnos = parsed.docnos
    wanted = [docnos[i] for i in unresolved.tolist()]
    known: dict[str, int] = {}
    documents = Document.objects.filter(collection=collection)
    for start in range(0, len(wanted), _IN_CHUNK):
        chunk = wanted[start : start + _IN_CHUNK]
        known.update(documents.filter(external_id__in=chunk).values_list("external_id", "pk"))
    missing = [d for d in wanted if d not in known]
    if missing:
        Document.objects.bulk_create(
            [Document(collection=collection, external_id=d, has_content=False) for d in missing],
            batch_size=2000,
        )
        for start in range(0, len(missing), _IN_CHUNK):
            chunk = missing[start : start + _IN_CHUNK]
            known.update(documents.filter(external_id__in=chunk).values_list("external_id", "pk"))
    pks[unresolved] = np.fromiter((known[d] for d in wanted), dtype=np.int64, count=len(wanted))
    return pks, len(missing)


def _live_grades(
    collection_id: int, query_ids: Sequence[int] | None = None
) -> dict[int, scoring.QueryGrades]:
    """Read the live list (of ``query_ids`` only, if given) grouped by query, in one query."""
    live = LiveGrade.objects.filter(collection_id=collection_id)
    if query_ids is not None:
        live = live.filter(query_id__in=list(query_ids))
    sql, params = (
        live.order_by("query_id", "document_id")
        .values_list("query_id", "document_id", "grade")
        .query.sql_with_params()
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return scoring.live_grades_by_query(cursor.fetchall())


@transaction.atomic
def pool_from_run(*, run: Run, depth: int, rankings: Iterable[RunQuery] | None = None) -> int:
    """Add the run's unjudged top-``depth`` documents per query to the pool; return how many.

    "Unjudged" means the pair has no grade in the live judgment list. Id-only documents are
    pooled too; they are listed for import on the collection page and never shown to judges.
    """
    if rankings is None:
        rankings = RunQuery.objects.filter(run=run, retrieved__gt=0).only("query_id", "ranking")
    tops = [
        (r.query_id, np.frombuffer(bytes(r.ranking), dtype=RANKING_DTYPE)[:depth]) for r in rankings
    ]
    tops = [(q, top) for q, top in tops if len(top)]
    if not tops:
        return 0
    queries = np.repeat([q for q, _ in tops], [len(top) for _, top in tops]).astype(np.int64)
    documents = np.concatenate([top for _, top in tops])
    stride = int(documents.max()) + 1
    keys = queries * stride + documents
    # Only the live grades of the candidate documents: ~10k rows, not the whole list.
    wanted = np.unique(documents).tolist()
    judged: list[tuple[int, int]] = []
    live = LiveGrade.objects.filter(collection_id=run.collection_id)
    for start in range(0, len(wanted), _IN_CHUNK):
        chunk = wanted[start : start + _IN_CHUNK]
        judged += live.filter(document_id__in=chunk).values_list("query_id", "document_id")
    judged_keys = np.array([q * stride + d for q, d in judged], dtype=np.int64)
    fresh = ~np.isin(keys, judged_keys)
    candidates = set(zip(queries[fresh].tolist(), documents[fresh].tolist(), strict=True))
    return judging_services.pool_add_ids(
        collection=run.collection, pairs=candidates, source=PoolEntry.Source.RUN
    )


@transaction.atomic
def runs_score(
    *,
    collection: Collection,
    run_ids: Iterable[int] | None = None,
    query_ids: Iterable[int] | None = None,
    new_rows: Sequence[RunQuery] | None = None,
) -> int:
    """Score runs of ``collection`` against the live judgment list; return the version used.

    With ``query_ids`` only those queries are rescored and each run's means are updated
    incrementally; without, every query is rescored and the means recomputed from scratch.
    ``new_rows`` (run submission) are the unsaved rankings of the one just-saved run in
    ``run_ids``: they are scored in memory and inserted, instead of read back and updated.
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
    runs = {r.pk: r for r in runs.order_by().only("pk", "score_sums")}
    if not runs:
        return version
    full = query_ids is None
    if not full:
        query_ids = sorted(set(query_ids))
    grades_by_query = _live_grades(collection.pk, None if full else query_ids)
    if new_rows is not None:
        rows = list(new_rows)
    else:
        rows = _read_rankings(runs.keys(), None if full else query_ids)
    present = {(r.run_id, r.query_id) for r in rows}
    empty = [
        RunQuery(run_id=run_id, query_id=q, ranking=b"", retrieved=0)
        for run_id in runs
        for q in grades_by_query
        if (run_id, q) not in present
    ]
    if new_rows is not None:
        rows.extend(empty)
    else:
        rows.extend(RunQuery.objects.bulk_create(empty, batch_size=1000))
    values = scoring.evaluate_rows(rows=rows, grades_by_query=grades_by_query, measures=measures)
    sums: dict[int, dict[str, list[float]]] = {
        run_id: {} if full else {k: list(v) for k, v in run.score_sums.items()}
        for run_id, run in runs.items()
    }
    columns = {name: values[name].tolist() for name in names}
    for i, row in enumerate(rows):
        old = {} if full else (row.scores or {})
        new = (
            {name: _finite(columns[name][i]) for name in names}
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
    if new_rows is not None:
        _insert_rankings(rows)
    else:
        _write_rows(RunQuery, rows, ["scores", "version"])
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
    _write_rows(Run, updated, ["score_sums", "scores", "scored_version", "scored_at", "status"])
    return version


def _insert_rankings(rows: Sequence[RunQuery]) -> None:
    """Insert new rankings: with ``COPY`` on PostgreSQL (8 MB of rankings for a W1 run)."""
    if connection.vendor != "postgresql":
        RunQuery.objects.bulk_create(rows, batch_size=250)
        return
    quote = connection.ops.quote_name
    meta = RunQuery._meta
    fields = [meta.get_field(n) for n in ("run", "query", "ranking", "retrieved", "scores")]
    columns = ", ".join(quote(f.column) for f in [*fields, meta.get_field("version")])
    with (
        connection.cursor() as cursor,
        cursor.cursor.copy(f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN") as copy,
    ):
        for row in rows:
            copy.write_row(
                (
                    row.run_id,
                    row.query_id,
                    bytes(row.ranking),
                    row.retrieved,
                    json.dumps(row.scores, allow_nan=False),
                    row.version,
                )
            )


@dataclass(slots=True)
class _Ranking:
    """A stored ranking as rescoring reads it: the ``RunQuery`` columns, no model overhead."""

    pk: int
    run_id: int
    query_id: int
    ranking: bytes
    retrieved: int
    scores: dict[str, Any]
    version: int = 0


def _read_rankings(run_ids: Iterable[int], query_ids: Sequence[int] | None) -> list[_Ranking]:
    """Read the stored rankings of ``run_ids`` (of ``query_ids`` only, if given) in one query.

    A raw fetch: building a hundred model instances (and their JSON) costs more than the
    query itself when one judgment rescores every run.
    """
    rows = RunQuery.objects.filter(run_id__in=list(run_ids))
    if query_ids is not None:
        rows = rows.filter(query_id__in=list(query_ids))
    sql, params = (
        rows.order_by()
        .values_list("pk", "run_id", "query_id", "ranking", "retrieved", "scores")
        .query.sql_with_params()
    )
    if connection.vendor == "postgresql":
        # Binary results: rankings arrive as raw bytes, not hex text (1.6 MB for 100 runs).
        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            fetched = cursor.fetchall()
    else:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            fetched = cursor.fetchall()
    return [
        _Ranking(
            pk,
            run_id,
            query_id,
            bytes(ranking),
            retrieved,
            json.loads(scores) if isinstance(scores, str) else (scores or {}),
        )
        for pk, run_id, query_id, ranking, retrieved, scores in fetched
    ]


def _write_rows(model: type[Model], objs: Sequence[Any], fields: Sequence[str]) -> None:
    """Write ``fields`` of saved rows of ``model``; on PostgreSQL in one statement.

    The rows travel as one JSON parameter expanded by ``jsonb_to_recordset``: a hundred rows
    cost one round trip, one plan and one parameter to quote, several times cheaper than a
    pipelined prepared UPDATE per row (``judging.db.update_rows``, used elsewhere). ``objs``
    are model instances or objects with the same attributes (``pk`` and ``fields``).
    """
    if not objs:
        return
    if connection.vendor != "postgresql":
        update_rows(
            [
                o if isinstance(o, model) else model(pk=o.pk, **{f: getattr(o, f) for f in fields})
                for o in objs
            ],
            fields,
        )
        return
    meta = model._meta
    columns = [meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    names = [f"c{i}" for i in range(len(columns))]
    assignments = ", ".join(
        f"{quote(f.column)} = v.{n}" for f, n in zip(columns, names, strict=True)
    )
    types = ", ".join(f"{n} {f.db_type(connection)}" for f, n in zip(columns, names, strict=True))
    sql = (
        f"UPDATE {quote(meta.db_table)} AS t SET {assignments} "
        f"FROM jsonb_to_recordset(%s::jsonb) AS v(pk bigint, {types}) "
        f"WHERE t.{quote(meta.pk.column)} = v.pk"
    )
    records = []
    for obj in objs:
        record: dict[str, Any] = {"pk": obj.pk}
        for f, n in zip(columns, names, strict=True):
            value = getattr(obj, f.attname)
            record[n] = value.isoformat() if isinstance(value, datetime) else value
        records.append(record)
    with connection.cursor() as cursor:
        cursor.execute(sql, [json.dumps(records, allow_nan=False)])


def _finite(value: float) -> float | None:
    """Return ``value`` as a float, or None for NaN (a query left out of the mean)."""
    value = float(value)
    return None if value != value else value


def runs_rescore_after_change(*, collection_id: int, query_ids: Iterable[int]) -> None:
    """Rescore every run of the collection for the given queries (signal receiver's work)."""
    if Run.objects.filter(collection_id=collection_id).exists():
        runs_score(collection=Collection(pk=collection_id), query_ids=query_ids)


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
    judgments_published: bool | None = None,
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
    if judgments_published is not None:
        collection.judgments_published = judgments_published
        fields.append("judgments_published")
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
