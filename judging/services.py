"""Write side of judging: every change to judgments and pools goes through here.

Each service is keyword-only, typed and atomic. Judgment writes take a row lock on the
collection first, which serialises writers per collection, bumps the judgment-list version,
and makes the history append and the pool counters race-free on PostgreSQL as on SQLite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from .models import (
    GRADE_MAX,
    GRADE_MIN,
    Collection,
    Document,
    Judge,
    Judgment,
    JudgmentEvent,
    Membership,
    PoolEntry,
    Query,
)
from .signals import judgments_changed

Channel = JudgmentEvent.Channel
Status = Judgment.Status


def _label(judgment: Judgment | None) -> dict[str, Any] | None:
    """Return the part of a judgment that history records."""
    if judgment is None:
        return None
    return {
        "grade": judgment.grade,
        "status": judgment.status,
        "note": judgment.note,
        "seconds": judgment.seconds,
        "abstain_probability": judgment.abstain_probability,
    }


def _lock_collection(collection_id: int) -> None:
    """Take the per-collection write lock (a row lock on the collection)."""
    Collection.objects.select_for_update().filter(pk=collection_id).values_list("pk").get()


def _bump_version(collection_id: int, query_ids: Iterable[int], *, bulk: bool) -> int:
    """Increment the collection's judgment-list version and announce it after commit."""
    Collection.objects.filter(pk=collection_id).update(
        judgments_version=F("judgments_version") + 1, judgments_changed_at=timezone.now()
    )
    version = Collection.objects.filter(pk=collection_id).values_list(
        "judgments_version", flat=True
    )[0]
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
    if status not in Status.values:
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
) -> Judgment:
    """Create or change ``judge``'s judgment of (query, document) and append it to history.

    A status other than ``graded`` (``cannot_judge``, ``later``) takes no grade. Re-recording
    an identical label changes nothing and appends no event. Raises ``ValidationError``
    naming the field for bad input.
    """
    grade, seconds = _validated_label(
        grade=grade, status=status, seconds=seconds, abstain_probability=abstain_probability
    )
    _check_same_collection(query, document)
    _lock_collection(query.collection_id)
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
    after = _label(judgment)
    if before == after:
        return judgment
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
        after=after,
    )
    _adjust_pool_count(query.pk, document.pk, int(status == Status.GRADED) - int(was_graded))
    _bump_version(query.collection_id, [query.pk], bulk=False)
    return judgment


@transaction.atomic
def judgment_delete(
    *, judgment: Judgment, channel: str = Channel.BROWSER, actor: AbstractBaseUser | None = None
) -> None:
    """Delete a judgment; its history stays, ending with a ``delete`` event."""
    _lock_collection(judgment.collection_id)
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
    query_id = judgment.query_id
    judgment.delete()
    _bump_version(judgment.collection_id, [query_id], bulk=False)


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
) -> int:
    """Add pairs to the collection's judging pool; return how many were new.

    Unknown query ids are errors. Unknown document ids are errors unless
    ``create_missing_documents`` is set, in which case id-only documents
    (``has_content=False``) are created: they are listed for import, never shown to judges.
    All-or-nothing: any error raises ``ValidationError`` listing every bad line.
    """
    queries = dict(collection.queries.values_list("external_id", "pk"))
    wanted_docs = {row.document_external_id for row in pairs}
    documents = dict(
        collection.documents.filter(external_id__in=wanted_docs).values_list("external_id", "pk")
    )
    errors = []
    for row in pairs:
        if row.query_external_id not in queries:
            errors.append(f"line {row.line}: unknown query id {row.query_external_id!r}")
        elif row.document_external_id not in documents and not create_missing_documents:
            errors.append(f"line {row.line}: unknown document id {row.document_external_id!r}")
    if errors:
        raise ValidationError(errors)
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
    existing = set(
        PoolEntry.objects.filter(collection=collection).values_list("query_id", "document_id")
    )
    new = sorted(keys - existing)
    if not new:
        return 0
    graded = _graded_counts(collection, new)
    PoolEntry.objects.bulk_create(
        [
            PoolEntry(
                collection=collection,
                query_id=q,
                document_id=d,
                source=source,
                graded_count=graded.get((q, d), 0),
            )
            for q, d in new
        ],
        batch_size=1000,
    )
    return len(new)


def _graded_counts(collection: Collection, pairs: list[tuple[int, int]]) -> dict:
    """Count existing graded judgments for the given (query id, document id) pairs."""
    query_ids = {q for q, _ in pairs}
    wanted = set(pairs)
    counts: dict[tuple[int, int], int] = {}
    rows = Judgment.objects.filter(
        collection=collection, query_id__in=query_ids, status=Status.GRADED
    ).values_list("query_id", "document_id")
    for key in rows:
        if key in wanted:
            counts[key] = counts.get(key, 0) + 1
    return counts


@transaction.atomic
def membership_grant(*, collection: Collection, user: AbstractBaseUser, role: str) -> Membership:
    """Give ``user`` a role in ``collection`` (idempotent)."""
    if role not in Membership.Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    membership, _ = Membership.objects.get_or_create(collection=collection, user=user, role=role)
    return membership
