"""Aggregation policies: how the judges' grades of a pair become its one live grade.

The live judgment list holds one grade per (query, document) pair. A policy is a pure,
vectorised function over individual judgments (numpy only, no Django):

* ``pair_index`` — integer id of the pair each judgment belongs to (any integers, for
  example positions in a list of (query, document) keys);
* ``grades`` — the judgment's grade on the 0–4 scale (0 not relevant … 4 perfect),
  integer-valued (integer or float dtype);
* ``is_human`` — whether the judgment comes from a human judge (else an LLM judge).

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
    "UnknownPolicyError",
    "get_policy",
    "human_then_llm",
    "lower_median_human_then_llm",
    "majority_human_then_llm",
    "mean_human_then_llm",
]

GRADE_MIN = 0
GRADE_MAX = 4
_N_GRADES = GRADE_MAX - GRADE_MIN + 1

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
Grades = npt.NDArray[np.int64] | npt.NDArray[np.float64]
#: A policy's core: validated (pair_index, grades, is_human) -> (pair_ids, live_grades).
PolicyFunction = Callable[[IntArray, IntArray, BoolArray], tuple[IntArray, Grades]]


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

    ``fractional`` tells whether live grades may be non-integers (e.g. means).
    """

    name: str
    description: str
    fractional: bool
    function: PolicyFunction

    def __call__(
        self,
        pair_index: npt.ArrayLike,
        grades: npt.ArrayLike,
        is_human: npt.ArrayLike,
        *,
        usable: npt.ArrayLike | None = None,
    ) -> tuple[IntArray, Grades]:
        """Validate the judgments and return ``(pair_ids, live_grades)``.

        Rows where ``usable`` is False (``cannot_judge``, ``later``) are dropped first;
        pairs left without a usable grade are absent from the output. ``pair_ids`` is
        sorted ascending; ``live_grades`` is int64, or float64 for fractional policies.
        Empty input gives two empty arrays. Raise ValueError if the three arrays (and
        ``usable``) are not 1-D of one length, ``pair_index`` is not integer-valued,
        ``is_human`` is not boolean (or 0/1), or a usable grade is not an integer in
        0–4.
        """
        pairs, values, human = _validate(pair_index, grades, is_human, usable)
        if pairs.size == 0:
            dtype = np.float64 if self.fractional else np.int64
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=dtype)
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


DEFAULT_POLICY = "lower_median_human_then_llm"

POLICIES: dict[str, AggregationPolicy] = {
    policy.name: policy
    for policy in (
        AggregationPolicy(
            name="lower_median_human_then_llm",
            description=(
                "Lower median of the human grades; LLM grades only where no human has "
                "graded the pair."
            ),
            fractional=False,
            function=lower_median_human_then_llm,
        ),
        AggregationPolicy(
            name="mean_human_then_llm",
            description=(
                "Mean of the human grades (may be fractional); LLM grades only where no "
                "human has graded the pair."
            ),
            fractional=True,
            function=mean_human_then_llm,
        ),
        AggregationPolicy(
            name="majority_human_then_llm",
            description=(
                "Most frequent human grade, ties to the lower grade; LLM grades only "
                "where no human has graded the pair."
            ),
            fractional=False,
            function=majority_human_then_llm,
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
