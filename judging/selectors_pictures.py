"""Data for the judging pictures: agreement heatmap, grade mix, confusion, progress."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from django.db.models import Count
from django.db.models.functions import TruncDate
from django.utils.safestring import SafeString, mark_safe

from judging import charts
from judging.agreement.selectors import AgreementReport, JudgeRef
from judging.chart_text import for_screens
from judging.models import Collection, Judge, Judgment
from judging.selectors import FINAL_STATUSES


@dataclass(frozen=True)
class AgreementPictures:
    """The agreement page's pictures and the two judges of the confusion matrix."""

    heatmap: SafeString | None
    grade_mix: SafeString | None
    confusion: SafeString | None
    judges: list[JudgeRef]
    a: JudgeRef | None
    b: JudgeRef | None
    grade_legend: SafeString | None = None  # HTML beside grade_mix: it wraps on a phone


def kappa_matrix(report: AgreementReport) -> tuple[list[JudgeRef], list[list[float]]]:
    """Return the judges and their pairwise quadratic-weighted κ (1 on the diagonal)."""
    judges = [s.judge for s in report.judges]
    index = {j.judge_id: i for i, j in enumerate(judges)}
    matrix = [[math.nan] * len(judges) for _ in judges]
    for i in range(len(judges)):
        matrix[i][i] = 1.0
    for pair in report.pairwise:
        if (
            pair.a.judge_id in index
            and pair.b.judge_id in index
            and pair.cohen_kappa_quadratic.defined
        ):
            i, j = index[pair.a.judge_id], index[pair.b.judge_id]
            matrix[i][j] = matrix[j][i] = float(pair.cohen_kappa_quadratic.value)
    return judges, matrix


def confusion_counts(*, collection: Collection, a_id: int, b_id: int) -> list[list[int]]:
    """Return counts[i][j] of pairs judge ``a_id`` graded i and judge ``b_id`` graded j."""
    grades: dict[int, dict[tuple[int, int], int]] = {a_id: {}, b_id: {}}
    for judge_id, query_id, document_id, grade in Judgment.objects.filter(
        collection=collection, judge_id__in=[a_id, b_id], status=Judgment.Status.GRADED
    ).values_list("judge_id", "query_id", "document_id", "grade"):
        grades[judge_id][(query_id, document_id)] = grade
    counts = [[0] * 5 for _ in range(5)]
    for pair, grade_a in grades[a_id].items():
        grade_b = grades[b_id].get(pair)
        if grade_b is not None and grade_a is not None:
            counts[grade_a][grade_b] += 1
    return counts


def _pick(judges: list[JudgeRef], raw: str | None) -> JudgeRef | None:
    for judge in judges:
        if raw is not None and str(judge.judge_id) == raw:
            return judge
    return None


def agreement_pictures(
    *,
    collection: Collection,
    report: AgreementReport,
    a: str | None,
    b: str | None,
    with_confusion: bool = True,
) -> AgreementPictures:
    """Return the agreement pictures; ``a``/``b`` pick the confusion matrix's judges.

    Without ``with_confusion`` the confusion matrix (one more query) is not drawn.
    """
    judges, matrix = kappa_matrix(report)
    heatmap = mix = legend = confusion = None
    if len(judges) >= 2:
        heatmap = mark_safe(  # charts escape every text
            charts.agreement_heatmap(
                [j.name for j in judges],
                matrix,
                title="Quadratic-weighted Cohen's κ, judge × judge",
            )
        )
    if judges:
        legend = mark_safe(charts.grade_legend(collection.grade_names))
        mix = mark_safe(
            for_screens(
                lambda width: charts.grade_mix(
                    [(s.judge.name, s.distribution) for s in report.judges],
                    collection.grade_names,
                    title="Grade distribution per judge",
                    width=width,
                ),
                wide=476,
                narrow=340,
            )
        )
    first = report.pairwise[0] if report.pairwise else None
    judge_a = _pick(judges, a) or (first.a if first else None)
    judge_b = _pick(judges, b) or (first.b if first else None)
    if with_confusion and judge_a is not None and judge_b is not None and judge_a != judge_b:
        counts = confusion_counts(
            collection=collection, a_id=judge_a.judge_id, b_id=judge_b.judge_id
        )
        confusion = mark_safe(
            charts.confusion_matrix(
                judge_a.name,
                judge_b.name,
                counts,
                title=f"Grades of {judge_a.name} (rows) against {judge_b.name} (columns)",
            )
        )
    return AgreementPictures(heatmap, mix, confusion, judges, judge_a, judge_b, legend)


def progress_over_time(*, collection: Collection) -> list[tuple[str, list[tuple[date, int]]]]:
    """Return, per judge, the cumulative number of pairs judged by the end of each day."""
    rows = (
        Judgment.objects.filter(collection=collection, status__in=FINAL_STATUSES)
        .annotate(day=TruncDate("created_at"))
        .order_by()
        .values("judge_id", "day")
        .annotate(n=Count("pk"))
        .order_by("judge_id", "day")
    )
    names = dict(
        Judge.objects.filter(judgments__collection=collection).values_list("pk", "name").distinct()
    )
    series: dict[int, list[tuple[date, int]]] = {}
    for row in rows:
        points = series.setdefault(row["judge_id"], [])
        total = (points[-1][1] if points else 0) + row["n"]
        points.append((row["day"], total))
    return sorted(
        ((names.get(judge_id, f"Judge {judge_id}"), points) for judge_id, points in series.items()),
        key=lambda item: item[0],
    )


def progress_chart(*, collection: Collection) -> tuple[SafeString | None, list]:
    """Return the judging-progress picture (None without judgments) and its data."""
    series = progress_over_time(collection=collection)
    if not series:
        return None, series
    return mark_safe(
        for_screens(
            lambda width: charts.progress_lines(
                series, title="Pairs judged over time, per judge", width=width
            ),
            wide=440,
            narrow=340,
        )
    ), series
