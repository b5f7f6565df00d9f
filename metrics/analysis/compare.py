"""Paired comparison of runs: per-query score arrays in, significance-test rows out.

Glue between :func:`metrics.selectors.paired_scores` (one matrix of a measure's per-query
values) and :func:`metrics.engine.stats.compare`. One baseline is compared with one or
more runs; with several runs every test's p-values are Holm-adjusted across the
comparisons (:func:`metrics.engine.stats.holm`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judging.models import Query
from metrics.engine import stats
from metrics.models import Run
from metrics.selectors import paired_scores

#: Seed of the randomization test and the bootstrap: the page states it; results repeat.
SEED = 20201019
#: Sign flips drawn by Fisher's randomization test (exact enumeration when 2**n is fewer).
PERMUTATIONS = 10_000
#: Bootstrap resamples for the confidence interval of the mean difference.
RESAMPLES = 10_000
CONFIDENCE = 0.95
#: The p-values of these tests are Holm-adjusted when one baseline meets several runs.
TESTS = ("t", "randomization", "wilcoxon")


class ComparisonError(ValueError):
    """The runs cannot be compared (for example, fewer than two common scored queries)."""


@dataclass(frozen=True)
class ComparisonRow:
    """One run compared with the baseline on the common queries.

    ``deltas`` are per-query ``run - baseline`` in the order of the result's ``queries``.
    ``adjusted`` holds Holm-adjusted p-values per test (keys of ``TESTS``); it equals the
    raw p-values when there is only one comparison.
    """

    run: Run
    result: stats.Comparison
    deltas: np.ndarray
    adjusted: dict[str, float]

    @property
    def raw(self) -> dict[str, float]:
        """Return the unadjusted p-value of each test."""
        return {
            "t": self.result.t_p_value,
            "randomization": self.result.randomization_p_value,
            "wilcoxon": self.result.wilcoxon_p_value,
        }


@dataclass(frozen=True)
class RunComparison:
    """A baseline against one or more runs on one measure."""

    measure: str
    baseline: Run
    queries: list[Query]
    rows: list[ComparisonRow]
    left_out: list[Query]
    seed: int
    permutations: int
    resamples: int
    confidence: float

    @property
    def holm(self) -> bool:
        """Return whether p-values were adjusted for several comparisons."""
        return len(self.rows) > 1


def compare_runs(
    *,
    baseline: Run,
    runs: list[Run],
    measure: str,
    seed: int = SEED,
    permutations: int = PERMUTATIONS,
    resamples: int = RESAMPLES,
    confidence: float = CONFIDENCE,
) -> RunComparison:
    """Compare each of ``runs`` with ``baseline`` on ``measure`` (a canonical name).

    Queries are those scored for every run involved; a query where any run's value is
    undefined (NaN, e.g. a measure that skips it) is left out of every comparison, so all
    comparisons rest on the same queries. Differences are ``run - baseline``. Raise
    ``ComparisonError`` when fewer than two queries remain. Two SQL queries.
    """
    if not runs:
        raise ComparisonError("Choose at least one run to compare with the baseline.")
    queries, matrix = paired_scores(runs=[baseline, *runs], measure=measure)
    keep = np.isfinite(matrix).all(axis=0) if matrix.size else np.zeros(0, dtype=bool)
    left_out = [q for q, k in zip(queries, keep, strict=True) if not k]
    queries = [q for q, k in zip(queries, keep, strict=True) if k]
    matrix = matrix[:, keep]
    if len(queries) < 2:
        raise ComparisonError(
            f"The runs share {len(queries)} scored quer{'y' if len(queries) == 1 else 'ies'} "
            "on this measure; a paired comparison needs at least two."
        )
    base = matrix[0]
    results = [
        stats.compare(
            matrix[i + 1],
            base,
            permutations=permutations,
            resamples=resamples,
            confidence=confidence,
            seed=seed,
        )
        for i in range(len(runs))
    ]
    raw = {
        "t": [r.t_p_value for r in results],
        "randomization": [r.randomization_p_value for r in results],
        "wilcoxon": [r.wilcoxon_p_value for r in results],
    }
    adjusted = {test: stats.holm(p) if len(runs) > 1 else np.asarray(p) for test, p in raw.items()}
    rows = [
        ComparisonRow(
            run=run,
            result=result,
            deltas=matrix[i + 1] - base,
            adjusted={test: float(adjusted[test][i]) for test in TESTS},
        )
        for i, (run, result) in enumerate(zip(runs, results, strict=True))
    ]
    return RunComparison(
        measure=measure,
        baseline=baseline,
        queries=queries,
        rows=rows,
        left_out=left_out,
        seed=seed,
        permutations=permutations,
        resamples=resamples,
        confidence=confidence,
    )
