"""Write side of judging: every change to judgments and pools goes through here.

Each service is keyword-only, typed and atomic. Judgment writes take a row lock on the
collection first, which serialises writers per collection, bumps the judgment-list version,
and makes the history append and the pool counters race-free on PostgreSQL as on SQLite.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
from django.db.models import Count, Exists, F, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone

from graded import textpolicy
from judging import aggregation, live_grades, selectors, staging
from judging import evidence as evidence_spans
from judging.db import Pairs, update_rows, update_values
from judging.guidelines import services as guidelines_services
from judging.llm.judges import judge_version as llm_judge_version
from judging.models import (
    GRADE_MAX,
    GRADE_MIN,
    Collection,
    Document,
    GoldPair,
    Judge,
    Judgment,
    JudgmentEvent,
    LiveGrade,
    Membership,
    PoolEntry,
    Query,
)
from judging.progress import counters as progress
from judging.quality import qualification
from judging.signals import judgments_changed, judgments_changing

Channel = JudgmentEvent.Channel
Status = Judgment.Status
FINAL = (Status.GRADED, Status.CANNOT_JUDGE)
STATUSES = frozenset(Status.values)  # (``Status.values`` builds a new list on every use)


#: The ``code`` of a quota refusal's error item (REST) and of the background import's.
QUOTA_CODE = "quota_reached"


def _pairs(n: int) -> str:
    return f"{n:,} pair" + ("" if n == 1 else "s")


class QuotaReached(PermissionDenied):
    """The judge has finally judged as many pairs as their quota allows (a 403).

    The message says it is the judge's quota in the collection, its size, what is judged
    and left, what the write would add, and that it never resets; ``errors`` is the REST
    error item (``code`` :data:`QUOTA_CODE`, ``quota`` with the numbers).
    """

    def __init__(
        self, *, judge: str, collection: str, state: selectors.QuotaState, asked: int
    ) -> None:
        """Build the message and the error item from the judge's quota ``state``."""
        self.state, self.asked = state, asked
        message = (
            f"Quota reached: {judge}'s judging quota in {collection} is {_pairs(state.limit)}; "
            f"{_pairs(state.judged)} judged, {state.left:,} left, and this would add "
            f"{asked:,}. A judge quota does not reset: ask a coordinator to raise the quota "
            "(Settings › Quotas). Changing a label already given is always allowed."
        )
        super().__init__(message)
        self.errors = [
            {
                "message": message,
                "code": QUOTA_CODE,
                "quota": {
                    "name": "judge",
                    "limit": state.limit,
                    "judged": state.judged,
                    "left": state.left,
                    "asked": asked,
                    "resets_at": None,
                },
            }
        ]


def _check_quota(*, judge: Judge, collection_id: int, new_final: int) -> None:
    """Raise :class:`QuotaReached` if ``new_final`` more final judgments exceed the quota.

    Call under the collection's write lock, so that concurrent writes cannot both pass.
    Changing a label the judge already gave never counts.
    """
    if new_final <= 0:
        return
    state = selectors.quota_state(judge=judge, collection_id=collection_id)
    if state is not None and new_final > state.limit - state.judged:
        name = Collection.objects.filter(pk=collection_id).values_list("name", flat=True)
        raise QuotaReached(
            judge=judge.name, collection=name.first() or "", state=state, asked=new_final
        )


def _label(judgment: Judgment | None) -> dict[str, Any] | None:
    """Return the part of a judgment that history records."""
    if judgment is None:
        return None
    label = {
        "grade": judgment.grade,
        "status": judgment.status,
        "note": judgment.note,
        "seconds": judgment.seconds,
        "abstain_probability": judgment.abstain_probability,
    }
    if judgment.evidence:  # only labels with evidence spans carry the key
        label["evidence"] = judgment.evidence
    return label


def lock_collection(collection_id: int) -> None:
    """Take the per-collection write lock (for services of other capabilities)."""
    _lock_collection(collection_id)


def _lock_collection(collection_id: int) -> str:
    """Take the per-collection write lock (a row lock); return the aggregation policy name."""
    return _lock_collection_for_labels(collection_id)[0]


def _lock_collection_for_labels(collection_id: int) -> tuple[str, int]:
    """Take the per-collection write lock; return the aggregation policy and guidelines version.

    Changes of the guidelines take the same lock (:mod:`judging.guidelines.services`), so
    the version read here is the one in force until this transaction ends.
    """
    return (
        Collection.objects.select_for_update()
        .filter(pk=collection_id)
        .values_list("aggregation_policy", "guidelines_version")
        .get()
    )


def _refresh_live_grades(
    *,
    collection_id: int,
    policy_name: str,
    version: int,
    query_ids: Iterable[int],
    document_id: int | None = None,
    pairs: Iterable[Pairs] | None = None,
    bulk: bool,
) -> frozenset[int]:
    """Recompute the live grades of the given queries (see :func:`judging.live_grades.refresh`).

    ``version`` is the collection's new judgment-list version, recorded on changed grades;
    ``pairs`` narrows the work to the pairs a bulk import wrote.

    First the judges' qualification is brought up to date
    (:func:`judging.quality.qualification.sync`): when judges start or stop counting, every
    query they graded is recomputed too, and those queries are returned. A change that is
    not ``bulk`` announces them with its own queries (rescored in its transaction); for a
    bulk change they are announced after commit here, like the change's own.
    """
    query_ids = frozenset(query_ids)
    the_bar = qualification.bar(collection_id)
    moved = qualification.flipped_queries(
        collection_id, qualification.sync(collection_id, the_bar) if the_bar.on else set()
    )
    live_grades.refresh(
        collection_id=collection_id,
        policy_name=policy_name,
        version=version,
        query_ids=query_ids,
        document_id=document_id,
        pairs=pairs,
        counted_only=the_bar.on,
    )
    if not moved:
        return frozenset()
    # Whole queries already recomputed need no second pass (nor does a global fit).
    again = moved if document_id is not None or pairs is not None else moved - query_ids
    if again and not aggregation.get_policy(policy_name).global_fit:
        live_grades.refresh(
            collection_id=collection_id,
            policy_name=policy_name,
            version=version,
            query_ids=again,
            counted_only=the_bar.on,
        )
    if bulk:
        others = frozenset(moved - query_ids)
        if others:
            transaction.on_commit(
                lambda: judgments_changed.send(
                    sender=Collection,
                    collection_id=collection_id,
                    query_ids=others,
                    version=version,
                    bulk=True,
                )
            )
    return frozenset(moved)


def _bump_version(collection_id: int, query_ids: Iterable[int], *, bulk: bool) -> int:
    """Increment the collection's judgment-list version and announce it after commit.

    Changes that are not bulk must also call :func:`_announce_change` once their live
    grades are refreshed (the in-transaction announcement).
    """
    table = connection.ops.quote_name(Collection._meta.db_table)
    with connection.cursor() as cursor:  # one round trip: UPDATE ... RETURNING
        cursor.execute(
            f"UPDATE {table} SET judgments_version = judgments_version + 1, "
            f"judgments_changed_at = %s WHERE id = %s RETURNING judgments_version",
            [timezone.now(), collection_id],
        )
        (version,) = cursor.fetchone()
    ids = frozenset(query_ids)
    transaction.on_commit(
        lambda: judgments_changed.send(
            sender=Collection,
            collection_id=collection_id,
            query_ids=ids,
            version=version,
            bulk=bulk,
        )
    )
    return version


def _announce_change(collection_id: int, query_ids: Iterable[int], version: int) -> None:
    """Send ``judgments_changing`` inside the transaction (live grades already refreshed)."""
    judgments_changing.send(
        sender=Collection,
        collection_id=collection_id,
        query_ids=frozenset(query_ids),
        version=version,
    )


def _adjust_pool_count(query_id: int, document_id: int, delta: int) -> None:
    """Add ``delta`` to the graded count of the pair's pool entry, if the pair is pooled."""
    if delta:
        PoolEntry.objects.filter(query_id=query_id, document_id=document_id).update(
            graded_count=F("graded_count") + delta
        )


def _validated_label(
    *,
    grade: int | None,
    status: str,
    seconds: float | None,
    abstain_probability: float | None,
) -> tuple[int | None, float | None]:
    """Check a label's fields; return the grade and the capped seconds."""
    if status not in STATUSES:
        raise ValidationError({"status": f"Unknown status {status!r}; use one of {Status.values}."})
    if status == Status.GRADED:
        if grade is None:
            raise ValidationError({"grade": "A graded judgment needs a grade from 0 to 4."})
        if isinstance(grade, bool) or not isinstance(grade, int):
            raise ValidationError({"grade": f"Grade must be a whole number, not {grade!r}."})
        if not GRADE_MIN <= grade <= GRADE_MAX:
            raise ValidationError({"grade": f"Grade must be between 0 and 4, not {grade}."})
    elif grade is not None:
        raise ValidationError({"grade": f"A judgment with status {status!r} has no grade."})
    if seconds is not None:
        if seconds != seconds or seconds < 0:  # NaN or negative
            raise ValidationError({"seconds": "Seconds must be a non-negative number."})
        seconds = min(float(seconds), float(settings.GRADED_MAX_SECONDS_PER_PAIR))
    if abstain_probability is not None and not 0.0 <= abstain_probability <= 1.0:
        raise ValidationError({"abstain_probability": "Must be a probability between 0 and 1."})
    return grade, seconds


def _check_same_collection(query: Query, document: Document) -> None:
    """Refuse a pair whose query and document belong to different collections."""
    if query.collection_id != document.collection_id:
        raise ValidationError(
            {"document": "The query and the document belong to different collections."}
        )


@transaction.atomic
def judge_for_user(*, user: AbstractBaseUser) -> Judge:
    """Return the human judge of ``user``, creating it on first use."""
    judge, _ = Judge.objects.get_or_create(
        user=user,
        defaults={"kind": Judge.Kind.HUMAN, "name": user.get_username()},
    )
    return judge


class _Keep:
    """The type of :data:`KEEP`."""

    def __repr__(self) -> str:
        return "KEEP"


#: ``evidence=KEEP`` (the default) leaves a judgment's evidence spans as they are.
KEEP: Any = _Keep()


def _evidence_rule(
    collection_id: int, *, grade: int | None, status: str, evidence: list | None, given: bool
) -> None:
    """Apply the collection's evidence rule to one human label (``given``: spans were sent).

    Off: spans are refused. Required: a grade at or above the collection's
    ``evidence_from_grade`` needs at least one span (other statuses never do).
    """
    mode, from_grade = (
        Collection.objects.filter(pk=collection_id)
        .values_list("evidence", "evidence_from_grade")
        .get()
    )
    if mode == "off" and given and evidence:
        raise ValidationError(
            {"evidence": "This collection takes no evidence spans (a coordinator can turn "
             "them on in the collection's settings)."}
        )  # fmt: skip
    if mode == "required" and status == Status.GRADED and not evidence and grade >= from_grade:
        raise ValidationError(
            {"evidence": f"Grade {grade} needs evidence: select the passage of the document "
             f"that supports it and add it (grades {from_grade} to {GRADE_MAX} need at "
             "least one span)."}
        )  # fmt: skip


@transaction.atomic
def judgment_record(
    *,
    judge: Judge,
    query: Query,
    document: Document,
    grade: int | None = None,
    status: str = Status.GRADED,
    note: str = "",
    seconds: float | None = None,
    abstain_probability: float | None = None,
    channel: str = Channel.BROWSER,
    actor: AbstractBaseUser | None = None,
    saw_llm_grade: bool | None = None,
    evidence: Any = KEEP,
    evidence_rule: bool = False,
) -> Judgment:
    """Create or change ``judge``'s judgment of (query, document) and append it to history.

    A status other than ``graded`` (``cannot_judge``, ``later``) takes no grade. Re-recording
    an identical label changes nothing and appends no event. Raises ``ValidationError``
    naming the field for bad input. ``saw_llm_grade`` (human judges, from the judging card)
    records whether an LLM grade of the pair was shown; once shown, the label stays
    *assisted* through later changes, and None keeps what was recorded.

    ``evidence`` is a list of spans (:mod:`judging.evidence`), checked against the
    document and merged; None or ``[]`` removes the judgment's spans and :data:`KEEP`
    leaves them. With ``evidence_rule`` (a human judge's own label, from the card or
    REST) the collection's evidence setting applies: spans are refused when it is off,
    and required from its grade on when it says so.

    A label written (created or changed) records the collection's guidelines version and,
    for an LLM judge, the judge's configuration version
    (:func:`judging.llm.judges.judge_version`), whatever the channel.
    """
    grade, seconds = _validated_label(
        grade=grade, status=status, seconds=seconds, abstain_probability=abstain_probability
    )
    problem = textpolicy.text_problem(note, max_length=textpolicy.MAX_NOTE_LENGTH, what="note")
    if problem:
        raise ValidationError({"note": problem})
    _check_same_collection(query, document)
    spans = None if evidence is KEEP else evidence_spans.evidence_for(evidence, document.body)
    policy_name, guidelines_version = _lock_collection_for_labels(query.collection_id)
    existing = (
        Judgment.objects.select_for_update()
        .filter(judge=judge, query=query, document=document)
        .first()
    )
    before = _label(existing)
    if existing is None:
        judgment = Judgment(
            judge=judge, query=query, document=document, collection_id=query.collection_id
        )
        action = JudgmentEvent.Action.CREATE
    else:
        judgment = existing
        action = JudgmentEvent.Action.CHANGE
    was_graded = existing is not None and existing.status == Status.GRADED
    judgment.grade = grade
    judgment.status = status
    judgment.note = note
    judgment.seconds = seconds
    judgment.abstain_probability = abstain_probability
    if saw_llm_grade is not None and judgment.saw_llm_grade is not True:
        judgment.saw_llm_grade = saw_llm_grade
    if evidence is not KEEP:
        judgment.evidence = spans
    if evidence_rule:
        _evidence_rule(
            query.collection_id,
            grade=grade,
            status=status,
            evidence=judgment.evidence,
            given=evidence is not KEEP,
        )
    after = _label(judgment)
    if before == after:
        return judgment
    _check_quota(
        judge=judge,
        collection_id=query.collection_id,
        new_final=int(status in FINAL and (existing is None or before["status"] not in FINAL)),
    )
    judgment.guidelines_version = guidelines_version
    versions = {"guidelines_version": guidelines_version}
    if judge.kind == Judge.Kind.LLM:
        judgment.judge_version = versions["judge_version"] = llm_judge_version(judge)
    judgment.save()
    JudgmentEvent.objects.create(
        judgment=judgment,
        collection_id=query.collection_id,
        judge=judge,
        query=query,
        document=document,
        actor=actor,
        action=action,
        channel=channel,
        before=before,
        after={**after, **versions},
    )
    _adjust_pool_count(query.pk, document.pk, int(status == Status.GRADED) - int(was_graded))
    progress.judgment_written(
        collection_id=query.collection_id,
        judge_id=judge.pk,
        query_id=query.pk,
        document_id=document.pk,
        was_final=existing is not None and before["status"] in FINAL,
        is_final=status in FINAL,
        grades_changed=(was_graded, before["grade"] if before else None)
        != (status == Status.GRADED, grade),
    )
    version = _bump_version(query.collection_id, [query.pk], bulk=False)
    moved: frozenset[int] = frozenset()
    if was_graded or status == Status.GRADED:
        moved = _refresh_live_grades(
            collection_id=query.collection_id,
            policy_name=policy_name,
            version=version,
            query_ids=[query.pk],
            document_id=document.pk,
            bulk=False,
        )
    _announce_change(query.collection_id, {query.pk, *moved}, version)
    return judgment


@transaction.atomic
def judgment_delete(
    *, judgment: Judgment, channel: str = Channel.BROWSER, actor: AbstractBaseUser | None = None
) -> None:
    """Delete a judgment; its history stays, ending with a ``delete`` event."""
    policy_name = _lock_collection(judgment.collection_id)
    JudgmentEvent.objects.create(
        judgment=None,
        collection_id=judgment.collection_id,
        judge_id=judgment.judge_id,
        query_id=judgment.query_id,
        document_id=judgment.document_id,
        actor=actor,
        action=JudgmentEvent.Action.DELETE,
        channel=channel,
        before=_label(judgment),
        after=None,
    )
    if judgment.status == Status.GRADED:
        _adjust_pool_count(judgment.query_id, judgment.document_id, -1)
    query_id, document_id = judgment.query_id, judgment.document_id
    was_graded = judgment.status == Status.GRADED
    judgment.delete()
    progress.judgment_written(
        collection_id=judgment.collection_id,
        judge_id=judgment.judge_id,
        query_id=query_id,
        document_id=document_id,
        was_final=judgment.status in FINAL,
        is_final=False,
        grades_changed=was_graded,
    )
    version = _bump_version(judgment.collection_id, [query_id], bulk=False)
    moved: frozenset[int] = frozenset()
    if was_graded:
        moved = _refresh_live_grades(
            collection_id=judgment.collection_id,
            policy_name=policy_name,
            version=version,
            query_ids=[query_id],
            document_id=document_id,
            bulk=False,
        )
    _announce_change(judgment.collection_id, {query_id, *moved}, version)


@dataclass(frozen=True)
class PairRow:
    """One (query id, document id) pair named by external ids, with its line number."""

    line: int
    query_external_id: str
    document_external_id: str


@transaction.atomic
def pool_add(
    *,
    collection: Collection,
    pairs: Sequence[PairRow],
    source: str = PoolEntry.Source.MANUAL,
    create_missing_documents: bool = False,
    line_errors: Sequence[tuple[int, str]] = (),
) -> int:
    """Add pairs to the collection's judging pool; return how many were new.

    Unknown query ids are errors. Unknown document ids are errors unless
    ``create_missing_documents`` is set, in which case id-only documents
    (``has_content=False``) are created: they are listed for import, never shown to judges.
    ``line_errors`` (line, message) are problems the caller found while parsing (malformed
    lines); they are reported together with the unknown ids, in line order.
    All-or-nothing: any error raises ``ValidationError`` listing every bad line.
    """
    queries = dict(collection.queries.values_list("external_id", "pk"))
    wanted_docs = {row.document_external_id for row in pairs}
    documents = dict(
        collection.documents.filter(external_id__in=wanted_docs).values_list("external_id", "pk")
    )
    errors = list(line_errors)
    for row in pairs:
        if row.query_external_id not in queries:
            errors.append(
                (
                    row.line,
                    f"line {row.line}: unknown query id {textpolicy.echo(row.query_external_id)}",
                )
            )
        elif row.document_external_id not in documents and not create_missing_documents:
            errors.append(
                (
                    row.line,
                    f"line {row.line}: unknown document id "
                    f"{textpolicy.echo(row.document_external_id)}",
                )
            )
    if errors:
        raise ValidationError(textpolicy.cap_messages([m for _line, m in sorted(errors)]))
    missing = sorted(wanted_docs - documents.keys())
    if missing:
        Document.objects.bulk_create(
            [Document(collection=collection, external_id=d, has_content=False) for d in missing],
            batch_size=1000,
        )
        documents.update(
            collection.documents.filter(external_id__in=missing).values_list("external_id", "pk")
        )
    keys = {(queries[r.query_external_id], documents[r.document_external_id]) for r in pairs}
    return pool_add_ids(collection=collection, pairs=keys, source=source)


#: Waiting gold pairs join a batch of pooled pairs only if it brings at least this many
#: new pairs, and at most one for every this many (a small batch carrying gold pairs
#: would point at them).
GOLD_JOIN_EVERY = 10


def gold_waiting(*, collection: Collection) -> QuerySet[GoldPair]:
    """Return the collection's gold pairs not in the pool yet, oldest marked first.

    A gold pair whose pair is not pooled when it is marked waits, and enters the pool with
    the next pairs pooled (:func:`pool_add_ids`), with their source and time.
    """
    pooled = PoolEntry.objects.filter(
        query_id=OuterRef("query_id"), document_id=OuterRef("document_id")
    )
    return (
        GoldPair.objects.filter(collection=collection)
        .exclude(Exists(pooled))
        .order_by("created_at", "pk")
    )


@transaction.atomic
def pool_add_ids(*, collection: Collection, pairs: Iterable[tuple[int, int]], source: str) -> int:
    """Add (query pk, document pk) pairs of ``collection`` to its pool; return how many were new.

    Pairs already pooled are left alone; the database refuses pairs of another collection.
    Only the new entries are counted (their graded judgments, read for their documents),
    under the collection's write lock so that a concurrent judgment cannot be missed.

    Every pair of one call enters with one ``added_at`` and the call's ``source``. Gold
    pairs waiting to enter (:func:`gold_waiting`) join a call that brings at least
    :data:`GOLD_JOIN_EVERY` new pairs, at most one for every :data:`GOLD_JOIN_EVERY`
    (oldest marked first), with the same source and time: nothing in the pool then tells
    them from the pairs they came with (docs/judges.md, *Gold pairs are blind*). They are
    not in the count returned, which is the caller's.
    """
    keys = set(pairs)
    if not keys:
        return 0
    _lock_collection(collection.pk)
    document_ids = sorted({d for _, d in keys})
    existing: set[tuple[int, int]] = set()
    for start in range(0, len(document_ids), _ID_CHUNK):
        chunk = document_ids[start : start + _ID_CHUNK]
        existing.update(
            PoolEntry.objects.filter(collection=collection, document_id__in=chunk).values_list(
                "query_id", "document_id"
            )
        )
    new = sorted(keys - existing)
    if not new:
        return 0
    called = len(new)
    room = called // GOLD_JOIN_EVERY
    if room:
        joining = [
            pair
            for pair in gold_waiting(collection=collection).values_list("query_id", "document_id")
            if pair not in keys
        ][:room]
        new = sorted({*new, *joining})
    now = timezone.now()
    graded: dict[tuple[int, int], int] = {}
    new_documents = sorted({d for _, d in new})
    for start in range(0, len(new_documents), _ID_CHUNK):
        chunk = new_documents[start : start + _ID_CHUNK]
        rows = (
            Judgment.objects.filter(
                collection=collection, status=Status.GRADED, document_id__in=chunk
            )
            .order_by()
            .values_list("query_id", "document_id")
            .annotate(n=Count("pk"))
        )
        graded.update(((q, d), n) for q, d, n in rows)
    opened = progress.entries_open(collection_id=collection.pk, pairs=new, graded=graded)
    PoolEntry.objects.bulk_create(
        [
            PoolEntry(
                collection=collection,
                query_id=q,
                document_id=d,
                source=source,
                graded_count=graded.get((q, d), 0),
                is_open=(q, d) in opened,
                added_at=now,
            )
            for q, d in new
        ],
        batch_size=1000,
    )
    progress.entries_added(collection_id=collection.pk, opened=opened)
    return called


_ID_CHUNK = 10_000  # ids per IN list
_PLAN_CHUNK = 500  # planned pairs per look-up of their pool entries


@transaction.atomic
def pool_plan_set(*, collection: Collection, waves: Mapping[tuple[int, int], int]) -> int:
    """Make ``waves`` (query pk, document pk) -> wave the collection's pooling plan.

    Every other pair of the collection becomes unplanned (``priority`` null); pairs of
    ``waves`` that are not pooled in the collection are ignored. Return how many pool
    entries are planned now. ``next_pair`` serves planned pairs first, the lowest wave
    first. An empty ``waves`` clears the plan (the default order).
    """
    if any(wave < 0 for wave in waves.values()):
        raise ValueError("waves are non-negative")
    # The pool's rows are written under the collection lock, as judgments write their
    # counts: two writers of many pool rows in different orders could deadlock.
    _lock_collection(collection.pk)
    PoolEntry.objects.filter(collection=collection, priority__isnull=False).update(priority=None)
    if not waves:
        return 0
    wanted = {pair: int(wave) for pair, wave in waves.items()}
    rows = []
    pairs = sorted(wanted)
    for start in range(0, len(pairs), _PLAN_CHUNK):  # a plan is a few hundred pairs
        chunk = pairs[start : start + _PLAN_CHUNK]
        entries = PoolEntry.objects.filter(
            collection=collection,
            query_id__in={q for q, _ in chunk},
            document_id__in={d for _, d in chunk},
        ).values_list("pk", "query_id", "document_id")
        rows += [[wanted[(q, d)], pk] for pk, q, d in entries if (q, d) in wanted]
    update_values(PoolEntry, ["priority"], rows)
    return len(rows)


def _recount_pool(collection_id: int, query_ids: Iterable[int]) -> None:
    """Recompute the graded counts of the pool entries of the given queries in one statement."""
    graded = (
        Judgment.objects.filter(
            query_id=OuterRef("query_id"),
            document_id=OuterRef("document_id"),
            status=Status.GRADED,
        )
        .order_by()
        .values("query_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    PoolEntry.objects.filter(collection_id=collection_id, query_id__in=list(query_ids)).update(
        graded_count=Coalesce(Subquery(graded, output_field=IntegerField()), Value(0))
    )


@transaction.atomic
def membership_grant(*, collection: Collection, user: AbstractBaseUser, role: str) -> Membership:
    """Give ``user`` a role in ``collection`` (idempotent)."""
    if role not in Membership.Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    membership, _ = Membership.objects.get_or_create(collection=collection, user=user, role=role)
    return membership


def _keeps_a_coordinator(membership: Membership) -> None:
    """Refuse to take away a collection's last coordinator role (no one could manage it)."""
    if membership.role != Membership.Role.COORDINATOR:
        return
    others = (
        Membership.objects.select_for_update()
        .filter(collection_id=membership.collection_id, role=Membership.Role.COORDINATOR)
        .exclude(pk=membership.pk)
    )
    if not others.exists():
        raise ValidationError({"role": "A collection keeps at least one coordinator."})


@transaction.atomic
def membership_update(*, membership: Membership, role: str | None = None) -> Membership:
    """Change the role of ``membership``; the user may not already hold the new role.

    Raise ``ValidationError`` on ``role`` for an unknown role, a role the user already holds
    in the collection, or the last coordinator's role. A quota belongs to the judge role:
    it is cleared when the role changes.
    """
    if role is None or role == membership.role:
        return membership
    if role not in Membership.Role.values:
        raise ValidationError(
            {"role": f"Unknown role {role!r}; use one of {', '.join(Membership.Role.values)}."}
        )
    _keeps_a_coordinator(membership)
    held = Membership.objects.filter(
        collection_id=membership.collection_id, user_id=membership.user_id, role=role
    )
    if held.exists():
        raise ValidationError({"role": f"{membership.user} already holds the {role} role here."})
    membership.role = role
    membership.quota = None
    membership.save(update_fields=["role", "quota"])
    return membership


@transaction.atomic
def membership_revoke(*, membership: Membership) -> None:
    """Take a role away. Labels the user gave stay (they are the collection's history).

    Raise ``ValidationError`` for the last coordinator role. (The team role follows team
    membership: ``metrics.services.team_update`` revokes it when a user leaves their last
    team of the collection.)
    """
    _keeps_a_coordinator(membership)
    membership.delete()


class JudgmentRow(NamedTuple):
    """One judgment of an import, named by external ids, with its line (or item) number.

    A named tuple, not a dataclass: imports build one per line, millions at a time.
    """

    line: int
    query_external_id: str
    document_external_id: str
    grade: int | None = None
    status: str = Status.GRADED
    note: str = ""
    seconds: float | None = None
    abstain_probability: float | None = None
    #: Evidence spans, shape-checked (:func:`judging.evidence.spans_from_value`); None
    #: keeps the label's spans, an empty tuple removes them.
    evidence: tuple[evidence_spans.Span, ...] | None = None


@dataclass(frozen=True)
class ImportSummary:
    """What an import changed."""

    created: int
    changed: int
    unchanged: int
    version: int
    judges: tuple[int, ...] = ()  # every judge the labels went to (a multi-rater file)
    gold: int = 0  # pairs the import marked as gold (new or changed; its gold column)


class RowsRefused(ValidationError):
    """An import's rows with problems: ``line N: ...`` messages (capped) and their ``total``."""

    def __init__(self, messages: list[str], total: int) -> None:
        """Keep the first messages and how many problems there were in all."""
        super().__init__(messages)
        self.total = total


@dataclass
class _Tally:
    """The first :data:`textpolicy.MAX_ERRORS` problems as ``(line, message)``, and a count."""

    items: list[tuple[int, str]] = field(default_factory=list)
    total: int = 0

    def add(self, line: int, message: str) -> None:
        self.total += 1
        if len(self.items) < textpolicy.MAX_ERRORS:
            self.items.append((line, message))


def _staged(rows: Iterable[JudgmentRow], tally: _Tally) -> Iterator[tuple]:
    """Yield the stage's tuple of each row, checking its label; add problems to ``tally``.

    A row with a bad label is still staged (without it), so repeated pairs are found too.
    """
    graded = Status.GRADED
    for row in rows:
        grade = row.grade
        if row.evidence is None:
            spans, given = None, False
        else:
            spans, given = evidence_spans.dumps([s.as_dict() for s in row.evidence]), True
        if (
            row.status == graded
            and type(grade) is int
            and GRADE_MIN <= grade <= GRADE_MAX
            and row.seconds is None
            and row.abstain_probability is None
        ):  # the common case of a graded label, checked as _validated_label would
            yield (row.line, row.query_external_id, row.document_external_id, grade, row.status,
                   row.note, None, None, spans, given)  # fmt: skip
            continue
        try:
            grade, seconds = _validated_label(
                grade=row.grade,
                status=row.status,
                seconds=row.seconds,
                abstain_probability=row.abstain_probability,
            )
        except ValidationError as exc:
            for name, messages in exc.message_dict.items():
                for message in messages:
                    tally.add(row.line, f"line {row.line}: {name}: {message}")
            grade = seconds = abstain = None
        else:
            abstain = row.abstain_probability
        yield (
            row.line,
            row.query_external_id,
            row.document_external_id,
            grade,
            row.status if row.status in STATUSES else Status.LATER,
            row.note,
            seconds,
            abstain,
            spans,
            given,
        )


def _check_staged_evidence(stage: staging.JudgmentStage, tally: _Tally) -> None:
    """Check the staged rows' evidence spans against their documents; merge them in place.

    Problems go to ``tally`` as ``line N: evidence[k]...``. Documents are read a batch of
    rows at a time, so memory follows the batch, not the import.
    """
    after = 0
    while rows := stage.evidence_rows(500, after):
        bodies = dict(
            Document.objects.filter(pk__in={doc for _, doc, _ in rows}).values_list("pk", "body")
        )
        for line, document_id, text in rows:
            spans = tuple(evidence_spans.Span(**span) for span in json.loads(text))
            try:
                checked = evidence_spans.checked_spans(
                    spans, evidence_spans.document_text(bodies[document_id])
                )
            except ValidationError as exc:
                for message in exc.message_dict["evidence"]:
                    tally.add(line, f"line {line}: {message}")
                continue
            if checked != spans:
                stage.set_evidence(line, evidence_spans.dumps([s.as_dict() for s in checked]))
        after = rows[-1][0]


@transaction.atomic
def judgments_import(
    *,
    collection: Collection,
    judge: Judge,
    rows: Iterable[JudgmentRow],
    channel: str = Channel.IMPORT,
    actor: AbstractBaseUser | None = None,
    judge_version: str = "",
) -> ImportSummary:
    """Record many judgments of one judge at once, all or nothing, in bounded memory.

    ``rows`` is consumed once, as a stream: it is staged in a temporary table
    (:mod:`judging.staging`), checked there (repeated pairs, unknown query and document
    ids) and written set-based, so memory does not grow with the import. Any problem
    raises :class:`RowsRefused` (a ``ValidationError``) whose messages each start with
    ``line N:`` — the first :data:`textpolicy.MAX_ERRORS` by line, with the total — and
    nothing is written. Unchanged rows append no history; every created or changed row
    appends one event. The live list and pool counters of the affected queries are
    recomputed once, and one bulk ``judgments_changed`` is sent. ``judge_version`` (LLM
    judges: :func:`judging.llm.judges.judge_version`, the judge's current one when not
    given) is recorded on every label written.
    A row's evidence spans are checked against its document and merged (problems are
    ``line N: evidence[k]...``); a row without evidence keeps the label's spans. The
    collection's evidence rule is not applied: imports carry labels made elsewhere.
    """
    tally = _Tally()
    with staging.JudgmentStage() as stage:
        stage.load(_staged(rows, tally))
        stage.resolve(collection_id=collection.pk)
        _check_staged_evidence(stage, tally)
        references, reference_total = stage.references(textpolicy.MAX_ERRORS)
        for ref in references:
            if ref.first is not None:
                message = (
                    f"query {textpolicy.echo(ref.query)} document {textpolicy.echo(ref.document)}"
                    f" repeated (first on line {ref.first})"
                )
            elif not ref.query_known:
                message = f"unknown query id {textpolicy.echo(ref.query)}"
            else:
                message = f"unknown document id {textpolicy.echo(ref.document)}"
            tally.items.append((ref.line, f"line {ref.line}: {message}"))
        if tally.total or reference_total:
            tally.items.sort(key=lambda item: item[0])
            raise RowsRefused(
                [m for _, m in tally.items[: textpolicy.MAX_ERRORS]], tally.total + reference_total
            )
        policy_name, guidelines_version = _lock_collection_for_labels(collection.pk)
        stage.current(judge_id=judge.pk)
        counts = stage.classify(collection_id=collection.pk)
        _check_quota(judge=judge, collection_id=collection.pk, new_final=counts.new_final)
        touched = stage.write(
            collection_id=collection.pk,
            judge_id=judge.pk,
            actor_id=getattr(actor, "pk", None),
            channel=channel,
            now=timezone.now(),
            counts=counts,
            guidelines_version=guidelines_version,
            judge_version=judge_version
            or (llm_judge_version(judge) if judge.kind == Judge.Kind.LLM else ""),
        )
        version = collection.judgments_version
        if touched:
            # The written pairs only (named by the stage), not every pair of their queries:
            # the import's cost must not grow with the labels the collection holds.
            written = stage.scopes()
            stage.recount_pool()
            progress.judges_moved(
                collection_id=collection.pk,
                deltas={judge.pk: (counts.done_delta, counts.done_open_delta)},
                query_ids=touched,
                pairs=written,
            )
            version = _bump_version(collection.pk, touched, bulk=True)
            _refresh_live_grades(
                collection_id=collection.pk,
                policy_name=policy_name,
                version=version,
                query_ids=touched,
                pairs=written,
                bulk=True,
            )
    return ImportSummary(
        created=counts.created,
        changed=counts.changed,
        unchanged=counts.total - counts.created - counts.changed,
        version=version,
    )


@transaction.atomic
def qualification_refresh(*, collection_id: int) -> frozenset[int]:
    """Re-derive the judges' qualification and move the live list with it; return the queries.

    For changes of the gold pairs themselves (marked, regraded, unmarked), which move the
    judges' gold records without writing a label. Judges who start or stop counting have
    every query they graded recomputed and rescored in this transaction, under a new
    judgment-list version; nothing happens when nobody's standing flips.
    """
    policy_name = _lock_collection(collection_id)
    the_bar = qualification.bar(collection_id)
    if not the_bar.on:
        return frozenset()
    moved = qualification.flipped_queries(collection_id, qualification.sync(collection_id, the_bar))
    if not moved:
        return frozenset()
    version = _bump_version(collection_id, moved, bulk=False)
    live_grades.refresh(
        collection_id=collection_id,
        policy_name=policy_name,
        version=version,
        query_ids=moved,
        counted_only=True,
    )
    _announce_change(collection_id, moved, version)
    return frozenset(moved)


@transaction.atomic
def live_grades_rebuild(*, collection: Collection) -> None:
    """Recompute the whole live judgment list of ``collection`` (e.g. after a policy change)."""
    policy_name = _lock_collection(collection.pk)
    query_ids = list(collection.queries.values_list("pk", flat=True))
    version = _bump_version(collection.pk, query_ids, bulk=True)
    _refresh_live_grades(
        collection_id=collection.pk,
        policy_name=policy_name,
        version=version,
        query_ids=query_ids,
        bulk=True,
    )


#: Pairs :func:`live_grades_differences` names one by one before it only counts the rest.
DIFFERENCES_NAMED = 20


def _live_rows(collection_id: int) -> dict[tuple[str, str], tuple]:
    """Return what runs are scored by and where it came from, per (query, document) id."""
    return {
        (q, d): tuple(rest)
        for q, d, *rest in LiveGrade.objects.filter(collection_id=collection_id).values_list(
            "query__external_id",
            "document__external_id",
            "grade",
            "abstain_probability",
            "judge_ids",
            "adjudicated",
        )
    }


def live_grades_differences(*, collection: Collection) -> list[str]:
    """Return how the stored live list differs from a recomputation; change nothing.

    The rebuild (:func:`live_grades_rebuild`, qualification included) runs in a savepoint
    that is rolled back, so the answer is exactly what a rebuild would change; its
    after-commit announcements are discarded with it. Empty when the list agrees.
    """
    before = _live_rows(collection.pk)
    with transaction.atomic():
        live_grades_rebuild(collection=collection)
        after = _live_rows(collection.pk)
        transaction.set_rollback(True)
    problems = []
    for key in sorted(before.keys() | after.keys()):
        was, now = before.get(key), after.get(key)
        if was == now:
            continue
        if len(problems) == DIFFERENCES_NAMED:
            problems.append("… and more (the rebuild changes them all)")
            break
        label = f"query {key[0]!r}, document {key[1]!r}"
        if was is None:
            problems.append(f"{label}: missing, recomputed grade {now[0]}")
        elif now is None:
            problems.append(f"{label}: grade {was[0]} stored, no label counts for it")
        else:
            problems.append(
                f"{label}: grade {was[0]} stored (judges {was[2]}), recomputed "
                f"{now[0]} (judges {now[2]})"
            )
    return problems


@dataclass(frozen=True)
class QueryRow:
    """One query of an import, with its line (or item) number."""

    line: int
    external_id: str
    text: str
    description: str = ""
    narrative: str = ""


@dataclass(frozen=True)
class DocumentRow:
    """One document of an import, with its line (or item) number."""

    line: int
    external_id: str
    title: str = ""
    body: str = ""
    url: str = ""
    extra: dict[str, Any] | None = None


@dataclass(frozen=True)
class UpsertSummary:
    """What an import of queries or documents changed."""

    created: int
    updated: int


def _check_rows(
    rows: Sequence[QueryRow] | Sequence[DocumentRow], *, what: str, text_required: bool = False
) -> list[str]:
    """Return ``line N:`` messages for empty, spaced or repeated ids (and empty texts)."""
    errors: list[str] = []
    seen: dict[str, int] = {}
    for row in rows:
        if text_required and not row.text.strip():
            errors.append(f"line {row.line}: {what} text is empty")
        external_id = row.external_id.strip()
        if not external_id:
            errors.append(f"line {row.line}: {what} id is empty")
        elif any(c.isspace() for c in external_id):
            errors.append(
                f"line {row.line}: {what} id {textpolicy.echo(external_id)} contains white space"
            )
        elif external_id in seen:
            errors.append(
                f"line {row.line}: {what} id {textpolicy.echo(external_id)} repeated "
                f"(first on line {seen[external_id]})"
            )
        else:
            seen[external_id] = row.line
    return errors


@transaction.atomic
def queries_import(*, collection: Collection, rows: Sequence[QueryRow]) -> UpsertSummary:
    """Create or update queries by external id, all or nothing (errors name their lines)."""
    errors = _check_rows(rows, what="query", text_required=True)
    if errors:
        raise ValidationError(errors)
    wanted = [row.external_id.strip() for row in rows]
    existing = {q.external_id: q for q in collection.queries.filter(external_id__in=wanted)}
    created, updated = [], []
    changes: list[dict[str, Any]] = []
    for row in rows:
        query = existing.get(row.external_id.strip())
        if query is None:
            created.append(
                Query(
                    collection=collection,
                    external_id=row.external_id.strip(),
                    text=row.text,
                    description=row.description,
                    narrative=row.narrative,
                )
            )
        elif (query.text, query.description, query.narrative) != (
            row.text,
            row.description,
            row.narrative,
        ):
            changes += guidelines_services.query_changes(
                query, description=row.description, narrative=row.narrative
            )
            query.text, query.description, query.narrative = (
                row.text,
                row.description,
                row.narrative,
            )
            updated.append(query)
    Query.objects.bulk_create(created, batch_size=1000)
    update_rows(updated, ["text", "description", "narrative"])
    guidelines_services.version_record(
        collection_id=collection.pk, changes=changes, note="Queries imported"
    )
    return UpsertSummary(created=len(created), updated=len(updated))


@transaction.atomic
def documents_import(*, collection: Collection, rows: Sequence[DocumentRow]) -> UpsertSummary:
    """Create or update documents by external id, all or nothing (errors name their lines).

    Id-only documents (pooled from runs, ``has_content=False``) receive their content and
    become visible to judges.
    """
    errors = _check_rows(rows, what="document")
    if errors:
        raise ValidationError(errors)
    wanted = [row.external_id.strip() for row in rows]
    existing = {d.external_id: d for d in collection.documents.filter(external_id__in=wanted)}
    without_content = {d.pk for d in existing.values() if not d.has_content}
    created, updated = [], []
    for row in rows:
        fields = {
            "title": row.title,
            "body": row.body,
            "url": row.url,
            "extra": row.extra or {},
            "has_content": True,
        }
        document = existing.get(row.external_id.strip())
        if document is None:
            created.append(
                Document(collection=collection, external_id=row.external_id.strip(), **fields)
            )
        elif any(getattr(document, name) != value for name, value in fields.items()):
            for name, value in fields.items():
                setattr(document, name, value)
            updated.append(document)
    Document.objects.bulk_create(created, batch_size=1000)
    update_rows(updated, ["title", "body", "url", "extra", "has_content"])
    got_content = [d.pk for d in updated if d.pk in without_content]
    if got_content:  # their pool pairs are judgeable now
        _lock_collection(collection.pk)
        progress.refresh(collection_id=collection.pk, document_ids=got_content)
    return UpsertSummary(created=len(created), updated=len(updated))
