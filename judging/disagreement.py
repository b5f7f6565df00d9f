"""The one rule of a disagreement, shared by routing and the disagreement queue.

Two or more grades of a pair disagree when they spread (highest minus lowest) by at
least the collection's ``disagreement_spread`` (default 2). Grades one apart are ordinary
noise between two careful judges, so with the default they neither send the pair to one
more judge nor put it in the disagreement queue. The queue's other filters (a relevance
cut, no majority among three or more grades) only narrow this rule; routing uses the rule
alone.

:func:`grades_disagree` is the rule in Python (no Django needed to call it);
:func:`with_grade_spread` and :func:`disagreement_q` are its SQL form over pool entries,
used by the judges' queue (:mod:`judging.selectors`) and the progress counters
(:mod:`judging.progress.counters`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.db.models import F, IntegerField, Max, Min, OuterRef, Q, QuerySet, Subquery


def grades_disagree(grades: Iterable[int], min_spread: int) -> bool:
    """Return whether two or more ``grades`` spread by at least ``min_spread``.

    Fewer than two grades never disagree; ``min_spread`` is 1 to 4.
    """
    values = list(grades)
    return len(values) >= 2 and max(values) - min(values) >= min_spread


def with_grade_spread(entries: QuerySet, judgment_model: Any, graded: str) -> QuerySet:
    """Alias ``grade_spread`` on pool ``entries``: the spread of each pair's graded labels.

    ``judgment_model`` is the ``Judgment`` model (a data migration passes its historical
    one) and ``graded`` its graded status. A pair without grades has a NULL spread.
    """
    grades = judgment_model.objects.filter(
        query_id=OuterRef("query_id"), document_id=OuterRef("document_id"), status=graded
    ).order_by()
    spread = grades.values("query_id").annotate(s=Max("grade") - Min("grade")).values("s")
    return entries.alias(grade_spread=Subquery(spread, output_field=IntegerField()))


def disagreement_q() -> Q:
    """Return the condition, on entries from :func:`with_grade_spread`, that grades disagree.

    Two or more grades are implied: one grade spreads by 0, below every allowed spread.
    """
    return Q(grade_spread__gte=F("collection__disagreement_spread"))
