"""Read side of part 9: the disagreement queue and one pair's grades, for adjudication.

A constant number of SQL queries whatever the collection's size: the judgments (one),
the adjudications in force (one), the live grades (one), the queries and documents of
the rows shown (two) and the runs' rankings behind the "moves scores" weight (one, in the
provider metrics registers, see :mod:`judging.impact`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

from judging.disagreement import grades_disagree
from judging.impact import runs_in_top
from judging.models import Adjudication, Collection, Document, Judgment, LiveGrade, Query

Sort = Literal["spread", "impact"]
SORTS: dict[str, str] = {
    "spread": "Largest spread first, then most runs' top 10",
    "impact": "Most runs' top 10 first, then largest spread",
}


@dataclass(frozen=True)
class PairLabel:
    """One judge's label of a pair, as adjudicators see it."""

    judge_id: int
    judge_name: str
    judge_kind: str
    status: str
    grade: int | None
    note: str  # the judge's note; an LLM judge's explanation
    seconds: float | None
    evidence: list | None = None  # evidence spans (judging.evidence)
    guidelines_version: int | None = None  # the guidelines it was written under
    judge_version: str | None = None  # LLM labels: the judge configuration that wrote it
    #: The spans with the document's words around them (:func:`judging.evidence.in_context`),
    #: filled where the document is read (one pair's page).
    evidence_context: tuple = ()


@dataclass
class PairView:
    """A pair with every judge's label, its live grade and adjudication in force."""

    query: Query
    document: Document
    labels: list[PairLabel]
    spread: int
    majority: int | None
    live_grade: LiveGrade | None = None
    adjudication: Adjudication | None = None
    runs_in_top: int = 0
    grades: list[int] = field(default_factory=list)

    @property
    def no_majority(self) -> bool:
        """Return whether three or more grades leave no grade a strict majority.

        Two grades that differ never have a majority, so with two judges "no majority"
        would say nothing the spread does not: it counts from three grades on.
        """
        return has_no_majority(self.grades)


def _summary(grades: list[int]) -> tuple[int, int | None]:
    """Return (spread, strict-majority grade or None) of a pair's grades."""
    if not grades:
        return 0, None
    grade, count = Counter(grades).most_common(1)[0]
    return max(grades) - min(grades), (grade if 2 * count > len(grades) else None)


def has_no_majority(grades: list[int]) -> bool:
    """Return whether three or more grades leave no grade a strict majority."""
    return len(grades) >= 3 and _summary(grades)[1] is None


def is_disagreement(
    grades: list[int], min_spread: int, *, cut: int | None = None, no_majority: bool = False
) -> bool:
    """Return whether two or more grades spread by at least ``min_spread``.

    Every other criterion narrows: ``cut`` keeps grades on both sides of it (some below,
    some at or above: the judges disagree on relevance at that cut), ``no_majority``
    keeps three or more grades without a strict majority.
    """
    if not grades_disagree(grades, min_spread):  # the one rule, shared with routing
        return False
    if cut is not None and not min(grades) < cut <= max(grades):
        return False
    return not no_majority or has_no_majority(grades)


def _labels(collection: Collection, scope: dict) -> dict[tuple[int, int], list[PairLabel]]:
    """Return the graded and cannot-judge labels of the pairs in ``scope`` (one query)."""
    rows = (
        Judgment.objects.filter(
            collection=collection,
            status__in=(Judgment.Status.GRADED, Judgment.Status.CANNOT_JUDGE),
            **scope,
        )
        .order_by("judge__kind", "judge__name", "judge_id")
        .values_list(
            "query_id",
            "document_id",
            "judge_id",
            "judge__name",
            "judge__kind",
            "status",
            "grade",
            "note",
            "seconds",
            "evidence",
            "guidelines_version",
            "judge_version",
        )
    )
    by_pair: dict[tuple[int, int], list[PairLabel]] = {}
    for q, d, *rest in rows:
        by_pair.setdefault((q, d), []).append(PairLabel(*rest))
    return by_pair


def disagreements(
    *,
    collection: Collection,
    min_spread: int | None = None,
    cut: int | None = None,
    no_majority: bool = False,
    include_adjudicated: bool = False,
    sort: str = "spread",
) -> list[PairView]:
    """Return the pairs whose judges disagree, most urgent first.

    A disagreement: two or more grades that spread by at least ``min_spread`` (the
    collection's ``disagreement_spread`` by default); ``cut`` and ``no_majority``
    narrow the list as :func:`is_disagreement` says, so every pair listed meets every
    filter. Adjudicated pairs are settled and left out unless ``include_adjudicated``.
    ``sort="spread"`` orders by spread, then by how many runs rank the document in their
    top 10 for the query (the pairs that move the leaderboard); ``"impact"`` the other
    way round. Ties go by query and document id.
    """
    limit = collection.disagreement_spread if min_spread is None else min_spread
    labels = _labels(collection, {})
    adjudications = {
        (a.query_id, a.document_id): a
        for a in Adjudication.objects.filter(collection=collection, revoked_at__isnull=True)
        .select_related("adjudicator")
        .order_by()
    }
    flagged: dict[tuple[int, int], tuple[list[PairLabel], list[int]]] = {}
    for key, pair_labels in labels.items():
        grades = [label.grade for label in pair_labels if label.grade is not None]
        if not is_disagreement(grades, limit, cut=cut, no_majority=no_majority):
            continue
        if key in adjudications and not include_adjudicated:
            continue
        flagged[key] = (pair_labels, grades)
    if not flagged:
        return []
    query_ids = {q for q, _ in flagged}
    document_ids = {d for _, d in flagged}
    queries = Query.objects.in_bulk(query_ids)
    documents = Document.objects.in_bulk(document_ids)
    live = {
        (g.query_id, g.document_id): g
        for g in LiveGrade.objects.filter(
            collection=collection, query_id__in=query_ids, document_id__in=document_ids
        )
    }
    weights = runs_in_top(collection_id=collection.pk, pairs=list(flagged))
    views = []
    for key, (pair_labels, grades) in flagged.items():
        spread, majority = _summary(grades)
        views.append(
            PairView(
                query=queries[key[0]],
                document=documents[key[1]],
                labels=pair_labels,
                spread=spread,
                majority=majority,
                live_grade=live.get(key),
                adjudication=adjudications.get(key),
                runs_in_top=weights.get(key, 0),
                grades=grades,
            )
        )
    if sort == "impact":
        views.sort(key=lambda v: (-v.runs_in_top, -v.spread, v.query.pk, v.document.pk))
    else:
        views.sort(
            key=lambda v: (
                -v.spread,
                -int(v.no_majority),
                -v.runs_in_top,
                v.query.pk,
                v.document.pk,
            )
        )
    return views


def pair_view(*, collection: Collection, query: Query, document: Document) -> PairView:
    """Return one pair with every label, its live grade, adjudication and impact."""
    labels = _labels(collection, {"query": query, "document": document}).get(
        (query.pk, document.pk), []
    )
    grades = [label.grade for label in labels if label.grade is not None]
    spread, majority = _summary(grades)
    return PairView(
        query=query,
        document=document,
        labels=labels,
        spread=spread,
        majority=majority,
        live_grade=LiveGrade.objects.filter(query=query, document=document).first(),
        adjudication=Adjudication.objects.filter(
            query=query, document=document, revoked_at__isnull=True
        )
        .select_related("adjudicator")
        .first(),
        runs_in_top=runs_in_top(collection_id=collection.pk, pairs=[(query.pk, document.pk)]).get(
            (query.pk, document.pk), 0
        ),
        grades=grades,
    )


def adjudication_history(*, query: Query, document: Document) -> list[Adjudication]:
    """Return every adjudication of a pair, newest first, with who set and revoked it."""
    return list(
        Adjudication.objects.filter(query=query, document=document)
        .select_related("adjudicator", "revoked_by")
        .order_by("-created_at", "-pk")
    )
