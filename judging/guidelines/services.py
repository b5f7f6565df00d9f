"""Change what judges read; every change is a new guidelines version (one atomic action each).

The collection row is the version counter and its lock: label writes take the same lock
(:func:`judging.services._lock_collection`), so a label records the version that was in
force when it was written, never one from a change that had not committed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F

from graded import textpolicy
from judging.guidelines.models import GuidelineVersion
from judging.models import Collection, Query

#: Longest guidelines, description or narrative accepted (characters).
MAX_GUIDELINES_LENGTH = 200_000
MAX_VERSION_NOTE_LENGTH = 500

__all__ = [
    "MAX_GUIDELINES_LENGTH",
    "guidelines_update",
    "query_instructions_update",
    "version_record",
]


def _checked(fields: dict[str, str]) -> None:
    """Raise ``ValidationError`` naming every field whose text the text policy refuses."""
    problems = {}
    for name, value in fields.items():
        limit = MAX_VERSION_NOTE_LENGTH if name == "note" else MAX_GUIDELINES_LENGTH
        problem = textpolicy.prose_problem(value, max_length=limit, what=name)
        if problem:
            problems[name] = [problem]
    if problems:
        raise ValidationError(problems)


@transaction.atomic
def version_record(
    *,
    collection_id: int,
    changes: Sequence[dict[str, Any]],
    note: str = "",
    actor: AbstractBaseUser | None = None,
) -> GuidelineVersion | None:
    """Start a new version of the collection recording ``changes``; None when there are none.

    Call after writing the changed texts, in the same transaction. Takes the collection's
    row lock before counting, so concurrent changes get consecutive numbers.
    """
    if not changes:
        return None
    _checked({"note": note})
    Collection.objects.select_for_update().filter(pk=collection_id).update(
        guidelines_version=F("guidelines_version") + 1
    )
    number = Collection.objects.values_list("guidelines_version", flat=True).get(pk=collection_id)
    return GuidelineVersion.objects.create(
        collection_id=collection_id,
        number=number,
        changes=list(changes),
        note=note,
        author=actor if getattr(actor, "pk", None) else None,
    )


@transaction.atomic
def guidelines_update(
    *,
    collection: Collection,
    guidelines: str,
    note: str = "",
    actor: AbstractBaseUser | None = None,
) -> GuidelineVersion | None:
    """Replace the collection's guidelines; return the new version (None if unchanged)."""
    _checked({"guidelines": guidelines, "note": note})
    before = (
        Collection.objects.select_for_update()
        .values_list("guidelines", flat=True)
        .get(pk=collection.pk)
    )
    if before == guidelines:
        return None
    Collection.objects.filter(pk=collection.pk).update(guidelines=guidelines)
    version = version_record(
        collection_id=collection.pk,
        changes=[{"field": "guidelines", "query": None, "before": before, "after": guidelines}],
        note=note,
        actor=actor,
    )
    collection.guidelines = guidelines
    collection.guidelines_version = version.number if version else collection.guidelines_version
    return version


def query_changes(query: Query, *, description: str, narrative: str) -> list[dict[str, Any]]:
    """Return the version entries for giving ``query`` this description and narrative."""
    return [
        {"field": name, "query": query.external_id, "before": old, "after": new}
        for name, old, new in (
            ("description", query.description, description),
            ("narrative", query.narrative, narrative),
        )
        if old != new
    ]


@transaction.atomic
def query_instructions_update(
    *,
    query: Query,
    description: str,
    narrative: str,
    note: str = "",
    actor: AbstractBaseUser | None = None,
) -> GuidelineVersion | None:
    """Change a query's description and narrative; return the new version (None if unchanged)."""
    _checked({"description": description, "narrative": narrative, "note": note})
    Collection.objects.select_for_update().filter(pk=query.collection_id).values_list("pk").get()
    current = Query.objects.get(pk=query.pk)
    changes = query_changes(current, description=description, narrative=narrative)
    if not changes:
        return None
    Query.objects.filter(pk=query.pk).update(description=description, narrative=narrative)
    query.description, query.narrative = description, narrative
    return version_record(
        collection_id=query.collection_id, changes=changes, note=note, actor=actor
    )
