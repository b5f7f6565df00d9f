"""Read the versions of what judges read, with the labels and agreement of each."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from judging.agreement.selectors import (
    GroupAgreement,
    VersionAgreement,
    agreement_by_guidelines_version,
)
from judging.guidelines.models import GuidelineVersion
from judging.models import Collection

__all__ = ["Instructions", "VersionView", "guideline_versions", "instructions_at"]


@dataclass(frozen=True)
class VersionView:
    """One guidelines version: what changed, why, and the labels given under it.

    Version 1 (the start) has no changes, author or date. ``humans`` is None when no
    label was given under the version.
    """

    number: int
    note: str
    author: str | None
    created_at: datetime | None
    changes: tuple[dict[str, Any], ...]
    labels: int
    humans: GroupAgreement | None
    current: bool


def guideline_versions(
    *, collection: Collection
) -> tuple[list[VersionView], VersionAgreement | None]:
    """Return the collection's versions, newest first, and the labels older than versions.

    Two SQL queries (the versions with their authors; the graded labels).
    """
    rows = list(
        GuidelineVersion.objects.filter(collection=collection)
        .select_related("author")
        .order_by("-number")
    )
    agreement = {a.version: a for a in agreement_by_guidelines_version(collection=collection)}
    current = collection.guidelines_version
    views = [
        VersionView(
            number=row.number,
            note=row.note,
            author=row.author.get_username() if row.author else None,
            created_at=row.created_at,
            changes=tuple(row.changes),
            labels=agreement[row.number].labels if row.number in agreement else 0,
            humans=agreement[row.number].humans if row.number in agreement else None,
            current=row.number == current,
        )
        for row in rows
    ]
    first = agreement.get(1)
    views.append(
        VersionView(
            number=1,
            note="",
            author=None,
            created_at=None,
            changes=(),
            labels=first.labels if first else 0,
            humans=first.humans if first else None,
            current=current == 1,
        )
    )
    return views, agreement.get(None)


@dataclass(frozen=True)
class Instructions:
    """What judges read at one version: the guidelines and each changed query's texts."""

    number: int
    guidelines: str
    queries: dict[str, dict[str, str]]


def instructions_at(*, collection: Collection, number: int) -> Instructions:
    """Return the guidelines and the query texts changed since, as they were at ``number``.

    Undoes the changes of every later version, newest first, from the current texts.
    ``queries`` maps the external id of every query changed after ``number`` to its
    ``description`` and ``narrative`` then; other queries read as they do now. Raises
    ``ValueError`` for a version the collection never had.
    """
    if not 1 <= number <= collection.guidelines_version:
        raise ValueError(
            f"version {number} does not exist (versions 1 to {collection.guidelines_version})"
        )
    guidelines = collection.guidelines
    queries: dict[str, dict[str, str]] = {}
    later = list(
        GuidelineVersion.objects.filter(collection=collection, number__gt=number).order_by(
            "-number"
        )
    )
    current = {
        q.external_id: {"description": q.description, "narrative": q.narrative}
        for q in collection.queries.filter(
            external_id__in={
                change["query"]
                for version in later
                for change in version.changes
                if change["query"] is not None
            }
        )
    }
    for version in later:
        for change in reversed(version.changes):
            if change["query"] is None:
                guidelines = change["before"]
            else:
                texts = queries.setdefault(change["query"], dict(current.get(change["query"], {})))
                texts[change["field"]] = change["before"]
    return Instructions(number=number, guidelines=guidelines, queries=queries)
