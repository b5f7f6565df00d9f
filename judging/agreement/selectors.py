"""Read side of label coverage and annotator agreement, for coordinators.

:func:`agreement_report` reads a collection in three SQL queries, whatever its size: the
per-query coverage (one aggregation), the per-judge statistics (one aggregation) and the
graded judgments themselves (one ``values_list``). The graded judgments become an
items × judges matrix (NaN where a judge gave no grade) handed to the pure functions of
:mod:`judging.agreement.coefficients`; this module does no statistics of its own.

Only judgments with status ``graded`` count: "cannot judge" and "later" are no grades.
Coverage is about the judging pool; agreement uses every graded pair of the collection.
An undefined coefficient is ``None`` with the reason it is undefined (the pure functions'
:class:`~judging.agreement.coefficients.AgreementUndefinedWarning` is caught and kept as text).

Below that is the read side of "agreement you can act on": per-judge figures, per-query
agreement and alerts, in three more SQL queries. It uses :mod:`judging.agreement.judges`
and :func:`judging.aggregation.dawid_skene`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from statistics import median
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db.models import (
    Avg,
    Count,
    Exists,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    Value,
)
from django.db.models.functions import Coalesce

from graded.textpolicy import natural_key
from judging.aggregation import dawid_skene, llm_only_lower_median
from judging.agreement import checks
from judging.agreement.coefficients import (
    DEFAULT_CATEGORIES,
    AgreementUndefinedWarning,
    cohen_kappa,
    fleiss_counts,
    fleiss_kappa,
    gwet_ac,
    krippendorff_alpha,
    pairwise_agreement,
)
from judging.agreement.judges import group_agreement, group_coefficients, judge_figures
from judging.models import (
    GRADE_MAX,
    GRADE_MIN,
    Adjudication,
    Collection,
    Judge,
    Judgment,
    PoolEntry,
    Query,
)

GRADES = tuple(range(GRADE_MIN, GRADE_MAX + 1))
GRADED = Judgment.Status.GRADED
HUMAN = Judge.Kind.HUMAN
LLM = Judge.Kind.LLM

#: ``?sort=`` values of the per-query coverage table, with their labels.
COVERAGE_SORTS: dict[str, str] = {
    "coverage": "Least complete first",
    "-coverage": "Most complete first",
    "graded": "Fewest graded first",
    "-graded": "Most graded first",
    "pooled": "Smallest pool first",
    "-pooled": "Largest pool first",
    "query": "Query id",
    "-query": "Query id, descending",
}
DEFAULT_COVERAGE_SORT = "coverage"


@dataclass(frozen=True)
class Coefficient:
    """A statistic, or ``None`` with the reason it is undefined for the data."""

    value: float | None
    reason: str | None = None

    @property
    def defined(self) -> bool:
        """Return whether the statistic has a value."""
        return self.value is not None


@dataclass(frozen=True)
class QueryCoverage:
    """How far the pool of one query is graded."""

    external_id: str
    pooled: int
    graded: int
    complete: int
    text: str = ""

    @property
    def share_graded(self) -> float | None:
        """Return the share of pooled pairs with at least one grade (None: empty pool)."""
        return self.graded / self.pooled if self.pooled else None

    @property
    def share_complete(self) -> float | None:
        """Return the share of pooled pairs with enough grades (None: empty pool)."""
        return self.complete / self.pooled if self.pooled else None


@dataclass(frozen=True)
class Coverage:
    """How far the whole pool is graded.

    ``graded_pairs`` have at least one grade; ``complete_pairs`` at least
    ``judges_per_pair`` grades. ``share_complete`` is None for an empty pool.
    """

    judges_per_pair: int
    pool_pairs: int
    graded_pairs: int
    complete_pairs: int
    share_complete: float | None
    queries: tuple[QueryCoverage, ...]

    @property
    def ungraded_pairs(self) -> int:
        """Return the pooled pairs without any grade."""
        return self.pool_pairs - self.graded_pairs

    @property
    def percent_complete(self) -> int:
        """Return the share complete as a whole percentage (0 for an empty pool)."""
        return round(100 * (self.share_complete or 0.0))


@dataclass(frozen=True)
class JudgeRef:
    """A judge as named in the tables."""

    judge_id: int
    name: str
    kind: str


@dataclass(frozen=True)
class JudgeStats:
    """One judge's grades in the collection.

    ``distribution[g]`` counts the judge's grades ``g`` (0–4). ``mean_seconds`` is the
    mean time per graded pair, for human judges who reported times (None otherwise).
    """

    judge: JudgeRef
    grades: int
    distribution: tuple[int, ...]
    mean_seconds: float | None

    @property
    def shares(self) -> tuple[float, ...]:
        """Return the distribution as shares of the judge's grades."""
        return tuple(n / self.grades if self.grades else 0.0 for n in self.distribution)


@dataclass(frozen=True)
class GroupAgreement:
    """Agreement among one group of judges over the pairs two or more of them graded.

    ``group`` is ``"human"``, ``"llm"`` or ``"all"``; ``judges`` counts the group's judges
    with at least one grade; ``pairs`` the pairs graded by at least two of them.
    """

    group: str
    label: str
    judges: int
    pairs: int
    fleiss_kappa: Coefficient
    alpha_ordinal: Coefficient
    alpha_interval: Coefficient
    alpha_nominal: Coefficient
    alpha_ratio: Coefficient
    gwet_ac1: Coefficient
    gwet_ac2: Coefficient


@dataclass(frozen=True)
class PairAgreement:
    """Agreement of two judges over the pairs both graded (``common`` ≥ 1)."""

    a: JudgeRef
    b: JudgeRef
    common: int
    raw_agreement: float
    cohen_kappa: Coefficient
    cohen_kappa_quadratic: Coefficient
    cohen_kappa_linear: Coefficient

    @property
    def kinds(self) -> str:
        """Return ``"human-human"``, ``"human-llm"`` or ``"llm-llm"``."""
        return f"{self.a.kind}-{self.b.kind}"

    @property
    def is_human_llm(self) -> bool:
        """Return whether one judge is a human and the other an LLM."""
        return self.a.kind != self.b.kind


@dataclass(frozen=True)
class AgreementReport:
    """Coverage, per-judge statistics and agreement of one collection."""

    coverage: Coverage
    judges: tuple[JudgeStats, ...]
    overall: tuple[GroupAgreement, ...]
    pairwise: tuple[PairAgreement, ...]


# --- reading ------------------------------------------------------------------------------


def _count_entries(entries: QuerySet[PoolEntry]) -> Coalesce:
    """Return a subquery counting ``entries`` of the outer query (0 when none)."""
    subquery = (
        entries.filter(query_id=OuterRef("pk"))
        .order_by()
        .values("query_id")
        .annotate(c=Count("pk"))
        .values("c")
    )
    return Coalesce(Subquery(subquery, output_field=IntegerField()), Value(0))


def _query_coverage(collection: Collection) -> list[QueryCoverage]:
    """Return the coverage of every query of ``collection`` in one SQL query."""
    grades = Judgment.objects.filter(
        query_id=OuterRef("query_id"), document_id=OuterRef("document_id"), status=GRADED
    )
    grade_count = Subquery(
        grades.order_by().values("query_id").annotate(n=Count("pk")).values("n"),
        output_field=IntegerField(),
    )
    pooled = PoolEntry.objects.all()
    rows = (
        Query.objects.filter(collection=collection)
        .annotate(
            pooled=_count_entries(pooled),
            graded=_count_entries(pooled.filter(Exists(grades))),
            complete=_count_entries(
                pooled.alias(n=grade_count).filter(n__gte=collection.judges_per_pair)
            ),
        )
        .order_by()
        .values_list("external_id", "pooled", "graded", "complete", "text")
    )
    return [QueryCoverage(*row) for row in rows]


def _graded(collection: Collection, guidelines_version: int | None) -> QuerySet[Judgment]:
    """Return the collection's graded judgments, of one guidelines version if given."""
    graded = Judgment.objects.filter(collection=collection, status=GRADED)
    if guidelines_version is not None:
        graded = graded.filter(guidelines_version=guidelines_version)
    return graded


def _judge_stats(collection: Collection, guidelines_version: int | None = None) -> list[JudgeStats]:
    """Return every judge's grade counts and mean time in ``collection`` in one SQL query."""
    per_grade = {f"g{grade}": Count("pk", filter=Q(grade=grade)) for grade in GRADES}
    rows = (
        _graded(collection, guidelines_version)
        .order_by()
        .values("judge_id", "judge__name", "judge__kind")
        .annotate(n=Count("pk"), mean_seconds=Avg("seconds"), **per_grade)
        .order_by("judge__kind", "judge__name", "judge_id")
    )
    return [
        JudgeStats(
            judge=JudgeRef(row["judge_id"], row["judge__name"], row["judge__kind"]),
            grades=row["n"],
            distribution=tuple(row[f"g{grade}"] for grade in GRADES),
            mean_seconds=row["mean_seconds"] if row["judge__kind"] == HUMAN else None,
        )
        for row in rows
    ]


def _graded_judgments(
    collection: Collection, guidelines_version: int | None = None
) -> list[tuple[int, int, int, str, int]]:
    """Return (query id, document id, judge id, judge kind, grade) of every grade, one query."""
    return list(
        _graded(collection, guidelines_version)
        .order_by()
        .values_list("query_id", "document_id", "judge_id", "judge__kind", "grade")
    )


# --- matrices and coefficients --------------------------------------------------------------


FloatArray = npt.NDArray[np.float64]


def _ratings_matrix(
    rows: Sequence[tuple[int, int, int, str, int]], judge_ids: Sequence[int]
) -> FloatArray:
    """Return the items × judges grade matrix of ``rows`` (NaN: no grade).

    Items are the (query, document) pairs in order of first appearance; columns follow
    ``judge_ids``.
    """
    column = {judge_id: j for j, judge_id in enumerate(judge_ids)}
    items: dict[tuple[int, int], int] = {}
    for query_id, document_id, *_ in rows:
        items.setdefault((query_id, document_id), len(items))
    matrix = np.full((len(items), len(judge_ids)), np.nan)
    if rows:
        i = np.fromiter((items[(q, d)] for q, d, *_ in rows), dtype=np.int64, count=len(rows))
        j = np.fromiter((column[r[2]] for r in rows), dtype=np.int64, count=len(rows))
        matrix[i, j] = np.fromiter((r[4] for r in rows), dtype=np.float64, count=len(rows))
    return matrix


def _coefficient(compute: Callable[..., float], *args: Any, **kwargs: Any) -> Coefficient:
    """Call a pure agreement function; turn NaN and its warning into a reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AgreementUndefinedWarning)
        value = compute(*args, **kwargs)
    if not math.isnan(value):
        return Coefficient(value=float(value))
    reasons = [str(w.message) for w in caught if issubclass(w.category, AgreementUndefinedWarning)]
    return Coefficient(value=None, reason=reasons[-1] if reasons else "Undefined for these data.")


def _fleiss(matrix: FloatArray) -> float:
    """Return Fleiss' kappa of an items × raters matrix (nominal grades)."""
    return fleiss_kappa(fleiss_counts(matrix, categories=DEFAULT_CATEGORIES))


#: How a reason names the judges of a group ("all judges" read as a typo; issue 34 item 6).
NOUNS = {"human": "human judges", "llm": "LLM judges", "all": "judges (human or LLM)"}

GROUPS = (
    ("human", "Human judges", (HUMAN,)),
    ("llm", "LLM judges", (LLM,)),
    ("all", "All judges", (HUMAN, LLM)),
)


def _group_agreement(
    matrix: FloatArray, judges: Sequence[JudgeRef], group: str, label: str, kinds: tuple[str, ...]
) -> GroupAgreement:
    """Return the agreement among the judges of ``kinds`` over pairs two of them graded."""
    columns = [j for j, judge in enumerate(judges) if judge.kind in kinds]
    sub = matrix[:, columns]
    sub = sub[(~np.isnan(sub)).sum(axis=1) >= 2]
    if len(columns) < 2:
        reason = f"Fewer than two {NOUNS[group]} have graded pairs in this collection."
        missing = Coefficient(value=None, reason=reason)
        return GroupAgreement(group, label, len(columns), 0, *[missing] * 7)
    return GroupAgreement(
        group=group,
        label=label,
        judges=len(columns),
        pairs=sub.shape[0],
        fleiss_kappa=_coefficient(_fleiss, sub),
        alpha_ordinal=_coefficient(krippendorff_alpha, sub.T, level="ordinal", categories=GRADES),
        alpha_interval=_coefficient(krippendorff_alpha, sub.T, level="interval", categories=GRADES),
        alpha_nominal=_coefficient(krippendorff_alpha, sub.T, level="nominal", categories=GRADES),
        alpha_ratio=_coefficient(krippendorff_alpha, sub.T, level="ratio", categories=GRADES),
        gwet_ac1=_coefficient(gwet_ac, sub, categories=GRADES),
        gwet_ac2=_coefficient(gwet_ac, sub, weights="quadratic", categories=GRADES),
    )


_KIND_PAIR_ORDER = {(HUMAN, LLM): 0, (HUMAN, HUMAN): 1, (LLM, LLM): 2}


def _pairwise(matrix: FloatArray, judges: Sequence[JudgeRef]) -> list[PairAgreement]:
    """Return the agreement of every two judges sharing at least one graded pair.

    Human–LLM pairs come first (the human always as ``a``), then human–human, then
    LLM–LLM, each by name.
    """
    raw = pairwise_agreement(matrix)
    pairs = []
    for r in range(len(judges)):
        for s in range(r + 1, len(judges)):
            common = int(raw.overlap[r, s])
            if common == 0:
                continue
            a, b, x, y = judges[r], judges[s], matrix[:, r], matrix[:, s]
            if a.kind == LLM and b.kind == HUMAN:
                a, b, x, y = b, a, y, x
            pairs.append(
                PairAgreement(
                    a=a,
                    b=b,
                    common=common,
                    raw_agreement=float(raw.agreement[r, s]),
                    cohen_kappa=_coefficient(cohen_kappa, x, y, categories=GRADES),
                    cohen_kappa_quadratic=_coefficient(
                        cohen_kappa, x, y, weights="quadratic", categories=GRADES
                    ),
                    cohen_kappa_linear=_coefficient(
                        cohen_kappa, x, y, weights="linear", categories=GRADES
                    ),
                )
            )
    pairs.sort(
        key=lambda p: (_KIND_PAIR_ORDER[(p.a.kind, p.b.kind)], p.a.name, p.b.name, p.a.judge_id)
    )
    return pairs


# --- the report ------------------------------------------------------------------------------


def agreement_report(
    *, collection: Collection, guidelines_version: int | None = None
) -> AgreementReport:
    """Return the coverage, judge statistics and agreement of ``collection``.

    With ``guidelines_version``, the judge statistics and agreement count only the labels
    given under that version of the guidelines (coverage stays the whole pool's). Three
    SQL queries, whatever the size of the collection (see the module docstring).
    """
    queries = sorted(_query_coverage(collection), key=lambda q: natural_key(q.external_id))
    stats = _judge_stats(collection, guidelines_version)
    rows = _graded_judgments(collection, guidelines_version)
    pool_pairs = sum(q.pooled for q in queries)
    complete = sum(q.complete for q in queries)
    coverage = Coverage(
        judges_per_pair=collection.judges_per_pair,
        pool_pairs=pool_pairs,
        graded_pairs=sum(q.graded for q in queries),
        complete_pairs=complete,
        share_complete=complete / pool_pairs if pool_pairs else None,
        queries=tuple(queries),
    )
    judges = [s.judge for s in stats]
    known = {judge.judge_id for judge in judges}
    for _q, _d, judge_id, kind, _g in rows:  # graded between the two reads
        if judge_id not in known:
            known.add(judge_id)
            judges.append(JudgeRef(judge_id, f"Judge {judge_id}", kind))
    matrix = _ratings_matrix(rows, [judge.judge_id for judge in judges])
    return AgreementReport(
        coverage=coverage,
        judges=tuple(stats),
        overall=tuple(
            _group_agreement(matrix, judges, group, label, kinds) for group, label, kinds in GROUPS
        ),
        pairwise=tuple(_pairwise(matrix, judges)),
    )


def sorted_query_coverage(
    queries: Sequence[QueryCoverage], sort: str | None
) -> tuple[list[QueryCoverage], str]:
    """Return the queries ordered by ``sort`` (a key of COVERAGE_SORTS) and the sort used.

    Unknown or missing sorts fall back to the default: least complete first. Queries with
    an empty pool have no share and come last in share orders; ties go by query id.
    """
    sort = sort if sort in COVERAGE_SORTS else DEFAULT_COVERAGE_SORT
    field = sort.lstrip("-")
    descending = sort.startswith("-")
    by_id = sorted(queries, key=lambda q: natural_key(q.external_id))
    if field == "query":
        return (by_id[::-1] if descending else by_id), sort
    sign = -1 if descending else 1
    if field == "pooled":
        return sorted(by_id, key=lambda q: sign * q.pooled), sort

    def share(q: QueryCoverage) -> tuple[float, float]:
        """Return the shares to order by, the other share breaking ties."""
        first, second = q.share_complete or 0.0, q.share_graded or 0.0
        if field == "graded":
            first, second = second, first
        return (sign * first, sign * second)

    with_pool = [q for q in by_id if q.pooled]
    empty = [q for q in by_id if not q.pooled]
    return sorted(with_pool, key=share) + empty, sort


# --- Read side of "agreement you can act on": per-judge figures, per-query agreement, alerts ---
#
# Three SQL queries whatever the collection's size (judgments, adjudications in force,
# queries); the numbers come from the pure functions of :mod:`judging.agreement.judges`
# and :func:`judging.aggregation.dawid_skene` (each judge's estimated reliability).

#: A judge needs this many pairs compared with others before an alert is raised.
MIN_COMPARED_FOR_ALERT = 5

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
    kappa: float | None = None
    alpha: float | None = None
    ac2: float | None = None


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
    by_judges = matrix.reshape(len(items), len(order))
    per_query, pairs = group_agreement(by_judges, groups, len(query_rows))
    chance = group_coefficients(by_judges, groups, len(query_rows))
    queries = [
        QueryAgreementRow(
            external_id,
            text,
            int(pairs[i]),
            _number(per_query[i]),
            kappa=_number(chance.kappa[i]),
            alpha=_number(chance.alpha[i]),
            ac2=_number(chance.ac2[i]),
        )
        for i, (_pk, external_id, text) in enumerate(query_rows)
        if pairs[i] > 0
    ]
    queries.sort(key=lambda r: (r.agreement, -r.pairs, natural_key(r.external_id)))
    return ActionableAgreement(
        threshold=threshold, judges=tuple(judge_rows), queries=tuple(queries)
    )


@dataclass(frozen=True)
class LlmChecks:
    """Human checks of LLM grades: by provenance, and as they accumulated."""

    groups: tuple[checks.CheckFigures, ...]  # all, assisted, blind, not recorded
    curve: tuple[checks.CheckFigures, ...]


def llm_checks(*, collection: Collection, audit: checks.Audit | None = None) -> LlmChecks:
    """Return the agreement of human grades with the LLM grade on the pairs both graded.

    Two SQL queries: the LLM grades, and the human grades in the order they were first
    given (``created_at``). Each human grade counts once (one check per judge and pair).
    With ``audit``, a group more gives the figures of the checks of the random audit
    sample (:mod:`judging.agreement.checks`): the unbiased estimate.
    """
    llm = np.array(
        list(
            Judgment.objects.filter(
                collection=collection, judge__kind=Judge.Kind.LLM, status=Judgment.Status.GRADED
            ).values_list("query_id", "document_id", "grade")
        ),
        dtype=np.int64,
    ).reshape(-1, 3)
    keys, pair = np.unique(llm[:, :2], axis=0, return_inverse=True)
    ids, grades = llm_only_lower_median(pair.reshape(-1), llm[:, 2], np.zeros(len(llm), dtype=bool))
    shown = {(int(keys[i][0]), int(keys[i][1])): int(g) for i, g in zip(ids, grades, strict=True)}
    rows = [
        (grade, shown[(q, d)], saw, q, d)
        for q, d, grade, saw in Judgment.objects.filter(
            collection=collection, judge__kind=Judge.Kind.HUMAN, status=Judgment.Status.GRADED
        )
        .order_by("created_at", "pk")
        .values_list("query_id", "document_id", "grade", "saw_llm_grade")
        if (q, d) in shown
    ]
    human = np.array([r[0] for r in rows], dtype=np.float64)
    machine = np.array([r[1] for r in rows], dtype=np.float64)
    saw = [r[2] for r in rows]
    groups = [checks.check_figures(human, machine, label="all checks")]
    for label, value in (("assisted", True), ("blind", False), ("not recorded", None)):
        keep = np.array([s is value for s in saw], dtype=bool)
        groups.append(checks.check_figures(human[keep], machine[keep], label=label))
    if audit is not None:
        keep = audit.contains([r[3] for r in rows], [r[4] for r in rows])
        groups.append(checks.check_figures(human[keep], machine[keep], label=checks.AUDIT_LABEL))
    return LlmChecks(groups=tuple(groups), curve=tuple(checks.accumulation(human, machine)))


# --- split by guidelines version --------------------------------------------------------------


@dataclass(frozen=True)
class VersionAgreement:
    """Labels given under one guidelines version and the human judges' agreement on them.

    ``version`` is None for labels written before versions were kept. ``humans`` is the
    agreement among human judges over the pairs two or more of them graded under this
    version (labels of other versions are not compared with these).
    """

    version: int | None
    labels: int
    humans: GroupAgreement


def agreement_by_guidelines_version(*, collection: Collection) -> list[VersionAgreement]:
    """Return, per guidelines version with graded labels, the labels and human agreement.

    One SQL query; versions in order (labels from before versions were kept first).
    """
    rows = list(
        Judgment.objects.filter(collection=collection, status=GRADED)
        .order_by()
        .values_list(
            "query_id", "document_id", "judge_id", "judge__kind", "grade", "guidelines_version"
        )
    )
    by_version: dict[int | None, list[tuple[int, int, int, str, int]]] = {}
    for *row, version in rows:
        by_version.setdefault(version, []).append(tuple(row))  # type: ignore[arg-type]
    result = []
    for version in sorted(by_version, key=lambda v: (v is not None, v or 0)):
        graded = by_version[version]
        judges: dict[int, JudgeRef] = {}
        for _q, _d, judge_id, kind, _g in graded:
            judges.setdefault(judge_id, JudgeRef(judge_id, f"Judge {judge_id}", kind))
        refs = list(judges.values())
        matrix = _ratings_matrix(graded, [ref.judge_id for ref in refs])
        humans = _group_agreement(matrix, refs, "human", "Human judges", (HUMAN,))
        result.append(VersionAgreement(version=version, labels=len(graded), humans=humans))
    return result
