"""Reads for the judging card: where the judge is in the query, the LLM grade to show."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np
from django.db import connection

from judging.aggregation import llm_only_lower_median
from judging.models import Collection, Judge, Judgment, PoolEntry
from judging.selectors import FINAL_STATUSES, gold_to_serve_params, gold_to_serve_sql


@dataclass(frozen=True)
class QueryProgress:
    """The judge's place within one query: ``position`` of ``total`` pairs."""

    position: int
    total: int


def query_progress(
    *, judge: Judge, entry: PoolEntry, is_final: bool, gold: bool = False
) -> QueryProgress:
    """Return which pair of its query ``entry`` is for ``judge`` ("3 of 12 for this query").

    ``total`` counts the pairs of the query the judge has finally judged plus those still
    open to them (``PoolEntry.is_open``, kept with the progress counters); ``position`` is
    the number already judged plus one for the card shown (unless the shown pair is itself
    already judged, as when going back). With ``gold`` (the collection mixes gold pairs
    in), the gold pairs of the query that the judge is still to be served count as open to
    them too, as in :func:`judging.selectors.judge_progress`: the total stays the same
    whether the card shows a gold pair or not. One SQL query (hand-written: see
    ``judging.selectors._fetch_one``).
    """
    final = ", ".join(["%s"] * len(FINAL_STATUSES))
    jd, pe = (connection.ops.quote_name(m._meta.db_table) for m in (Judgment, PoolEntry))
    waiting = gold_to_serve_sql(query=True) if gold else "0"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT COUNT(*) FROM {jd} j WHERE j.judge_id = %s AND j.query_id = %s"
            f" AND j.status IN ({final})) AS done,"
            f" (SELECT COUNT(*) FROM {pe} pe WHERE pe.query_id = %s AND pe.is_open"
            f" AND NOT EXISTS (SELECT 1 FROM {jd} j WHERE j.judge_id = %s"
            " AND j.query_id = pe.query_id AND j.document_id = pe.document_id"
            f" AND j.status IN ({final}))) AS remaining, {waiting} AS waiting",
            [
                judge.pk,
                entry.query_id,
                *FINAL_STATUSES,
                entry.query_id,
                judge.pk,
                *FINAL_STATUSES,
                *(
                    gold_to_serve_params(
                        collection_id=entry.collection_id,
                        judge_id=judge.pk,
                        query_id=entry.query_id,
                    )
                    if gold
                    else []
                ),
            ],
        )
        done, remaining, waiting_count = cursor.fetchone()
    total = done + remaining + waiting_count
    position = done if is_final else done + 1
    return QueryProgress(position=max(1, min(position, total)), total=max(total, 1))


@dataclass(frozen=True)
class LlmHint:
    """The LLM judges' grade of a pair as the card shows it (lower median of their grades)."""

    grade: int
    name: str
    judges: int


def llm_hint_due(*, collection: Collection, judge: Judge, entry: PoolEntry) -> bool:
    """Return whether the collection's rule shows ``judge`` an LLM grade of ``entry``.

    ``hidden``: never; ``shown``: always; ``half``: on a fixed half of the pairs, drawn
    per judge and pair from a hash (stable across requests and processes), so one judge
    grades some pairs assisted and some blind and anchoring can be measured.
    """
    if collection.llm_hint == "shown":
        return True
    if collection.llm_hint != "half":
        return False
    key = f"{collection.pk}:{judge.pk}:{entry.query_id}:{entry.document_id}".encode()
    return hashlib.sha256(key).digest()[0] % 2 == 0


def llm_hint(*, collection: Collection, judge: Judge, entry: PoolEntry) -> LlmHint | None:
    """Return the LLM grade the card shows ``judge`` for ``entry``, or None (see above).

    None too when no LLM judge graded the pair. Judges never see other humans' grades.
    """
    if judge.kind != Judge.Kind.HUMAN or not llm_hint_due(
        collection=collection, judge=judge, entry=entry
    ):
        return None
    grades = np.fromiter(
        Judgment.objects.filter(
            query_id=entry.query_id,
            document_id=entry.document_id,
            judge__kind=Judge.Kind.LLM,
            status=Judgment.Status.GRADED,
        ).values_list("grade", flat=True),
        dtype=np.int64,
    )
    if not grades.size:
        return None
    _, (grade,) = llm_only_lower_median(
        np.zeros(grades.size, np.int64), grades, np.zeros(grades.size, bool)
    )
    grade = int(grade)
    return LlmHint(grade=grade, name=dict(collection.grade_scale)[grade], judges=grades.size)
