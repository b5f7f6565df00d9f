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
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import IntegrityError, connection, transaction
from django.db.models import Model
from django.utils import timezone

from judging import services as judging_services
from judging.db import update_rows
from judging.models import Collection, Document, LiveGrade, Membership, PoolEntry
from judging.textpolicy import MAX_ERRORS, cap_errors, echo, loads_json

from . import docno_index, scoring
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


def _lenient_qids(text: str, skip_lines: set[int]) -> list[str]:
    """Return the qids of a run file's readable lines (TREC, JSON Lines or a JSON array).

    Used only to name unknown queries when the file also has format errors; lines in
    ``skip_lines`` (those already reported as malformed) are left out.
    """
    qids: set[str] = set()
    head = text.lstrip()[:1]
    if head == "[":
        try:
            items = loads_json(text)
        except ValueError:  # TextRefused included: deep nesting, huge numbers, NUL
            items = []
        objects = items if isinstance(items, list) else []
    else:
        objects = []
        for number, line in enumerate(text.splitlines(), start=1):
            stripped = line.strip()
            if not stripped or number in skip_lines:
                continue
            if stripped.startswith("{"):
                try:
                    objects.append(loads_json(stripped))
                except ValueError:
                    continue
            else:
                qids.add(stripped.split(None, 1)[0])
    for item in objects:
        if isinstance(item, dict):
            qid = item.get("qid", item.get("query_id"))
            if isinstance(qid, str | int) and not isinstance(qid, bool):
                qids.add(str(qid))
    return sorted(qids)


def _tag_taken(tag: str) -> dict[str, str]:
    """Return the error of a tag already used in the collection (sequential or concurrent)."""
    return {"field": "tag", "message": f"Tag {echo(tag)} is already used in this collection."}


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
    they are recorded as id-only documents (unjudged) and counted. The returned run's
    ``pairs_pooled`` says how many new pairs its top ``pool_depth`` added to the pool.
    """
    errors: list[dict[str, Any]] = []
    tag = tag.strip()
    if not tag:
        errors.append({"field": "tag", "message": "A run needs a tag."})
    elif Run.objects.filter(collection=collection, tag=tag).exists():
        errors.append(_tag_taken(tag))
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
        raise RunRejected(errors)  # not read at all
    # Every problem in one round: the tag, the format, and the queries the collection lacks
    # (looked for leniently on the readable lines when the format has errors).
    queries = dict(collection.queries.values_list("external_id", "pk"))
    text = content.decode("utf-8", "replace")
    try:
        parsed = scoring.read_run(content, name=filename)
    except scoring.InputError as exc:
        line_errors = scoring.error_items(exc)
        # A file whose errors reached the cap is garbage: do not scan it again for qids.
        capped = len(line_errors) > MAX_ERRORS
        skip = {e["line"] for e in line_errors if e.get("line")}
        run_qids = [] if capped else _lenient_qids(text, skip)
    else:
        line_errors = scoring.id_problems(parsed, content)
        run_qids = parsed.qids
    unknown = sorted(set(run_qids) - queries.keys())
    if unknown:
        lines = _first_lines(text, set(unknown[:MAX_ERRORS]))
        line_errors += [
            {"line": lines.get(q), "message": f"query {echo(q)} is not in the collection"}
            for q in unknown[:MAX_ERRORS]
        ]
        if len(unknown) > MAX_ERRORS:
            line_errors.append(
                {"message": f"... and {len(unknown) - MAX_ERRORS} more unknown queries"}
            )
    if errors or line_errors:
        line_errors.sort(key=lambda e: (e.get("line") is None, e.get("line") or 0))
        raise RunRejected(cap_errors(errors + line_errors))
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
        try:
            with transaction.atomic():  # a savepoint: a concurrent same-tag insert fails here
                run.save()
        except IntegrityError:
            if not Run.objects.filter(collection=collection, tag=tag).exists():
                raise
            raise RunRejected([_tag_taken(tag)]) from None
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
        pooled = pool_from_run(run=run, depth=collection.pool_depth, rankings=rankings)
    except BaseException:
        run.source_file.storage.delete(stored)  # the database rolls back; so does the file
        raise
    run.refresh_from_db()
    run.pairs_pooled = pooled  # not stored: what this submission added to the judges' pool
    return run


SMALL_RUN_DOCNOS = 10_000  # up to this many distinct docnos, look them up by id
_IN_CHUNK = 10_000  # docnos per IN list


def _document_pks(collection: Collection, parsed: scoring.ParsedRun) -> tuple[np.ndarray, int]:
    """Map the run's distinct docnos to document pks, creating id-only documents as needed.

    Small runs look their documents up by id. Large ones use the collection's persisted
    docno index (:mod:`metrics.docno_index`; every hash match confirmed by the docno
    itself); docnos it does not cover are looked up by id before id-only documents are
    created, so the result is exact, and are merged into the index after commit.
    """
    values = parsed.docno_values
    n = len(values)
    pks = np.full(n, -1, dtype=np.int64)
    large = n > SMALL_RUN_DOCNOS
    if large:
        pks = docno_index.get(collection.pk).lookup(values)
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
    if large:
        docno_index.merge_later(collection.pk, values.take(pa.array(unresolved)), pks[unresolved])
    return pks, len(missing)


def _live_grades(
    collection_id: int, query_ids: Sequence[int] | None = None
) -> dict[int, scoring.QueryGrades]:
    """Read the live list (of ``query_ids`` only, if given) grouped by query, in one query.

    Each pair comes with its aggregated abstention probability (for UDCG).
    """
    live = LiveGrade.objects.filter(collection_id=collection_id)
    if query_ids is not None:
        live = live.filter(query_id__in=list(query_ids))
    sql, params = (
        live.order_by("query_id", "document_id")
        .values_list("query_id", "document_id", "grade", "abstain_probability")
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
    runs = {r.pk: r for r in runs.order_by().only("pk", "score_sums", "submitted_at", "status")}
    if not runs:
        return version
    full = query_ids is None
    if not full:
        query_ids = sorted(set(query_ids))
    grades_by_query = _live_grades(collection.pk, None if full else query_ids)
    if new_rows is not None:
        rows = list(new_rows)
    else:
        rows = _read_rankings(runs, None if full else query_ids)
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
    changed: list[bool] = []
    for i, row in enumerate(rows):
        old = {} if full else (row.scores or {})
        new = (
            {name: _finite(columns[name][i]) for name in names}
            if row.query_id in grades_by_query
            else {}
        )
        changed.append(full or new != old)
        if not changed[-1]:  # the run's sums stay exactly as they are (no float drift)
            row.version = version
            continue
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
        _write_scores(rows, changed, version)
    now = timezone.now()
    updated = []
    touched = {row.run_id for row, c in zip(rows, changed, strict=True) if c}
    untouched = []
    for run_id, run in runs.items():
        run_sums = {name: sums[run_id].get(name, [0.0, 0]) for name in names}
        if (
            run_id not in touched
            and not full
            and run.status == Run.Status.SCORED
            and run_sums == run.score_sums
        ):
            untouched.append(run_id)  # its means stand: only the version moves
            continue
        run.score_sums = run_sums
        run.scores = {
            name: (total / count if count else None) for name, (total, count) in run_sums.items()
        }
        run.scored_version, run.scored_at, run.status = version, now, Run.Status.SCORED
        updated.append(run)
    _write_rows(Run, updated, ["score_sums", "scores", "scored_version", "scored_at", "status"])
    if untouched:
        Run.objects.filter(pk__in=untouched).update(scored_version=version, scored_at=now)
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


RANKING_CACHE_BYTES = 64 * 1024 * 1024  # rankings a process keeps for rescoring
RANKING_CACHE_MAX_QUERIES = 4  # rescores of more queries at once read rankings directly

# query_id -> {RunQuery pk: (run_id, run submitted_at, ranking bytes)}; least recent first.
_ranking_cache: OrderedDict[int, dict[int, tuple[int, datetime | None, bytes]]] = OrderedDict()
_ranking_cache_bytes = 0
_ranking_cache_lock = threading.Lock()


def _cached_rankings(query_ids: Sequence[int]) -> dict[int, tuple[int, datetime | None, bytes]]:
    """Return the cached rankings of ``query_ids`` by RunQuery pk (and mark them recent)."""
    found: dict[int, tuple[int, datetime | None, bytes]] = {}
    with _ranking_cache_lock:
        for q in query_ids:
            entry = _ranking_cache.get(q)
            if entry is not None:
                _ranking_cache.move_to_end(q)
                found.update(entry)
    return found


def _cache_rankings(rows: Sequence[_Ranking], runs: dict[int, Run]) -> None:
    """Keep the rankings of these rows (whole queries), evicting the least recent queries."""
    global _ranking_cache_bytes
    by_query: dict[int, dict[int, tuple[int, datetime | None, bytes]]] = {}
    for row in rows:
        by_query.setdefault(row.query_id, {})[row.pk] = (
            row.run_id,
            runs[row.run_id].submitted_at,
            row.ranking,
        )
    with _ranking_cache_lock:
        for query_id, entry in by_query.items():
            old = _ranking_cache.pop(query_id, None)
            if old is not None:
                _ranking_cache_bytes -= sum(len(v[2]) for v in old.values())
            _ranking_cache[query_id] = entry
            _ranking_cache_bytes += sum(len(v[2]) for v in entry.values())
        while _ranking_cache and _ranking_cache_bytes > RANKING_CACHE_BYTES:
            _, evicted = _ranking_cache.popitem(last=False)
            _ranking_cache_bytes -= sum(len(v[2]) for v in evicted.values())


def _fetch(sql: str, params: Sequence[Any]) -> list[tuple]:
    """Run a read; binary results on PostgreSQL (rankings arrive as bytes, not hex text)."""
    if connection.vendor == "postgresql":
        connection.ensure_connection()
        with psycopg.Cursor(connection.connection) as cursor:
            cursor.execute(sql, params, binary=True)
            return cursor.fetchall()
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _read_rankings(runs: dict[int, Run], query_ids: Sequence[int] | None) -> list[_Ranking]:
    """Read the stored rankings of ``runs`` (of ``query_ids`` only, if given).

    A raw fetch: building a hundred model instances (and their JSON) costs more than the
    query itself when one judgment rescores every run. Rankings never change after
    submission, so when few queries are rescored (one judgment) the rankings of recently
    rescored queries come from a per-process cache: only the row ids and old scores are
    read, and the ranking bytes only of rows not cached (a new run). A cached ranking is
    used only for the same row of the same run submitted at the same time, so a deleted
    and re-submitted run (SQLite may reuse its ids) is never served a stale ranking.
    """
    rows = RunQuery.objects.filter(run_id__in=list(runs))
    use_cache = query_ids is not None and len(query_ids) <= RANKING_CACHE_MAX_QUERIES
    if query_ids is not None:
        rows = rows.filter(query_id__in=list(query_ids))
    columns = ["pk", "run_id", "query_id", "retrieved", "scores"]
    if not use_cache:
        columns.insert(3, "ranking")
    sql, params = rows.order_by().values_list(*columns).query.sql_with_params()
    fetched = _fetch(sql, params)
    if not use_cache:
        return [
            _Ranking(pk, run_id, query_id, bytes(ranking), retrieved, _json(scores))
            for pk, run_id, query_id, ranking, retrieved, scores in fetched
        ]
    cached = _cached_rankings(query_ids)
    out: list[_Ranking] = []
    missing: list[_Ranking] = []
    for pk, run_id, query_id, retrieved, scores in fetched:
        hit = cached.get(pk)
        valid = hit is not None and hit[0] == run_id and hit[1] == runs[run_id].submitted_at
        row = _Ranking(pk, run_id, query_id, hit[2] if valid else b"", retrieved, _json(scores))
        out.append(row)
        if not valid:
            missing.append(row)
    if missing:
        sql, params = (
            RunQuery.objects.filter(pk__in=[r.pk for r in missing])
            .order_by()
            .values_list("pk", "ranking")
            .query.sql_with_params()
        )
        rankings = {pk: bytes(ranking) for pk, ranking in _fetch(sql, params)}
        for row in missing:
            row.ranking = rankings[row.pk]
    if missing or len(cached) != len(out):
        _cache_rankings(out, runs)
    return out


def _json(value: Any) -> dict[str, Any]:
    """Return a JSON column's value as a dict (SQLite hands back text)."""
    return json.loads(value) if isinstance(value, str) else (value or {})


def _write_scores(rows: Sequence[Any], changed: Sequence[bool], version: int) -> None:
    """Record ``version`` on every rescored row, and new scores on the changed ones only.

    On PostgreSQL one statement: the unchanged rows carry no scores (JSON null keeps the
    stored value). Neither column is indexed, so with the table's fillfactor the updates
    are HOT (no index entries written).
    """
    if not rows:
        return
    if connection.vendor != "postgresql":
        update_rows(
            [
                RunQuery(pk=r.pk, scores=r.scores, version=version)
                for r, c in zip(rows, changed, strict=True)
                if c
            ],
            ["scores", "version"],
        )
        same = [r.pk for r, c in zip(rows, changed, strict=True) if not c]
        if same:
            RunQuery.objects.filter(pk__in=same).update(version=version)
        return
    quote = connection.ops.quote_name
    table = quote(RunQuery._meta.db_table)
    records = [
        {"pk": r.pk, "s": r.scores if c else None} for r, c in zip(rows, changed, strict=True)
    ]
    sql = (
        f"UPDATE {table} AS t SET scores = COALESCE(v.s, t.scores), version = %s "
        f"FROM jsonb_to_recordset(%s::jsonb) AS v(pk bigint, s jsonb) WHERE t.id = v.pk"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [version, json.dumps(records, allow_nan=False)])


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
