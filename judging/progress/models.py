"""Maintained counters behind the judges' progress bars (O(1) reads on every card).

A judge's progress in a collection is ``done`` (their final judgments — graded or
"cannot judge" — in the collection) and ``remaining`` (open pool pairs they have not
finally judged). A pool pair is *open* while it needs grades: its document has content
and fewer than ``judges_per_pair`` judges graded it, or its judges disagree and it may
get one more judge (see :func:`judging.selectors._open_pairs`, the definition). So

    remaining = open pairs of the collection − the judge's final judgments on open pairs.

``PoolEntry.is_open`` records each pair's state; :class:`PoolProgress` counts the open
pairs of a collection and :class:`JudgeProgress` a judge's final judgments (all, and
those on open pairs). The judgment, pool, content and settings services keep all three
in the same transaction, under the collection's write lock (:mod:`judging.progress.counters`).
A missing row means zeros. ``manage.py rebuild_progress`` recomputes them.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class PoolProgress(models.Model):
    """How many pool pairs of a collection are open (``PoolEntry.is_open``)."""

    collection = models.OneToOneField(
        "judging.Collection",
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="pool_progress",
    )
    open_pairs = models.PositiveIntegerField(
        default=0, help_text="Pool pairs still needing grades (kept by the services)."
    )

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(open_pairs__gte=0), name="pool_progress_open_nonnegative"
            ),
        ]

    def __str__(self) -> str:
        """Return ``collection: n open``."""
        return f"{self.collection_id}: {self.open_pairs} open"


class JudgeProgress(models.Model):
    """One judge's final judgments in one collection: all of them, and those on open pairs."""

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="judge_progress"
    )
    judge = models.ForeignKey("judging.Judge", on_delete=models.CASCADE, related_name="progress")
    done = models.PositiveIntegerField(
        default=0, help_text="The judge's graded or cannot-judge judgments in the collection."
    )
    done_open = models.PositiveIntegerField(
        default=0, help_text="Of those, the ones on open pool pairs (PoolEntry.is_open)."
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["collection", "judge"], name="judge_progress_unique"),
            models.CheckConstraint(
                condition=Q(done__gte=0) & Q(done_open__gte=0) & Q(done_open__lte=models.F("done")),
                name="judge_progress_counts",
            ),
        ]

    def __str__(self) -> str:
        """Return ``judge @ collection: done (open)``."""
        return f"{self.judge_id} @ {self.collection_id}: {self.done} ({self.done_open} open)"
