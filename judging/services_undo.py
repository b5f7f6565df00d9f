"""Undo of a judge's last change in the browser (Ctrl+Z on the judging card).

Undo never rewrites history: it records the label the pair had before the last change
through ``judgment_record`` (or deletes a judgment the last change created, through
``judgment_delete``), so the undo itself is a new event. Undoing twice restores the change.
"""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from judging.models import Collection, Judge, Judgment, JudgmentEvent, PoolEntry
from judging.services import judgment_delete, judgment_record


@transaction.atomic
def judgment_undo_last(
    *, judge: Judge, collection: Collection, actor: AbstractBaseUser | None
) -> PoolEntry | None:
    """Undo ``judge``'s most recent browser change in ``collection``; return its pool entry.

    Returns None (and changes nothing) when the judge has no browser change to undo, or
    the pair is no longer in the pool.
    """
    event = (
        JudgmentEvent.objects.filter(
            judge=judge, collection=collection, channel=JudgmentEvent.Channel.BROWSER
        )
        .order_by("-at", "-pk")
        .first()
    )
    if event is None:
        return None
    entry = (
        PoolEntry.objects.select_related("query", "document")
        .filter(collection=collection, query_id=event.query_id, document_id=event.document_id)
        .first()
    )
    if entry is None:
        return None
    current = Judgment.objects.filter(
        judge=judge, query_id=event.query_id, document_id=event.document_id
    ).first()
    before = event.before
    if before is None:
        if current is not None:
            judgment_delete(judgment=current, channel=JudgmentEvent.Channel.BROWSER, actor=actor)
    else:
        judgment_record(
            judge=judge,
            query=entry.query,
            document=entry.document,
            grade=before.get("grade"),
            status=before.get("status", Judgment.Status.GRADED),
            note=before.get("note") or "",
            seconds=before.get("seconds"),
            abstain_probability=before.get("abstain_probability"),
            evidence=before.get("evidence"),  # the spans it had (none when the key is absent)
            channel=JudgmentEvent.Channel.BROWSER,
            actor=actor,
        )
    return entry
