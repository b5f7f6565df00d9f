"""Mark and unmark gold pairs (one atomic action each)."""

from __future__ import annotations

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from judging import services as judging_services
from judging import textpolicy
from judging.models import GRADE_MAX, GRADE_MIN, Collection, Document, PoolEntry, Query
from judging.quality.models import GoldPair

__all__ = ["gold_rate_set", "gold_remove", "gold_set"]


@transaction.atomic
def gold_set(
    *,
    query: Query,
    document: Document,
    grade: int,
    reason: str = "",
    actor: AbstractBaseUser | None = None,
) -> GoldPair:
    """Mark (query, document) as gold with ``grade``, or change its grade and reason.

    Raise ``ValidationError`` naming the field for a grade outside 0–4, a refused reason,
    or a query and document of different collections.
    """
    problems: dict[str, list[str]] = {}
    if type(grade) is not int or not GRADE_MIN <= grade <= GRADE_MAX:
        problems["grade"] = [f"Give a whole grade from {GRADE_MIN} to {GRADE_MAX}."]
    problem = textpolicy.text_problem(reason, max_length=textpolicy.MAX_NOTE_LENGTH, what="reason")
    if problem:
        problems["reason"] = [problem]
    if query.collection_id != document.collection_id:
        problems["document"] = ["The document belongs to another collection than the query."]
    if problems:
        raise ValidationError(problems)
    # A gold pair is a pool pair, so judges can be served it (judging.selectors.next_pair).
    judging_services.pool_add_ids(
        collection=query.collection, pairs=[(query.pk, document.pk)], source=PoolEntry.Source.MANUAL
    )
    gold, _created = GoldPair.objects.update_or_create(
        collection_id=query.collection_id,
        query=query,
        document=document,
        defaults={"grade": grade, "reason": reason},
        create_defaults={
            "grade": grade,
            "reason": reason,
            "created_by": actor if getattr(actor, "pk", None) else None,
        },
    )
    return gold


@transaction.atomic
def gold_rate_set(*, collection: Collection, rate: float) -> None:
    """Set the share of served pairs that are gold pairs a judge has not graded (0–1)."""
    if not isinstance(rate, int | float) or not 0 <= rate <= 1 or rate != rate:
        raise ValidationError({"gold_rate": ["Give a share from 0 to 1."]})
    Collection.objects.filter(pk=collection.pk).update(gold_rate=float(rate))
    collection.gold_rate = float(rate)


@transaction.atomic
def gold_remove(*, gold: GoldPair) -> None:
    """Unmark a gold pair (the judges' labels of the pair stay)."""
    gold.delete()
