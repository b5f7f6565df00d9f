"""Keep each judge's qualification current, under the collection's write lock.

A collection may ask for qualification (``Collection.qualification_pairs`` above 0): a
judge's labels then count in the live list only while the judge is qualified by the rule
of :func:`judging.quality.gold.qualification`. The standing of every judge is stored
(:class:`judging.quality.models.JudgeQualification`) so the live list reads it in the
same query as the labels (:mod:`judging.live_grades`).

:func:`sync` re-derives the standing of every judge from their current gold labels and
writes the difference; it is called by every write that can move it (a label, an import,
an LLM job, a deletion, a gold pair marked, regraded or unmarked) with the collection's
row lock held, so two gold labels committed at once are read one after the other. The
caller then recomputes the live grades of the queries of the judges whose labels started
or stopped counting (:func:`flipped_queries`), so the live list always equals a full
rebuild from the labels.

Imports the models and the pure rule only: :mod:`judging.services` imports this module.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Exists, OuterRef, Subquery
from django.utils import timezone

from judging.models import Collection, Judge, JudgeProgress, Judgment, imported_judges
from judging.quality import gold as rule
from judging.quality.models import GoldPair, JudgeQualification, QualificationChange

__all__ = [
    "SHOWN_EVERY",
    "Bar",
    "bar",
    "flipped_queries",
    "gold_records",
    "reset",
    "standings",
    "sync",
    "unassessable",
]

#: The stored fields :func:`sync` derives from the rule.
DERIVED = ["status", "counted", "graded", "window", "window_exact"]
#: The stored fields of what the judge is told (see :func:`sync`).
SHOWN = ["shown_counted", "shown_status", "shown_block"]


@dataclass(frozen=True)
class Bar:
    """What a collection asks of a judge: ``needed`` gold pairs at ``share`` exact."""

    needed: int
    share: float

    @property
    def on(self) -> bool:
        """Return whether the collection asks for qualification at all."""
        return self.needed > 0


def bar(collection_id: int) -> Bar:
    """Return the collection's qualification bar (one query)."""
    needed, share = (
        Collection.objects.filter(pk=collection_id)
        .values_list("qualification_pairs", "qualification_share")
        .get()
    )
    return Bar(needed=needed, share=share)


def gold_records(collection_id: int) -> dict[int, tuple[list[int], list[int]]]:
    """Return each judge's graded gold labels as (grades, gold grades), oldest first.

    "Oldest" is the order the labels were last written in (``updated_at``, then id), the
    order of :func:`judging.quality.selectors.gold_report`. One query.
    """
    gold = GoldPair.objects.filter(
        collection_id=collection_id,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
    )
    rows = (
        Judgment.objects.filter(collection_id=collection_id, status=Judgment.Status.GRADED)
        .annotate(gold_grade=Subquery(gold.values("grade")[:1]))
        .filter(gold_grade__isnull=False)
        .order_by("judge_id", "updated_at", "id")
        .values_list("judge_id", "grade", "gold_grade")
    )
    records: dict[int, tuple[list[int], list[int]]] = {}
    for judge_id, grade, gold_grade in rows:
        mine = records.setdefault(judge_id, ([], []))
        mine[0].append(grade)
        mine[1].append(gold_grade)
    return records


def unassessable(collection_id: int) -> set[int]:
    """Return the judges with labels in the collection that cannot be served gold pairs.

    Judges an import created (:func:`judging.models.imported_judges`): their labels come
    from files, so they never meet a gold pair they have not already answered. One query,
    driven from the (few) imported judges.
    """
    labelled = Judgment.objects.filter(collection_id=collection_id, judge_id=OuterRef("pk"))
    return set(
        Judge.objects.filter(imported_judges())
        .filter(Exists(labelled))
        .values_list("pk", flat=True)
    )


def standings(
    collection_id: int, the_bar: Bar, *, records: dict | None = None, imported: set | None = None
) -> dict[int, rule.Qualification]:
    """Return the standing of every judge with a graded gold label or imported labels.

    The bar must be on. ``records`` (:func:`gold_records`) and ``imported``
    (:func:`unassessable`) are read when not given. An imported judge with fewer gold
    pairs than the bar asks is *not assessed* and counts (:func:`judging.quality.gold.
    qualification`).
    """
    records = gold_records(collection_id) if records is None else records
    imported = unassessable(collection_id) if imported is None else imported
    return {
        judge_id: rule.qualification(
            *records.get(judge_id, ([], [])),
            needed=the_bar.needed,
            share=the_bar.share,
            assessable=judge_id not in imported,
        )
        for judge_id in records.keys() | imported
    }


#: A judge is told whether their labels count as of the last time the pairs they judged
#: reached a new multiple of this: a change of standing (the answer to a gold pair, often)
#: then shows among this many pairs, never on the pair that caused it.
SHOWN_EVERY = 20


def sync(collection_id: int, the_bar: Bar | None = None) -> set[int]:
    """Bring the stored standings up to date; return the judges who started or stopped counting.

    Call with the collection's write lock held; ``the_bar`` is :func:`bar`'s answer, if
    read already. Without qualification nothing is read or written (every judge counts;
    the stored rows wait unused). A judge
    whose gold labels are all gone keeps a row, *qualifying* with 0 gold pairs. Each start
    or stop is recorded as a :class:`QualificationChange`.

    What the judge is *told* (``shown_counted``, ``shown_status``) moves only when the
    judge's final judgments (``JudgeProgress.done``) first reach a new multiple of
    :data:`SHOWN_EVERY`: regrading, deleting and judging again never move it, so a judge
    cannot isolate one pair's effect on their standing. A new row starts with what a
    judge without one is told (not counted, qualifying), whatever created it: a judge's
    first gold answer, or a new bar.
    """
    the_bar = bar(collection_id) if the_bar is None else the_bar
    if not the_bar.on:
        return set()
    now = timezone.now()
    fresh = standings(collection_id, the_bar)
    stored = {
        row.judge_id: row for row in JudgeQualification.objects.filter(collection_id=collection_id)
    }
    done = dict(
        JudgeProgress.objects.filter(collection_id=collection_id).values_list("judge_id", "done")
    )
    empty = rule.qualification([], [], needed=the_bar.needed, share=the_bar.share)
    flipped: set[int] = set()
    created, changed, history = [], [], []
    for judge_id in fresh.keys() | stored.keys():
        standing = fresh.get(judge_id, empty)
        row = stored.get(judge_id)
        values = {name: getattr(standing, name) for name in DERIVED}
        block = done.get(judge_id, 0) // SHOWN_EVERY
        was_counted = row.counted if row is not None else False
        if standing.counted != was_counted:
            flipped.add(judge_id)
            history.append(
                QualificationChange(
                    collection_id=collection_id,
                    judge_id=judge_id,
                    counted=standing.counted,
                    status=standing.status,
                    graded=standing.graded,
                    window=standing.window,
                    window_exact=standing.window_exact,
                    needed=the_bar.needed,
                    share=the_bar.share,
                    at=now,
                )
            )
        if row is None:
            created.append(
                JudgeQualification(
                    collection_id=collection_id,
                    judge_id=judge_id,
                    changed_at=now,
                    # what a judge without a row is told, until their next multiple
                    shown_counted=False,
                    shown_status=rule.QUALIFYING,
                    shown_block=block,
                    **values,
                )
            )
            continue
        moved = any(getattr(row, name) != value for name, value in values.items())
        for name, value in values.items():
            setattr(row, name, value)
        if judge_id in flipped:
            row.changed_at = now
        if block > row.shown_block:  # a new multiple of SHOWN_EVERY: tell the judge now
            row.shown_counted, row.shown_status, row.shown_block = (
                standing.counted,
                standing.status,
                block,
            )
            moved = True
        if moved:
            changed.append(row)
    JudgeQualification.objects.bulk_create(created)
    JudgeQualification.objects.bulk_update(changed, [*DERIVED, "changed_at", *SHOWN])
    QualificationChange.objects.bulk_create(history)
    return flipped


def flipped_queries(collection_id: int, judge_ids: set[int]) -> set[int]:
    """Return the queries in which ``judge_ids`` have graded labels (their live grades move)."""
    if not judge_ids:
        return set()
    return set(
        Judgment.objects.filter(
            collection_id=collection_id, judge_id__in=judge_ids, status=Judgment.Status.GRADED
        )
        .values_list("query_id", flat=True)
        .distinct()
    )


def reset(collection_id: int) -> None:
    """Forget every stored standing (the bar changed); :func:`sync` then writes them anew.

    The history (:class:`QualificationChange`) stays.
    """
    JudgeQualification.objects.filter(collection_id=collection_id).delete()
