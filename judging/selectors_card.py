"""Reads for the judging card's feedback: where the judge is within the current query."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from .models import Judge, Judgment, PoolEntry, Query
from .selectors import FINAL_STATUSES, _open_pairs


@dataclass(frozen=True)
class QueryProgress:
    """The judge's place within one query: ``position`` of ``total`` pairs."""

    position: int
    total: int


def query_progress(*, judge: Judge, entry: PoolEntry, is_final: bool) -> QueryProgress:
    """Return which pair of its query ``entry`` is for ``judge`` ("3 of 12 for this query").

    ``total`` counts the pairs of the query the judge has finally judged plus those still
    open to them; ``position`` is the number already judged plus one for the card shown
    (unless the shown pair is itself already judged, as when going back). One SQL query.
    """
    done = (
        Judgment.objects.filter(judge=judge, query_id=OuterRef("pk"), status__in=FINAL_STATUSES)
        .order_by()
        .values("query_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    remaining = (
        _open_pairs(judge.pk)
        .filter(query_id=OuterRef("pk"))
        .order_by()
        .values("query_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
    row = (
        Query.objects.filter(pk=entry.query_id)
        .annotate(
            done=Coalesce(Subquery(done, output_field=IntegerField()), Value(0)),
            remaining=Coalesce(Subquery(remaining, output_field=IntegerField()), Value(0)),
        )
        .values("done", "remaining")
        .get()
    )
    done, remaining = row["done"], row["remaining"]
    total = done + remaining
    position = done if is_final else done + 1
    return QueryProgress(position=max(1, min(position, total)), total=max(total, 1))
