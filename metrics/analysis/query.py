"""One query of one run, explained: its top k with live grades, NDCG terms and the ideal.

Read-only; four SQL queries whatever k is (the run's ranking row, the query's live grades,
the documents shown, the pool entries among them).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from judging.models import Document, LiveGrade, PoolEntry, Query
from metrics.engine import parse_measure
from metrics.engine.explain import explain_ndcg
from metrics.live import store
from metrics.live.scoring import MeasureLabel
from metrics.models import Run, RunQuery
from metrics.selectors import Viewer

#: Cut-off used when the chosen NDCG measure has none (the whole ranking would be long).
DEFAULT_CUTOFF = 10


@dataclass(frozen=True)
class RankedDocument:
    """One document of a ranked list: where, which, its live grade and its NDCG term."""

    rank: int
    docno: str
    title: str
    grade: float | None
    gain: float | None
    discount: float
    contribution: float | None
    pooled: bool
    run_rank: int | None = None


@dataclass(frozen=True)
class QueryRanking:
    """A run's ranked list for one query next to the ideal ranking, under one NDCG flavour."""

    run: Run
    query: Query
    measure: MeasureLabel
    cutoff: int
    retrieved: int
    ranked: list[RankedDocument]
    ideal: list[RankedDocument]
    dcg: float | None
    ideal_dcg: float | None
    ndcg: float | None
    stored: float | None
    stored_version: int | None
    pool_depth: int
    judged_in_top: int | None
    grades_shown: bool = True
    scores_shown: bool = True


def _none(value: float) -> float | None:
    return None if math.isnan(value) else float(value)


def run_query_ranking(*, run: Run, query: Query, label: MeasureLabel, who: Viewer) -> QueryRanking:
    """Return ``run``'s ranking of ``query`` explained under the NDCG measure ``label``.

    Unless ``who`` may see grades (coordinators; teams once the judgment list is
    published), nothing derived from a grade is returned: no grade, gain, contribution,
    DCG or ideal ranking, only the scores; and not even those (nor how many of the top
    documents are judged) unless ``who``'s score policy shows per-query values
    (:mod:`metrics.visibility.selectors`). ``pooled`` marks documents in the run's top
    ``pool_depth`` that are in the judging pool (the pairs this run's submission put in
    front of judges, unless already pooled).
    """
    measure = parse_measure(label.canonical)[0]
    row = RunQuery.objects.filter(run=run, query=query).only("ranking", "retrieved").first()
    ranking = row.document_ids if row is not None else np.empty(0, dtype=np.int64)
    grades = dict(
        LiveGrade.objects.filter(query=query).values_list("document_id", "grade").order_by()
    )
    judged_ids = list(grades)
    ranked_labels = np.array([grades.get(int(d), np.nan) for d in ranking], dtype=np.float64)
    explained = explain_ndcg(measure, ranked_labels, np.array([grades[d] for d in judged_ids]))
    cutoff = (
        explained.cutoff if measure.cutoff is not None else min(explained.cutoff, DEFAULT_CUTOFF)
    )
    top_terms = explained.ranked[:cutoff]
    top_ids = [int(ranking[t.index]) for t in top_terms]
    ideal_ids = [judged_ids[t.index] if t.index >= 0 else None for t in explained.ideal[:cutoff]]
    wanted = set(top_ids) | {d for d in ideal_ids if d is not None}
    documents = {
        d.pk: d for d in Document.objects.filter(pk__in=wanted).only("external_id", "title")
    }
    depth = run.collection.pool_depth
    pooled = set(
        PoolEntry.objects.filter(
            query=query, document_id__in=[int(d) for d in ranking[:depth]]
        ).values_list("document_id", flat=True)
    )
    run_rank = {int(d): i + 1 for i, d in enumerate(ranking)}

    def entry(term, document_id: int | None, *, rank_in_run: int | None) -> RankedDocument:
        doc = documents.get(document_id) if document_id is not None else None
        grade = grades.get(document_id) if document_id is not None else None
        return RankedDocument(
            rank=term.rank,
            docno=doc.external_id if doc else "(any document of the top grade)",
            title=doc.title if doc else "",
            grade=grade if document_id is not None else float(term.label),
            gain=term.gain,
            discount=term.discount,
            contribution=term.contribution,
            pooled=document_id in pooled and run_rank.get(document_id, depth + 1) <= depth,
            run_rank=rank_in_run,
        )

    stored, stored_version = None, None
    column = store.columns_read(run.collection_id, [query.pk]).get(query.pk)
    if column is not None and column.listed([run.pk])[0]:
        value = float(column.lookup([run.pk], [label.canonical])[0, 0])
        stored, stored_version = (None if value != value else value), column.version
    ranked = [entry(t, d, rank_in_run=t.index + 1) for t, d in zip(top_terms, top_ids, strict=True)]
    if not who.sees_grades or not who.policy.shows_per_query:
        scored = who.policy.shows_per_query  # else even this query's score is a per-query figure
        return QueryRanking(
            run=run,
            query=query,
            measure=label,
            cutoff=cutoff,
            retrieved=row.retrieved if row is not None else 0,
            ranked=[
                dataclasses.replace(r, grade=None, gain=None, contribution=None) for r in ranked
            ],
            ideal=[],
            dcg=None,
            ideal_dcg=None,
            ndcg=_none(explained.ndcg) if scored else None,
            stored=stored if scored else None,
            stored_version=stored_version if scored else None,
            pool_depth=depth,
            judged_in_top=sum(1 for d in top_ids if d in grades) if scored else None,
            grades_shown=False,
            scores_shown=scored,
        )
    ideal = [
        entry(t, d, rank_in_run=run_rank.get(d) if d is not None else None)
        for t, d in zip(explained.ideal[:cutoff], ideal_ids, strict=True)
    ]
    return QueryRanking(
        run=run,
        query=query,
        measure=label,
        cutoff=cutoff,
        retrieved=row.retrieved if row is not None else 0,
        ranked=ranked,
        ideal=ideal,
        dcg=explained.dcg,
        ideal_dcg=explained.ideal_dcg,
        ndcg=_none(explained.ndcg),
        stored=stored,
        stored_version=stored_version,
        pool_depth=depth,
        judged_in_top=sum(1 for d in top_ids if d in grades),
    )
