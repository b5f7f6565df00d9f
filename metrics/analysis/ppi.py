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

A query is *sampled* when its audit draw, :func:`judging.agreement.checks.audit_draws`
of the query's id and document id 0 under the policy's seed (one draw per query,
independent of the pair draws, which use document ids from 1), is below the share. A
sampled query is *audited* once every one of its live pairs is human; then its human
score ``h`` is its live score. Every query's LLM score ``f`` is its score under the LLM
grades alone (pairs no LLM graded left out), whether audited or not.

Six SQL queries; nothing is written or cached.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from judging.agreement.checks import audit_draws
from judging.models import Collection, Judge, Judgment, LiveGrade
from metrics.engine.ppi import audited_mean
from metrics.live import scoring
from metrics.models import Run
from metrics.pool.selectors import audit_sample
from metrics.selectors import stored_rankings

__all__ = ["PredictionPowered", "RunCorrection", "prediction_powered_means"]


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
    """Return the LLM judges' grade of every pair they graded, grouped by query."""
    rows = np.array(
        [
            (q, d, g, np.nan if a is None else a)
            for q, d, g, a in Judgment.objects.filter(
                collection=collection, status=Judgment.Status.GRADED, judge__kind=Judge.Kind.LLM
            )
            .order_by()
            .values_list("query_id", "document_id", "grade", "abstain_probability")
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
) -> PredictionPowered:
    """Return each run's prediction-powered mean of each measure, with its interval.

    ``measures`` are canonical names; ``target`` and the estimator are those of
    :func:`metrics.engine.ppi.audited_mean` (tuned λ, Student's t interval). Nothing is
    available without a random audit (``llm-check`` with ``audit_percent`` above 0), without
    live grades, or before a sampled query is fully human-graded.
    """
    if target not in ("collection", "topics"):
        raise ValueError("target: must be 'collection' or 'topics'")
    if not 0.0 < confidence < 1.0:
        raise ValueError("confidence: must lie strictly between 0 and 1")
    share, seed = 0.0, 0
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
    human_pair = np.array([r[4] > 0 or r[5] for r in live], dtype=bool)
    live_query = np.array([r[0] for r in live], dtype=np.int64)
    queries = sorted(set(live_query.tolist()))
    complete = dict.fromkeys(queries, True)
    for q in live_query[~human_pair].tolist():
        complete[q] = False
    draws = audit_draws(queries, np.zeros(len(queries), dtype=np.int64), seed=seed)
    sampled = [q for q, x in zip(queries, draws.tolist(), strict=True) if x < share]
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
                f[i, keep], h[i, keep], mask[keep], alpha=1.0 - confidence, target=target
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
            )
    return result("", out)
