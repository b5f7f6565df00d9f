"""Reads shared by the metrics selectors and the analyses they call (no import of them).

:mod:`metrics.selectors` re-exports these names; modules that :mod:`metrics.selectors`
itself calls (the pooling selectors, the prediction-powered means) import them from here,
so no import circle forms.
"""

from __future__ import annotations

import hashlib

from django.db.models import BinaryField
from django.db.models.functions import Substr

from judging.models import Collection, LiveGrade
from metrics import engine
from metrics.live import scoring
from metrics.models import RANKING_DTYPE, Run, RunQuery

__all__ = ["cache_key_for", "llm_filled", "stored_rankings"]


def cache_key_for(kind: str, *parts: object) -> str:
    """Return a cache key ``metrics:<kind>:<sha256 of the parts>`` for derived figures."""
    digest = hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()
    return f"metrics:{kind}:{digest}"


def llm_filled(*, collection: Collection) -> bool:
    """Return whether some live grade of the collection comes from LLM judges alone."""
    return LiveGrade.objects.filter(
        collection=collection, human_count=0, adjudicated=False
    ).exists()


def stored_rankings(
    *, runs: list[Run], query_ids: list[int], measures: list[str]
) -> list[scoring.StoredRanking]:
    """Return every run's stored ranking of every query (empty where it has none).

    Only the ranks the measures read are fetched (the bytes of the first ``depth``
    documents); a run without a ranking of a query gets an empty one, which live scoring
    scores as a query the run left out. One SQL query.
    """
    depth = engine.required_depth(scoring.resolved(measures))
    stored = RunQuery.objects.filter(run__in=runs, query_id__in=query_ids)
    if depth is not None:
        width = depth * RANKING_DTYPE.itemsize
        stored = stored.annotate(top=Substr("ranking", 1, width, output_field=BinaryField()))
        fields = ("run_id", "query_id", "top", "retrieved")
    else:
        fields = ("run_id", "query_id", "ranking", "retrieved")
    rows = [
        scoring.StoredRanking(run_id, query_id, bytes(ranking or b""), retrieved)
        for run_id, query_id, ranking, retrieved in stored.values_list(*fields)
    ]
    present = {(r.run_id, r.query_id) for r in rows}
    rows += [
        scoring.StoredRanking(run.pk, q, b"", 0)
        for run in runs
        for q in query_ids
        if (run.pk, q) not in present
    ]
    return rows
