"""Reads for the judging card's feedback: where the judge is within the current query."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from judging.models import Judge, Judgment, PoolEntry
from judging.selectors import FINAL_STATUSES


@dataclass(frozen=True)
class QueryProgress:
    """The judge's place within one query: ``position`` of ``total`` pairs."""

    position: int
    total: int


def query_progress(*, judge: Judge, entry: PoolEntry, is_final: bool) -> QueryProgress:
    """Return which pair of its query ``entry`` is for ``judge`` ("3 of 12 for this query").

    ``total`` counts the pairs of the query the judge has finally judged plus those still
    open to them (``PoolEntry.is_open``, kept with the progress counters); ``position`` is
    the number already judged plus one for the card shown (unless the shown pair is itself
    already judged, as when going back). One SQL query (hand-written: see
    ``judging.selectors._fetch_one``).
    """
    final = ", ".join(["%s"] * len(FINAL_STATUSES))
    jd, pe = (connection.ops.quote_name(m._meta.db_table) for m in (Judgment, PoolEntry))
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT (SELECT COUNT(*) FROM {jd} j WHERE j.judge_id = %s AND j.query_id = %s"
            f" AND j.status IN ({final})) AS done,"
            f" (SELECT COUNT(*) FROM {pe} pe WHERE pe.query_id = %s AND pe.is_open"
            f" AND NOT EXISTS (SELECT 1 FROM {jd} j WHERE j.judge_id = %s"
            " AND j.query_id = pe.query_id AND j.document_id = pe.document_id"
            f" AND j.status IN ({final}))) AS remaining",
            [judge.pk, entry.query_id, *FINAL_STATUSES, entry.query_id, judge.pk, *FINAL_STATUSES],
        )
        done, remaining = cursor.fetchone()
    total = done + remaining
    position = done if is_final else done + 1
    return QueryProgress(position=max(1, min(position, total)), total=max(total, 1))
