"""Write side of file imports: judgment lists, topics and documents, all or nothing.

Readers in :mod:`judging.lists.formats` turn files into records; these services resolve ids,
map grade scales and write through :mod:`judging.services`. Every problem is reported
with its line (capped at :data:`judging.lists.formats.MAX_REPORTED`, the rest counted), and
nothing is written unless there are none. Documents are read and written in batches, so
a file of millions of documents never sits in memory.
"""

from __future__ import annotations

import dataclasses
import hashlib
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef, Q
from django.utils.text import slugify

from graded import textpolicy
from graded.textpolicy import echo
from judging import evidence, models, services, signals
from judging.lists.formats import MAX_REPORTED, FormatError, Problem, Problems, iter_lines
from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats
from judging.models import Collection, Document, Judge, Judgment, JudgmentEvent, Membership
from judging.quality import services as quality_services
from judging.services import DocumentRow, ImportSummary, JudgmentRow, QueryRow, UpsertSummary

Source = IO[bytes] | bytes | str
DOCUMENT_BATCH = 2000
IMPORTED_USER_PREFIX = models.IMPORTED_USER_PREFIX


class ImportRefused(Exception):
    """An import with problems; nothing was written. ``problems`` lists them by line."""

    def __init__(self, problems: Problems) -> None:
        """Keep the problems."""
        self.problems = problems
        super().__init__("\n".join(problems.messages()))


class _Rollback(Exception):
    """Raised inside a savepoint to undo a dry run."""


def _refuse_if(problems: Problems) -> None:
    """Raise :class:`ImportRefused` when there are problems."""
    if problems:
        raise ImportRefused(problems)


def add_service_problems(exc: ValidationError, problems: Problems) -> None:
    """Add a service's ``line N: ...`` messages to ``problems`` (and count those it capped).

    The services number rows without knowing what the numbers count; in a JSON array
    (``problems.unit`` ``item``) their "(first on line N)" is an item too.
    """
    problems.total += max(getattr(exc, "total", 0) - len(exc.messages), 0)
    for message in exc.messages:
        if problems.unit != "line":
            message = message.replace("(first on line ", f"(first on {problems.unit} ")
        head, sep, rest = message.partition(": ")
        if sep and head.startswith("line ") and head[5:].isdigit():
            problems.add(Problem(int(head[5:]), rest))
        else:
            problems.add(Problem(None, message))


def _records(reader: Iterable[Any], problems: Problems) -> Iterable[Any]:
    """Yield a reader's records, moving its problems (and a decoding failure) aside."""
    try:
        for item in reader:
            if isinstance(item, Problem):
                problems.add(item)
                if problems.full:  # the cap of the text policy: stop reading
                    problems.stopped = True
                    return
            else:
                yield item
    except FormatError as exc:
        problems.add(exc.problem)


# --- judges ------------------------------------------------------------------------------


def collection_judge_named(*, collection: Collection, name: str, kind: str | None) -> Judge | None:
    """Return the judge of ``collection`` that ``name`` names, or None when none does.

    A judge of the collection: an LLM judge assigned to it, the human judge of one of its
    judges or coordinators, or any judge with labels in it (an imported judge included).
    ``name`` names a judge by its display name, its user's username or its user's e-mail
    (as a Quepid export names raters). Raises ``ValidationError`` (field ``judge_name``)
    when it names several judges of the collection, or one of another ``kind``: the import
    would otherwise be recorded under a judge nobody meant. ``kind`` None accepts either
    kind (a book's rater whose kind the book does not say: the judge who gave the labels).
    """
    name = name.strip()
    named = Judge.objects.filter(
        Q(name=name) | Q(user__username=name) | Q(user__email__iexact=name)
    ).select_related("user")
    judging = (Membership.Role.JUDGE, Membership.Role.COORDINATOR)
    member = Membership.objects.filter(
        collection=collection, user_id=OuterRef("user_id"), role__in=judging
    )
    labelled = Judgment.objects.filter(collection=collection, judge_id=OuterRef("pk"))
    found = list(
        named.filter(Q(collections=collection) | Exists(member) | Exists(labelled))
        .distinct()
        .order_by("pk")[:6]
    )
    if not found:
        return None
    if len(found) > 1:
        ids = ", ".join(str(judge.pk) for judge in found[:5])
        raise ValidationError(
            {
                "judge_name": f"{echo(name)} names {len(found)} judges of this collection "
                f"(ids {ids}); give the judge's id instead, or rename one of them."
            }
        )
    judge = found[0]
    if kind is not None and judge.kind != kind:
        raise ValidationError(
            {
                "judge_name": f"{echo(name)} is the {judge.get_kind_display()} judge "
                f"{judge.pk} of this collection; import as kind {judge.kind} or choose "
                "another name."
            }
        )
    return judge


def _judge_name_checked(name: str, kind: str) -> str:
    """Return ``name`` stripped, or raise ``ValidationError`` for a bad name or kind."""
    name = name.strip()
    if not name or len(name) > 100:
        raise ValidationError({"judge_name": "Give a judge name of 1 to 100 characters."})
    problems = textpolicy.field_problems(names={"judge_name": name})
    if problems:
        raise ValidationError(problems)
    if kind not in (Judge.Kind.LLM, Judge.Kind.HUMAN):
        raise ValidationError({"judge_kind": "Use human or llm."})
    return name


@transaction.atomic
def judge_for_import(
    *,
    name: str,
    kind: str = Judge.Kind.HUMAN,
    collection: Collection | None = None,
    any_kind: bool = False,
) -> Judge:
    """Return the judge whose labels an import named ``name`` records, creating it if needed.

    With ``collection``, a judge of that collection named ``name`` comes first (see
    :func:`collection_judge_named`, of either kind with ``any_kind``, else of ``kind``):
    re-importing an exported list maps its labels back onto the judges who gave them
    instead of creating look-alikes. Otherwise the
    "imported" judge called ``name``, created on first use. A human one stands for people
    outside Graded (e.g. TREC assessors): it is backed by an inactive user
    ``imported-<name>`` without a usable password, so it can never log in, and counts as
    human in the live list. An LLM one gets ``model`` = ``name`` and provider ``import``,
    and works for ``collection`` (as an LLM judge registered for it does), so later
    imports, judgments and jobs find it there by id as well as by name. Call it inside the
    import's transaction, so a refused or dry-run import creates no judge.
    """
    name = _judge_name_checked(name, kind)
    if collection is not None:
        judge = collection_judge_named(
            collection=collection, name=name, kind=None if any_kind else kind
        )
        if judge is not None:
            if judge.kind == Judge.Kind.LLM and is_imported_judge(judge):
                judge.collections.add(collection)
            return judge
    if kind == Judge.Kind.LLM:
        judge, _ = Judge.objects.get_or_create(
            kind=Judge.Kind.LLM, name=name, provider="import", defaults={"model": name}
        )
        if collection is not None:
            judge.collections.add(collection)
        return judge
    username = IMPORTED_USER_PREFIX + (slugify(name) or "judge")[:100]
    user, created = get_user_model().objects.get_or_create(
        username=username, defaults={"is_active": False}
    )
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    judge, _ = Judge.objects.get_or_create(
        user=user, defaults={"kind": Judge.Kind.HUMAN, "name": name}
    )
    return judge


def is_imported_judge(judge: Judge) -> bool:
    """Return whether ``judge`` was created by :func:`judge_for_import`."""
    if judge.kind == Judge.Kind.LLM:
        return judge.provider == "import"
    return judge.user is not None and judge.user.username.startswith(IMPORTED_USER_PREFIX)


def is_imported_judge_of(*, judge: Judge, collection: Collection) -> bool:
    """Return whether ``judge`` is an imported judge of ``collection``.

    It is when it was imported there: it works for the collection (an LLM judge) or holds
    labels in it. Such a judge is the collection's by id as by name
    (:func:`collection_judge_named`), whichever path created it (``manage.py
    import_judgments``, a REST or page import).
    """
    if not is_imported_judge(judge):
        return False
    return (
        judge.collections.filter(pk=collection.pk).exists()
        or Judgment.objects.filter(collection=collection, judge=judge).exists()
    )


# --- judgment lists ----------------------------------------------------------------------


def _query_resolver(collection: Collection) -> Any:
    """Return a function turning a query id or query text into the query's id."""
    by_id: dict[str, str] = {}
    by_text: dict[str, list[str]] = {}
    for external_id, query_text in collection.queries.values_list("external_id", "text"):
        by_id[external_id] = external_id
        by_text.setdefault(query_text.strip(), []).append(external_id)

    def resolve(value: str, line: int) -> str:
        if value in by_id:
            return value
        matches = by_text.get(value.strip(), [])
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise FormatError(
                line,
                f"query text {echo(value)} matches {len(matches)} queries "
                f"({', '.join(sorted(matches)[:5])}); give the query id",
                "query",
            )
        return value  # unknown: the import service names it

    return resolve


def import_counts(summary: ImportSummary, *, judge_id: int | None, dry_run: bool) -> dict[str, Any]:
    """Return what a judgment-list import answers: its counts, version, judges and dry run.

    The one body of the REST answer and of a background import's ``result``.
    """
    return {
        "created": summary.created,
        "changed": summary.changed,
        "unchanged": summary.unchanged,
        "version": summary.version,
        "judge": judge_id,
        "judges": list(summary.judges),
        "gold": summary.gold,
        "dry_run": dry_run,
    }


def _format_and_scale_checked(format: str, scale: str | None) -> Callable[[float], float]:
    """Return the grade mapping of ``scale``, or raise ``ValidationError`` naming the field."""
    if format not in judgment_formats.READERS:
        raise ValidationError({"format": f"Use one of {', '.join(judgment_formats.READERS)}."})
    try:
        return judgment_formats.parse_scale(scale)
    except ValueError as exc:
        raise ValidationError({"scale": str(exc)}) from None


def judgment_list_import(
    *,
    collection: Collection,
    judge: Judge,
    source: Source,
    format: str,
    scale: str | None = None,
    dry_run: bool = False,
    actor: AbstractBaseUser | None = None,
    channel: str = JudgmentEvent.Channel.IMPORT,
    records: Iterable[judgment_formats.JudgmentIn | Problem] | None = None,
) -> ImportSummary:
    """Import a judgment file (qrels, csv, jsonl, json, ranklib) as ``judge``'s labels.

    ``scale`` maps grades from another scale (see
    :func:`judging.lists.formats.judgments.parse_scale`). In csv the query may be given by id
    or by its text. All or nothing: raises :class:`ImportRefused` listing every problem
    by line. With ``dry_run`` everything is checked and counted, and nothing is kept.

    A Quepid book (``quepid``, ``quepid_csv``) names a rater per label: each rater's labels
    go to the imported judge of that name (of ``judge``'s kind), labels without a rater
    to ``judge``; see :func:`_raters_import`. ``records`` replaces the file with
    already-read records.
    """
    to_scale = _format_and_scale_checked(format, scale)
    if format in judgment_formats.RATER_FORMATS and records is None:
        return _raters_import(
            collection=collection,
            kind=judge.kind,
            unnamed=lambda: judge,
            source=source,
            format=format,
            scale=scale,
            dry_run=dry_run,
            actor=actor,
            channel=channel,
        )
    problems = Problems(unit="item" if format in judgment_formats.ITEM_FORMATS else "line")
    resolve = _query_resolver(collection)
    seen = 0
    #: (line, qid, docno, gold grade, reason) of the lines with a gold grade
    marks: list[tuple[int, str, str, int, str]] = []

    def rows() -> Iterator[JudgmentRow]:
        """Yield the file's rows as they are read (never all at once), noting problems."""
        nonlocal seen
        if records is None:
            reader = judgment_formats.READERS[format](iter_lines(source))
        else:
            reader = iter(records)
        for item in _records(reader, problems):
            try:
                spans = None
                if item.evidence is not None:
                    try:
                        spans = evidence.spans_from_value(item.evidence) or ()
                    except ValidationError as exc:
                        message = exc.message_dict["evidence"][0]
                        raise FormatError(item.line, message, "evidence") from None
                query = resolve(item.query, item.line)
                grade = None
                if item.grade is not None:
                    try:
                        grade = to_scale(item.grade)
                    except ValueError as exc:
                        raise FormatError(item.line, str(exc), "grade") from None
                gold = None if item.gold is None else _gold_grade(item, to_scale)
            except FormatError as exc:
                problems.add(exc.problem)
                if problems.full:
                    problems.stopped = True
                    return
                continue
            if gold is not None:
                marks.append((item.line, query, item.document, gold, item.gold_reason))
                if item.grade is None and item.status == JudgmentRow._field_defaults["status"]:
                    continue  # a gold grade only: marks the pair, labels nothing
            seen += 1
            yield JudgmentRow(
                item.line, query, item.document, grade, item.status, item.note,
                evidence=spans,
            )  # fmt: skip

    summary = None
    gold_marked = 0
    try:
        with transaction.atomic():
            summary = services.judgments_import(
                collection=collection, judge=judge, rows=rows(), channel=channel, actor=actor
            )
            if marks and not problems:
                gold_marked = _gold_import(collection, marks, actor, problems)
            if dry_run or problems or not (seen or marks):
                raise _Rollback
    except ValidationError as exc:
        add_service_problems(exc, problems)
    except _Rollback:
        pass
    if not seen and not marks and not problems:
        problems.add(Problem(None, "No judgments in the file."))
    _refuse_if(problems)
    assert summary is not None
    return dataclasses.replace(summary, judges=(judge.pk,), gold=gold_marked)


def _gold_grade(item: judgment_formats.JudgmentIn, to_scale: Callable[[float], float]) -> int:
    """Return a line's gold grade on 0–4 (the file's scale mapped), or raise FormatError."""
    try:
        gold = to_scale(item.gold)
    except ValueError as exc:
        raise FormatError(item.line, str(exc), "gold") from None
    if gold != int(gold) or not 0 <= gold <= 4:
        raise FormatError(item.line, f"must be a grade from 0 to 4, not {item.gold}", "gold")
    return int(gold)


def _gold_import(
    collection: Collection,
    marks: list[tuple[int, str, str, int, str]],
    actor: AbstractBaseUser | None,
    problems: Problems,
) -> int:
    """Mark the import's gold lines as gold pairs; add problems naming line and field.

    Unknown ids are named here for lines that only mark a pair (the labels' own are
    named by the judgment import). Returns the pairs marked; nothing when problems.
    """
    queries = dict(
        collection.queries.filter(external_id__in={m[1] for m in marks}).values_list(
            "external_id", "pk"
        )
    )
    documents = dict(
        collection.documents.filter(external_id__in={m[2] for m in marks}).values_list(
            "external_id", "pk"
        )
    )
    found = []
    for line, qid, docno, grade, reason in marks:
        if qid not in queries:
            problems.add(Problem(line, f"unknown query id {echo(qid)}", "query"))
        elif docno not in documents:
            problems.add(Problem(line, f"unknown document id {echo(docno)}", "document"))
        else:
            found.append(
                quality_services.GoldMark(line, queries[qid], documents[docno], grade, reason)
            )
    if problems:
        return 0
    try:
        return quality_services.gold_set_many(collection=collection, marks=found, actor=actor)
    except ValidationError as exc:
        for message in exc.messages:
            head, _, rest = message.partition(": ")
            field, _, text = rest.partition(": ")
            problems.add(Problem(int(head[5:]), text, field))
        return 0


@transaction.atomic
def judgment_list_import_named(
    *,
    collection: Collection,
    judge_name: str,
    judge_kind: str,
    source: Source,
    format: str,
    scale: str | None = None,
    dry_run: bool = False,
    actor: AbstractBaseUser | None = None,
    channel: str = JudgmentEvent.Channel.IMPORT,
) -> tuple[ImportSummary, Judge | None]:
    """Import a judgment file as the judge ``judge_name`` names; return counts and judge.

    The judge is resolved, or created, by :func:`judge_for_import` inside the import's
    transaction, so a refused import or a dry run leaves no judge behind. In a Quepid book
    the named judge takes only the labels that name no rater, and is resolved only when
    there are some: the judge returned is then None when every label names its rater.
    """
    name = _judge_name_checked(judge_name, judge_kind)
    if format not in judgment_formats.RATER_FORMATS:
        judge = judge_for_import(name=name, kind=judge_kind, collection=collection)
        summary = judgment_list_import(
            collection=collection,
            judge=judge,
            source=source,
            format=format,
            scale=scale,
            dry_run=dry_run,
            actor=actor,
            channel=channel,
        )
    else:
        _format_and_scale_checked(format, scale)
        made: list[Judge] = []

        def unnamed() -> Judge:
            if not made:
                made.append(judge_for_import(name=name, kind=judge_kind, collection=collection))
            return made[0]

        summary = _raters_import(
            collection=collection,
            kind=judge_kind,
            unnamed=unnamed,
            source=source,
            format=format,
            scale=scale,
            dry_run=dry_run,
            actor=actor,
            channel=channel,
        )
        judge = made[0] if made else None
    if dry_run:
        transaction.set_rollback(True)
    return summary, judge


def _raters_import(
    *,
    collection: Collection,
    kind: str,
    unnamed: Callable[[], Judge],
    source: Source,
    format: str,
    scale: str | None,
    dry_run: bool,
    actor: AbstractBaseUser | None,
    channel: str,
) -> ImportSummary:
    """Import a multi-rater file (a Quepid book): each rater's labels as its own judge.

    The file is read whole (a book is read whole by its JSON parser anyway) and split by
    rater; every rater's labels are checked and written like a one-judge file, in one
    transaction, and any problem of any rater rolls all of them back. A rater is the judge
    :func:`judge_for_import` finds or creates: of the kind the book gives it (Graded's
    JSON books say which raters are LLM judges); else the collection's judge of that name
    whatever its kind (the judge who gave the labels), or a new judge of ``kind``. Labels
    naming no rater go to ``unnamed()``.
    """
    problems = Problems(unit="item" if format in judgment_formats.ITEM_FORMATS else "line")
    by_rater: dict[tuple[str, str], list[judgment_formats.JudgmentIn]] = {}
    reader = judgment_formats.READERS[format](iter_lines(source))
    for item in _records(reader, problems):
        by_rater.setdefault((item.judge, item.judge_kind), []).append(item)
    if not by_rater and not problems:
        problems.add(Problem(None, "No judgments in the file."))
    created = changed = unchanged = version = 0
    judges: list[int] = []
    try:
        with transaction.atomic():
            for (rater, rater_kind), items in by_rater.items():
                try:
                    who = (
                        judge_for_import(
                            name=rater,
                            kind=rater_kind or kind,
                            collection=collection,
                            any_kind=not rater_kind,
                        )
                        if rater
                        else unnamed()
                    )
                except ValidationError as exc:
                    where = f"rater {echo(rater)}" if rater else "labels naming no rater"
                    for message in exc.messages:
                        problems.add(Problem(None, f"{where}: {message}"))
                    continue
                try:
                    done = judgment_list_import(
                        collection=collection,
                        judge=who,
                        source=b"",
                        format=format,
                        scale=scale,
                        actor=actor,
                        channel=channel,
                        records=items,
                    )
                except ImportRefused as refused:
                    for problem in refused.problems.items:
                        problems.add(problem)
                    problems.total += refused.problems.total - len(refused.problems.items)
                    continue
                created, changed = created + done.created, changed + done.changed
                unchanged, version = unchanged + done.unchanged, done.version
                judges.append(who.pk)
            if problems or dry_run:
                raise _Rollback
    except _Rollback:
        pass
    _refuse_if(problems)
    return ImportSummary(created, changed, unchanged, version, tuple(judges))


# --- topics and documents ----------------------------------------------------------------


@dataclass(frozen=True)
class ContentSummary:
    """What a topics or documents import did (or, in a dry run, would do)."""

    created: int
    updated: int
    dry_run: bool = False


def _query_row(topic: collection_formats.TopicIn) -> QueryRow:
    """Return the service row of a topic."""
    return QueryRow(topic.line, topic.qid, topic.text, topic.description, topic.narrative)


def _document_row(document: collection_formats.DocumentIn) -> DocumentRow:
    """Return the service row of a document."""
    return DocumentRow(
        document.line,
        document.docno,
        document.title,
        document.body,
        document.url,
        document.extra,
    )


def _upsert(
    call: Any, problems: Problems, *, rows: list[Any], keep_going: bool = False, **kwargs: Any
) -> tuple[int, int]:
    """Run a service on a batch; return (created, updated), its errors into ``problems``.

    With ``keep_going`` (the caller rolls everything back anyway) a refused batch is
    written again without the lines the service named, so that later files of the
    same import still find its good rows.
    """
    try:
        summary: UpsertSummary = call(rows=rows, **kwargs)
    except ValidationError as exc:
        found = Problems()
        add_service_problems(exc, found)
        problems.extend(found.items)
        problems.total += found.total - len(found.items)
        bad = {p.line for p in found.items}
        good = [row for row in rows if row.line not in bad]
        if not keep_going or not good or len(good) == len(rows):
            return 0, 0
        try:
            with transaction.atomic():
                summary = call(rows=good, **kwargs)
        except ValidationError:
            return 0, 0
    return summary.created, summary.updated


@transaction.atomic
def topics_import(
    *,
    collection: Collection,
    source: Source | None = None,
    format: str = "trec",
    topics: Iterable[collection_formats.TopicIn | Problem] | None = None,
    dry_run: bool = False,
    batch_size: int = DOCUMENT_BATCH,
    problems: Problems | None = None,
) -> ContentSummary:
    """Create or update queries from a topic file (trec, jsonl, tsv, csv) in batches, atomically.

    Give a file (``source`` and ``format``) or already-read ``topics`` (e.g. a JSON
    batch). Memory holds one batch plus 16 bytes per topic. Raises
    :class:`ImportRefused` listing every problem by line — unless ``problems`` is given:
    then they are collected there, every good row is written, and the caller must roll
    back when there are any (an import of several files reports them all in one go).
    """
    if topics is None:
        topics = collection_formats.read_topics(format, iter_lines(source or b""))
    keep_going = problems is not None
    problems = Problems() if problems is None else problems

    created, updated = _in_batches(
        ((t.qid, _query_row(t)) for t in _records(topics, problems)),
        problems,
        lambda batch: _upsert(
            services.queries_import,
            problems,
            collection=collection,
            rows=batch,
            keep_going=keep_going,
        ),
        batch_size=batch_size,
        what="topics",
        noun="query id",
        keep_going=keep_going,
    )
    if dry_run:
        transaction.set_rollback(True)
    return ContentSummary(created, updated, dry_run)


def _id_hash(external_id: str) -> int:
    """Return a 64-bit hash of an id (for finding ids repeated across batches)."""
    digest = hashlib.blake2b(external_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


def _repeated(hashes: array, lines: array, problems: Problems, *, noun: str) -> None:
    """Report ids repeated anywhere in the file (by their 64-bit hashes)."""
    if len(hashes) < 2:
        return
    keys = np.frombuffer(hashes, dtype=np.int64)
    numbers = np.frombuffer(lines, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    same = np.flatnonzero(keys[order][1:] == keys[order][:-1])
    known = {p.line for p in problems.items}  # repeats within a batch, named by the service
    fresh = 0
    for i in same:
        first, again = sorted((int(numbers[order[i]]), int(numbers[order[i + 1]])))
        if again in known:
            continue
        fresh += 1
        if fresh > MAX_REPORTED:
            problems.total += 1
            continue
        problems.add(Problem(again, f"{noun} repeated (first on line {first})"))


def _valid_documents(rows: list[DocumentRow], problems: Problems) -> list[DocumentRow]:
    """Return the rows with a usable id; report empty ids and ids with white space."""
    good = []
    for row in rows:
        if not row.external_id:
            problems.add(Problem(row.line, "document id is empty"))
        elif any(c.isspace() for c in row.external_id):
            problems.add(
                Problem(row.line, f"document id {echo(row.external_id)} contains white space")
            )
        else:
            good.append(row)
    return good


def _insert_new(collection: Collection, rows: list[DocumentRow]) -> int | None:
    """Insert documents known to be new; return how many, or None if an id repeated.

    An id repeated in the file makes the insert fail (nothing of the batch is kept), and
    the caller's check of the whole file names the lines.
    """
    try:
        with transaction.atomic():
            Document.objects.bulk_create(
                [
                    Document(
                        collection=collection,
                        external_id=row.external_id,
                        title=row.title,
                        body=row.body,
                        url=row.url,
                        extra=row.extra or {},
                    )
                    for row in rows
                ],
                batch_size=max(len(rows), 1),
            )
    except IntegrityError:
        return None
    return len(rows)


def _in_batches(
    items: Iterable[tuple[str, Any]],
    problems: Problems,
    write: Callable[[list[Any]], tuple[int, int] | None],
    *,
    batch_size: int,
    what: str,
    noun: str,
    keep_going: bool = False,
) -> tuple[int, int]:
    """Write ``(id, row)`` items with ``write`` one batch at a time; return (created, updated).

    ``what`` names the items in messages ("topics"), ``noun`` their ids ("query id").

    Writing stops at the first problem (reading goes on, to report every bad line); ids
    repeated anywhere in the input are found by their 64-bit hashes (16 bytes per item).
    ``write`` may return ``None`` for "an id turned out to exist already" (a concurrent
    import). Raises :class:`ImportRefused` when there are problems; the caller's
    transaction is then rolled back. With ``keep_going`` every good batch is written
    and nothing is raised: the caller rolls back.
    """
    hashes, lines = array("q"), array("q")
    created = updated = 0
    batch: list[Any] = []
    raced = False

    def flush() -> None:
        nonlocal created, updated, raced
        if batch and (keep_going or not problems) and not raced:
            counts = write(batch)
            if counts is None:
                raced = True
            else:
                created, updated = created + counts[0], updated + counts[1]
        batch.clear()

    for external_id, row in items:
        hashes.append(_id_hash(external_id))
        lines.append(row.line)
        batch.append(row)
        if len(batch) >= batch_size:
            flush()
    flush()
    if not len(hashes) and not problems:
        problems.add(Problem(None, f"No {what} given."))
    _repeated(hashes, lines, problems, noun=noun)
    if raced and not problems:  # an id repeated, but not in the file: a concurrent import
        problems.add(Problem(None, f"{what.capitalize()} were added meanwhile; import again."))
    if not keep_going:
        _refuse_if(problems)
    return created, updated


@transaction.atomic
def documents_import(
    *,
    collection: Collection,
    source: Source | None = None,
    format: str = "jsonl",
    documents: Iterable[collection_formats.DocumentIn | Problem] | None = None,
    dry_run: bool = False,
    batch_size: int = DOCUMENT_BATCH,
    problems: Problems | None = None,
) -> ContentSummary:
    """Create or update documents from a file (jsonl, tsv, csv) in batches, all or nothing.

    Memory holds one batch plus 16 bytes per document (to find ids repeated across
    batches). Raises :class:`ImportRefused` listing every problem by line; the
    transaction is then rolled back, so nothing is written. With ``problems`` given they
    are collected there instead, as :func:`topics_import` does.
    """
    keep_going = problems is not None
    problems = Problems() if problems is None else problems
    if documents is None:
        documents = collection_formats.read_documents(format, iter_lines(source or b""))
    # Into a collection without documents every row is new: insert without looking each
    # batch up (on a table growing inside one transaction, the lookups slow down).
    fresh = not collection.documents.exists()

    def write(batch: list[DocumentRow]) -> tuple[int, int] | None:
        rows = _valid_documents(batch, problems)
        if not rows or (len(rows) < len(batch) and not keep_going):
            return 0, 0
        if fresh:
            inserted = _insert_new(collection, rows)
            if inserted is not None:
                return inserted, 0
            if not keep_going:
                return None  # an id repeated: named by the check of the whole file
        return _upsert(
            services.documents_import,
            problems,
            collection=collection,
            rows=rows,
            keep_going=keep_going,
        )

    created, updated = _in_batches(
        ((d.docno, _document_row(d)) for d in _records(documents, problems)),
        problems,
        write,
        batch_size=batch_size,
        what="documents",
        noun="document id",
        keep_going=keep_going,
    )
    if dry_run:
        transaction.set_rollback(True)
    elif created:
        collection_id = collection.pk
        transaction.on_commit(
            lambda: signals.documents_added.send(
                sender=Collection, collection_id=collection_id, count=created
            )
        )
    return ContentSummary(created, updated, dry_run)


SLUG_MAX = Collection._meta.get_field("slug").max_length


def slug_from_name(name: str) -> str:
    """Return the short name made from ``name`` (lower case, hyphens; may be empty)."""
    return slugify(name)[:SLUG_MAX].strip("-_")


def slug_free(base: str) -> str:
    """Return ``base``, or ``base-2``, ``base-3``… : the first no collection has."""
    taken = set(Collection.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    candidate, number = base, 1
    while candidate in taken:
        number += 1
        suffix = f"-{number}"
        candidate = base[: SLUG_MAX - len(suffix)] + suffix
    return candidate


@transaction.atomic
def collection_create(
    *,
    name: str,
    creator: AbstractBaseUser,
    slug: str = "",
    purpose: str = Collection.Purpose.SHARED_TASK,
    guidelines: str = "",
    judges_per_pair: int = 1,
) -> Collection:
    """Create a collection and make ``creator`` its coordinator.

    An empty ``slug`` is made from the name (:func:`slug_from_name`). A slug another
    collection has raises ``ValidationError`` on ``slug`` naming a free one. ``purpose``
    (``Collection.Purpose``) picks the defaults of what teams see of scores and of their
    runs per day (``metrics.visibility.selectors.rules``); those stay changeable.
    """
    problems = textpolicy.field_problems(names={"name": name}, prose={"guidelines": guidelines})
    if problems:
        raise ValidationError(problems)
    if purpose not in Collection.Purpose.values:
        raise ValidationError(
            {"purpose": f"Choose one of: {', '.join(Collection.Purpose.values)}."}
        )
    derived = not slug
    slug = slug or slug_from_name(name)
    if not slug:
        raise ValidationError(
            {"slug": "Give a short name: the name has no letters or digits to make one from."}
        )
    if Collection.objects.filter(slug=slug).exists():
        made = " (made from the name)" if derived else ""
        raise ValidationError(
            {
                "slug": f"The short name {slug!r}{made} is taken by another collection; "
                f"choose another, such as {slug_free(slug)!r}."
            }
        )
    collection = Collection(
        slug=slug,
        name=name,
        purpose=purpose,
        guidelines=guidelines,
        judges_per_pair=judges_per_pair,
    )
    collection.full_clean()
    collection.save()
    services.membership_grant(collection=collection, user=creator, role=Membership.Role.COORDINATOR)
    return collection


@transaction.atomic
def collection_get_or_create(*, slug: str, name: str) -> tuple[Collection, bool]:
    """Return the collection ``slug`` and whether it was created (named ``name``) now.

    A new collection is checked like any other; raises ``ValidationError`` naming the field.
    """
    existing = Collection.objects.filter(slug=slug).first()
    if existing is not None:
        return existing, False
    problems = textpolicy.field_problems(names={"name": name})
    if problems:
        raise ValidationError(problems)
    collection = Collection(slug=slug, name=name)
    collection.full_clean()
    collection.save()
    return collection, True
