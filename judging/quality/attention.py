"""Attention signals of judges: time per label, runs of one grade, abstentions (numpy only).

Inputs are one entry per label, grouped by judge and in the order the judge gave them
(:func:`attention`). No Django here; :mod:`judging.quality.selectors` reads the labels.

Each judge is compared with the *other* judges of the same collection, never with a fixed
norm, and a signal is raised only with enough labels to be more than noise:

- **Seconds per label** (human judges; labels without a time are left out). The judge's
  median against the others' labels, on a log scale (times are skewed): the others'
  usual range is Tukey's fences, ``exp(Q1 − 1.5·IQR)`` to ``exp(Q3 + 1.5·IQR)`` of their
  log seconds. A median outside it is flagged *fast* or *slow*. Needs
  :data:`MIN_LABELS` timed labels of the judge and of the others.
- **Runs of one grade.** The share of graded labels equal to the judge's previous graded
  label, against what the judge's own grade distribution gives by chance, Σ p_g²
  (independent labels). Flagged when the one-sided binomial z-score exceeds
  :data:`Z_FLAG` (a judge clicking the same grade through a queue). The longest run is
  reported beside it. Needs :data:`MIN_LABELS` graded labels.
- **Can't judge and later.** The judge's share of each status against the others'
  pooled share, two-proportion z-test, flagged above :data:`Z_FLAG` (only too many: a low
  share is no warning). Needs :data:`MIN_LABELS` labels of the judge and of the others.
- **Straight-lining** (:func:`straight_lining`; needs each label's query). A judge who
  gives one grade whatever the document, where the other judges' grades of the same
  queries vary. The runs test above cannot see it (40 zeros are what a judge whose own
  grades are all 0 gives by chance); this one compares the judge with the *others on the
  same queries*, so a careful judge on a query nobody finds relevant is not flagged.

Edge cases: a judge alone in the collection has no comparison (every flag None); a
signal without enough data is NaN with its flag None; a judge whose grades are all one
value has chance share 1 and is not flagged by the runs test (straight-lining is).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: Fewest labels a signal is computed from (of the judge, and of the others).
MIN_LABELS = 20
#: A z-score above this flags a judge (about 1 in 740 by chance, one-sided).
Z_FLAG = 3.0
#: Status codes of the ``status`` array.
GRADED, CANNOT_JUDGE, LATER = 0, 1, 2
#: Straight-lining: a label is compared only if other judges gave its query this many grades.
MIN_OTHERS = 3
#: Straight-lining: pseudo-grades, spread as the others' grades of every query, added to
#: each query's others' grades (so one or two grades never make a grade impossible).
PRIOR_WEIGHT = 2.0
#: Straight-lining: the judge's grade entropy must be below this share of the expected one.
ENTROPY_SHARE = 0.5
#: Straight-lining: a run of one grade is flagged when its chance, times the labels it
#: could start at, is below this (the one-sided tail of z = 3) ...
RUN_CHANCE = 0.00135
#: ... and it is at least this long (a short run of a grade the others rarely give is
#: disagreement, not straight-lining).
MIN_RUN = 10
GRADES = 5

__all__ = [
    "CANNOT_JUDGE",
    "ENTROPY_SHARE",
    "GRADED",
    "LATER",
    "MIN_LABELS",
    "MIN_OTHERS",
    "MIN_RUN",
    "PRIOR_WEIGHT",
    "RUN_CHANCE",
    "Z_FLAG",
    "JudgeAttention",
    "StraightLining",
    "attention",
    "entropy_bits",
    "longest_run",
    "repeat_share",
    "straight_lining",
    "tukey_range",
]


@dataclass(frozen=True)
class JudgeAttention:
    """One judge's attention signals and which of them are flagged.

    ``flags`` holds the names of the raised signals (``fast``, ``slow``, ``runs``,
    ``straight``, ``cannot_judge``, ``later``); each ``*_z`` is NaN when not computed.
    ``straight`` is the straight-lining test (None when no query was given).
    """

    labels: int
    timed: int
    median_seconds: float
    q1_seconds: float
    q3_seconds: float
    others_low_seconds: float
    others_high_seconds: float
    graded: int
    repeat_share: float
    chance_repeat_share: float
    runs_z: float
    longest_run: int
    cannot_judge_share: float
    others_cannot_judge_share: float
    cannot_judge_z: float
    later_share: float
    others_later_share: float
    later_z: float
    flags: tuple[str, ...]
    straight: StraightLining | None = None


def longest_run(grades: npt.ArrayLike) -> int:
    """Return the length of the longest run of equal consecutive values (0 when empty)."""
    values = np.asarray(grades)
    if values.size == 0:
        return 0
    breaks = np.flatnonzero(values[1:] != values[:-1]) + 1
    edges = np.concatenate(([0], breaks, [values.size]))
    return int(np.diff(edges).max())


def repeat_share(grades: npt.ArrayLike) -> tuple[float, float, float]:
    """Return (share equal to the previous, chance share Σp², one-sided binomial z).

    NaN for fewer than two grades; z is NaN when the chance share is 0 or 1 (no spread).
    """
    values = np.asarray(grades)
    if values.size < 2:
        return math.nan, math.nan, math.nan
    repeats = values[1:] == values[:-1]
    observed = float(repeats.mean())
    _, counts = np.unique(values, return_counts=True)
    chance = float(((counts / values.size) ** 2).sum())
    trials = values.size - 1
    if not 0 < chance < 1:
        return observed, chance, math.nan
    z = (observed - chance) / math.sqrt(chance * (1 - chance) / trials)
    return observed, chance, float(z)


def tukey_range(seconds: npt.ArrayLike) -> tuple[float, float]:
    """Return Tukey's fences of ``seconds`` on a log scale, back in seconds (NaN if empty).

    Non-positive times are read as 0.1 s (a log needs a positive number).
    """
    values = np.log(np.maximum(np.asarray(seconds, dtype=np.float64), 0.1))
    if values.size == 0:
        return math.nan, math.nan
    q1, q3 = np.percentile(values, [25, 75])
    spread = q3 - q1
    return float(math.exp(q1 - 1.5 * spread)), float(math.exp(q3 + 1.5 * spread))


def _two_proportion_z(hits: int, n: int, other_hits: int, other_n: int) -> float:
    """Return the pooled two-proportion z-score of hits/n against other_hits/other_n."""
    pooled = (hits + other_hits) / (n + other_n)
    if pooled in (0.0, 1.0):
        return 0.0
    se = math.sqrt(pooled * (1 - pooled) * (1 / n + 1 / other_n))
    return (hits / n - other_hits / other_n) / se


@dataclass(frozen=True)
class StraightLining:
    """One judge's grades against the other judges' grades of the same queries.

    ``compared``: the judge's graded labels whose query the others gave at least
    :data:`MIN_OTHERS` grades (only those count below). ``mode_grade`` the judge's
    commonest grade there, ``mode_share`` its share, ``expected_mode_share`` the share the
    others' grades of the same queries give it, ``z`` the one-sided z-score of the
    difference (Poisson-binomial variance). ``entropy`` the judge's grade entropy in bits,
    ``expected_entropy`` that of the others' grades of the same queries (their mixture).
    ``run_*``: the judge's least probable run of one grade (consecutive compared labels)
    of :data:`MIN_RUN` or more (else their longest run), its chance under the others'
    grades of each label's query (log10), its length and its median seconds per label
    (NaN without times). ``flagged``: see :func:`straight_lining`.
    Figures are NaN (run length 0) without enough labels.
    """

    compared: int
    mode_grade: float
    mode_share: float
    expected_mode_share: float
    z: float
    entropy: float
    expected_entropy: float
    run_grade: float
    run_length: int
    run_log10_chance: float
    run_median_seconds: float
    median_seconds: float
    flagged: bool


def entropy_bits(distribution: npt.ArrayLike) -> float:
    """Return the entropy in bits of a distribution (counts or shares; 0 for one value)."""
    values = np.asarray(distribution, dtype=np.float64)
    total = values.sum()
    if total <= 0:
        return math.nan
    p = values[values > 0] / total
    return float(-(p * np.log2(p)).sum()) + 0.0


def straight_lining(
    grades: npt.ArrayLike,
    chances: npt.ArrayLike,
    seconds: npt.ArrayLike | None = None,
) -> StraightLining:
    """Return the straight-lining test of one judge's graded labels (oldest first).

    ``grades`` are the judge's grades (0–4) of the compared labels, in the order given;
    ``chances`` is, for each, the distribution of grades the *other* judges gave the
    label's query (a row of 5 shares summing to 1; :func:`attention` smooths it towards
    the others' grades of every query with :data:`PRIOR_WEIGHT` pseudo-grades);
    ``seconds`` each label's time (NaN when not recorded).

    Flagged, from :data:`MIN_LABELS` labels on, when either

    - the judge's grades barely vary where the others' do: the share of their commonest
      grade is above what the others' grades of the same queries give it (z above
      :data:`Z_FLAG`) *and* the entropy of their grades is below :data:`ENTROPY_SHARE` of
      the entropy of the others' (so a judge who is merely harsher or more lenient, whose
      grades still vary, is left to the bias figures of the agreement page); or
    - a run of one grade, :data:`MIN_RUN` labels or longer, is improbable under the
      others' grades of its labels' queries: its chance times the number of labels it
      could have started at is below :data:`RUN_CHANCE` (a Bonferroni bound over the runs
      one could pick).

    A careful judge on queries nobody finds relevant is not flagged: the others' grades
    of those queries are all 0 too, so their commonest grade is expected, their entropy
    expected low, and their run probable.
    """
    g = np.asarray(grades, dtype=np.int64).reshape(-1)
    p = np.asarray(chances, dtype=np.float64).reshape(-1, GRADES)
    if p.shape[0] != g.size:
        raise ValueError("grades and chances: one row of chances per grade")
    t = (
        np.full(g.size, np.nan)
        if seconds is None
        else np.asarray(seconds, dtype=np.float64).reshape(-1)
    )
    if t.size != g.size:
        raise ValueError("grades and seconds: lengths differ")
    n = int(g.size)
    timed = t[~np.isnan(t)]
    median = float(np.median(timed)) if timed.size else math.nan
    nan = math.nan
    if n == 0:
        return StraightLining(0, nan, nan, nan, nan, nan, nan, nan, 0, nan, nan, median, False)
    counts = np.bincount(g, minlength=GRADES)
    mode = int(np.argmax(counts))
    share = float(counts[mode] / n)
    chance_mode = p[:, mode]
    expected = float(chance_mode.mean())
    variance = float((chance_mode * (1 - chance_mode)).sum()) / n**2
    z = (share - expected) / math.sqrt(variance) if variance > 0 else nan
    entropy = entropy_bits(counts)
    expected_entropy = entropy_bits(p.mean(axis=0))
    # the least probable run of one grade of MIN_RUN labels or more (else the longest)
    log_p = np.log10(np.maximum(p[np.arange(n), g], 1e-300))
    starts = np.concatenate(([0], np.flatnonzero(g[1:] != g[:-1]) + 1))
    ends = np.concatenate((starts[1:], [n]))
    sums = np.add.reduceat(log_p, starts)
    long_enough = (ends - starts) >= MIN_RUN
    if long_enough.any():
        worst = int(np.argmin(np.where(long_enough, sums, np.inf)))
    else:
        worst = int(np.argmax(ends - starts))
    a, b = int(starts[worst]), int(ends[worst])
    run_times = t[a:b][~np.isnan(t[a:b])]
    run_chance = float(sums[worst])
    enough = n >= MIN_LABELS
    flat = (
        enough
        and not math.isnan(z)
        and z > Z_FLAG
        and expected_entropy > 0
        and entropy < ENTROPY_SHARE * expected_entropy
    )
    improbable = enough and b - a >= MIN_RUN and run_chance + math.log10(n) < math.log10(RUN_CHANCE)
    return StraightLining(
        compared=n,
        mode_grade=float(mode),
        mode_share=share,
        expected_mode_share=expected,
        z=float(z),
        entropy=entropy,
        expected_entropy=expected_entropy,
        run_grade=float(g[a]),
        run_length=b - a,
        run_log10_chance=run_chance,
        run_median_seconds=float(np.median(run_times)) if run_times.size else nan,
        median_seconds=median,
        flagged=bool(flat or improbable),
    )


def _query_chances(
    query: np.ndarray, judge: np.ndarray, grade: np.ndarray, graded: np.ndarray, j: int
) -> tuple[np.ndarray, np.ndarray]:
    """Return judge ``j``'s compared labels (a mask) and the others' grades of their queries.

    The others' grades of a query are smoothed towards the others' grades of every query
    (:data:`PRIOR_WEIGHT` pseudo-grades, themselves given half a grade of each value).
    """
    others = graded & (judge != j)
    n_queries = int(query.max()) + 1 if query.size else 0
    table = np.zeros((n_queries, GRADES))
    np.add.at(table, (query[others], grade[others].astype(np.int64)), 1.0)
    overall = table.sum(axis=0) + 0.5
    prior = overall / overall.sum()
    per_query = table.sum(axis=1)
    mine = graded & (judge == j)
    compared = mine & (per_query[query] >= MIN_OTHERS)
    rows = query[compared]
    chances = (table[rows] + PRIOR_WEIGHT * prior) / (per_query[rows, None] + PRIOR_WEIGHT)
    return compared, chances


def attention(
    judge: npt.ArrayLike,
    status: npt.ArrayLike,
    grade: npt.ArrayLike,
    seconds: npt.ArrayLike,
    query: npt.ArrayLike | None = None,
) -> list[JudgeAttention]:
    """Return the attention signals of judges ``0 … judge.max()``, one per judge.

    ``judge`` is each label's judge index; ``status`` its status code (:data:`GRADED`,
    :data:`CANNOT_JUDGE`, :data:`LATER`); ``grade`` its grade (ignored unless graded);
    ``seconds`` its time (NaN when not recorded); ``query`` its query index (0 …), which
    the straight-lining test needs (without it, ``straight`` is None). Labels of each
    judge must be in the order the judge gave them.
    """
    judge = np.asarray(judge, dtype=np.int64)
    status = np.asarray(status, dtype=np.int64)
    grade = np.asarray(grade, dtype=np.float64)
    seconds = np.asarray(seconds, dtype=np.float64)
    if not (judge.shape == status.shape == grade.shape == seconds.shape) or judge.ndim != 1:
        raise ValueError("judge, status, grade and seconds must be 1-d and of one length")
    queries = None if query is None else np.asarray(query, dtype=np.int64)
    if queries is not None and queries.shape != judge.shape:
        raise ValueError("query must be 1-d and as long as judge")
    graded_all = (status == GRADED) & ~np.isnan(grade)
    if graded_all.any() and not np.isin(grade[graded_all], np.arange(GRADES)).all():
        raise ValueError("grades of graded labels must be whole grades from 0 to 4")
    n_judges = int(judge.max()) + 1 if judge.size else 0
    timed = ~np.isnan(seconds)
    result = []
    for j in range(n_judges):
        mine, others = judge == j, judge != j
        flags: list[str] = []
        # seconds per label
        my_seconds, their_seconds = seconds[mine & timed], seconds[others & timed]
        median = q1 = q3 = math.nan
        if my_seconds.size:
            median, q1, q3 = (float(v) for v in np.percentile(my_seconds, [50, 25, 75]))
        low = high = math.nan
        if my_seconds.size >= MIN_LABELS and their_seconds.size >= MIN_LABELS:
            low, high = tukey_range(their_seconds)
            if median < low:
                flags.append("fast")
            elif median > high:
                flags.append("slow")
        # runs of one grade
        my_grades = grade[mine & (status == GRADED)]
        share, chance, z_runs = repeat_share(my_grades)
        if my_grades.size >= MIN_LABELS and z_runs > Z_FLAG:
            flags.append("runs")
        # straight-lining, against the others' grades of the same queries
        straight = None
        if queries is not None:
            compared, chances = _query_chances(queries, judge, grade, graded_all, j)
            straight = straight_lining(grade[compared], chances, seconds[compared])
            if straight.flagged:
                flags.append("straight")
        # can't judge and later
        n_mine, n_others = int(mine.sum()), int(others.sum())
        shares = {}
        for name, code in (("cannot_judge", CANNOT_JUDGE), ("later", LATER)):
            hits, other_hits = (
                int((status[mine] == code).sum()),
                int((status[others] == code).sum()),
            )
            mine_share = hits / n_mine if n_mine else math.nan
            their_share = other_hits / n_others if n_others else math.nan
            z = math.nan
            if n_mine >= MIN_LABELS and n_others >= MIN_LABELS:
                z = _two_proportion_z(hits, n_mine, other_hits, n_others)
                if z > Z_FLAG:
                    flags.append(name)
            shares[name] = (mine_share, their_share, z)
        result.append(
            JudgeAttention(
                labels=n_mine,
                timed=int(my_seconds.size),
                median_seconds=median,
                q1_seconds=q1,
                q3_seconds=q3,
                others_low_seconds=low,
                others_high_seconds=high,
                graded=int(my_grades.size),
                repeat_share=share,
                chance_repeat_share=chance,
                runs_z=z_runs,
                longest_run=longest_run(my_grades),
                cannot_judge_share=shares["cannot_judge"][0],
                others_cannot_judge_share=shares["cannot_judge"][1],
                cannot_judge_z=shares["cannot_judge"][2],
                later_share=shares["later"][0],
                others_later_share=shares["later"][1],
                later_z=shares["later"][2],
                flags=tuple(flags),
                straight=straight,
            )
        )
    return result
