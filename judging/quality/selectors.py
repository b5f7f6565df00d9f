"""Read the labels a collection's judges gave and compute their attention signals."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet, Subquery

from judging import live_grades
from judging.agreement.coefficients import cohen_kappa
from judging.models import Collection, Judge, Judgment, LiveGrade, PoolEntry
from judging.quality import attention as pure
from judging.quality import gold as gold_stats
from judging.quality import qualification
from judging.quality.models import (
    CanaryCheck,
    GoldPair,
    JudgeQualification,
    QualificationChange,
    VersionCheck,
    VersionCheckResult,
)

__all__ = [
    "BarEffect",
    "CanaryRates",
    "JudgeAttentionRow",
    "JudgeGoldRow",
    "bar_effect",
    "canary_rates",
    "counted_as_told",
    "counted_judges",
    "gold_is_pooled",
    "gold_pairs",
    "gold_report",
    "gold_waiting_count",
    "judge_attention",
    "open_checks",
    "qualification_changes",
    "standing_told",
    "version_report",
]

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
    time, so the seconds compare human judges only. Straight-lining compares each judge's
    grades with every other judge's grades of the same queries.
    """
    rows = list(
        Judgment.objects.filter(collection=collection)
        .order_by("judge_id", "created_at", "id")
        .values_list("judge_id", "status", "grade", "seconds", "query_id")
    )
    judge_ids = sorted({row[0] for row in rows})
    index = {judge_id: i for i, judge_id in enumerate(judge_ids)}
    query_index = {q: i for i, q in enumerate(sorted({row[4] for row in rows}))}
    n = len(rows)
    judge = np.fromiter((index[r[0]] for r in rows), dtype=np.int64, count=n)
    status = np.fromiter((_STATUS_CODE[r[1]] for r in rows), dtype=np.int64, count=n)
    grade = np.fromiter((np.nan if r[2] is None else r[2] for r in rows), np.float64, count=n)
    seconds = np.fromiter((np.nan if r[3] is None else r[3] for r in rows), np.float64, count=n)
    query = np.fromiter((query_index[r[4]] for r in rows), dtype=np.int64, count=n)
    signals = pure.attention(judge, status, grade, seconds, query)
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


# --- gold pairs ---------------------------------------------------------------------------

#: Gold pairs each judge's trend covers (its most recent).
GOLD_TREND = 20


@dataclass(frozen=True)
class JudgeGoldRow:
    """One judge's accuracy against the collection's gold pairs, and their qualification.

    Without qualification, ``alert`` is set when the exact share over the judge's last
    gold pairs (the trend) is below the collection's agreement alert threshold, and
    ``standing`` is None. With qualification, ``standing`` is the judge's stored standing
    (``qualifying``, ``qualified`` or ``below``), ``counted`` whether their labels count,
    and ``alert`` is set when the judge is below the bar (the same rule that decides what
    counts, so the alert and the live list never disagree); ``lost_at`` is when a judge
    who had counted stopped counting, while they still do not.
    """

    judge_id: int
    name: str
    kind: str
    accuracy: gold_stats.GoldAccuracy
    alert: bool
    standing: str | None = None
    counted: bool = True
    window: int = 0
    window_exact: int = 0
    lost_at: Any = None

    @property
    def confusion_rows(self) -> list[tuple[int, tuple[int, ...]]]:
        """Return the confusion matrix as (gold grade, counts by the judge's grade)."""
        return list(enumerate(self.accuracy.confusion))


def _pooled() -> Exists:
    return Exists(
        PoolEntry.objects.filter(query_id=OuterRef("query_id"), document_id=OuterRef("document_id"))
    )


def gold_pairs(*, collection: Collection) -> QuerySet[GoldPair]:
    """Return the collection's gold pairs with their query and document ids.

    Each carries ``pooled``: whether it is in the pool yet (a pair marked while not pooled
    waits for the next pairs pooled: :func:`judging.services.gold_waiting`).
    """
    return (
        GoldPair.objects.filter(collection=collection)
        .select_related("query", "document")
        .annotate(pooled=_pooled())
        .order_by("query__external_id", "document__external_id")
    )


def gold_is_pooled(*, gold: GoldPair) -> bool:
    """Return whether the gold pair is in the pool yet (else it waits for the next pairs)."""
    return PoolEntry.objects.filter(query_id=gold.query_id, document_id=gold.document_id).exists()


def gold_waiting_count(*, collection: Collection) -> int:
    """Return how many of the collection's gold pairs wait to enter the pool."""
    return GoldPair.objects.filter(collection=collection).exclude(_pooled()).count()


def qualification_changes(
    *, collection: Collection, judge_id: int | None = None
) -> QuerySet[QualificationChange]:
    """Return when judges started or stopped counting in the live list, newest first."""
    changes = QualificationChange.objects.filter(collection=collection)
    if judge_id is not None:
        changes = changes.filter(judge_id=judge_id)
    return changes.select_related("judge").order_by("-at", "-id")


def counted_judges(*, collection_id: int) -> frozenset[int] | None:
    """Return the judges whose labels count in the live list, or None when everyone's do.

    Everyone's count unless the collection asks for qualification
    (:mod:`judging.quality.qualification`). One or two queries.
    """
    if not qualification.bar(collection_id).on:
        return None
    return frozenset(
        JudgeQualification.objects.filter(collection_id=collection_id, counted=True).values_list(
            "judge_id", flat=True
        )
    )


#: A qualification bar that would leave fewer than this share of the judgment list's
#: lines (or leave out every judge) is set only when confirmed.
KEEP_AT_LEAST = 0.5


@dataclass(frozen=True)
class BarEffect:
    """What a qualification bar would do to the collection's labels and judgment list.

    ``judges`` are the judges with graded labels, ``judges_left_out`` those whose labels
    would not count (``standings`` counts them by standing: ``qualified``,
    ``qualifying``, ``below``, ``not_assessed``); ``labels`` their graded labels and
    ``labels_left_out`` those of the judges left out; ``lines_now`` the judgment list's
    lines now and ``lines_after`` under the bar (the same aggregation, adjudications
    included). ``needs_confirm``: the bar leaves fewer than :data:`KEEP_AT_LEAST` of the
    lines, or leaves out every judge, and is set only when confirmed; ``reason`` says so
    with the counts. ``warnings`` say why (e.g. fewer gold pairs than the bar asks).
    """

    qualification_pairs: int
    qualification_share: float
    gold_pairs: int
    judges: int
    judges_left_out: int
    standings: dict[str, int]
    labels: int
    labels_left_out: int
    lines_now: int
    lines_after: int
    needs_confirm: bool
    reason: str
    warnings: tuple[str, ...]


def bar_effect(*, collection: Collection, pairs: int, share: float) -> BarEffect:
    """Return what the bar of ``pairs`` gold pairs at ``share`` exact would do, writing nothing.

    Every judge's standing under that bar (:func:`judging.quality.qualification.standings`:
    the rule, imported judges not assessed), the graded labels left out, and the lines the
    judgment list would keep (:func:`judging.live_grades.lines_if`). ``pairs`` 0 (off)
    leaves nothing out. A fixed number of SQL queries.
    """
    labels = dict(
        Judgment.objects.filter(collection=collection, status=Judgment.Status.GRADED)
        .order_by()
        .values_list("judge_id")
        .annotate(n=Count("pk"))
        .values_list("judge_id", "n")
    )
    counted: set[int] | None = None
    by_standing: dict[str, int] = {}
    gold_count = GoldPair.objects.filter(collection=collection).count()
    if pairs:
        the_bar = qualification.Bar(needed=pairs, share=float(share))
        imported = qualification.unassessable(collection.pk)
        found = qualification.standings(collection.pk, the_bar, imported=imported)
        counted = set()
        for judge_id in labels:
            standing = found.get(judge_id) or gold_stats.qualification(
                [], [], needed=pairs, share=float(share), assessable=judge_id not in imported
            )
            by_standing[standing.status] = by_standing.get(standing.status, 0) + 1
            if standing.counted:
                counted.add(judge_id)
    else:
        by_standing = {"counted": len(labels)} if labels else {}
    left_out = [j for j in labels if counted is not None and j not in counted]
    labels_left_out = sum(labels[j] for j in left_out)
    lines_now = LiveGrade.objects.filter(collection=collection).count()
    lines_after = (
        lines_now
        if counted is None
        else live_grades.lines_if(
            collection_id=collection.pk,
            policy_name=collection.aggregation_policy,
            judge_ids=counted,
        )
    )
    warnings = []
    if pairs and gold_count < pairs:
        warnings.append(
            f"The collection has {gold_count} gold pair{'s' if gold_count != 1 else ''}: "
            f"no judge can answer {pairs}, so only judges who are not assessed (imported "
            "labels) can count."
        )
    if labels and len(left_out) == len(labels):
        warnings.append("Every judge's labels would be left out.")
    keeps_too_little = lines_now > 0 and lines_after < KEEP_AT_LEAST * lines_now
    needs_confirm = bool(pairs) and (keeps_too_little or bool(labels and not counted))
    reason = ""
    if needs_confirm:
        reason = (
            f"This bar keeps {lines_after} of the judgment list's {lines_now} lines and "
            f"leaves out {len(left_out)} of {len(labels)} judges ({labels_left_out} of "
            f"{sum(labels.values())} labels). A bar that keeps less than half the list, or "
            "no judge, is set only when confirmed (confirm: true)."
        )
    return BarEffect(
        qualification_pairs=pairs,
        qualification_share=float(share),
        gold_pairs=gold_count,
        judges=len(labels),
        judges_left_out=len(left_out),
        standings=by_standing,
        labels=sum(labels.values()),
        labels_left_out=labels_left_out,
        lines_now=lines_now,
        lines_after=lines_after,
        needs_confirm=needs_confirm,
        reason=reason,
        warnings=tuple(warnings),
    )


def counted_as_told(*, collection_id: int) -> frozenset[int] | None:
    """Return the judges told that their labels count, or None when everyone's do.

    What a judge is told of their own standing (``JudgeQualification.shown_counted``,
    kept by :func:`judging.quality.qualification.sync`): their standing as of the last
    time the pairs they judged reached a new multiple of
    :data:`judging.quality.qualification.SHOWN_EVERY`. Coordinators read
    :func:`counted_judges`, the standing in force.
    """
    if not qualification.bar(collection_id).on:
        return None
    return frozenset(
        JudgeQualification.objects.filter(
            collection_id=collection_id, shown_counted=True
        ).values_list("judge_id", flat=True)
    )


def standing_told(*, collection: Collection, judge: Judge) -> str | None:
    """Return the standing ``judge`` is told (None when qualification is off).

    ``qualifying``, ``qualified``, ``below`` or ``not_assessed`` as of the judge's last
    multiple of :data:`judging.quality.qualification.SHOWN_EVERY` judged pairs (see
    :func:`counted_as_told`); ``qualifying`` for a judge without a standing yet.
    """
    if not collection.qualification_pairs:
        return None
    told = (
        JudgeQualification.objects.filter(collection=collection, judge=judge)
        .values_list("shown_status", flat=True)
        .first()
    )
    return told or gold_stats.QUALIFYING


def gold_report(
    *, collection: Collection, last: int = GOLD_TREND, guidelines_version: int | None = None
) -> list[JudgeGoldRow]:
    """Return every judge who graded a gold pair, with its accuracy; alerts first.

    With qualification on, every judge with a label is listed (with their standing),
    those without a gold pair too. With ``guidelines_version``, only labels given under
    that version of the guidelines count in the accuracy (did a clarification help?); the
    standing is always the one in force. A fixed number of SQL queries: the graded labels
    of gold pairs with their gold grade, oldest first per judge (the order the trend
    needs), the judges, and with qualification the standings and their last changes.
    """
    gold = GoldPair.objects.filter(
        collection_id=collection.pk,
        query_id=OuterRef("query_id"),
        document_id=OuterRef("document_id"),
    )
    rows = list(
        Judgment.objects.filter(
            collection=collection,
            status=Judgment.Status.GRADED,
            **({} if guidelines_version is None else {"guidelines_version": guidelines_version}),
        )
        .annotate(gold_grade=Subquery(gold.values("grade")[:1]))
        .filter(gold_grade__isnull=False)
        .order_by("judge_id", "updated_at", "id")
        .values_list("judge_id", "grade", "gold_grade")
    )
    by_judge: dict[int, tuple[list[int], list[int]]] = {}
    for judge_id, grade, gold_grade in rows:
        mine = by_judge.setdefault(judge_id, ([], []))
        mine[0].append(grade)
        mine[1].append(gold_grade)
    the_bar = qualification.Bar(collection.qualification_pairs, collection.qualification_share)
    standings: dict[int, JudgeQualification] = {}
    lost: dict[int, Any] = {}
    if the_bar.on:
        for judge_id in (
            Judgment.objects.filter(collection=collection).values_list("judge_id", flat=True)
        ).distinct():
            by_judge.setdefault(judge_id, ([], []))
        standings = {
            s.judge_id: s for s in JudgeQualification.objects.filter(collection=collection)
        }
        changes = QualificationChange.objects.filter(collection=collection).order_by("at", "id")
        for judge_id, counted, at in changes.values_list("judge_id", "counted", "at"):
            lost[judge_id] = None if counted else at
    judges = Judge.objects.in_bulk(list(by_judge))
    threshold = collection.agreement_alert_threshold
    result = []
    for judge_id, (grades, golds) in by_judge.items():
        if judge_id not in judges:
            continue
        accuracy = gold_stats.gold_accuracy(grades, golds, last=last)
        extra: dict[str, Any] = {"alert": accuracy.last_exact < threshold}
        if the_bar.on:
            standing = standings.get(judge_id)
            extra = {
                "standing": standing.status if standing else gold_stats.QUALIFYING,
                "counted": bool(standing and standing.counted),
                "window": standing.window if standing else 0,
                "window_exact": standing.window_exact if standing else 0,
                "alert": bool(standing and standing.status == gold_stats.UNQUALIFIED),
                "lost_at": None if standing and standing.counted else lost.get(judge_id),
            }
        result.append(
            JudgeGoldRow(
                judge_id=judge_id,
                name=judges[judge_id].name,
                kind=judges[judge_id].kind,
                accuracy=accuracy,
                **extra,
            )
        )
    result.sort(key=lambda r: (not r.alert, r.counted, r.kind, r.name.lower(), r.judge_id))
    return result


# --- canary checks ------------------------------------------------------------------------


@dataclass(frozen=True)
class CanaryRates:
    """Canary failures of one LLM judge version (failure: a grade above 0).

    Rates are over the canaries the judge answered with a grade; ``unreadable`` counts
    the others. None when no canary of the kind was graded.
    """

    judge_id: int
    name: str
    version: str
    checks: int
    last_check_id: int
    stuffing: int
    stuffing_failed: int
    injection: int
    injection_failed: int
    unreadable: int

    @property
    def stuffing_rate(self) -> float | None:
        """Return the share of graded stuffing canaries graded above 0."""
        return self.stuffing_failed / self.stuffing if self.stuffing else None

    @property
    def injection_rate(self) -> float | None:
        """Return the share of graded injection canaries graded above 0."""
        return self.injection_failed / self.injection if self.injection else None


def canary_rates(*, collection: Collection) -> list[CanaryRates]:
    """Return the canary failure rates of every LLM judge version checked in ``collection``.

    Only done checks count (a queued, running or failed check has no results). One SQL
    query; newest checked version first per judge.
    """
    graded = Q(results__grade__isnull=False)
    failed = Q(results__grade__gt=0)
    rows = (
        CanaryCheck.objects.filter(collection=collection, status=CanaryCheck.Status.DONE)
        .values("judge_id", "judge__name", "version")
        .annotate(
            checks=Count("id", distinct=True),
            last_check_id=Max("id"),
            stuffing=Count("results", filter=graded & Q(results__kind="stuffing")),
            stuffing_failed=Count("results", filter=failed & Q(results__kind="stuffing")),
            injection=Count("results", filter=graded & Q(results__kind="injection")),
            injection_failed=Count("results", filter=failed & Q(results__kind="injection")),
            unreadable=Count("results", filter=Q(results__grade__isnull=True)),
        )
        .order_by("judge__name", "judge_id", "-last_check_id")
    )
    return [
        CanaryRates(
            judge_id=row["judge_id"],
            name=row["judge__name"],
            version=row["version"],
            checks=row["checks"],
            last_check_id=row["last_check_id"],
            stuffing=row["stuffing"],
            stuffing_failed=row["stuffing_failed"],
            injection=row["injection"],
            injection_failed=row["injection_failed"],
            unreadable=row["unreadable"],
        )
        for row in rows
    ]


# --- LLM judge versions -------------------------------------------------------------------

#: A version whose κ against humans is this much below the previous version's is flagged.
KAPPA_DROP = 0.1


@dataclass(frozen=True)
class VersionRow:
    """One version check of an LLM judge, beside the previous version's latest check."""

    check_id: int
    version: str
    created_at: Any
    pairs: int
    unreadable: int
    vs_humans: gold_stats.GoldAccuracy
    vs_gold: gold_stats.GoldAccuracy
    kappa_previous: float | None
    previous_version: str | None
    mean_tokens: float | None
    median_latency_ms: float | None
    flagged: bool


def version_report(*, collection: Collection, judge: Judge) -> list[VersionRow]:
    """Return the judge's version checks, newest first, each compared with the version before.

    "The version before" is the latest check of another version made before this one.
    Flagged: κ against humans more than :data:`KAPPA_DROP` below that check's. Only done
    checks count. Two SQL queries.
    """
    checks = list(
        VersionCheck.objects.filter(
            collection=collection, judge=judge, status=VersionCheck.Status.DONE
        ).order_by("created_at", "id")
    )
    results: dict[int, list[Any]] = {c.pk: [] for c in checks}
    for row in VersionCheckResult.objects.filter(version_check__in=checks).values_list(
        "version_check_id", "query_id", "document_id", "grade", "human_grade", "gold_grade",
        "prompt_tokens", "completion_tokens", "latency_ms",
    ):  # fmt: skip
        results[row[0]].append(row[1:])
    rows: list[VersionRow] = []
    latest: dict[str, tuple[VersionCheck, VersionRow]] = {}
    for check in checks:
        mine = results[check.pk]
        graded = [r for r in mine if r[2] is not None]
        humans = [(r[2], r[3]) for r in graded if r[3] is not None]
        golds = [(r[2], r[4]) for r in graded if r[4] is not None]
        vs_humans = gold_stats.gold_accuracy([g for g, _ in humans], [h for _, h in humans])
        vs_gold = gold_stats.gold_accuracy([g for g, _ in golds], [h for _, h in golds])
        before = [item for v, item in latest.items() if v != check.version]
        previous = max(before, key=lambda item: (item[0].created_at, item[0].pk), default=None)
        kappa_previous = None
        flagged = False
        if previous is not None:
            theirs = {(r[0], r[1]): r[2] for r in results[previous[0].pk] if r[2] is not None}
            shared = [(r[2], theirs[(r[0], r[1])]) for r in graded if (r[0], r[1]) in theirs]
            if shared:
                value = (
                    cohen_kappa([a for a, _ in shared], [b for _, b in shared], weights="quadratic")
                    if len({a for a, _ in shared} | {b for _, b in shared}) > 1
                    else math.nan
                )
                kappa_previous = None if math.isnan(value) else float(value)
            mine_k, theirs_k = vs_humans.kappa_quadratic, previous[1].vs_humans.kappa_quadratic
            flagged = (
                not math.isnan(mine_k)
                and not math.isnan(theirs_k)
                and (mine_k < theirs_k - KAPPA_DROP)
            )
        tokens = [r[5] + r[6] for r in graded if r[5] is not None and r[6] is not None]
        latency = [r[7] for r in graded if r[7] is not None]
        row = VersionRow(
            check_id=check.pk,
            version=check.version,
            created_at=check.created_at,
            pairs=len(mine),
            unreadable=len(mine) - len(graded),
            vs_humans=vs_humans,
            vs_gold=vs_gold,
            kappa_previous=kappa_previous,
            previous_version=previous[0].version if previous else None,
            mean_tokens=float(np.mean(tokens)) if tokens else None,
            median_latency_ms=float(np.median(latency)) if latency else None,
            flagged=flagged,
        )
        rows.append(row)
        latest[check.version] = (check, row)
    return rows[::-1]


def version_warnings(*, collection: Collection, judges: list[Judge]) -> dict[int, str]:
    """Return, per LLM judge whose current version is not cleared, why: unchecked or flagged.

    A version is cleared once a version check of it exists and its latest one is not
    flagged (:func:`version_report`).
    """
    from judging.llm.judges import judge_version  # judging.llm imports this module's app

    warnings: dict[int, str] = {}
    for judge in judges:
        current = judge_version(judge)
        rows = [
            r for r in version_report(collection=collection, judge=judge) if r.version == current
        ]
        if not rows:
            warnings[judge.pk] = "unchecked"
        elif rows[0].flagged:
            warnings[judge.pk] = "flagged"
    return warnings


#: Checks listed as not done on a judge's versions page (queued, running, or failed).
OPEN_CHECKS_SHOWN = 5


def open_checks(*, collection: Collection, judge: Judge) -> list[VersionCheck]:
    """Return the judge's latest version checks that are not done (newest first)."""
    return list(
        VersionCheck.objects.filter(collection=collection, judge=judge)
        .exclude(status=VersionCheck.Status.DONE)
        .order_by("-created_at", "-id")[:OPEN_CHECKS_SHOWN]
    )


def version_row(*, check: VersionCheck) -> VersionRow | None:
    """Return the row of a done version check as :func:`version_report` gives it, else None."""
    if check.status != VersionCheck.Status.DONE:
        return None
    rows = version_report(collection=check.collection, judge=check.judge)
    return next((row for row in rows if row.check_id == check.pk), None)
