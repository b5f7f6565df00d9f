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

Edge cases: a judge alone in the collection has no comparison (every flag None); a
signal without enough data is NaN with its flag None; a judge whose grades are all one
value has chance share 1 and is not flagged by the runs test (the grade distribution
itself is the agreement page's business).
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

__all__ = [
    "CANNOT_JUDGE",
    "GRADED",
    "LATER",
    "MIN_LABELS",
    "Z_FLAG",
    "JudgeAttention",
    "attention",
    "longest_run",
    "repeat_share",
    "tukey_range",
]


@dataclass(frozen=True)
class JudgeAttention:
    """One judge's attention signals and which of them are flagged.

    ``flags`` holds the names of the raised signals (``fast``, ``slow``, ``runs``,
    ``cannot_judge``, ``later``); each ``*_z`` is NaN when not computed.
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


def attention(
    judge: npt.ArrayLike, status: npt.ArrayLike, grade: npt.ArrayLike, seconds: npt.ArrayLike
) -> list[JudgeAttention]:
    """Return the attention signals of judges ``0 … judge.max()``, one per judge.

    ``judge`` is each label's judge index; ``status`` its status code (:data:`GRADED`,
    :data:`CANNOT_JUDGE`, :data:`LATER`); ``grade`` its grade (ignored unless graded);
    ``seconds`` its time (NaN when not recorded). Labels of each judge must be in the
    order the judge gave them.
    """
    judge = np.asarray(judge, dtype=np.int64)
    status = np.asarray(status, dtype=np.int64)
    grade = np.asarray(grade, dtype=np.float64)
    seconds = np.asarray(seconds, dtype=np.float64)
    if not (judge.shape == status.shape == grade.shape == seconds.shape) or judge.ndim != 1:
        raise ValueError("judge, status, grade and seconds must be 1-d and of one length")
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
            )
        )
    return result
