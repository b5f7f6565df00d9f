"""LLM judges against human judges: can the LLM's grades be trusted? (coordinators only).

For every LLM judge of a collection, :func:`llm_agreement_report` compares its grades with
two kinds of reference, on the pairs both graded ("shared pairs"):

* the **human consensus** — the collection's aggregation policy applied to the human
  grades alone (what the live list would hold if no LLM had graded), and
* **each human judge** sharing at least one pair with the LLM.

Figures per comparison: shared pairs; exact and within-one agreement; the mean signed
difference ``LLM - human`` (positive: the LLM grades more generously); Cohen's κ with
quadratic weights and Krippendorff's α (ordinal) from
:mod:`judging.agreement.coefficients`; the 5 × 5
confusion matrix (rows: human grade, columns: LLM grade). Under a fractional policy (mean)
the consensus is rounded to a whole grade, halves down, for every figure but the mean
signed difference and the NDCG scores, which use it as it is.

The ranking checks score every submitted run twice with the metrics engine, exactly as
live scoring does (:func:`metrics.live.scoring.evaluate_rows`, nDCG@10 in trec_eval's
``ndcg_cut.10`` flavour): once with the human grades and once with the LLM's, both
restricted to the shared pairs of the queries both cover, so that the two scorings differ
only in the grades. A run without a ranking for one of those queries scores 0 there, as
on the leaderboard. From the runs × queries scores come

* per query, the mean nDCG@10 over the runs under each labelling, and Kendall's τ-b
  between the two orders of the queries (do both labellings find the same queries hard?);
* per run, the mean nDCG@10 over the queries under each labelling, and Kendall's τ-b and
  τ_AP (the LLM leaderboard measured against the human one) between the two leaderboards.

Not enough data: below :data:`MIN_PAIRS` shared pairs every agreement figure (and the
confusion matrix) is ``None`` with the reason; below :data:`MIN_QUERIES` shared queries
so are the ranking checks. Five SQL queries, whatever the numbers of judges, runs and
queries.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from django.db.models import BinaryField, Count
from django.db.models.functions import Substr
from scipy.stats import rankdata

from graded.textpolicy import natural_key
from judging.aggregation import get_policy
from judging.agreement.coefficients import (
    AgreementUndefinedWarning,
    cohen_kappa,
    gwet_ac,
    krippendorff_alpha,
)
from judging.agreement.paired import (
    BINARY_CUTS,
    binary_kappa,
    confusion_matrix,
    exact_agreement,
    mean_signed_difference,
    within_one_agreement,
)
from judging.agreement.selectors import Coefficient, JudgeRef
from judging.models import GRADE_MAX, GRADE_MIN, Collection, Judge, Judgment, Query
from metrics.engine.rankcorr import RankCorrelationUndefinedWarning, kendall_tau_b, tau_ap
from metrics.live import scoring
from metrics.models import RANKING_DTYPE, Run, RunQuery

#: Fewer shared pairs than this: "not enough data" instead of agreement figures.
MIN_PAIRS = 30
#: Fewer queries with shared pairs than this: "not enough data" for the ranking checks.
MIN_QUERIES = 10
#: The measure of the ranking checks and its cut-off.
MEASURE = "nDCG@10"
K = 10
GRADES = tuple(range(GRADE_MIN, GRADE_MAX + 1))
GRADED = Judgment.Status.GRADED
HUMAN = Judge.Kind.HUMAN
LLM = Judge.Kind.LLM
CONSENSUS = "consensus"


@dataclass(frozen=True)
class QueryScore:
    """One query's mean nDCG@10 over the runs, under human and under LLM grades."""

    query: str
    human: float | None
    llm: float | None


@dataclass(frozen=True)
class SystemScore:
    """One run's mean nDCG@10 under human and LLM grades, and its rank under each (1 best)."""

    run_id: int
    tag: str
    team: str
    human: float | None
    llm: float | None
    human_rank: int
    llm_rank: int


@dataclass(frozen=True)
class RankingCheck:
    """Per-query and per-run nDCG@10 under the two labellings, and their rank correlations.

    ``queries`` counts the queries with shared pairs, ``runs`` the runs scored. The score
    lists are empty when there is not enough data (the coefficients then say why).
    """

    queries: int
    runs: int
    per_query: tuple[QueryScore, ...]
    query_tau_b: Coefficient
    systems: tuple[SystemScore, ...]
    system_tau_b: Coefficient
    system_tau_ap: Coefficient


@dataclass(frozen=True)
class CutKappa:
    """Cohen's κ of the two gradings made binary at one relevance cut."""

    cut: int
    label: str
    kappa: Coefficient


@dataclass(frozen=True)
class QueryTau:
    """Kendall's τ-b between the LLM's and the reference's grades of one query's pairs."""

    query: str
    pairs: int
    tau: float | None


@dataclass(frozen=True)
class Comparison:
    """One LLM judge against one reference (the human consensus or a human judge)."""

    reference: JudgeRef | None
    label: str
    pairs: int
    exact: Coefficient
    within_one: Coefficient
    mean_signed_difference: Coefficient
    cohen_kappa_quadratic: Coefficient
    alpha_ordinal: Coefficient
    confusion: tuple[tuple[int, ...], ...] | None
    confusion_reason: str | None
    ranking: RankingCheck
    gwet_ac2: Coefficient
    binary_kappa: tuple[CutKappa, ...]
    query_tau: tuple[QueryTau, ...]
    mean_query_tau: Coefficient

    @property
    def kind(self) -> str:
        """Return ``"consensus"`` or ``"judge"``."""
        return CONSENSUS if self.reference is None else "judge"

    @property
    def key(self) -> str:
        """Return a short id for HTML anchors: ``consensus`` or ``judge-<id>``."""
        return CONSENSUS if self.reference is None else f"judge-{self.reference.judge_id}"

    @property
    def confusion_total(self) -> int:
        """Return the number of pairs in the confusion matrix (0 when hidden)."""
        return sum(map(sum, self.confusion)) if self.confusion else 0


@dataclass(frozen=True)
class LlmJudgeReport:
    """One LLM judge: its graded pairs and its comparisons, the consensus first."""

    judge: JudgeRef
    model: str
    grades: int
    comparisons: tuple[Comparison, ...]


@dataclass(frozen=True)
class LlmAgreementReport:
    """Every LLM judge of a collection against the human judges."""

    policy: str
    fractional_policy: bool
    measure: str
    min_pairs: int
    min_queries: int
    runs: int
    human_judges: int
    consensus_pairs: int
    judges: tuple[LlmJudgeReport, ...]


# --- coefficients -----------------------------------------------------------------------------


def _coefficient(compute: Callable[..., float], *args: Any, **kwargs: Any) -> Coefficient:
    """Call a pure function; turn NaN and its warning into ``None`` with the reason."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", AgreementUndefinedWarning)
        warnings.simplefilter("always", RankCorrelationUndefinedWarning)
        value = compute(*args, **kwargs)
    if not math.isnan(value):
        return Coefficient(value=float(value))
    known = (AgreementUndefinedWarning, RankCorrelationUndefinedWarning)
    reasons = [str(w.message) for w in caught if issubclass(w.category, known)]
    return Coefficient(value=None, reason=reasons[-1] if reasons else "Undefined for these data.")


def _missing(reason: str) -> Coefficient:
    """Return an undefined coefficient with ``reason``."""
    return Coefficient(value=None, reason=reason)


def _finite(value: float) -> float | None:
    """Return ``value`` as a float, or None for NaN (never NaN in JSON or a page)."""
    return float(value) if math.isfinite(value) else None


# --- reading ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Data:
    """Everything read from the database, as arrays."""

    judges: list[tuple[JudgeRef, str, int]]
    item_query: np.ndarray  # query pk of each (query, document) item
    item_document: np.ndarray
    matrix: np.ndarray  # items × judges, NaN: no grade
    runs: list[Run]
    rankings: dict[int, list[scoring.StoredRanking]]  # query pk -> rankings of that query
    query_names: dict[int, str]


def _read(collection: Collection) -> _Data:
    """Read judges, grades, runs, top-k rankings and query ids in five SQL queries."""
    judge_rows = list(
        Judgment.objects.filter(collection=collection, status=GRADED)
        .order_by()
        .values("judge_id", "judge__name", "judge__kind", "judge__model")
        .annotate(n=Count("pk"))
        .order_by("judge__kind", "judge__name", "judge_id")
    )
    grades = np.array(
        list(
            Judgment.objects.filter(collection=collection, status=GRADED)
            .order_by()
            .values_list("query_id", "document_id", "judge_id", "grade")
        ),
        dtype=np.int64,
    ).reshape(-1, 4)
    judges = [
        (JudgeRef(r["judge_id"], r["judge__name"], r["judge__kind"]), r["judge__model"], r["n"])
        for r in judge_rows
    ]
    column = {ref.judge_id: j for j, (ref, _m, _n) in enumerate(judges)}
    # A judge whose first grade arrived between the two reads waits for the next page view.
    grades = grades[np.isin(grades[:, 2], np.fromiter(column, dtype=np.int64))]
    stride = int(grades[:, 1].max()) + 1 if len(grades) else 1
    keys, item = np.unique(grades[:, 0] * stride + grades[:, 1], return_inverse=True)
    matrix = np.full((keys.size, len(judges)), np.nan)
    if len(grades):
        cols = np.fromiter((column[j] for j in grades[:, 2].tolist()), dtype=np.int64)
        matrix[item, cols] = grades[:, 3]
    runs = list(
        Run.objects.filter(collection=collection)
        .select_related("team")
        .only("pk", "tag", "team__name")
        .order_by("tag", "pk")
    )
    rankings: dict[int, list[scoring.StoredRanking]] = {}
    if runs:
        width = K * RANKING_DTYPE.itemsize
        for run_id, query_id, top, retrieved in (
            RunQuery.objects.filter(run__collection=collection)
            .annotate(top=Substr("ranking", 1, width, output_field=BinaryField()))
            .values_list("run_id", "query_id", "top", "retrieved")
        ):
            rankings.setdefault(query_id, []).append(
                scoring.StoredRanking(run_id, query_id, bytes(top or b""), retrieved)
            )
    query_names = dict(Query.objects.filter(collection=collection).values_list("pk", "external_id"))
    return _Data(
        judges=judges,
        item_query=keys // stride,
        item_document=keys % stride,
        matrix=matrix,
        runs=runs,
        rankings=rankings,
        query_names=query_names,
    )


# --- the ranking checks -----------------------------------------------------------------------


def _grades_by_query(
    queries: np.ndarray, documents: np.ndarray, grades: np.ndarray
) -> dict[int, scoring.QueryGrades]:
    """Group shared pairs' grades by query (documents sorted), as live scoring reads them."""
    order = np.lexsort((documents, queries))
    return scoring.live_grades_by_query(
        zip(queries[order].tolist(), documents[order].tolist(), grades[order].tolist(), strict=True)
    )


def _score_matrix(
    data: _Data, query_ids: list[int], grades: dict[int, scoring.QueryGrades]
) -> np.ndarray:
    """Return runs × queries nDCG@10 of every run against ``grades`` (0 where not ranked)."""
    run_index = {run.pk: i for i, run in enumerate(data.runs)}
    rows: list[scoring.StoredRanking] = []
    for query_id in query_ids:
        present = {r.run_id for r in data.rankings.get(query_id, ())}
        rows += [r for r in data.rankings.get(query_id, ()) if r.run_id in run_index]
        rows += [
            scoring.StoredRanking(run.pk, query_id, b"", 0)
            for run in data.runs
            if run.pk not in present
        ]
    values = next(
        iter(scoring.evaluate_rows(rows=rows, grades_by_query=grades, measures=[MEASURE]).values())
    )
    column = {q: j for j, q in enumerate(query_ids)}
    matrix = np.full((len(data.runs), len(query_ids)), np.nan)
    for row, value in zip(rows, values.tolist(), strict=True):
        matrix[run_index[row.run_id], column[row.query_id]] = value
    return matrix


def _ranking_check(
    data: _Data, shared: np.ndarray, human: np.ndarray, llm: np.ndarray
) -> RankingCheck:
    """Score every run under both labellings of the shared pairs; correlate the orders."""
    query_ids = sorted(set(data.item_query[shared].tolist()))
    n_queries, n_runs = len(query_ids), len(data.runs)
    if n_queries < MIN_QUERIES:
        reason = (
            f"Not enough data: {n_queries} quer{'y' if n_queries == 1 else 'ies'} with shared "
            f"pairs; the ranking checks need at least {MIN_QUERIES}."
        )
        return RankingCheck(n_queries, n_runs, (), _missing(reason), (), *[_missing(reason)] * 2)
    if not n_runs:
        reason = "No runs have been submitted, so there is nothing to rank."
        return RankingCheck(n_queries, 0, (), _missing(reason), (), *[_missing(reason)] * 2)
    queries, documents = data.item_query[shared], data.item_document[shared]
    by_human = _score_matrix(data, query_ids, _grades_by_query(queries, documents, human[shared]))
    by_llm = _score_matrix(data, query_ids, _grades_by_query(queries, documents, llm[shared]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN slices stay NaN
        query_human, query_llm = np.nanmean(by_human, axis=0), np.nanmean(by_llm, axis=0)
        run_human, run_llm = np.nanmean(by_human, axis=1), np.nanmean(by_llm, axis=1)
    names = [data.query_names.get(q, str(q)) for q in query_ids]
    per_query = sorted(
        (
            QueryScore(name, _finite(h), _finite(g))
            for name, h, g in zip(names, query_human, query_llm, strict=True)
        ),
        key=lambda s: natural_key(s.query),
    )
    defined = np.isfinite(query_human) & np.isfinite(query_llm)
    query_tau = _coefficient(kendall_tau_b, query_human[defined], query_llm[defined])
    scored = np.isfinite(run_human) & np.isfinite(run_llm)
    human_rank = rankdata(-np.nan_to_num(run_human, nan=-1.0), method="min")
    llm_rank = rankdata(-np.nan_to_num(run_llm, nan=-1.0), method="min")
    systems = sorted(
        (
            SystemScore(run.pk, run.tag, run.team.name, _finite(h), _finite(g), int(hr), int(lr))
            for run, h, g, hr, lr in zip(
                data.runs, run_human, run_llm, human_rank, llm_rank, strict=True
            )
        ),
        key=lambda s: (s.human_rank, s.tag),
    )
    return RankingCheck(
        queries=n_queries,
        runs=n_runs,
        per_query=tuple(per_query),
        query_tau_b=query_tau,
        systems=tuple(systems),
        system_tau_b=_coefficient(kendall_tau_b, run_human[scored], run_llm[scored]),
        system_tau_ap=_coefficient(tau_ap, run_llm[scored], run_human[scored]),
    )


# --- the comparisons --------------------------------------------------------------------------


def _compare(
    data: _Data,
    llm: np.ndarray,
    human: np.ndarray,
    *,
    reference: JudgeRef | None,
    label: str,
    fractional: bool,
) -> Comparison:
    """Compare the LLM's grades with one reference's on the pairs both graded."""
    shared = ~np.isnan(llm) & ~np.isnan(human)
    pairs = int(shared.sum())
    ranking = _ranking_check(data, shared, human, llm)
    if pairs < MIN_PAIRS:
        reason = (
            f"Not enough data: {pairs} shared pair{'' if pairs == 1 else 's'}; "
            f"at least {MIN_PAIRS} are needed."
        )
        missing = _missing(reason)
        return Comparison(
            reference,
            label,
            pairs,
            *[missing] * 5,
            None,
            reason,
            ranking=ranking,
            gwet_ac2=missing,
            binary_kappa=tuple(CutKappa(c, _cut_label(c), missing) for c in BINARY_CUTS),
            query_tau=(),
            mean_query_tau=missing,
        )
    x, y = llm[shared], human[shared]
    whole = np.ceil(y - 0.5) if fractional else y  # halves down: the cautious grade
    query_tau = _query_taus(data, shared, whole, x)
    taus = [q.tau for q in query_tau if q.tau is not None]
    return Comparison(
        reference=reference,
        label=label,
        pairs=pairs,
        exact=_coefficient(exact_agreement, x, whole),
        within_one=_coefficient(within_one_agreement, x, whole),
        mean_signed_difference=_coefficient(mean_signed_difference, x, y),
        cohen_kappa_quadratic=_coefficient(
            cohen_kappa, whole, x, weights="quadratic", categories=GRADES
        ),
        alpha_ordinal=_coefficient(
            krippendorff_alpha, np.vstack([whole, x]), level="ordinal", categories=GRADES
        ),
        confusion=tuple(tuple(row) for row in confusion_matrix(x, whole).tolist()),
        confusion_reason=None,
        ranking=ranking,
        gwet_ac2=_coefficient(
            gwet_ac, np.column_stack([whole, x]), weights="quadratic", categories=GRADES
        ),
        binary_kappa=tuple(
            CutKappa(c, _cut_label(c), _coefficient(binary_kappa, x, whole, c)) for c in BINARY_CUTS
        ),
        query_tau=query_tau,
        mean_query_tau=Coefficient(float(np.mean(taus)))
        if taus
        else _missing("No query has two shared pairs with different grades on both sides."),
    )


def _cut_label(cut: int) -> str:
    """Return a cut's name: ``0 | 1–4``, ``0–1 | 2–4``, ``0–2 | 3–4``."""
    low = "0" if cut == 1 else f"0–{cut - 1}"
    high = f"{cut}–{GRADE_MAX}" if cut < GRADE_MAX else str(GRADE_MAX)
    return f"{low} | {high}"


def _query_taus(
    data: _Data, shared: np.ndarray, human: np.ndarray, llm: np.ndarray
) -> tuple[QueryTau, ...]:
    """Return Kendall's τ-b of the two gradings over each query's shared pairs.

    Do the LLM and the human order a query's documents alike? None where τ-b is
    undefined (one pair, or one side gives every pair the same grade). Natural order of
    query ids.
    """
    queries = data.item_query[shared]
    order = np.argsort(queries, kind="stable")
    query_ids, starts = np.unique(queries[order], return_index=True)
    blocks = np.split(order, starts[1:]) if order.size else []
    out = []
    for query_id, mine in zip(query_ids.tolist(), blocks, strict=True):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RankCorrelationUndefinedWarning)
            tau = kendall_tau_b(human[mine], llm[mine]) if mine.size >= 2 else math.nan
        out.append(
            QueryTau(data.query_names.get(query_id, str(query_id)), int(mine.size), _finite(tau))
        )
    return tuple(sorted(out, key=lambda q: natural_key(q.query)))


def llm_agreement_report(*, collection: Collection) -> LlmAgreementReport:
    """Return every LLM judge of ``collection`` compared with the human judges.

    LLM judges come by name; each one's comparisons start with the human consensus, then
    every human judge sharing at least one graded pair with it, by name. Five SQL
    queries (see the module docstring).
    """
    data = _read(collection)
    policy = get_policy(collection.aggregation_policy)
    humans = [j for j, (ref, _m, _n) in enumerate(data.judges) if ref.kind == HUMAN]
    llms = [j for j, (ref, _m, _n) in enumerate(data.judges) if ref.kind == LLM]
    consensus = np.full(data.matrix.shape[0], np.nan)
    if humans:
        sub = data.matrix[:, humans]
        item, col = np.nonzero(~np.isnan(sub))
        pair_ids, live = policy(
            item, sub[item, col], np.ones(item.size, dtype=bool), judge_index=col
        )
        consensus[pair_ids] = live
    judges = []
    for j in sorted(llms, key=lambda j: (data.judges[j][0].name, data.judges[j][0].judge_id)):
        ref, model, count = data.judges[j]
        llm = data.matrix[:, j]
        comparisons = [
            _compare(
                data,
                llm,
                consensus,
                reference=None,
                label="Human consensus",
                fractional=policy.fractional,
            )
        ]
        for h in sorted(humans, key=lambda h: (data.judges[h][0].name, data.judges[h][0].judge_id)):
            human = data.matrix[:, h]
            if not np.any(~np.isnan(llm) & ~np.isnan(human)):
                continue
            comparisons.append(
                _compare(
                    data,
                    llm,
                    human,
                    reference=data.judges[h][0],
                    label=data.judges[h][0].name,
                    fractional=False,
                )
            )
        judges.append(LlmJudgeReport(ref, model, count, tuple(comparisons)))
    return LlmAgreementReport(
        policy=policy.name,
        fractional_policy=policy.fractional,
        measure=scoring.canonical_names([MEASURE])[0],
        min_pairs=MIN_PAIRS,
        min_queries=MIN_QUERIES,
        runs=len(data.runs),
        human_judges=len(humans),
        consensus_pairs=int(np.count_nonzero(~np.isnan(consensus))),
        judges=tuple(judges),
    )
