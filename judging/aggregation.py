"""Aggregation policies: how the judges' grades of a pair become its one live grade.

The live judgment list holds one grade per (query, document) pair. A policy is a pure,
vectorised function over individual judgments (numpy only, no Django):

* ``pair_index`` — integer id of the pair each judgment belongs to (any integers, for
  example positions in a list of (query, document) keys);
* ``grades`` — the judgment's grade on the 0–4 scale (0 not relevant … 4 perfect),
  integer-valued (integer or float dtype);
* ``is_human`` — whether the judgment comes from a human judge (else an LLM judge);
* ``judge_index`` (keyword, optional) — integer id of the judge of each judgment; only
  policies that model judges (Dawid–Skene) need it and raise ValueError without it.

It returns ``(pair_ids, live_grades)``: the sorted distinct pair ids that have at least
one usable grade, and one live grade per id.

Only graded judgments carry a grade. ``cannot_judge`` and ``later`` judgments have
none and never count: callers either pass graded rows only, or pass every row with the
keyword ``usable`` (a boolean mask, False for ``cannot_judge``/``later``). Any grade
outside the integers 0–4, including NaN, raises :class:`ValueError` rather than being
guessed at.

Policies are looked up by name in :data:`POLICIES` (see :func:`get_policy`); the name
is what a collection stores. :data:`DEFAULT_POLICY` is
``"lower_median_human_then_llm"``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "DEFAULT_POLICY",
    "GRADE_MAX",
    "GRADE_MIN",
    "POLICIES",
    "AggregationPolicy",
    "DawidSkeneResult",
    "UnknownPolicyError",
    "adjudicated_else",
    "dawid_skene",
    "get_policy",
    "human_only_lower_median",
    "human_then_llm",
    "llm_only_lower_median",
    "lower_median_human_then_llm",
    "majority_human_then_llm",
    "majority_ties_higher_human_then_llm",
    "majority_ties_median_human_then_llm",
    "mean_human_then_llm",
    "trimmed_mean_human_then_llm",
]

GRADE_MIN = 0
GRADE_MAX = 4
_N_GRADES = GRADE_MAX - GRADE_MIN + 1

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
Grades = npt.NDArray[np.int64] | npt.NDArray[np.float64]
#: A policy's core: validated (pair_index, grades, is_human) -> (pair_ids, live_grades);
#: policies with ``needs_judges`` also receive the validated ``judge_index`` as a 4th argument.
PolicyFunction = Callable[..., tuple[IntArray, Grades]]


class UnknownPolicyError(ValueError, KeyError):
    """Raised by :func:`get_policy` for a name not in :data:`POLICIES`.

    A ValueError (a bad setting) that can also be caught as a KeyError (a failed lookup).
    """

    def __str__(self) -> str:
        """Return the message unquoted (KeyError would show its repr)."""
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class AggregationPolicy:
    """A named aggregation policy; call it like its function.

    ``name`` is its id (settings, REST, exports), ``label`` what people read in menus;
    ``fractional`` tells whether live grades may be non-integers (e.g. means);
    ``needs_judges`` whether the policy models individual judges (it then needs
    ``judge_index``); ``global_fit`` whether one pair's live grade depends on other pairs'
    judgments (a model fitted on the whole collection), so that a change to one pair may
    move the live grades of others.
    """

    name: str
    label: str
    description: str
    fractional: bool
    function: PolicyFunction
    needs_judges: bool = False
    global_fit: bool = False
    uses: str = "human_then_llm"

    def used_rows(self, pair_index: npt.ArrayLike, is_human: npt.ArrayLike) -> BoolArray:
        """Return which judgments the policy takes into account (its grade's provenance).

        ``uses`` is ``"human_then_llm"`` (a pair's human grades if any, else its LLM
        grades), ``"human"``, ``"llm"`` or ``"all"``. Pass usable rows only.
        """
        human = _as_bool("is_human", _as_1d("is_human", is_human))
        if self.uses == "all":
            return np.ones(human.size, dtype=bool)
        if self.uses == "human":
            return human
        if self.uses == "llm":
            return ~human
        pairs = _integer_valued("pair_index", _as_1d("pair_index", pair_index))
        _, group = np.unique(pairs, return_inverse=True)
        has_human = np.zeros(group.max() + 1 if group.size else 0, dtype=bool)
        has_human[group[human]] = True
        return human | ~has_human[group]

    def __call__(
        self,
        pair_index: npt.ArrayLike,
        grades: npt.ArrayLike,
        is_human: npt.ArrayLike,
        *,
        usable: npt.ArrayLike | None = None,
        judge_index: npt.ArrayLike | None = None,
    ) -> tuple[IntArray, Grades]:
        """Validate the judgments and return ``(pair_ids, live_grades)``.

        Rows where ``usable`` is False (``cannot_judge``, ``later``) are dropped first;
        pairs left without a usable grade are absent from the output. ``pair_ids`` is
        sorted ascending; ``live_grades`` is int64, or float64 for fractional policies.
        Empty input gives two empty arrays. Raise ValueError if the three arrays (and
        ``usable``) are not 1-D of one length, ``pair_index`` is not integer-valued,
        ``is_human`` is not boolean (or 0/1), or a usable grade is not an integer in
        0–4. A policy with ``needs_judges`` raises ValueError without ``judge_index``
        (1-D, integer-valued, one per judgment).
        """
        pairs, values, human = _validate(pair_index, grades, is_human, usable)
        judges = None
        if self.needs_judges:
            if judge_index is None:
                raise ValueError(
                    f"The {self.name} policy needs judge_index (the judge of each row)."
                )
            judges = _as_1d("judge_index", judge_index)
            if judges.shape[0] != np.shape(pair_index)[0]:
                raise ValueError("judge_index must have one entry per judgment.")
            if usable is not None:
                judges = judges[_as_bool("usable", _as_1d("usable", usable))]
            judges = _integer_valued("judge_index", judges)
        if pairs.size == 0:
            dtype = np.float64 if self.fractional else np.int64
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=dtype)
        if self.needs_judges:
            return self.function(pairs, values, human, judges)
        return self.function(pairs, values, human)


def _as_1d(name: str, values: npt.ArrayLike) -> np.ndarray:
    """Return ``values`` as a 1-D array or raise ValueError."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-D array; got shape {arr.shape}.")
    return arr


def _integer_valued(name: str, arr: np.ndarray) -> IntArray:
    """Return ``arr`` as int64 if every value is an integer, else raise ValueError."""
    if arr.dtype == np.bool_ or not np.issubdtype(arr.dtype, np.number):
        if arr.size == 0:
            return np.empty(0, dtype=np.int64)
        raise ValueError(f"{name} must hold integers; got dtype {arr.dtype}.")
    if np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64, copy=False)
    bad = ~np.isfinite(arr) | (arr != np.round(arr))
    if bad.any():
        raise ValueError(f"{name} must hold integers; got {arr[bad][:5].tolist()}.")
    return arr.astype(np.int64)


def _validate(
    pair_index: npt.ArrayLike,
    grades: npt.ArrayLike,
    is_human: npt.ArrayLike,
    usable: npt.ArrayLike | None,
) -> tuple[IntArray, IntArray, BoolArray]:
    """Check the judgment arrays and return the usable rows as (int64, int64, bool)."""
    pairs = _as_1d("pair_index", pair_index)
    values = _as_1d("grades", grades)
    human = _as_1d("is_human", is_human)
    arrays = [pairs, values, human]
    if usable is not None:
        keep = _as_1d("usable", usable)
        arrays.append(keep)
    if len({a.shape[0] for a in arrays}) != 1:
        raise ValueError(
            "pair_index, grades, is_human (and usable) must have one length; got "
            + ", ".join(str(a.shape[0]) for a in arrays)
            + "."
        )
    if usable is not None:
        keep = _as_bool("usable", keep)
        pairs, values, human = pairs[keep], values[keep], human[keep]
    pairs = _integer_valued("pair_index", pairs)
    if values.dtype.kind == "f" and np.isnan(values).any():
        raise ValueError(
            "grades must not be NaN: pass graded judgments only, or mark cannot_judge "
            "and later rows with usable=False."
        )
    values = _integer_valued("grades", values)
    out_of_range = (values < GRADE_MIN) | (values > GRADE_MAX)
    if out_of_range.any():
        raise ValueError(
            f"grades must lie in {GRADE_MIN}–{GRADE_MAX}; got {values[out_of_range][:5].tolist()}."
        )
    return pairs, values, _as_bool("is_human", human)


def _as_bool(name: str, arr: np.ndarray) -> BoolArray:
    """Return a boolean array from a bool or 0/1 array, else raise ValueError."""
    if arr.dtype == np.bool_:
        return arr
    if arr.size == 0:
        return np.zeros(0, dtype=bool)
    if np.issubdtype(arr.dtype, np.number) and np.isin(arr, (0, 1)).all():
        return arr.astype(bool)
    raise ValueError(f"{name} must be boolean (or 0/1); got dtype {arr.dtype}.")


def human_then_llm(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Choose each pair's grades: its human grades if it has any, else its LLM grades.

    Return ``(pair_ids, group, chosen)``: the sorted distinct pair ids, and for every
    chosen judgment its group (position in ``pair_ids``) and grade. Every pair keeps at
    least one grade. Vectorised; a building block for custom policies.
    """
    pair_ids, group = np.unique(pair_index, return_inverse=True)
    has_human = np.zeros(pair_ids.size, dtype=bool)
    has_human[group[is_human]] = True
    keep = is_human | ~has_human[group]
    return pair_ids, group[keep], grades[keep]


def _lower_median(group: IntArray, grades: IntArray, n_groups: int) -> IntArray:
    """Return the lower median of each group: sorted grades at index (n - 1) // 2."""
    order = np.lexsort((grades, group))
    counts = np.bincount(group, minlength=n_groups)
    starts = np.cumsum(counts) - counts
    return grades[order][starts + (counts - 1) // 2]


def _mean(group: IntArray, grades: IntArray, n_groups: int) -> npt.NDArray[np.float64]:
    """Return the arithmetic mean of each group's grades."""
    sums = np.bincount(group, weights=grades, minlength=n_groups)
    return sums / np.bincount(group, minlength=n_groups)


def _majority(group: IntArray, grades: IntArray, n_groups: int) -> IntArray:
    """Return each group's most frequent grade, the lowest one among tied modes."""
    table = np.bincount(group * _N_GRADES + (grades - GRADE_MIN), minlength=n_groups * _N_GRADES)
    return table.reshape(n_groups, _N_GRADES).argmax(axis=1).astype(np.int64) + GRADE_MIN


def lower_median_human_then_llm(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, IntArray]:
    """Return the lower median of each pair's human grades, else of its LLM grades.

    With the chosen grades sorted, the lower median is the element at index
    (n - 1) // 2: [1, 3] -> 1, [0, 2, 4] -> 2, [1, 2, 3, 4] -> 2. It is always a grade
    someone gave, and with two judges it takes the more cautious one.
    """
    pair_ids, group, chosen = human_then_llm(pair_index, grades, is_human)
    return pair_ids, _lower_median(group, chosen, pair_ids.size)


def mean_human_then_llm(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """Return the mean of each pair's human grades, else of its LLM grades (fractional)."""
    pair_ids, group, chosen = human_then_llm(pair_index, grades, is_human)
    return pair_ids, _mean(group, chosen, pair_ids.size)


def majority_human_then_llm(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, IntArray]:
    """Return the most frequent of each pair's human grades, else of its LLM grades.

    Ties between equally frequent grades go to the lowest of them: [1, 3] -> 1,
    [2, 2, 4, 4, 3] -> 2.
    """
    pair_ids, group, chosen = human_then_llm(pair_index, grades, is_human)
    return pair_ids, _majority(group, chosen, pair_ids.size)


def _sorted_groups(
    group: IntArray, grades: IntArray, n_groups: int
) -> tuple[IntArray, IntArray, IntArray, IntArray]:
    """Sort grades within groups; return (sorted groups, sorted grades, counts, starts)."""
    order = np.lexsort((grades, group))
    counts = np.bincount(group, minlength=n_groups)
    starts = np.cumsum(counts) - counts
    return group[order], grades[order], counts, starts


def _median(group: IntArray, grades: IntArray, n_groups: int) -> npt.NDArray[np.float64]:
    """Return the (true) median of each group: the mean of the two middle grades if even."""
    _, ordered, counts, starts = _sorted_groups(group, grades, n_groups)
    lower = ordered[starts + (counts - 1) // 2]
    upper = ordered[starts + counts // 2]
    return (lower + upper) / 2.0


def _majority_with_ties(group: IntArray, grades: IntArray, n_groups: int, tie: str) -> IntArray:
    """Return each group's most frequent grade, ties broken by ``tie``.

    ``tie`` is ``"lower"`` (the lowest tied grade), ``"higher"`` (the highest) or
    ``"median"`` (the tied grade closest to the median of all the group's grades; if
    two are equally close, the lower).
    """
    table = np.bincount(
        group * _N_GRADES + (grades - GRADE_MIN), minlength=n_groups * _N_GRADES
    ).reshape(n_groups, _N_GRADES)
    tied = table == table.max(axis=1, keepdims=True)
    if tie == "lower":
        best = tied.argmax(axis=1)
    elif tie == "higher":
        best = _N_GRADES - 1 - tied[:, ::-1].argmax(axis=1)
    elif tie == "median":
        median = _median(group, grades, n_groups)
        scale = np.arange(GRADE_MIN, GRADE_MAX + 1, dtype=np.float64)
        distance = np.where(tied, np.abs(scale[np.newaxis, :] - median[:, np.newaxis]), np.inf)
        best = distance.argmin(axis=1)
    else:  # pragma: no cover - programming error, the registry names the rules
        raise ValueError(f"Unknown tie rule {tie!r}.")
    return best.astype(np.int64) + GRADE_MIN


def _trimmed_mean(group: IntArray, grades: IntArray, n_groups: int) -> npt.NDArray[np.float64]:
    """Return each group's mean after dropping its lowest and highest grade (3+ grades).

    Groups of one or two grades keep them all: [1, 3] -> 2.0, [0, 2, 4, 4] -> 3.0,
    [0, 3, 4] -> 3.0.
    """
    ordered_group, ordered, counts, starts = _sorted_groups(group, grades, n_groups)
    position = np.arange(ordered.size) - starts[ordered_group]
    size = counts[ordered_group]
    keep = (size < 3) | ((position > 0) & (position < size - 1))
    sums = np.bincount(ordered_group[keep], weights=ordered[keep], minlength=n_groups)
    return sums / np.bincount(ordered_group[keep], minlength=n_groups)


def majority_ties_higher_human_then_llm(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, IntArray]:
    """Return the most frequent human (else LLM) grade, ties to the highest tied grade.

    [1, 3] -> 3, [2, 2, 4, 4, 3] -> 4, [0, 0, 1] -> 0.
    """
    pair_ids, group, chosen = human_then_llm(pair_index, grades, is_human)
    return pair_ids, _majority_with_ties(group, chosen, pair_ids.size, "higher")


def majority_ties_median_human_then_llm(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, IntArray]:
    """Return the most frequent human (else LLM) grade, ties to the one nearest the median.

    [0, 0, 2, 2, 3, 3] (median 2) -> 2; [0, 0, 3, 3, 4] (median 3) -> 3; [1, 4]
    (median 2.5, both 1.5 away) -> 1.
    """
    pair_ids, group, chosen = human_then_llm(pair_index, grades, is_human)
    return pair_ids, _majority_with_ties(group, chosen, pair_ids.size, "median")


def trimmed_mean_human_then_llm(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """Return the trimmed mean of the human (else LLM) grades (fractional).

    With three or more grades the lowest and the highest are dropped once each, so one
    outlying judge cannot pull the grade: [0, 4, 4] -> 4.0, [0, 1, 2, 4] -> 1.5.
    """
    pair_ids, group, chosen = human_then_llm(pair_index, grades, is_human)
    return pair_ids, _trimmed_mean(group, chosen, pair_ids.size)


def _only(
    pair_index: IntArray, grades: IntArray, keep: BoolArray
) -> tuple[IntArray, IntArray, IntArray]:
    """Keep the rows of ``keep``; return (pair_ids, group, grades) of the kept rows."""
    pair_ids, group = np.unique(pair_index[keep], return_inverse=True)
    return pair_ids, group, grades[keep]


def human_only_lower_median(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, IntArray]:
    """Return the lower median of each pair's human grades; LLM grades never count.

    Pairs graded by LLM judges only have no live grade (they are unjudged).
    """
    pair_ids, group, chosen = _only(pair_index, grades, is_human)
    return pair_ids, _lower_median(group, chosen, pair_ids.size)


def llm_only_lower_median(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray
) -> tuple[IntArray, IntArray]:
    """Return the lower median of each pair's LLM grades; human grades never count.

    Pairs graded by humans only have no live grade (useful to score runs against the
    LLM judges alone, for comparison with the human list).
    """
    pair_ids, group, chosen = _only(pair_index, grades, ~is_human)
    return pair_ids, _lower_median(group, chosen, pair_ids.size)


# --- Dawid–Skene -------------------------------------------------------------------------

#: Floor of probabilities and error-matrix entries, as in crowd-kit (1e-10).
DS_EPS = 1e-10


@dataclass(frozen=True)
class DawidSkeneResult:
    """The fitted Dawid–Skene model.

    ``pair_ids`` (sorted), ``judge_ids`` (sorted) and ``labels`` (the sorted grades
    anyone used, the model's classes) index the arrays: ``posteriors`` is pairs × labels
    (each row sums to 1), ``priors`` the class shares, ``errors`` judges × observed ×
    true (``errors[j, k, c]`` = P(judge j says labels[k] | true grade labels[c]); each
    ``errors[j, :, c]`` sums to 1 over the labels the judge used). ``grades`` is each
    pair's most probable grade (ties to the lower). ``iterations`` counts EM steps.
    """

    pair_ids: IntArray
    judge_ids: IntArray
    labels: IntArray
    posteriors: npt.NDArray[np.float64]
    priors: npt.NDArray[np.float64]
    errors: npt.NDArray[np.float64]
    grades: IntArray
    iterations: int

    @property
    def accuracy(self) -> npt.NDArray[np.float64]:
        """Return each judge's estimated accuracy: sum over c of prior(c) · P(c | c)."""
        diagonal = np.diagonal(self.errors, axis1=1, axis2=2)
        return diagonal @ self.priors


def dawid_skene(
    pair_index: npt.ArrayLike,
    grades: npt.ArrayLike,
    judge_index: npt.ArrayLike,
    *,
    n_iter: int = 100,
    tol: float = 1e-5,
) -> DawidSkeneResult:
    """Fit the Dawid–Skene model (1979) by EM; vectorised, equal to crowd-kit's DawidSkene.

    Each judge has a confusion matrix (the probability of each grade they give, given
    the pair's true grade); the true grades are latent. Start from majority-vote
    posteriors, then alternate M-step (priors and confusion matrices from the
    posteriors) and E-step (posteriors from priors and matrices, in log space), at most
    ``n_iter`` times, stopping when the evidence lower bound per judgment improves by
    less than ``tol``. Identical in every step to ``crowdkit.aggregation.DawidSkene``
    (same initialisation, 1e-10 floors, stopping rule and classes: the grades that
    occur), which the tests check. One judgment per (pair, judge) is expected.

    Raise ValueError for arrays of different lengths or grades outside 0–4. Empty input
    gives an empty result.
    """
    pairs = _integer_valued("pair_index", _as_1d("pair_index", pair_index))
    values = _integer_valued("grades", _as_1d("grades", grades))
    judges = _integer_valued("judge_index", _as_1d("judge_index", judge_index))
    if not pairs.size == values.size == judges.size:
        raise ValueError("pair_index, grades and judge_index must have one length.")
    if ((values < GRADE_MIN) | (values > GRADE_MAX)).any():
        raise ValueError(f"grades must lie in {GRADE_MIN}–{GRADE_MAX}.")
    pair_ids, t = np.unique(pairs, return_inverse=True)
    judge_ids, w = np.unique(judges, return_inverse=True)
    labels, k = np.unique(values, return_inverse=True)
    n_t, n_w, n_k = pair_ids.size, judge_ids.size, labels.size
    if values.size == 0:
        empty = np.empty(0, dtype=np.int64)
        return DawidSkeneResult(
            empty, empty, empty, np.empty((0, 0)), np.empty(0), np.empty((0, 0, 0)), empty, 0
        )
    response = w * n_k + k  # (judge, observed label) cell of each judgment
    used = np.bincount(response, minlength=n_w * n_k).reshape(n_w, n_k) > 0

    def m_step(posteriors: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Return the judges' confusion matrices from the pair posteriors."""
        cells = np.stack(
            [
                np.bincount(response, weights=posteriors[t, c], minlength=n_w * n_k)
                for c in range(n_k)
            ],
            axis=1,
        ).reshape(n_w, n_k, n_k)
        cells = np.where(used[:, :, np.newaxis], np.maximum(cells, DS_EPS), 0.0)
        return cells / cells.sum(axis=1, keepdims=True)

    def per_pair(values_per_row: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Sum rows × classes values over each pair's judgments."""
        return np.stack(
            [np.bincount(t, weights=values_per_row[:, c], minlength=n_t) for c in range(n_k)],
            axis=1,
        )

    counts = per_pair(np.eye(n_k)[k])
    posteriors = counts / counts.sum(axis=1, keepdims=True)
    priors = posteriors.mean(axis=0)
    errors = m_step(posteriors)
    loss = -np.inf
    iterations = 0
    for _ in range(n_iter):
        iterations += 1
        with np.errstate(divide="ignore"):
            log_likelihood = np.log2(np.maximum(priors, DS_EPS)) + per_pair(
                np.log2(errors[w, k, :])
            )
        scaled = np.exp2(log_likelihood - log_likelihood.max(axis=1, keepdims=True))
        posteriors = scaled / scaled.sum(axis=1, keepdims=True)
        priors = posteriors.mean(axis=0)
        errors = m_step(posteriors)
        log_terms = np.log(errors[w, k, :]) + np.log(np.maximum(priors, DS_EPS))
        joint = float((posteriors[t] * log_terms).sum())
        posteriors = np.maximum(posteriors, DS_EPS)
        entropy = float(-(np.log(posteriors) * posteriors).sum())
        new_loss = (joint + entropy) / values.size
        if new_loss - loss < tol:
            break
        loss = new_loss
    return DawidSkeneResult(
        pair_ids=pair_ids,
        judge_ids=judge_ids,
        labels=labels,
        posteriors=posteriors,
        priors=priors,
        errors=errors,
        grades=labels[posteriors.argmax(axis=1)],
        iterations=iterations,
    )


def dawid_skene_policy(
    pair_index: IntArray, grades: IntArray, is_human: BoolArray, judge_index: IntArray
) -> tuple[IntArray, IntArray]:
    """Return each pair's most probable grade under Dawid–Skene over every judge.

    Human and LLM judges alike get their own confusion matrix, so a judge who is often
    off (or always says 3) weighs less. One pair's grade depends on the whole
    collection's judgments (``global_fit``).
    """
    result = dawid_skene(pair_index, grades, judge_index)
    return result.pair_ids, result.grades.astype(np.int64)


def adjudicated_else(
    pair_ids: IntArray,
    live_grades: Grades,
    adjudicated_pairs: npt.ArrayLike,
    adjudicated_grades: npt.ArrayLike,
) -> tuple[IntArray, npt.NDArray[np.float64]]:
    """Return the live grades with every adjudicated pair's grade replaced by its adjudication.

    ``pair_ids``/``live_grades`` are a policy's output; adjudicated pairs without any
    usable judgment (every judge said "can't judge") are added. The result is sorted by
    pair id, float64. This is how every collection policy is applied: "adjudicated,
    else <policy>". Raise ValueError for adjudicated grades outside 0–4, arrays of
    different lengths, or a pair adjudicated twice.
    """
    adj_pairs = _integer_valued("adjudicated_pairs", _as_1d("adjudicated_pairs", adjudicated_pairs))
    adj_grades = _integer_valued(
        "adjudicated_grades", _as_1d("adjudicated_grades", adjudicated_grades)
    )
    if adj_pairs.size != adj_grades.size:
        raise ValueError("adjudicated_pairs and adjudicated_grades must have one length.")
    if ((adj_grades < GRADE_MIN) | (adj_grades > GRADE_MAX)).any():
        raise ValueError(f"adjudicated grades must lie in {GRADE_MIN}–{GRADE_MAX}.")
    if np.unique(adj_pairs).size != adj_pairs.size:
        raise ValueError("A pair can have only one adjudication in force.")
    base_pairs = np.asarray(pair_ids, dtype=np.int64)
    keep = ~np.isin(base_pairs, adj_pairs)
    merged_pairs = np.concatenate([base_pairs[keep], adj_pairs])
    merged = np.concatenate(
        [np.asarray(live_grades, dtype=np.float64)[keep], adj_grades.astype(np.float64)]
    )
    order = np.argsort(merged_pairs, kind="stable")
    return merged_pairs[order], merged[order]


DEFAULT_POLICY = "lower_median_human_then_llm"

POLICIES: dict[str, AggregationPolicy] = {
    policy.name: policy
    for policy in (
        AggregationPolicy(
            name="lower_median_human_then_llm",
            label="Lower median of the humans, LLMs fill the rest",
            description=(
                "Lower median of the human grades; LLM grades only where no human has "
                "graded the pair."
            ),
            fractional=False,
            function=lower_median_human_then_llm,
        ),
        AggregationPolicy(
            name="mean_human_then_llm",
            label="Mean of the humans, LLMs fill the rest",
            description=(
                "Mean of the human grades (may be fractional); LLM grades only where no "
                "human has graded the pair."
            ),
            fractional=True,
            function=mean_human_then_llm,
        ),
        AggregationPolicy(
            name="majority_human_then_llm",
            label="Majority of the humans (ties down), LLMs fill the rest",
            description=(
                "Most frequent human grade, ties to the lower grade; LLM grades only "
                "where no human has graded the pair."
            ),
            fractional=False,
            function=majority_human_then_llm,
        ),
        AggregationPolicy(
            name="majority_ties_higher_human_then_llm",
            label="Majority of the humans (ties up), LLMs fill the rest",
            description=(
                "Most frequent human grade, ties to the higher grade; LLM grades only "
                "where no human has graded the pair."
            ),
            fractional=False,
            function=majority_ties_higher_human_then_llm,
        ),
        AggregationPolicy(
            name="majority_ties_median_human_then_llm",
            label="Majority of the humans (ties to the median), LLMs fill the rest",
            description=(
                "Most frequent human grade, ties to the tied grade nearest the median "
                "(then the lower); LLM grades only where no human has graded the pair."
            ),
            fractional=False,
            function=majority_ties_median_human_then_llm,
        ),
        AggregationPolicy(
            name="trimmed_mean_human_then_llm",
            label="Trimmed mean of the humans, LLMs fill the rest",
            description=(
                "Mean of the human grades without the lowest and highest (3+ grades; may "
                "be fractional); LLM grades only where no human has graded the pair."
            ),
            fractional=True,
            function=trimmed_mean_human_then_llm,
        ),
        AggregationPolicy(
            name="human_only_lower_median",
            label="Lower median of the humans only",
            description="Lower median of the human grades; LLM grades never count.",
            fractional=False,
            function=human_only_lower_median,
            uses="human",
        ),
        AggregationPolicy(
            name="llm_only_lower_median",
            label="Lower median of the LLMs only",
            description="Lower median of the LLM grades; human grades never count.",
            fractional=False,
            function=llm_only_lower_median,
            uses="llm",
        ),
        AggregationPolicy(
            name="dawid_skene",
            label="Dawid–Skene model of every judge",
            description=(
                "Dawid–Skene: the most probable grade given every judge's (human and "
                "LLM) estimated confusion matrix, fitted by EM on the whole collection."
            ),
            fractional=False,
            function=dawid_skene_policy,
            needs_judges=True,
            global_fit=True,
            uses="all",
        ),
    )
}


def get_policy(name: str) -> AggregationPolicy:
    """Return the policy registered under ``name``.

    Raise :class:`UnknownPolicyError` (a ValueError and a KeyError) naming the known
    policies if there is none.
    """
    try:
        return POLICIES[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(POLICIES))
        raise UnknownPolicyError(
            f"Unknown aggregation policy {name!r}; known policies: {known}."
        ) from None
