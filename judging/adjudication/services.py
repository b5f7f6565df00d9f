"""Write side of part 9: adjudications, aggregation settings and policy changes, bulk removal.

Keyword-only, typed and atomic like :mod:`judging.services`, whose per-collection lock,
version bump and live-list refresh they reuse: every change here bumps the judgment-list
version and moves the scores like any judgment (one pair inline, bulk in the background).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from judging import aggregation
from judging.models import (
    GRADE_MAX,
    GRADE_MIN,
    Adjudication,
    Collection,
    Document,
    Judge,
    Judgment,
    JudgmentEvent,
    Membership,
    PolicyChange,
    Query,
)
from judging.progress import counters as progress
from judging.services import (
    _announce_change,
    _bump_version,
    _label,
    _lock_collection,
    _recount_pool,
    _refresh_live_grades,
    live_grades_rebuild,
)

Channel = JudgmentEvent.Channel
Action = JudgmentEvent.Action
ADJUDICATED = "adjudicated"
MAX_REASON = 5000
#: Largest quota (the column is a 32-bit positive integer on every database).
MAX_QUOTA = 2_147_483_647


def _adjudication_label(adjudication: Adjudication | None) -> dict[str, Any] | None:
    """Return the part of an adjudication that history records."""
    if adjudication is None:
        return None
    return {"grade": adjudication.grade, "status": ADJUDICATED, "reason": adjudication.reason}


def _event(
    *,
    actor: AbstractBaseUser,
    query: Query,
    document: Document,
    action: str,
    before: dict[str, Any] | None,
    after: dict[str, Any] | None,
) -> JudgmentEvent:
    """Append one adjudication event to the pair's history (no judge: it is no one's label)."""
    return JudgmentEvent.objects.create(
        judgment=None,
        collection_id=query.collection_id,
        judge=None,
        query=query,
        document=document,
        actor=actor,
        action=action,
        channel=Channel.ADJUDICATION,
        before=before,
        after=after,
    )


def _refresh_pair(collection_id: int, policy_name: str, query_id: int, document_id: int) -> int:
    """Bump the version and refresh one pair's live grade; return the new version."""
    version = _bump_version(collection_id, [query_id], bulk=False)
    moved = _refresh_live_grades(
        collection_id=collection_id,
        policy_name=policy_name,
        version=version,
        query_ids=[query_id],
        document_id=document_id,
        bulk=False,
    )
    _announce_change(collection_id, {query_id, *moved}, version)
    return version


@transaction.atomic
def adjudication_record(
    *,
    query: Query,
    document: Document,
    grade: int,
    reason: str,
    actor: AbstractBaseUser,
) -> Adjudication:
    """Set the final grade of a pair, overriding its aggregated grade until revoked.

    A pair has at most one adjudication in force: a new one replaces it (the old one is
    revoked; history records a ``change``). The same grade and reason again changes
    nothing. Raise ``ValidationError`` naming the field for a grade outside 0–4, an
    empty or over-long reason, or a query and document of different collections.
    """
    if isinstance(grade, bool) or not isinstance(grade, int):
        raise ValidationError({"grade": f"Grade must be a whole number, not {grade!r}."})
    if not GRADE_MIN <= grade <= GRADE_MAX:
        raise ValidationError({"grade": f"Grade must be between 0 and 4, not {grade}."})
    reason = (reason or "").strip()
    if not reason:
        raise ValidationError({"reason": "Give the reason for this grade."})
    if len(reason) > MAX_REASON or "\x00" in reason:
        raise ValidationError(
            {"reason": f"The reason must be at most {MAX_REASON} characters, without NUL."}
        )
    if query.collection_id != document.collection_id:
        raise ValidationError(
            {"document": "The query and the document belong to different collections."}
        )
    policy_name = _lock_collection(query.collection_id)
    current = (
        Adjudication.objects.select_for_update()
        .filter(query=query, document=document, revoked_at__isnull=True)
        .first()
    )
    if current is not None and (current.grade, current.reason) == (grade, reason):
        return current
    before = _adjudication_label(current)
    if current is not None:
        current.revoked_at, current.revoked_by = timezone.now(), actor
        current.save(update_fields=["revoked_at", "revoked_by"])
    adjudication = Adjudication.objects.create(
        collection_id=query.collection_id,
        query=query,
        document=document,
        grade=grade,
        reason=reason,
        adjudicator=actor,
    )
    _event(
        actor=actor,
        query=query,
        document=document,
        action=Action.CREATE if current is None else Action.CHANGE,
        before=before,
        after=_adjudication_label(adjudication),
    )
    _refresh_pair(query.collection_id, policy_name, query.pk, document.pk)
    return adjudication


@transaction.atomic
def adjudication_revoke(*, adjudication: Adjudication, actor: AbstractBaseUser) -> None:
    """Revoke an adjudication in force: the pair's aggregated grade is live again.

    Revoking one already revoked raises ``ValidationError``.
    """
    policy_name = _lock_collection(adjudication.collection_id)
    locked = Adjudication.objects.select_for_update().get(pk=adjudication.pk)
    if locked.revoked_at is not None:
        raise ValidationError("This adjudication was already revoked.")
    locked.revoked_at, locked.revoked_by = timezone.now(), actor
    locked.save(update_fields=["revoked_at", "revoked_by"])
    adjudication.revoked_at, adjudication.revoked_by = locked.revoked_at, actor
    _event(
        actor=actor,
        query=locked.query,
        document=locked.document,
        action=Action.DELETE,
        before=_adjudication_label(locked),
        after=None,
    )
    _refresh_pair(locked.collection_id, policy_name, locked.query_id, locked.document_id)


@transaction.atomic
def aggregation_settings_update(
    *,
    collection: Collection,
    actor: AbstractBaseUser | None,
    aggregation_policy: str | None = None,
    judges_per_pair: int | None = None,
    max_judges_per_pair: int | None = None,
    disagreement_spread: int | None = None,
    agreement_alert_threshold: float | None = None,
    llm_hint: str | None = None,
    evidence: str | None = None,
    evidence_from_grade: int | None = None,
) -> PolicyChange | None:
    """Change how a collection aggregates and assigns; return the policy change, if any.

    Also how its judges label: whether the card shows an LLM grade (``llm_hint``), and
    whether evidence spans are off, optional or required from ``evidence_from_grade`` on
    (:mod:`judging.evidence`; labels already given keep what they have).

    A new policy is recorded (:class:`PolicyChange`), rebuilds the live list under the
    new judgment-list version and rescores every run in the background. Every value is
    checked first; a bad one raises ``ValidationError`` naming its field, nothing changes.
    """
    errors: dict[str, str] = {}
    if aggregation_policy is not None:
        try:
            aggregation.get_policy(aggregation_policy)
        except aggregation.UnknownPolicyError as exc:
            errors["aggregation_policy"] = str(exc)
    for name, value, low, high in (
        ("judges_per_pair", judges_per_pair, 1, 50),
        ("max_judges_per_pair", max_judges_per_pair, 0, 50),
        ("disagreement_spread", disagreement_spread, 1, 4),
        ("evidence_from_grade", evidence_from_grade, 0, 4),
    ):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high
        ):
            errors[name] = f"Must be a whole number from {low} to {high}."
    if agreement_alert_threshold is not None and not (
        isinstance(agreement_alert_threshold, int | float)
        and 0.0 <= agreement_alert_threshold <= 1.0
    ):
        errors["agreement_alert_threshold"] = "Must be a number between 0 and 1."
    hints = [name for name, _ in Collection._meta.get_field("llm_hint").choices]
    if llm_hint is not None and llm_hint not in hints:
        errors["llm_hint"] = f"Must be one of {', '.join(hints)}."
    modes = [name for name, _ in Collection._meta.get_field("evidence").choices]
    if evidence is not None and evidence not in modes:
        errors["evidence"] = f"Must be one of {', '.join(modes)}."
    if errors:
        raise ValidationError(errors)
    previous = _lock_collection(collection.pk)
    locked = Collection.objects.get(pk=collection.pk)
    fields = []
    for name, value in (
        ("judges_per_pair", judges_per_pair),
        ("max_judges_per_pair", max_judges_per_pair),
        ("disagreement_spread", disagreement_spread),
        ("agreement_alert_threshold", agreement_alert_threshold),
        ("llm_hint", llm_hint),
        ("evidence", evidence),
        ("evidence_from_grade", evidence_from_grade),
    ):
        if value is not None and getattr(locked, name) != value:
            setattr(locked, name, value)
            setattr(collection, name, value)
            fields.append(name)
    if fields:
        locked.save(update_fields=fields)
        if {"judges_per_pair", "max_judges_per_pair", "disagreement_spread"} & set(fields):
            progress.rebuild(collection_id=collection.pk)  # which pairs are open changed
    if aggregation_policy is None or aggregation_policy == previous:
        return None
    Collection.objects.filter(pk=collection.pk).update(aggregation_policy=aggregation_policy)
    collection.aggregation_policy = aggregation_policy
    live_grades_rebuild(collection=collection)
    version = Collection.objects.filter(pk=collection.pk).values_list(
        "judgments_version", flat=True
    )[0]
    collection.judgments_version = version
    return PolicyChange.objects.create(
        collection=collection,
        previous=previous,
        policy=aggregation_policy,
        actor=actor,
        version=version,
    )


@transaction.atomic
def judge_labels_remove(
    *, collection: Collection, judge: Judge, actor: AbstractBaseUser | None
) -> int:
    """Delete every judgment of ``judge`` in ``collection``; return how many.

    For a judge who misunderstood the guidelines, say. Each deletion appends a
    ``delete`` event (the history is kept); pool counts and the live list are
    recomputed once, and every run is rescored in the background.
    """
    policy_name = _lock_collection(collection.pk)
    judgments = list(
        Judgment.objects.select_for_update().filter(collection=collection, judge=judge)
    )
    if not judgments:
        return 0
    JudgmentEvent.objects.bulk_create(
        [
            JudgmentEvent(
                judgment=None,
                collection=collection,
                judge=judge,
                query_id=j.query_id,
                document_id=j.document_id,
                actor=actor,
                action=Action.DELETE,
                channel=Channel.BROWSER if actor is not None else Channel.SYSTEM,
                before=_label(j),
                after=None,
            )
            for j in judgments
        ],
        batch_size=1000,
    )
    Judgment.objects.filter(pk__in=[j.pk for j in judgments]).delete()
    touched = {j.query_id for j in judgments}
    _recount_pool(collection.pk, touched)
    progress.judgments_written(
        collection_id=collection.pk,
        changes=[
            progress.Change(
                judge_id=judge.pk,
                query_id=j.query_id,
                document_id=j.document_id,
                was_final=j.status in progress.FINAL,
                is_final=False,
            )
            for j in judgments
        ],
        query_ids=touched,
    )
    version = _bump_version(collection.pk, touched, bulk=True)
    _refresh_live_grades(
        collection_id=collection.pk,
        policy_name=policy_name,
        version=version,
        query_ids=touched,
        bulk=True,
    )
    return len(judgments)


@transaction.atomic
def judge_quota_set(*, collection: Collection, judge: Judge, quota: int | None) -> Membership:
    """Set how many pairs a human judge may grade in ``collection`` (None: no limit).

    Raise ``ValidationError`` on ``quota`` for a negative or non-integer value, and on
    ``judge`` for an LLM judge or a user without the judge role in the collection.
    """
    if quota is not None and (
        isinstance(quota, bool) or not isinstance(quota, int) or not 0 <= quota <= MAX_QUOTA
    ):
        raise ValidationError(
            {"quota": f"Give a whole number of pairs from 0 to {MAX_QUOTA:,}, or none."}
        )
    membership = (
        Membership.objects.select_for_update()
        .filter(collection=collection, user_id=judge.user_id, role=Membership.Role.JUDGE)
        .first()
        if judge.user_id is not None
        else None
    )
    if membership is None:
        raise ValidationError({"judge": f"{judge.name} is not a judge of this collection."})
    membership.quota = quota
    membership.save(update_fields=["quota"])
    return membership


@transaction.atomic
def quotas_save(*, collection: Collection, memberships: list[Membership], data: Any) -> None:
    """Set the quotas of judge ``memberships`` from form data ``quota-<membership id>``.

    An empty value means no limit. All or nothing: a bad value raises ``ValidationError``
    naming the judge, and no quota changes.
    """
    changes: list[tuple[Membership, int | None]] = []
    errors = []
    for membership in memberships:
        raw = (data.get(f"quota-{membership.pk}") or "").strip()
        if not raw:
            changes.append((membership, None))
            continue
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 9:
            errors.append(f"{membership.user}: give a whole number of pairs, or leave it empty.")
            continue
        changes.append((membership, int(raw)))
    if errors:
        raise ValidationError(errors)
    for membership, quota in changes:
        if membership.collection_id != collection.pk or membership.role != Membership.Role.JUDGE:
            raise ValidationError(f"{membership.user} is not a judge of this collection.")
        if membership.quota != quota:
            membership.quota = quota
            membership.save(update_fields=["quota"])
