"""Bias-corrected run means from LLM-filled grades and a query-level human audit (a selector).

:func:`prediction_powered_means` reads a collection's stored data and gives, per run and
measure, the prediction-powered estimate of the mean the run would have on human grades,
with its interval (:func:`metrics.engine.ppi.audited_mean`; docs/measures.md,
*Bias-corrected means when LLM grades fill the pool*, says why the unit is the query and
what the estimator assumes). What it reads:

- the pooling policy in force: the random audit's share (``audit_percent``) and ``seed``,
  under ``llm-check`` only;
- the live list with its provenance: a pair is *human* when a human graded it or an
  adjudicator decided it, *LLM-only* otherwise; the collection's queries with live grades
  are the units;
- every LLM judge's graded judgments: a pair's LLM grade is the lower median of them (the
  grade the judging card shows), its abstention probability their mean;
- the runs' stored rankings (a run without a ranking of a query scores it as empty, as
  live scoring does).

A query is *sampled* when its audit draw (:meth:`judging.agreement.checks.Audit.sampled`,
the draw the judging plan gives every pair of the query) is below the share: under
``llm-check`` every pair of a sampled query is queued for humans. A sampled query is
*audited* once every one of its live and pooled pairs is human (a pooled pair nobody
graded yet counts as not human); then its human score ``h`` is its live score. Every
query's LLM score ``f`` is its score under the LLM grades alone (pairs no LLM graded
left out), whether audited or not.

:func:`prediction_powered_means` takes at most eight SQL queries (with the sampled
queries' pool, and the query ids for ``keep_query``; two more when the collection asks
for qualification: only counted LLM judges are read) and writes nothing.
:func:`leaderboard_ppi` is what the leaderboard, its REST endpoint and a run's scores
show: the same figures, as the viewer's score policy allows, cached per judgment-list
version.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from django.core.cache import cache

from judging.agreement.checks import Audit
from judging.models import Collection, Judge, Judgment, LiveGrade, PoolEntry, Query
from judging.quality import selectors as quality_selectors
from metrics.engine import ppi as ppi_engine
from metrics.engine.measures import score_bounds
from metrics.engine.ppi import audited_mean
from metrics.live import scoring
from metrics.models import Run
from metrics.pool.selectors import audit_sample
from metrics.selectors_common import cache_key_for, stored_rankings
from metrics.selectors_common import llm_filled as any_llm_only
from metrics.visibility.selectors import ROUND_DECIMALS, Exposure, ScorePolicy

__all__ = [
    "LeaderboardPPI",
    "PPICell",
    "PredictionPowered",
    "RunCorrection",
    "leaderboard_ppi",
    "prediction_powered_means",
]


@dataclass(frozen=True)
class RunCorrection:
    """One run's bias-corrected mean of one measure.

    ``estimate`` is the prediction-powered mean; ``low`` and ``high`` its interval (``-inf``
    and ``inf`` with one audited query of several); ``lam`` the weight on the LLM scores
    (0: human-only mean of the audited queries, 1: plain PPI); ``llm_mean`` the mean of the
    LLM scores over ``queries``; ``audited`` the audited queries among them.
    """

    estimate: float
    low: float
    high: float
    lam: float
    std_error: float
    llm_mean: float
    audited: int
    queries: int
    degenerate: str = ""  # metrics.engine.ppi.PPIEstimate.degenerate


@dataclass(frozen=True)
class PredictionPowered:
    """Every run's corrected means, and the audit they rest on.

    ``runs[run_pk][measure]`` is a :class:`RunCorrection`, or None when the measure has no
    audited query with finite scores for that run (or ``available`` is false).
    ``reason`` says why nothing is available ("" when it is).
    """

    available: bool
    reason: str
    target: str
    confidence: float
    audit_share: float
    seed: int
    queries: int  # queries with live grades (the units)
    sampled: int  # of those, in the query-level audit sample
    audited: int  # sampled and every live pair human
    llm_filled: bool  # some live pair is LLM-only
    runs: dict[int, dict[str, RunCorrection | None]]


def _lower_median(pair: np.ndarray, grades: np.ndarray, n_pairs: int) -> np.ndarray:
    """Return each pair's lower median grade (rows sorted by pair)."""
    order = np.lexsort((grades, pair))
    counts = np.bincount(pair, minlength=n_pairs)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    return grades[order][starts + (counts - 1) // 2]


def _llm_grades(collection: Collection) -> dict[int, scoring.QueryGrades]:
    """Return the LLM judges' grade of every pair they graded, grouped by query.

    Only judges whose labels count (:func:`judging.quality.selectors.counted_judges`: all
    of them unless the collection asks for qualification) are read, as in the live list.
    """
    labels = Judgment.objects.filter(
        collection=collection, status=Judgment.Status.GRADED, judge__kind=Judge.Kind.LLM
    )
    if collection.qualification_pairs:
        labels = labels.filter(
            judge_id__in=quality_selectors.counted_judges(collection_id=collection.pk) or ()
        )
    rows = np.array(
        [
            (q, d, g, np.nan if a is None else a)
            for q, d, g, a in labels.order_by().values_list(
                "query_id", "document_id", "grade", "abstain_probability"
            )
        ],
        dtype=np.float64,
    ).reshape(-1, 4)
    if not len(rows):
        return {}
    keys = rows[:, :2].astype(np.int64)
    pairs, pair = np.unique(keys, axis=0, return_inverse=True)
    pair = pair.reshape(-1)
    grades = _lower_median(pair, rows[:, 2], len(pairs))
    recorded = np.isfinite(rows[:, 3])
    totals = np.bincount(pair[recorded], weights=rows[recorded, 3], minlength=len(pairs))
    counts = np.bincount(pair[recorded], minlength=len(pairs))
    with np.errstate(invalid="ignore", divide="ignore"):
        abstain = np.where(counts > 0, totals / np.maximum(counts, 1), np.nan)
    return scoring.live_grades_from_columns(pairs[:, 0], pairs[:, 1], grades, abstain)


def _matrix(
    rows: list[scoring.StoredRanking],
    values: np.ndarray,
    run_index: dict[int, int],
    query_index: dict[int, int],
) -> np.ndarray:
    """Return runs × queries values of one measure (NaN where a row is missing)."""
    out = np.full((len(run_index), len(query_index)), np.nan)
    for row, value in zip(rows, values.tolist(), strict=True):
        out[run_index[row.run_id], query_index[row.query_id]] = value
    return out


def prediction_powered_means(
    *,
    collection: Collection,
    runs: list[Run],
    measures: list[str],
    target: Literal["collection", "topics"] = "collection",
    confidence: float = 0.95,
    keep_query: Callable[[str], bool] | None = None,
    audit: Audit | Literal["policy"] | None = "policy",
) -> PredictionPowered:
    """Return each run's prediction-powered mean of each measure, with its interval.

    ``measures`` are canonical names; ``target`` and the estimator are those of
    :func:`metrics.engine.ppi.audited_mean` (tuned λ, Student's t interval, both clipped to
    the measure's range when it has one: :func:`metrics.engine.measures.score_bounds`). Nothing is
    available without a random audit (``llm-check`` with ``audit_percent`` above 0), without
    live grades, or before a sampled query is fully human-graded. ``keep_query`` keeps
    only the queries whose external id it accepts as units (a split score policy's
    share); ``audit`` is the policy's audit when the caller has read it already.
    """
    if target not in ("collection", "topics"):
        raise ValueError("target: must be 'collection' or 'topics'")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence: must lie strictly between 0 and 1")
    share, seed = 0.0, 0
    if audit == "policy":
        audit = audit_sample(collection=collection)
    if audit is not None:
        share, seed = audit.share, audit.seed
    live = list(
        LiveGrade.objects.filter(collection=collection)
        .order_by("query_id", "document_id")
        .values_list(
            "query_id",
            "document_id",
            "grade",
            "abstain_probability",
            "human_count",
            "adjudicated",
        )
    )
    if keep_query is not None and live:
        kept = {
            pk
            for pk, qid in Query.objects.filter(collection=collection).values_list(
                "pk", "external_id"
            )
            if keep_query(str(qid))
        }
        live = [r for r in live if r[0] in kept]
    human_pair = np.array([r[4] > 0 or r[5] for r in live], dtype=bool)
    live_query = np.array([r[0] for r in live], dtype=np.int64)
    queries = sorted(set(live_query.tolist()))
    complete = dict.fromkeys(queries, True)
    for q in live_query[~human_pair].tolist():
        complete[q] = False
    in_sample = audit.sampled(queries) if audit is not None else np.zeros(len(queries), bool)
    sampled = [q for q, x in zip(queries, in_sample.tolist(), strict=True) if x]
    if sampled:  # a pooled pair nobody graded yet leaves its query incomplete too
        human_pairs = {
            (r[0], r[1]) for r, human in zip(live, human_pair.tolist(), strict=True) if human
        }
        for q, d in (
            PoolEntry.objects.filter(collection=collection, query_id__in=sampled)
            .order_by()
            .values_list("query_id", "document_id")
        ):
            if (q, d) not in human_pairs:
                complete[q] = False
    audited = [q for q in sampled if complete[q]]
    empty: dict[int, dict[str, RunCorrection | None]] = {
        run.pk: dict.fromkeys(measures) for run in runs
    }

    def result(reason: str, runs_out: dict[int, dict[str, RunCorrection | None]]):
        return PredictionPowered(
            available=not reason,
            reason=reason,
            target=target,
            confidence=confidence,
            audit_share=share,
            seed=seed,
            queries=len(queries),
            sampled=len(sampled),
            audited=len(audited),
            llm_filled=bool((~human_pair).any()),
            runs=runs_out,
        )

    if audit is None:
        return result("no random audit: choose llm-check with an audit share", empty)
    if not queries or not runs or not measures:
        return result("no live grades, runs or measures", empty)
    if not audited:
        return result("no sampled query has human grades on all its pairs yet", empty)
    audited_set = set(audited)
    llm = _llm_grades(collection)
    human = scoring.live_grades_by_query(r[:4] for r in live if r[0] in audited_set)
    rows = stored_rankings(runs=runs, query_ids=queries, measures=measures)
    run_index = {run.pk: i for i, run in enumerate(runs)}
    query_index = {q: j for j, q in enumerate(queries)}
    f_values = scoring.evaluate_rows(rows=rows, grades_by_query=llm, measures=measures)
    audited_rows = [r for r in rows if r.query_id in audited_set]
    h_values = scoring.evaluate_rows(rows=audited_rows, grades_by_query=human, measures=measures)
    mask = np.isin(np.asarray(queries), np.asarray(audited))
    out: dict[int, dict[str, RunCorrection | None]] = {}
    bounds = {name: score_bounds(name) for name in measures}  # clip to the measure's range
    for name in measures:
        f = _matrix(rows, f_values[name], run_index, query_index)
        h = _matrix(audited_rows, h_values[name], run_index, query_index)
        for run in runs:
            i = run_index[run.pk]
            keep = np.isfinite(f[i]) & (~mask | np.isfinite(h[i]))
            if not (keep & mask).any():
                out.setdefault(run.pk, {})[name] = None
                continue
            est = audited_mean(
                f[i, keep],
                h[i, keep],
                mask[keep],
                alpha=1.0 - confidence,
                target=target,
                bounds=bounds[name],
            )
            out.setdefault(run.pk, {})[name] = RunCorrection(
                estimate=est.estimate,
                low=est.low,
                high=est.high,
                lam=est.lam,
                std_error=est.std_error,
                llm_mean=float(f[i, keep].mean()),
                audited=est.labelled,
                queries=est.units,
                degenerate=est.degenerate,
            )
    return result("", out)


# --- what the leaderboard, its REST endpoint and a run's scores show ----------------------

#: The unit the audit samples and the estimator averages over (docs/measures.md says why).
UNIT = "query"
#: The leaderboard's confidence and target: the mean people would give this collection.
CONFIDENCE = 0.95
TARGET: Literal["collection"] = "collection"
_TTL = 3600
#: Measures that are coverage, not a score of the ranking: nothing to correct.
_COVERAGE_PREFIX = "Judged@"

NO_LLM_ONLY = "no live grade is LLM-only: the means already rest on human grades"
HIDDEN = "hidden until the judgments are published"
NOT_SHOWN = "not shown: the mean itself is not shown to you"
NO_INTERVAL_SHOWN = "intervals are not shown to you before the judgments are published"
ONE_AUDITED = "one audited query: the interval needs two or more"
COVERAGE = "a coverage measure, not a score: nothing to correct"
#: Why a bias-corrected mean shows no interval (``PPICell.interval_note``), by
#: ``metrics.engine.ppi.PPIEstimate.degenerate``; docs/measures.md explains each.
INTERVAL_NOTES = {
    ppi_engine.EXACT: "exact: every query is audited, so this is the human mean itself",
    ppi_engine.NO_SPREAD: "no interval: the audited queries do not vary, so the audit "
    "cannot measure its own error (audit more queries)",
    ppi_engine.ONE_AUDITED: ONE_AUDITED,
    ppi_engine.CLIPPED: "no interval: it lay wholly beyond the measure's range",
}
#: The same, short enough for a leaderboard cell (the whole note is on hover).
INTERVAL_SHORT = {
    INTERVAL_NOTES[ppi_engine.EXACT]: "exact: every query audited",
    INTERVAL_NOTES[ppi_engine.NO_SPREAD]: "no interval: audit does not vary",
    ONE_AUDITED: "no interval: one audited query",
    INTERVAL_NOTES[ppi_engine.CLIPPED]: "no interval: beyond the range",
}


@dataclass(frozen=True)
class PPICell:
    """One run's bias-corrected mean of one measure, as one viewer may see it.

    Every number is None when it is not available or not shown; ``reason`` then says why
    (it is "" when everything is given). ``low`` and ``high`` bound the interval at the
    board's confidence; ``lam`` is the weight on the LLM scores; ``audited`` the audited
    queries the estimate rests on, of ``queries``; ``llm_mean`` the run's mean on the LLM
    grades alone (coordinators and published judgments only). ``interval_note`` says why
    there is no interval when its width would be zero or infinite (:data:`INTERVAL_NOTES`;
    ``low`` and ``high`` are then None), "" otherwise.
    """

    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    lam: float | None = None
    llm_mean: float | None = None
    audited: int | None = None
    queries: int | None = None
    reason: str = ""
    interval_note: str = ""

    @property
    def interval_short(self) -> str:
        """Return :attr:`interval_note` in a few words, for a leaderboard cell."""
        return INTERVAL_SHORT.get(self.interval_note, self.interval_note)


@dataclass(frozen=True)
class LeaderboardPPI:
    """The bias-corrected means of a set of runs, and the audit they rest on.

    ``cells[run_pk][measure]`` is a :class:`PPICell` for every run and measure asked;
    ``reason`` says why nothing is available ("" when something is).
    """

    available: bool
    reason: str
    confidence: float = CONFIDENCE
    target: str = TARGET
    unit: str = UNIT
    audit_share: float | None = None
    queries: int | None = None
    sampled: int | None = None
    audited: int | None = None
    cells: dict[int, dict[str, PPICell]] = field(default_factory=dict)

    def for_run(self, run_pk: int) -> dict[str, PPICell]:
        """Return one run's cells (empty when the run was not asked for)."""
        return self.cells.get(run_pk, {})


def _finite(value: float) -> float | None:
    return float(value) if np.isfinite(value) else None


def _nothing(runs: Sequence[Any], measures: Sequence[str], reason: str, **audit: Any):
    cells = {run.pk: {m: PPICell(reason=reason) for m in measures} for run in runs}
    return LeaderboardPPI(available=False, reason=reason, cells=cells, **audit)


def _computed(
    collection: Collection,
    runs: Sequence[Run],
    measures: list[str],
    audit: Audit | None,
    keep_query: Callable[[str], bool] | None,
    scope: str,
) -> PredictionPowered:
    """Return :func:`prediction_powered_means` for the board, cached per version."""
    key = cache_key_for(
        "ppi",
        collection.pk,
        collection.judgments_version,
        measures,
        sorted(run.pk for run in runs),
        None if audit is None else (audit.share, audit.seed),
        scope,
        TARGET,
        CONFIDENCE,
    )
    found = cache.get(key)
    if found is None:
        found = prediction_powered_means(
            collection=collection,
            runs=list(runs),
            measures=measures,
            target=TARGET,
            confidence=CONFIDENCE,
            keep_query=keep_query,
            audit=audit,
        )
        cache.set(key, found, _TTL)
    return found


def leaderboard_ppi(
    *,
    collection: Collection,
    policy: ScorePolicy,
    runs: Sequence[Run],
    measures: Sequence[str],
    shown: dict[int, dict[str, float | None]] | None = None,
    llm_filled: bool | None = None,
) -> LeaderboardPPI:
    """Return every run's bias-corrected mean of every measure, as ``policy`` allows.

    The score policy (:mod:`metrics.visibility.selectors`) is applied as to the plain
    means: nothing while scores are hidden; in a split mode the units are the queries of
    the viewer's share; a cell is empty wherever the viewer's plain mean is (``shown``,
    the means the viewer sees; read here when not given); in the aggregate mode the
    estimate is rounded as the means are. Viewers who do not see every score get no
    interval, λ or LLM-only mean (the plain means come without intervals for them too).
    Judged@k measures get no correction. ``llm_filled`` is :func:`metrics.selectors.
    llm_filled` when the caller knows it. At most ten SQL queries, whatever the runs.
    """
    measures = list(measures)
    scored = [m for m in measures if not m.startswith(_COVERAGE_PREFIX)]
    if not policy.shows_means:
        return _nothing(runs, measures, HIDDEN)
    if llm_filled is None:
        llm_filled = any_llm_only(collection=collection)
    if not llm_filled:
        return _nothing(runs, measures, NO_LLM_ONLY)
    audit = audit_sample(collection=collection)
    if audit is None or not runs or not scored:
        reason = "no random audit: choose llm-check with an audit share"
        if audit is not None:
            reason = "no runs or measures to correct"
        return _nothing(runs, measures, reason)
    split = policy.exposure in (Exposure.PUBLIC, Exposure.PRIVATE)
    scope = (
        f"{policy.exposure}:{policy.rules.split_seed}:{policy.rules.public_share}"
        if split
        else "all"
    )
    got = _computed(collection, runs, scored, audit, policy.share_query if split else None, scope)
    summary = {
        "audit_share": got.audit_share,
        "queries": got.queries,
        "sampled": got.sampled,
        "audited": got.audited,
    }
    if not got.available:
        return _nothing(runs, measures, got.reason, **summary)
    if shown is None and not policy.full:
        shown = policy.means(runs, scored)
    rounded = policy.exposure == Exposure.AGGREGATE
    cells: dict[int, dict[str, PPICell]] = {}
    for run in runs:
        row: dict[str, PPICell] = {}
        for m in measures:
            corr = got.runs.get(run.pk, {}).get(m)
            if m not in scored:
                row[m] = PPICell(reason=COVERAGE)
            elif not policy.full and (shown or {}).get(run.pk, {}).get(m) is None:
                row[m] = PPICell(reason=NOT_SHOWN)
            elif corr is None or not np.isfinite(corr.estimate):
                row[m] = PPICell(reason="no audited query scores this run on this measure")
            elif not policy.full:
                estimate = round(corr.estimate, ROUND_DECIMALS) if rounded else corr.estimate
                row[m] = PPICell(
                    estimate=estimate,
                    audited=corr.audited,
                    queries=corr.queries,
                    reason=NO_INTERVAL_SHOWN,
                )
            else:
                note = INTERVAL_NOTES.get(corr.degenerate, "")
                if not note and not (np.isfinite(corr.low) and np.isfinite(corr.high)):
                    note = ONE_AUDITED
                low, high = (None, None) if note else (_finite(corr.low), _finite(corr.high))
                row[m] = PPICell(
                    estimate=corr.estimate,
                    low=low,
                    high=high,
                    lam=corr.lam,
                    llm_mean=corr.llm_mean,
                    audited=corr.audited,
                    queries=corr.queries,
                    reason=note,
                    interval_note=note,
                )
        cells[run.pk] = row
    return LeaderboardPPI(available=True, reason="", cells=cells, **summary)
