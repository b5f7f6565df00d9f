"""Write side of metrics: run submission, pooling and (re)scoring against the live list.

Scoring keeps, per run, the sum and count of every measure's per-query values over the
queries of the live judgment list, so that rescoring one query updates each run's mean in
constant time; a full rescore recomputes the sums from scratch.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from graded import textpolicy
from graded.textpolicy import MAX_ERRORS, cap_errors, echo, loads_json
from judging import services as judging_services
from judging.db import fetch
from judging.models import Collection, Document, LiveGrade, Membership, PoolEntry, Query
from metrics.live import docno_index, scoring, store
from metrics.live import rescore as live_rescore
from metrics.live.sqlrows import live_grade_columns
from metrics.models import RANKING_DTYPE, RANKING_MAX_PK, Run, RunQuery, Team, ranking_bytes
from metrics.pool.tasks import pool_replan_soon
from metrics.visibility.services import budget_take, score_visibility_update, submission_record


@dataclass
class RunRejected(Exception):
    """A submission was refused; ``errors`` lists every problem (``line`` when known)."""

    errors: list[dict[str, Any]] = field(default_factory=list)

    def __str__(self) -> str:
        """Return the problems, one per line."""
        return "\n".join(scoring.error_text(e) for e in self.errors)


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


#: The longest tag a run or answer run takes (``Run.tag``, ``AnswerRun.tag``).
TAG_MAX = Run._meta.get_field("tag").max_length


class SubmissionChecks(NamedTuple):
    """What :func:`submission_checks` found of an upload before its file is read."""

    tag: str
    counted: bool
    errors: list[dict[str, Any]]
    oversized: bool


def submission_checks(
    *,
    collection: Collection,
    team: Team,
    user: AbstractBaseUser | None,
    tag: str,
    description: str,
    size: int,
    noun: str,
    tag_used: Callable[[str], bool],
    tag_taken: Callable[[str], dict[str, str]],
) -> SubmissionChecks:
    """Check what every upload (a run, answers) shares; call inside the writer's transaction.

    Takes one of the team's runs of the day first (its row lock, see
    :mod:`metrics.visibility.services`; ``counted`` says whether it did), then lists the
    problems of the tag (stripped; empty, refused text, too long, ``tag_used``), of the
    description, of a team from another collection, and of a file over
    ``GRADED_RUN_MAX_BYTES`` (``oversized``: refuse it unread). ``noun`` names the upload
    in the empty-tag message ("A run").
    """
    errors: list[dict[str, Any]] = []
    counted = False
    if team.collection_id == collection.pk:  # the team's row lock first (see visibility)
        counted = budget_take(collection=collection, team_id=team.pk, user=user)
    tag = tag.strip()
    controls = textpolicy.field_problems(names={"tag": tag}, prose={"description": description})
    errors += [{"field": f, "message": m} for f, messages in controls.items() for m in messages]
    if not tag:
        errors.append({"field": "tag", "message": f"{noun} needs a tag."})
    elif len(tag) > TAG_MAX:
        errors.append({"field": "tag", "message": f"A tag has at most {TAG_MAX} characters."})
    elif "tag" not in controls and tag_used(tag):
        errors.append(tag_taken(tag))
    if team.collection_id != collection.pk:
        errors.append({"field": "team", "message": "The team does not take part here."})
    limit = settings.GRADED_RUN_MAX_BYTES
    oversized = size > limit
    if oversized:
        errors.append({"field": "file", "message": f"File is {size} bytes; the limit is {limit}."})
    return SubmissionChecks(tag, counted, errors, oversized)


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

    Raises ``BudgetExhausted`` when the team has used its runs of the last 24 hours
    (:mod:`metrics.visibility.services`; deleted runs count), and ``RunRejected`` listing
    every problem: a tag already used in the collection, a file over the size limit,
    anything the engine's reader refuses (with line numbers), and queries unknown to the
    collection. Documents unknown to the collection are allowed:
    they are recorded as id-only documents (unjudged) and counted. The returned run's
    ``pairs_pooled`` says how many new pairs its top ``pool_depth`` added to the pool.
    """
    checked = submission_checks(
        collection=collection,
        team=team,
        user=user,
        tag=tag,
        description=description,
        size=len(content),
        noun="A run",
        tag_used=lambda t: Run.objects.filter(collection=collection, tag=t).exists(),
        tag_taken=_tag_taken,
    )
    tag, counted, errors = checked.tag, checked.counted, checked.errors
    if checked.oversized:
        raise RunRejected(errors)  # not read at all
    # Every problem in one round: the tag, the format, and the queries the collection lacks
    # (looked for leniently on the readable lines when the format has errors).
    queries = dict(collection.queries.values_list("external_id", "pk"))
    text = textpolicy.lenient_text(content)
    try:
        parsed = scoring.read_run(content, name=filename)
    except scoring.InputError as exc:
        line_errors = scoring.error_items(exc)
        # A file whose errors reached the cap is garbage: do not scan it again for qids.
        capped = len(line_errors) > MAX_ERRORS
        skip = {e["line"] for e in line_errors if e.get("line")}
        run_qids = [] if capped else _lenient_qids(text, skip)
    else:
        capped = False
        line_errors = scoring.id_problems(parsed, textpolicy.utf8_bytes(content))
        run_qids = parsed.qids
    if not capped:  # ranks that are not whole numbers, a second tag: in the same round
        line_errors += scoring.rule_problems(content, name=filename)
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
        line_errors.sort(
            key=lambda e: (e.get("line") is None, e.get("line") or 0, e.get("item") or 0)
        )
        raise RunRejected(cap_errors(errors + line_errors))
    doc_pks, unknown_count = _document_pks(collection, parsed)
    if len(doc_pks) and int(doc_pks.max()) > RANKING_MAX_PK:
        raise RunRejected(
            [
                {
                    "message": "This installation has more documents than rankings can store "
                    f"(document ids above {RANKING_MAX_PK:,}); ask the operator."
                }
            ]
        )
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
        submission_record(collection=collection, run=run, user=user, counted=counted)
        rankings = [
            RunQuery(
                run=run,
                query_id=queries[qid],
                ranking=ranking_bytes(doc_pks[doc_index]),
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
    pool_replan_soon(collection_id=collection.pk)
    run.refresh_from_db()
    run.pairs_pooled = pooled  # not stored: what this submission added to the judges' pool
    return run


SMALL_RUN_DOCNOS = 10_000  # up to this many distinct docnos, look them up by id
_IN_CHUNK = 10_000  # docnos per IN list


def _document_pks(collection: Collection, parsed: scoring.ParsedRun) -> tuple[np.ndarray, int]:
    """Map the run's distinct docnos to document pks, creating id-only documents as needed.

    Small runs look their documents up by id. Large ones use the collection's persisted
    docno index (:mod:`metrics.live.docno_index`; every hash match confirmed by the docno
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
        # Another team's submission may be creating the same documents at this moment:
        # skip those (ON CONFLICT DO NOTHING waits for it, then the read below finds them),
        # inserting in docno order so two such submissions never wait on each other.
        Document.objects.bulk_create(
            [
                Document(collection=collection, external_id=d, has_content=False)
                for d in sorted(missing)
            ],
            batch_size=2000,
            ignore_conflicts=True,
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
    if query_ids is None:
        columns = live_grade_columns(
            connection.ops.quote_name(LiveGrade._meta.db_table), collection_id
        )
        if columns is not None:
            return scoring.live_grades_from_columns(*columns)
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
    table = connection.ops.quote_name(LiveGrade._meta.db_table)
    sql = f"SELECT query_id, document_id FROM {table} WHERE collection_id = %s AND "
    if connection.vendor == "postgresql":  # one array parameter, not 10,000 to prepare
        judged = fetch(sql + "document_id = ANY(%s)", [run.collection_id, wanted])
    else:
        for start in range(0, len(wanted), _IN_CHUNK):
            chunk = wanted[start : start + _IN_CHUNK]
            marks = ", ".join(["%s"] * len(chunk))
            judged += fetch(sql + f"document_id IN ({marks})", [run.collection_id, *chunk])
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

    With ``query_ids`` only those queries are rescored; without, every query. The values
    go to the queries' score columns and the scoreboard moves by the difference
    (:mod:`metrics.live.store`); every run and every query at once (or measures that
    changed) rebuilds the scoreboard from nothing. ``new_rows`` (run submission) are the
    unsaved rankings of the one just-saved run in ``run_ids``: they are scored in memory
    and inserted, instead of read back. Takes the collection's row lock first and reads
    everything after it (:mod:`metrics.live.store`, "Locks"), so the live list, its
    version and the stored scores are read consistently and an older rescore can never
    overwrite a newer one.
    """
    if new_rows is None and query_ids is not None:
        few = sorted(set(query_ids))
        if live_rescore.handles(few):  # one judgment: the fast path
            version = live_rescore.rescore(
                collection_id=collection.pk,
                query_ids=few,
                run_ids=None if run_ids is None else list(run_ids),
            )
            if version is not None:
                return version
    version, measures = store.lock(collection.pk)
    names = scoring.canonical_names(measures)
    board = store.board_read(collection.pk)  # after the lock: see store's "Locks"
    rebuild = board.names != names or (run_ids is None and query_ids is None)
    if board.names != names:  # the measures changed: every run, every query, from nothing
        run_ids = query_ids = None
    runs_qs = Run.objects.filter(collection=collection)
    if run_ids is not None:
        runs_qs = runs_qs.filter(pk__in=list(run_ids))
    runs = {r.pk: r for r in runs_qs.order_by().only("pk", "submitted_at", "status")}
    if not runs:
        return version
    full = query_ids is None
    if not full:
        query_ids = sorted(set(query_ids))
    grades_by_query = _live_grades(collection.pk, None if full else query_ids)
    fresh_runs = {r.run_id for r in new_rows} if new_rows is not None else set()
    rows: list[Any] = list(new_rows or [])
    stored = [pk for pk in runs if pk not in fresh_runs]
    if stored:
        rows += _read_rankings(stored, None if full else query_ids)
    empty = live_rescore.missing_rows(rows, runs, grades_by_query)
    fresh_empty = [e for e in empty if e.run_id in fresh_runs]  # inserted with the new rows
    rows += fresh_empty
    rows += RunQuery.objects.bulk_create(
        [e for e in empty if e.run_id not in fresh_runs], batch_size=1000
    )
    values = scoring.evaluate_rows(rows=rows, grades_by_query=grades_by_query, measures=measures)
    matrix = np.column_stack([values[name] for name in names]) if rows else np.zeros((0, 0))
    if rebuild:
        board.reset(names)
    # Every scored run is on the board, even with no query to count yet (no live grades
    # when it came): the live path rescores the board's runs, so a run left off it would
    # never be scored.
    run_array = np.fromiter(runs, dtype=np.int64, count=len(runs))
    board.rows(run_array)
    # A new run (never listed anywhere: PostgreSQL never reuses ids) is appended to the
    # columns in SQL, without reading them; elsewhere columns are read and rewritten.
    append = bool(fresh_runs) and set(runs) == fresh_runs and not rebuild and store.appends()
    columns = {} if append else store.columns_read(collection.pk, None if full else query_ids)
    by_query: dict[int, list[int]] = {}
    for i, row in enumerate(rows):
        by_query.setdefault(row.query_id, []).append(i)
    touched = set(by_query) | set(columns) | (set() if full else set(query_ids))
    written = []
    for query_id in sorted(touched):
        column = columns.get(query_id)
        if column is None or rebuild:
            column = store.Column.empty(query_id, names)
        idx = by_query.get(query_id, [])
        if query_id in grades_by_query and idx:
            ids = np.fromiter((rows[i].run_id for i in idx), dtype=np.int64, count=len(idx))
            written.append(store.apply(board, column, ids, matrix[idx]))
        elif rebuild or column.listed(run_array).any():
            # No live grades: the query leaves every mean of these runs.
            written.append(store.apply(board, column, run_array, None))
    if new_rows is not None:
        _insert_rankings([*new_rows, *fresh_empty])
    if append:
        store.columns_append(collection.pk, written, version=version)
    else:
        store.columns_write(collection.pk, written, version=version)
    store.board_write(board, version=version, renew=rebuild)
    Run.objects.filter(pk__in=list(runs)).update(
        scored_version=version, scored_at=timezone.now(), status=Run.Status.SCORED
    )
    return version


def _insert_rankings(rows: Sequence[RunQuery]) -> None:
    """Insert new rankings: with ``COPY`` on PostgreSQL (8 MB of rankings for a W1 run)."""
    if connection.vendor != "postgresql":
        RunQuery.objects.bulk_create(rows, batch_size=250)
        return
    quote = connection.ops.quote_name
    meta = RunQuery._meta
    fields = [meta.get_field(n) for n in ("run", "query", "ranking", "retrieved")]
    columns = ", ".join(quote(f.column) for f in fields)
    sql = f"COPY {quote(meta.db_table)} ({columns}) FROM STDIN (FORMAT BINARY)"
    with connection.cursor() as cursor, cursor.cursor.copy(sql) as copy:
        # Binary: the 8 KB rankings travel as bytes, not hex text (a tenth of the COPY).
        copy.set_types(["int8", "int8", "bytea", "int4"])
        for row in rows:
            copy.write_row((row.run_id, row.query_id, bytes(row.ranking), row.retrieved))


@dataclass(slots=True)
class _Ranking:
    """A stored ranking as rescoring reads it: the ``RunQuery`` columns, no model overhead."""

    pk: int
    run_id: int
    query_id: int
    ranking: bytes
    retrieved: int


def _read_rankings(run_ids: Sequence[int], query_ids: Sequence[int] | None) -> list[_Ranking]:
    """Read the stored rankings of ``run_ids`` (of ``query_ids`` only, if given).

    A raw fetch: building a thousand model instances costs more than the query itself.
    One judgment's rescoring takes :mod:`metrics.live.rescore` instead, which keeps
    recently rescored queries' rankings prepared in memory.
    """
    rows = RunQuery.objects.filter(run_id__in=list(run_ids))
    if query_ids is not None:
        rows = rows.filter(query_id__in=list(query_ids))
    sql, params = (
        rows.order_by()
        .values_list("pk", "run_id", "query_id", "ranking", "retrieved")
        .query.sql_with_params()
    )
    return [
        _Ranking(pk, run_id, query_id, bytes(ranking), retrieved)
        for pk, run_id, query_id, ranking, retrieved in fetch(sql, params)
    ]


def runs_rescore_after_change(*, collection_id: int, query_ids: Iterable[int]) -> None:
    """Rescore every run of the collection for the given queries (signal receiver's work).

    Inside the judgment's transaction a few queries take :func:`live_rescore.rescore`
    directly (no savepoint; a collection without runs costs two short reads).
    """
    few = sorted(set(query_ids))
    if transaction.get_connection().in_atomic_block and live_rescore.handles(few):
        if live_rescore.rescore(collection_id=collection_id, query_ids=few) is None:
            runs_score(collection=Collection(pk=collection_id))  # the measures changed
    elif Run.objects.filter(collection_id=collection_id).exists():
        runs_score(collection=Collection(pk=collection_id), query_ids=few)


def runs_rescore_bulk(*, collection_id: int, query_ids: Iterable[int]) -> None:
    """Rescore every run after a bulk change of the judgment list (the background task).

    A deleted query took its rows with it, and an incremental rescore cannot take their
    old scores out of the runs' sums: then every query is recomputed.
    """
    few = sorted(set(query_ids))
    if not Run.objects.filter(collection_id=collection_id).exists():
        return
    gone = len(few) > Query.objects.filter(pk__in=few).count()
    runs_score(collection=Collection(pk=collection_id), query_ids=None if gone else few)


@transaction.atomic
def team_create(
    *, collection: Collection, name: str, members: Iterable[AbstractBaseUser] = ()
) -> Team:
    """Create a team in ``collection`` and give its members the collection's team role."""
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A team needs a name."})
    if problems := textpolicy.field_problems(names={"name": name}):
        raise ValidationError(problems)
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


def _team_role_follows_teams(*, collection: Collection, users: Iterable[AbstractBaseUser]) -> None:
    """Revoke the team role of each of ``users`` who is in no team of ``collection`` now."""
    for user in users:
        if not Team.objects.filter(collection=collection, members=user).exists():
            Membership.objects.filter(
                collection=collection, user=user, role=Membership.Role.TEAM
            ).delete()


@transaction.atomic
def team_update(
    *,
    team: Team,
    name: str | None = None,
    members: Iterable[AbstractBaseUser] | None = None,
) -> Team:
    """Rename ``team`` and/or set its members (``members`` replaces the list).

    New members get the collection's team role; a member who leaves their last team of
    the collection loses it. A name stays unique in the collection (``ValidationError``
    on ``name``).
    """
    if name is not None:
        name = name.strip()
        if not name:
            raise ValidationError({"name": "A team needs a name."})
        if problems := textpolicy.field_problems(names={"name": name}):
            raise ValidationError(problems)
        taken = Team.objects.filter(collection_id=team.collection_id, name=name)
        if taken.exclude(pk=team.pk).exists():
            raise ValidationError({"name": f"Team {name!r} already exists in this collection."})
        team.name = name
        team.save(update_fields=["name"])
    if members is not None:
        wanted = {user.pk: user for user in members}
        leaving = [user for user in team.members.all() if user.pk not in wanted]
        team.members.remove(*leaving)
        for user in wanted.values():
            team_member_add(team=team, user=user)
        _team_role_follows_teams(collection=team.collection, users=leaving)
    return team


@transaction.atomic
def team_delete(*, team: Team) -> None:
    """Delete ``team`` and its runs (each through :func:`run_delete`, so scores follow).

    Members who are in no other team of the collection lose its team role.
    """
    collection = team.collection
    members = list(team.members.all())
    for run in Run.objects.filter(team=team).select_related("collection"):
        run_delete(run=run)
    team.delete()
    _team_role_follows_teams(collection=collection, users=members)


@transaction.atomic
def run_update(*, run: Run, tag: str | None = None, description: str | None = None) -> Run:
    """Rename a run or change its description; a tag stays unique in its collection."""
    if problems := textpolicy.field_problems(
        names={"tag": tag.strip() if tag is not None else None}, prose={"description": description}
    ):
        raise ValidationError(problems)
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
    """Delete a run, its stored rankings and its kept file; pooled pairs stay in the pool.

    The run leaves the scoreboard at once (a new epoch); its entries in the query columns
    are left to the columns' next write (readers keep to the runs they ask for).
    """
    stored = run.source_file.name
    storage = run.source_file.storage
    collection_id = run.collection_id
    store.lock(collection_id)
    board = store.board_read(collection_id)
    run_id = run.pk
    run.delete()
    if board.stored:
        board.drop([run_id])
        store.board_write(board, version=board.version, renew=True)
    if stored:
        transaction.on_commit(lambda: storage.delete(stored))
    pool_replan_soon(collection_id=collection_id)


@transaction.atomic
def collection_settings_update(
    *,
    collection: Collection,
    measures: list[str] | None = None,
    coverage_threshold: float | None = None,
    leaderboard_published: bool | None = None,
    judgments_published: bool | None = None,
    search_by_teams: bool | None = None,
) -> Collection:
    """Change a collection's leaderboard settings; a new measure set rescores every run.

    ``search_by_teams`` lets team members write search configurations for their teams.

    trec_eval's sets (``official``, ``all_trec``) are stored as their members a leaderboard
    can show (:func:`metrics.live.scoring.expand_measure_sets`). Every measure name is
    checked with the engine first; unknown names raise ``ValidationError`` on ``measures``
    naming each bad entry, and nothing changes.
    """
    store.lock(collection.pk)  # first, as every writer of scores (store's "Locks")
    fields: list[str] = []
    if measures is not None:
        cleaned = scoring.expand_measure_sets(m.strip() for m in measures if m.strip()).names
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
    if search_by_teams is not None:
        collection.search_by_teams = search_by_teams
        fields.append("search_by_teams")
    if fields:
        collection.save(update_fields=fields)
    if "measures" in fields:
        runs_score(collection=collection)
    return collection


@transaction.atomic
def visibility_and_publication_update(
    *,
    collection: Collection,
    leaderboard_published: bool,
    judgments_published: bool,
    **visibility: Any,
) -> None:
    """Save *Settings › Visibility*: publication, what teams see before it, runs per day.

    Both or neither: publication first (it takes the score store's lock, which comes
    first), then :func:`metrics.visibility.services.score_visibility_update` with the
    other fields.
    """
    collection_settings_update(
        collection=collection,
        leaderboard_published=leaderboard_published,
        judgments_published=judgments_published,
    )
    score_visibility_update(collection=collection, **visibility)


@transaction.atomic
def runs_repool(*, collection: Collection, depth: int) -> int:
    """Pool every run's unjudged top-``depth`` documents; remember the depth; return added."""
    if depth < 1:
        raise ValidationError({"depth": "Pool depth must be at least 1."})
    collection.pool_depth = depth
    collection.save(update_fields=["pool_depth"])
    added = sum(
        pool_from_run(run=run, depth=depth)
        for run in Run.objects.filter(collection=collection).select_related("collection")
    )
    pool_replan_soon(collection_id=collection.pk, force=True)
    return added
