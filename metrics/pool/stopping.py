"""When more judging stops paying: how stable a system ranking is (pure; no Django).

Two figures, both Kendall's τ-b between system rankings (:mod:`metrics.engine.rankcorr`):

* **Looking back** — :func:`tau_between` compares the runs' ranking now with their
  ranking ``N`` judgments ago (a stored snapshot). Only runs scored in both count.
* **Looking ahead** — :func:`expected_tau` estimates the τ between the ranking now and
  the ranking after the next ``N`` judgments. The next pairs are the queue's (the
  pooling plan's order, or a random draw of the open pairs under depth-k); each draw
  gives them grades from a predictive distribution (:func:`grade_prior`), rescores every
  run and ranks them again. The mean over the draws is the expected τ; the 10th
  percentile says how far a bad draw moves it.

A third figure watches significance, not order: which pairs of runs the leaderboard's
paired t-test (Holm-adjusted over every pair) tells apart (:func:`significant_pairs`),
how many of those decisions changed since the snapshot ``N`` judgments ago
(:func:`flips_between`), and, in the same simulated draws as the expected τ
(:func:`look_ahead`), the chance that one changes over the next ``N``. A ranking can hold
(τ near 1) while a borderline pair crosses the significance line.

A collection *stops paying* for more judging at target τ* when both τ are at least τ*
and the significance decisions held over the last ``N`` and are unlikely (at most
:data:`DEFAULT_FLIP_RISK`) to change over the next ``N`` (:func:`verdict`). Voorhees
(SIGIR 1998) takes τ ≥ 0.9 as "the same ranking"; we default to the stricter 0.95
because a step's τ compares neighbouring states, not the final one.

Edge cases: with fewer than two runs in common, or all runs tied in either ranking, τ
is undefined and returned as NaN (no warning). With no open pair left the expected τ
is 1 and no decision can flip. With fewer than two runs or queries no pair is tested:
the set of significant pairs is empty.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import special

from metrics.engine.rankcorr import RankCorrelationUndefinedWarning, kendall_tau_b
from metrics.engine.stats import holm

F64 = NDArray[np.float64]
I64 = NDArray[np.int64]
Pair = tuple[int, int]

GRADES = 5  # 0–4
#: Best-rank bands (0-based, upper bounds exclusive) for the rank-conditioned prior.
RANK_BANDS = (1, 3, 10, 20, 50, 100)
DEFAULT_TARGET = 0.95
DEFAULT_STEP = 100
#: Level of the leaderboard's paired test (Holm-adjusted p-values at most this differ).
ALPHA = 0.05
#: Largest chance that some significance decision changes over the next N judgments at
#: which more judging may still stop paying.
DEFAULT_FLIP_RISK = 0.05


def _tau(x: F64, y: F64) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankCorrelationUndefinedWarning)
        return kendall_tau_b(x, y)


def tau_between(now: Mapping[str, float], then: Mapping[str, float]) -> tuple[float, int]:
    """Return (τ-b, runs compared) between two ``{run: score}`` rankings.

    Runs missing from either side, or scored None/NaN in either, are left out.
    """
    common = [
        r
        for r in now
        if r in then
        and now[r] is not None
        and then[r] is not None
        and np.isfinite(now[r])
        and np.isfinite(then[r])
    ]
    if len(common) < 2:
        return float("nan"), len(common)
    a = np.array([now[r] for r in common], dtype=np.float64)
    b = np.array([then[r] for r in common], dtype=np.float64)
    return _tau(a, b), len(common)


def _band(ranks: I64) -> I64:
    return np.searchsorted(np.asarray(RANK_BANDS), ranks, side="right")


def grade_prior(
    best_ranks: Sequence[I64], known: Sequence[F64], *, smoothing: float = 1.0
) -> list[NDArray[np.float64]]:
    """Return, per query, a probability over grades 0–4 for each document (rows sum to 1).

    The grade of a document nobody judged is predicted from the grades judged at the same
    best rank band (rank 1, 2–3, 4–10, 11–20, 21–50, 51–100, deeper) over all queries,
    with add-``smoothing`` (Laplace) counts; a judged document gets its own grade
    (fractional grades, e.g. means, split between the two integers around them).
    """
    n_bands = len(RANK_BANDS) + 1
    counts = np.full((n_bands, GRADES), smoothing, dtype=np.float64)
    for ranks, grades in zip(best_ranks, known, strict=True):
        seen = ~np.isnan(grades)
        if seen.any():
            for band, g in zip(_band(ranks[seen]).tolist(), grades[seen].tolist(), strict=True):
                counts[band] += _one_hot(g)
    table = counts / counts.sum(axis=1, keepdims=True)
    out = []
    for ranks, grades in zip(best_ranks, known, strict=True):
        probs = table[_band(ranks)].copy()
        for i in np.flatnonzero(~np.isnan(grades)).tolist():
            probs[i] = _one_hot(float(grades[i]))
        out.append(probs)
    return out


def _one_hot(grade: float) -> F64:
    grade = min(max(grade, 0.0), GRADES - 1.0)
    low = int(np.floor(grade))
    vec = np.zeros(GRADES, dtype=np.float64)
    vec[low] = 1.0 - (grade - low)
    if grade > low:
        vec[low + 1] = grade - low
    return vec


@dataclass(frozen=True)
class ExpectedTau:
    """The τ-b expected between the ranking now and after the next ``pairs`` judgments."""

    mean: float
    low: float  # 10th percentile over the draws
    pairs: int  # pairs judged in each draw (at most the step; fewer if fewer are open)
    draws: int

    @property
    def defined(self) -> bool:
        """Return whether the expected τ is a number."""
        return bool(np.isfinite(self.mean))


@dataclass(frozen=True)
class Significance:
    """Which pairs of runs the leaderboard's test tells apart, on one score matrix.

    ``decisions[i, j]`` is +1 when run ``i`` is significantly better than run ``j``
    (two-sided paired t-test over the queries, Holm-adjusted over every pair of runs,
    adjusted p ≤ ``alpha``), -1 when significantly worse, 0 when the test cannot tell
    them apart; it is antisymmetric with a zero diagonal. ``queries`` is the number of
    queries the test used (those every run scores finitely).
    """

    decisions: NDArray[np.int8]
    queries: int

    @property
    def runs(self) -> int:
        """Return the number of runs."""
        return int(self.decisions.shape[0])

    @property
    def defined(self) -> bool:
        """Return whether a test was possible (two or more runs and queries)."""
        return self.runs >= 2 and self.queries >= 2

    @property
    def tested(self) -> int:
        """Return the number of pairs of runs tested (0 when no test was possible)."""
        return self.runs * (self.runs - 1) // 2 if self.defined else 0

    @property
    def count(self) -> int:
        """Return the number of significantly different pairs."""
        return int(np.count_nonzero(np.triu(self.decisions, 1)))

    def record(self, labels: Sequence[str]) -> dict[str, object]:
        """Return the decisions as JSON under the runs' ``labels`` (rows in order).

        ``{"runs": [...], "queries": n, "better": [[winner, loser], ...]}``, the form a
        ranking snapshot stores and :func:`flips_between` reads.
        """
        if len(labels) != self.runs:
            raise ValueError(f"{len(labels)} labels for {self.runs} runs")
        wins = np.argwhere(self.decisions > 0).tolist()
        return {
            "runs": [str(x) for x in labels],
            "queries": self.queries,
            "better": sorted([str(labels[i]), str(labels[j])] for i, j in wins),
        }


def pair_p_values(scores: F64) -> F64:
    """Return the two-sided paired t-test p-value of every pair of runs (rows of ``scores``).

    Pairs are in ``numpy.triu_indices(runs, 1)`` order: (0, 1), (0, 2), …, (1, 2), ….
    The same numbers as ``scipy.stats.ttest_rel`` (t = mean / (sd / √n) of the
    differences, n − 1 degrees of freedom), vectorised, with the edge cases of
    :func:`metrics.engine.stats.paired_t_test`: identical rows give p = 1, differences
    constant and non-zero give p = 0. Every score must be finite and there must be two
    or more queries (ValueError otherwise).
    """
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("scores must be a (runs × queries) matrix")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("every score must be finite")
    n = matrix.shape[1]
    if n < 2:
        raise ValueError(f"a paired t-test needs at least two queries; got {n}")
    runs = matrix.shape[0]
    if runs < 2:
        return np.zeros(0, dtype=np.float64)
    # row by row (i against every later run): the triu order, without fancy indexing
    blocks = [matrix[i] - matrix[i + 1 :] for i in range(runs - 1)]
    mean = np.concatenate([b.mean(axis=1) for b in blocks])
    var = np.concatenate([b.var(axis=1, ddof=1) for b in blocks])
    same = np.concatenate([np.all(b == 0.0, axis=1) for b in blocks])
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / np.sqrt(var / n)
    p = 2.0 * special.stdtr(n - 1, -np.abs(t))
    p = np.where(var == 0.0, 0.0, p)  # constant non-zero differences: t = ±inf
    return np.where(same, 1.0, np.minimum(p, 1.0))


def significant_pairs(scores: F64, *, alpha: float = ALPHA) -> Significance:
    """Return which pairs of runs differ significantly on a (runs × queries) matrix.

    The leaderboard's test: a two-sided paired t-test per pair of runs
    (:func:`pair_p_values`, the test of the leaderboard's "may swap" column and of the
    comparison page), Holm-adjusted over all ``runs·(runs − 1)/2`` pairs
    (:func:`metrics.engine.stats.holm`, as the comparison page adjusts), significant
    when the adjusted p-value is at most ``alpha``. Queries with a non-finite score for
    any run are left out first (as the leaderboard's intervals leave them out). With
    fewer than two runs or two queries left no pair is tested: every decision is 0.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha}")
    matrix = np.asarray(scores, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError("scores must be a (runs × queries) matrix")
    kept = matrix[:, np.all(np.isfinite(matrix), axis=0)]
    runs, n = kept.shape
    decisions = np.zeros((runs, runs), dtype=np.int8)
    if runs < 2 or n < 2:
        return Significance(decisions=decisions, queries=int(n))
    upper, lower = np.triu_indices(runs, 1)
    adjusted = holm(pair_p_values(kept))
    sign = np.sign(kept[upper].mean(axis=1) - kept[lower].mean(axis=1)).astype(np.int8)
    decided = np.where(adjusted <= alpha, sign, 0).astype(np.int8)
    decisions[upper, lower] = decided
    decisions[lower, upper] = -decided
    return Significance(decisions=decisions, queries=int(n))


def decision_flips(before: Significance, after: Significance) -> int:
    """Return how many pairs of runs changed decision between two tests of the same runs.

    A decision is one of "i better", "j better", "not told apart"; a pair that turns
    from significant to not (or back, or to the other direction) counts once.
    """
    if before.runs != after.runs:
        raise ValueError(f"the tests cover {before.runs} and {after.runs} runs")
    return int(np.count_nonzero(np.triu(before.decisions != after.decisions, 1)))


def flips_between(now: Mapping[str, object], then: Mapping[str, object]) -> tuple[int, int]:
    """Return (decisions changed, pairs compared) between two recorded tests.

    Both are :meth:`Significance.record` JSON. Only pairs of runs present in both count
    (as :func:`tau_between` keeps the runs scored in both); a run that came or went
    changes no decision here.
    """
    common = sorted(set(map(str, now["runs"])) & set(map(str, then["runs"])))  # type: ignore[arg-type]
    keep = set(common)

    def wins(record: Mapping[str, object]) -> set[tuple[str, str]]:
        return {
            (str(w), str(lo))
            for w, lo in record["better"]  # type: ignore[attr-defined]
            if str(w) in keep and str(lo) in keep
        }

    changed = wins(now) ^ wins(then)
    # a pair that changed direction appears twice in the symmetric difference
    pairs = {tuple(sorted(p)) for p in changed}
    return len(pairs), len(common) * (len(common) - 1) // 2


@dataclass(frozen=True)
class ExpectedFlips:
    """Significance decisions expected to change over the next ``pairs`` judgments.

    ``change`` is the share of draws in which at least one pair of runs changes
    decision (the probability that the set of significant pairs changes); ``flips`` the
    mean number of pairs that change. ``defined`` is False when no pair could be tested
    now (fewer than two runs or queries): the set is empty, and a draw can only flip a
    decision if it scores a query that no run scored before.
    """

    change: float
    flips: float
    pairs: int
    draws: int
    defined: bool = True


def expected_tau(
    scorer: Callable[[list[F64]], F64],
    known: Sequence[F64],
    prior: Sequence[NDArray[np.float64]],
    *,
    planned: Sequence[Pair],
    open_pairs: Sequence[Pair],
    step: int,
    draws: int = 50,
    seed: int = 0,
) -> ExpectedTau:
    """Return the expected τ-b between the runs' ranking now and after ``step`` judgments.

    ``scorer`` maps per-query labels (NaN: unjudged) to a (runs × queries) score matrix;
    runs are ranked by their mean over queries. The next pairs are ``planned`` in order,
    then, if the plan is shorter than ``step``, a random draw (per draw) of the other
    ``open_pairs``. Each pair's grade is drawn from ``prior[q][d]``.
    """
    return look_ahead(
        scorer,
        known,
        prior,
        planned=planned,
        open_pairs=open_pairs,
        step=step,
        draws=draws,
        seed=seed,
        significance=False,
    )[0]


def look_ahead(
    scorer: Callable[[list[F64]], F64],
    known: Sequence[F64],
    prior: Sequence[NDArray[np.float64]],
    *,
    planned: Sequence[Pair],
    open_pairs: Sequence[Pair],
    step: int,
    draws: int = 50,
    seed: int = 0,
    significance: bool = True,
    alpha: float = ALPHA,
) -> tuple[ExpectedTau, ExpectedFlips | None]:
    """Return the expected τ-b and the expected significance flips after ``step`` judgments.

    One simulation serves both (the draws of :func:`expected_tau`, same seed, same
    numbers): each draw grades the next pairs from ``prior``, rescores every run, and
    compares (a) the ranking by mean with the ranking now (τ-b) and (b) the
    significance decisions of every pair of runs (:func:`significant_pairs`) with the
    decisions now (:func:`decision_flips`). ``significance`` False skips (b) and returns
    None for it. With no pair left to judge nothing can change: τ 1, no flip.
    """
    rng = np.random.default_rng(seed)
    matrix_now = scorer(list(known))
    now = matrix_now.mean(axis=1)
    decided = significant_pairs(matrix_now, alpha=alpha) if significance else None
    head = list(dict.fromkeys(planned))[:step]
    taken = set(head)
    rest = [p for p in dict.fromkeys(open_pairs) if p not in taken]
    extra = max(0, min(step - len(head), len(rest)))
    pairs = len(head) + extra
    if pairs == 0:
        flat = None if decided is None else ExpectedFlips(0.0, 0.0, 0, 0, decided.defined)
        return ExpectedTau(mean=1.0, low=1.0, pairs=0, draws=0), flat
    taus = np.empty(draws, dtype=np.float64)
    flips = np.zeros(draws, dtype=np.int64)
    for i in range(draws):
        chosen = head
        if extra:
            pick = rng.choice(len(rest), size=extra, replace=False)
            chosen = head + [rest[j] for j in pick.tolist()]
        labels = [k.copy() for k in known]
        for q, d in chosen:
            labels[q][d] = float(rng.choice(GRADES, p=prior[q][d]))
        matrix = scorer(labels)
        taus[i] = _tau(matrix.mean(axis=1), now)
        if decided is not None:
            flips[i] = decision_flips(decided, significant_pairs(matrix, alpha=alpha))
    expected_flips = None
    if decided is not None:
        expected_flips = ExpectedFlips(
            change=float(np.mean(flips > 0)),
            flips=float(flips.mean()),
            pairs=pairs,
            draws=draws,
            defined=decided.defined,
        )
    finite = taus[np.isfinite(taus)]
    if finite.size == 0:
        tau = ExpectedTau(mean=float("nan"), low=float("nan"), pairs=pairs, draws=draws)
        return tau, expected_flips
    tau = ExpectedTau(
        mean=float(finite.mean()),
        low=float(np.percentile(finite, 10)),
        pairs=pairs,
        draws=draws,
    )
    return tau, expected_flips


def verdict(
    *,
    looking_back: float | None,
    ahead: ExpectedTau | None,
    open_pairs: int,
    target: float,
    flips_back: int | None = None,
    flips_ahead: ExpectedFlips | None = None,
    flip_risk: float = DEFAULT_FLIP_RISK,
) -> tuple[str, str]:
    """Return (state, sentence) for the collection page: whether more judging pays.

    States: ``done`` (no open pair), ``unknown`` (too little history or too few runs),
    ``moving`` (a τ under the target, or a significance decision that changed or is
    likely to), ``stops-paying``. More judging stops paying only when both τ reach the
    target *and* the significance decisions held: ``flips_back`` (pairs of runs whose
    decision changed over the last ``N`` judgments) is 0 and the chance that one
    changes over the next ``N`` (``flips_ahead.change``) is at most ``flip_risk``.
    Without a record of the decisions ``N`` judgments ago (``flips_back`` None) or a
    look ahead at them, a stable τ gives ``unknown``, never ``stops-paying``.
    """
    if open_pairs == 0:
        return "done", "Every pooled pair is judged."
    back_ok = looking_back is not None and np.isfinite(looking_back)
    ahead_ok = ahead is not None and np.isfinite(ahead.mean)
    if not back_ok or not ahead_ok:
        return "unknown", "Not enough history or runs yet to say how stable the ranking is."
    if looking_back < target or ahead.mean < target:
        return "moving", f"The ranking is still moving (τ under {target:g}): judging pays."
    if flips_back is None or flips_ahead is None or not np.isfinite(flips_ahead.change):
        return (
            "unknown",
            f"The ranking held (τ ≥ {target:g}), but there is no record yet of which runs "
            "differed significantly a step ago: judge on until there is.",
        )
    if flips_back > 0:
        return (
            "moving",
            f"The ranking held (τ ≥ {target:g}), but {flips_back} significance "
            f"decision{'s' if flips_back != 1 else ''} between runs changed over the last "
            "judgments: judging pays.",
        )
    if flips_ahead.change > flip_risk:
        return (
            "moving",
            f"The ranking held (τ ≥ {target:g}) and no significance decision changed, but "
            f"one is likely to change over the next judgments ({flips_ahead.change:.0%} "
            f"chance, over {flip_risk:.0%}): judging pays.",
        )
    return (
        "stops-paying",
        f"The ranking held (τ ≥ {target:g}) and so did every significance decision between "
        "runs over the last judgments, and both are expected to hold over the next ones: "
        "more judging stops paying for this ranking.",
    )
