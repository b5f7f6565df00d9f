"""Paired comparison of runs: per-query score arrays in, significance-test rows out.

Glue between :func:`metrics.selectors.paired_scores` (one matrix of a measure's per-query
values) and the engine. One baseline is compared with one or more runs
(:func:`metrics.engine.stats.compare`); with several runs every test's p-values are
Holm-adjusted across the comparisons (:func:`metrics.engine.stats.holm`). Or every pair
of the chosen runs is compared at once (:func:`compare_all_pairs`,
:func:`metrics.engine.pairs.all_pairs`), Holm-corrected over all pairs or by Tukey's HSD.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from judging.models import Collection, Query
from metrics.engine import pairs as pairs_engine
from metrics.engine import stats
from metrics.engine.letters import letter_strings
from metrics.models import Run, Scoreboard
from metrics.selectors import Viewer, paired_scores, visible_runs

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


# --- every pair of the chosen runs ----------------------------------------------------------

#: At most this many runs in one comparison of all pairs (4,950 pairs).
MAX_PAIR_RUNS = 100
#: The level of the all-pairs tests and intervals: the leaderboard's.
PAIRS_ALPHA = 0.05
#: What each correction is called on the page and in the API, and what its interval is.
CORRECTION_NAMES = {
    "holm": "Holm over all {pairs} pairs (paired t-test)",
    "tukey": "Tukey's HSD, topics as blocks ({pairs} pairs)",
}
#: The test behind every pair's uncorrected p-value: the leaderboard's.
PAIRED_TEST = "paired t-test, two-sided"
INTERVAL_NAMES = {
    "holm": "paired t interval of each pair, not adjusted",
    "tukey": "Tukey's simultaneous interval (all pairs at once)",
}


@dataclass(frozen=True)
class RankedRun:
    """One run of an all-pairs comparison: its mean on the common queries and its letters."""

    run: Run
    rank: int
    mean: float
    groups: tuple[int, ...]
    letters: str


@dataclass(frozen=True)
class PairRow:
    """Two runs compared; ``upper`` has the higher mean (ties: the earlier in the list)."""

    upper: RankedRun
    lower: RankedRun
    pair: pairs_engine.Pair


@dataclass(frozen=True)
class AllPairsComparison:
    """Every pair of the chosen runs on one measure (:func:`metrics.engine.pairs.all_pairs`)."""

    measure: str
    correction: str
    runs: list[RankedRun]  # best mean first
    pairs: list[PairRow]  # (#1, #2), (#1, #3), …, (#2, #3), …
    queries: list[Query]
    left_out: list[Query]
    result: pairs_engine.AllPairs

    @property
    def alpha(self) -> float:
        """Return the level of the tests (and 1 − the intervals' confidence)."""
        return self.result.alpha

    @property
    def correction_name(self) -> str:
        """Return the correction as the page and the API name it."""
        return CORRECTION_NAMES[self.correction].format(pairs=len(self.pairs))

    @property
    def interval_name(self) -> str:
        """Return what the pairs' intervals are."""
        return INTERVAL_NAMES[self.correction]

    @property
    def significant_pairs(self) -> int:
        """Return how many pairs differ significantly."""
        return sum(row.pair.significant for row in self.pairs)

    def matrix(self) -> list[tuple[RankedRun, list[PairRow | None]]]:
        """Return, per run, its pairs with each run below it (None on and below the diagonal)."""
        by_rows = {(row.upper.rank, row.lower.rank): row for row in self.pairs}
        return [
            (run, [by_rows.get((run.rank, other.rank)) for other in self.runs]) for run in self.runs
        ]


def pair_runs(*, collection: Collection, who: Viewer, measure: str) -> list[Run]:
    """Return the runs an all-pairs comparison takes by default: the leaderboard's.

    Every run ``who`` may see that is scored and has a mean on ``measure``, by tag (two
    SQL queries: the runs, the scoreboard).
    """
    runs = list(
        visible_runs(collection=collection, who=who)
        .filter(status=Run.Status.SCORED)
        .order_by("tag")
    )
    Scoreboard.attach(runs)
    return [run for run in runs if run.scores.get(measure) is not None]


def compare_all_pairs(
    *, runs: list[Run], measure: str, correction: str = pairs_engine.CORRECTIONS[0]
) -> AllPairsComparison:
    """Compare every pair of ``runs`` on ``measure`` (a canonical name) with one correction.

    The queries are those scored for every run, less any where a run's value is undefined
    (as :func:`compare_runs` and the leaderboard's intervals read them); differences are
    upper − lower, the run with the higher mean above. Raise ``ComparisonError`` for fewer
    than two or more than :data:`MAX_PAIR_RUNS` runs, or fewer than two queries. Two SQL
    queries.
    """
    runs = list(dict.fromkeys(runs))
    if len(runs) < 2:
        raise ComparisonError("Choose at least two runs to compare every pair of.")
    if len(runs) > MAX_PAIR_RUNS:
        raise ComparisonError(
            f"Choose at most {MAX_PAIR_RUNS} runs ({MAX_PAIR_RUNS * (MAX_PAIR_RUNS - 1) // 2} "
            f"pairs); {len(runs)} were chosen."
        )
    if correction not in pairs_engine.CORRECTIONS:
        raise ComparisonError(
            f"Unknown correction {correction!r}: one of {', '.join(pairs_engine.CORRECTIONS)}."
        )
    queries, matrix = paired_scores(runs=runs, measure=measure)
    keep = np.isfinite(matrix).all(axis=0) if matrix.size else np.zeros(0, dtype=bool)
    left_out = [q for q, k in zip(queries, keep, strict=True) if not k]
    queries = [q for q, k in zip(queries, keep, strict=True) if k]
    if len(queries) < 2:
        raise ComparisonError(
            f"The runs share {len(queries)} scored quer{'y' if len(queries) == 1 else 'ies'} "
            "on this measure; a paired comparison needs at least two."
        )
    result = pairs_engine.all_pairs(matrix[:, keep], correction=correction, alpha=PAIRS_ALPHA)
    printed = letter_strings(list(result.groups))
    ranked = [
        RankedRun(
            run=runs[row],
            rank=position,
            mean=result.means[row],
            groups=result.groups[position - 1],
            letters=printed[position - 1],
        )
        for position, row in enumerate(result.order, start=1)
    ]
    by_row = {row: ranked[i] for i, row in enumerate(result.order)}
    return AllPairsComparison(
        measure=measure,
        correction=correction,
        runs=ranked,
        pairs=[PairRow(by_row[p.upper], by_row[p.lower], p) for p in result.pairs],
        queries=queries,
        left_out=left_out,
        result=result,
    )
