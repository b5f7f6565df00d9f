"""Read side of "agreement you can act on": per-judge figures, per-query agreement, alerts.

Three SQL queries whatever the collection's size (judgments, adjudications in force,
queries); the numbers come from the pure functions of :mod:`judging.agreement.judges`
and :func:`judging.aggregation.dawid_skene` (each judge's estimated reliability).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import median

import numpy as np

from judging.aggregation import dawid_skene
from judging.agreement.judges import group_agreement, judge_figures
from judging.agreement.selectors import JudgeRef, _natural_key
from judging.models import Adjudication, Collection, Judgment, Query

#: A judge needs this many pairs compared with others before an alert is raised.
MIN_COMPARED_FOR_ALERT = 5

GRADED = Judgment.Status.GRADED
CANNOT = Judgment.Status.CANNOT_JUDGE


def _number(value: float) -> float | None:
    """Return ``value`` as a float, None for NaN."""
    value = float(value)
    return None if math.isnan(value) else value


@dataclass(frozen=True)
class JudgeFigureRow:
    """One judge's figures (None: nothing to compare)."""

    judge: JudgeRef
    labels: int
    graded: int
    cannot_judge_share: float | None
    median_seconds: float | None
    compared: int
    agreement: float | None
    bias: float | None
    adjudicated: int
    agreement_adjudicated: float | None
    bias_adjudicated: float | None
    reliability: float | None
    alert: bool


@dataclass(frozen=True)
class QueryAgreementRow:
    """Agreement among the judges of one query's pairs."""

    external_id: str
    text: str
    pairs: int
    agreement: float | None


@dataclass(frozen=True)
class ActionableAgreement:
    """Per-judge figures (humans first), per-query agreement (worst first) and alerts."""

    threshold: float
    judges: tuple[JudgeFigureRow, ...]
    queries: tuple[QueryAgreementRow, ...]

    @property
    def alerts(self) -> tuple[JudgeFigureRow, ...]:
        """Return the judges whose agreement with the others is below the threshold."""
        return tuple(row for row in self.judges if row.alert)


def actionable_agreement(
    *, collection: Collection, with_reliability: bool = True
) -> ActionableAgreement:
    """Return who and what to act on in ``collection`` (three SQL queries).

    ``with_reliability=False`` skips fitting Dawid–Skene (reliability is then None), for
    pages that only need the alerts.
    """
    rows = list(
        Judgment.objects.filter(collection=collection, status__in=(GRADED, CANNOT))
        .order_by()
        .values_list(
            "query_id", "document_id", "judge_id", "judge__name", "judge__kind", "grade", "seconds"
        )
    )
    adjudicated = {
        (q, d): g
        for q, d, g in Adjudication.objects.filter(
            collection=collection, revoked_at__isnull=True
        ).values_list("query_id", "document_id", "grade")
    }
    query_rows = list(
        Query.objects.filter(collection=collection).values_list("pk", "external_id", "text")
    )
    judges: dict[int, JudgeRef] = {}
    labels: dict[int, int] = {}
    cannot: dict[int, int] = {}
    seconds: dict[int, list[float]] = {}
    graded = []
    for q, d, judge_id, name, kind, grade, secs in rows:
        judges.setdefault(judge_id, JudgeRef(judge_id, name, kind))
        labels[judge_id] = labels.get(judge_id, 0) + 1
        if secs is not None:
            seconds.setdefault(judge_id, []).append(secs)
        if grade is None:
            cannot[judge_id] = cannot.get(judge_id, 0) + 1
        else:
            graded.append((q, d, judge_id, grade))
    order = sorted(judges.values(), key=lambda j: (j.kind != "human", j.name.lower(), j.judge_id))
    column = {j.judge_id: i for i, j in enumerate(order)}
    items: dict[tuple[int, int], int] = {}
    for q, d, _j, _g in graded:
        items.setdefault((q, d), len(items))
    matrix = np.full((len(items), len(order)), np.nan)
    for q, d, judge_id, grade in graded:
        matrix[items[(q, d)], column[judge_id]] = grade
    truth = np.array([adjudicated.get(key, np.nan) for key in items], dtype=np.float64)
    figures = judge_figures(matrix.reshape(len(items), len(order)), truth)
    reliability: dict[int, float] = {}
    if graded and with_reliability:
        model = dawid_skene(
            [items[(q, d)] for q, d, _j, _g in graded],
            [g for *_, g in graded],
            [j for _q, _d, j, _g in graded],
        )
        reliability = dict(zip(model.judge_ids.tolist(), model.accuracy.tolist(), strict=True))
    threshold = collection.agreement_alert_threshold
    judge_rows = []
    for i, judge in enumerate(order):
        n = labels.get(judge.judge_id, 0)
        agreement = _number(figures.agreement[i]) if order else None
        judge_rows.append(
            JudgeFigureRow(
                judge=judge,
                labels=n,
                graded=n - cannot.get(judge.judge_id, 0),
                cannot_judge_share=cannot.get(judge.judge_id, 0) / n if n else None,
                median_seconds=median(seconds[judge.judge_id])
                if judge.judge_id in seconds
                else None,
                compared=int(figures.compared[i]),
                agreement=agreement,
                bias=_number(figures.bias[i]),
                adjudicated=int(figures.adjudicated[i]),
                agreement_adjudicated=_number(figures.agreement_adjudicated[i]),
                bias_adjudicated=_number(figures.bias_adjudicated[i]),
                reliability=reliability.get(judge.judge_id),
                alert=agreement is not None
                and figures.compared[i] >= MIN_COMPARED_FOR_ALERT
                and agreement < threshold,
            )
        )
    query_index = {pk: i for i, (pk, _e, _t) in enumerate(query_rows)}
    groups = np.array([query_index[q] for q, _d in items], dtype=np.int64)
    per_query, pairs = group_agreement(
        matrix.reshape(len(items), len(order)), groups, len(query_rows)
    )
    queries = [
        QueryAgreementRow(external_id, text, int(pairs[i]), _number(per_query[i]))
        for i, (_pk, external_id, text) in enumerate(query_rows)
        if pairs[i] > 0
    ]
    queries.sort(key=lambda r: (r.agreement, -r.pairs, _natural_key(r.external_id)))
    return ActionableAgreement(
        threshold=threshold, judges=tuple(judge_rows), queries=tuple(queries)
    )
