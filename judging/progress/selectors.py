"""Progress by its definition, recounted from the judgments (the counters' reference).

:func:`judging.selectors.judge_progress` reads the maintained counters; the functions
here recount the same figures with the anti-join over the whole pool, so that tests,
``manage.py rebuild_progress --check`` and anyone in doubt can compare the two.
"""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, Subquery, Value
from django.db.models.functions import Coalesce

from judging.models import Collection, Judge, JudgeProgress, Judgment, PoolEntry, PoolProgress
from judging.selectors import (
    FINAL_STATUSES,
    Progress,
    _open_pairs,
    gold_to_serve,
    gold_to_serve_entries,
    judge_progress,
)


def _recount_annotations(judge_id: int | None) -> dict:
    """Return ``done``/``remaining`` subqueries by the definition, for a collection queryset.

    ``done``: the judge's final judgments in the collection; ``remaining``: the open pool
    pairs (:func:`judging.selectors._open_pairs`) the judge has not finally judged, and
    while the collection mixes gold pairs in, the gold pairs no longer open that the judge
    is still to be served (:func:`judging.selectors.gold_to_serve`).
    """
    done = (
        Judgment.objects.filter(
            collection=OuterRef("pk"), judge_id=judge_id, status__in=FINAL_STATUSES
        )
        .order_by()
        .values("collection")
        .annotate(n=Count("pk"))
        .values("n")
    )
    remaining = (
        _open_pairs(judge_id)
        .filter(collection=OuterRef("pk"))
        .order_by()
        .values("collection")
        .annotate(n=Count("pk"))
        .values("n")
    )
    return {
        "done": Coalesce(Subquery(done, output_field=IntegerField()), Value(0)),
        "remaining": Coalesce(Subquery(remaining, output_field=IntegerField()), Value(0))
        + gold_to_serve(judge_id),
    }


def progress_recount(*, judge: Judge | None, collection: Collection) -> Progress:
    """Return ``judge``'s progress in ``collection`` recounted (an anti-join over the pool)."""
    row = (
        Collection.objects.filter(pk=collection.pk)
        .annotate(**_recount_annotations(judge.pk if judge else None))
        .values("done", "remaining")
        .get()
    )
    return Progress(done=row["done"], remaining=row["remaining"])


def open_pair_ids(*, collection: Collection) -> set[int]:
    """Return the ids of the collection's open pool pairs, by the definition."""
    return set(_open_pairs(None).filter(collection=collection).values_list("pk", flat=True))


def progress_problems(*, collection: Collection) -> list[str]:
    """Return how the counters of ``collection`` differ from a recount (empty: they agree).

    Checks every entry's ``is_open``, the open-pair count, and the progress of every
    judge with a counter row or a judgment in the collection (and of a judge with none).
    """
    problems: list[str] = []
    expected = open_pair_ids(collection=collection)
    stored = set(
        PoolEntry.objects.filter(collection=collection, is_open=True).values_list("pk", flat=True)
    )
    if stored != expected:
        problems.append(
            f"is_open wrong on {len(stored ^ expected)} entries "
            f"(e.g. {sorted(stored ^ expected)[:5]})"
        )
    counted = (
        PoolProgress.objects.filter(collection=collection)
        .values_list("open_pairs", flat=True)
        .first()
    ) or 0
    if counted != len(expected):
        problems.append(f"open_pairs is {counted}, recount {len(expected)}")
    judge_ids = set(
        JudgeProgress.objects.filter(collection=collection).values_list("judge_id", flat=True)
    ) | set(Judgment.objects.filter(collection=collection).values_list("judge_id", flat=True))
    judges = list(Judge.objects.filter(pk__in=judge_ids).order_by("pk"))
    for judge in [*judges, None]:
        recount = progress_recount(judge=judge, collection=collection)
        if judge is None:
            waiting = (
                gold_to_serve_entries(collection, 0).count() if collection.gold_rate > 0 else 0
            )
            kept = Progress(done=0, remaining=counted + waiting)
        else:
            kept = judge_progress(judge=judge, collection=collection)
        if kept != recount:
            who = f"judge {judge.pk}" if judge else "a judge without judgments"
            problems.append(f"{who}: counters {kept}, recount {recount}")
    return problems
