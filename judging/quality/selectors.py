"""Read the labels a collection's judges gave and compute their attention signals."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from judging.models import Collection, Judge, Judgment
from judging.quality import attention as pure

__all__ = ["JudgeAttentionRow", "judge_attention"]

_STATUS_CODE = {
    Judgment.Status.GRADED: pure.GRADED,
    Judgment.Status.CANNOT_JUDGE: pure.CANNOT_JUDGE,
    Judgment.Status.LATER: pure.LATER,
}


@dataclass(frozen=True)
class JudgeAttentionRow:
    """One judge of the collection with its attention signals."""

    judge_id: int
    name: str
    kind: str
    signals: pure.JudgeAttention

    @property
    def time_compared(self) -> bool:
        """Return whether the judge's time was compared with the others' range."""
        return not math.isnan(self.signals.others_low_seconds)

    @property
    def status_compared(self) -> bool:
        """Return whether other judges' labels exist to compare the shares with."""
        return not math.isnan(self.signals.others_cannot_judge_share)


def judge_attention(*, collection: Collection) -> list[JudgeAttentionRow]:
    """Return every judge with labels in ``collection`` and its signals, flagged first.

    Two SQL queries (the labels in each judge's order; the judges' names). Human and LLM
    judges are compared with every other judge of the collection; LLM labels carry no
    time, so the seconds compare human judges only.
    """
    rows = list(
        Judgment.objects.filter(collection=collection)
        .order_by("judge_id", "created_at", "id")
        .values_list("judge_id", "status", "grade", "seconds")
    )
    judge_ids = sorted({row[0] for row in rows})
    index = {judge_id: i for i, judge_id in enumerate(judge_ids)}
    n = len(rows)
    judge = np.fromiter((index[r[0]] for r in rows), dtype=np.int64, count=n)
    status = np.fromiter((_STATUS_CODE[r[1]] for r in rows), dtype=np.int64, count=n)
    grade = np.fromiter((np.nan if r[2] is None else r[2] for r in rows), np.float64, count=n)
    seconds = np.fromiter((np.nan if r[3] is None else r[3] for r in rows), np.float64, count=n)
    signals = pure.attention(judge, status, grade, seconds)
    judges = Judge.objects.in_bulk(judge_ids)
    result = [
        JudgeAttentionRow(
            judge_id=judge_id,
            name=judges[judge_id].name,
            kind=judges[judge_id].kind,
            signals=signals[index[judge_id]],
        )
        for judge_id in judge_ids
        if judge_id in judges
    ]
    result.sort(key=lambda r: (not r.signals.flags, r.kind, r.name.lower(), r.judge_id))
    return result
