"""Compact letter display: which runs cannot be told apart (pure numpy).

After every pair of runs has been tested, a *compact letter display* (CLD; Piepho,
J. Comput. Graph. Stat. 2004; Gramm et al., Comput. Stat. Data Anal. 2007) prints one or
more letters beside each run so that

* **sound**: no two runs that share a letter differ significantly, and
* **complete**: every two runs that do not differ significantly share a letter.

So "shares a letter" reads exactly as "cannot be told apart", pair by pair. A run can
hold several letters (groups overlap) because significance is not transitive: on a board
where #1–#2, #2–#3 and #3–#4 cannot be told apart but #1–#3, #1–#4 and #2–#4 can, the
letters are ``a, ab, bc, c``.

The groups are the maximal-clique formulation of Gramm et al.: the runs are the nodes of
a graph with an edge between every two runs that do not differ, and each letter is a
*maximal* clique of it (adding any other run to the group would put two runs that
differ together). A board has at most as many letters as pairs (and usually about as
many as runs); finding the fewest letters is NP-hard, so the cliques are built greedily
and deterministically:

1. Walk the pairs that do not differ in board order (#1–#2, #1–#3, …, #2–#3, …). For each
   pair no letter holds yet, start a group with the two runs and add, best first, every
   run that differs from none of its members. A run that differs from every other run
   gets a letter of its own.
2. Drop, from the bottom of the board up, every letter whose pairs (and runs) all share
   another letter too, so each letter left is needed by some pair (or run).
3. Order the letters by their members' positions on the board (lexicographically), so
   "a" is the group holding #1 and letters run down the board.

Piepho's insert-and-absorb algorithm (R's ``multcompView``) starts from one group of all
runs and splits it on every significant pair; that gives every maximal clique, and its
sweep then takes runs out of letters where another letter already holds their pairs.
Here every letter stays a maximal group, so it reads "these runs, and no run can join
them". Where the runs that cannot be told apart are consecutive on the board (if #i and
#k cannot be told apart, nor can any run between them: the common case), each maximal
clique is a run of consecutive ranks holding one pair (its first and last run) that no
other clique holds, so the greedy build finds exactly all of them, as insert-and-absorb
does before its sweep. The greedy build is polynomial whatever the pattern (at most one
letter per pair, each built in O(n²) for n runs; 100 runs take 0.1 s on a leaderboard-like
board and 0.3 s on random patterns that need about 500 letters), where listing every
maximal clique can take exponential time on adversarial patterns.

Letter names: ``a``–``z``, then ``A``–``Z``, then ``a2``–``z2``, ``A2``–``Z2``, … . A run's
letters are printed together (``"ab"``) while the board has at most 52 letters, and
separated by spaces (``"a2 b2"``) once it has more.

Edge cases: no runs give no letters; one run gets ``a``; two runs get ``a, a`` or
``a, b``; when nothing differs every run gets ``a``; runs with identical scores never
differ (their test gives p = 1), so they hold the same letters. Deciding what "differ"
means (the test, the correction, NaN p-values) is the caller's:
:func:`metrics.engine.ranks.letter_groups` and :mod:`metrics.engine.pairs` do it.
"""

from __future__ import annotations

import string

import numpy as np
import numpy.typing as npt

from metrics.engine.stats import holm

__all__ = ["differ_from_p", "holm_matrix", "letter_name", "letter_strings", "letters"]

_ALPHABET = string.ascii_lowercase + string.ascii_uppercase


def holm_matrix(p_values: npt.ArrayLike) -> np.ndarray:
    """Return the symmetric matrix of Holm-adjusted p-values over every pair (i < j).

    ``p_values`` is a symmetric (n × n) matrix of two-sided p-values; only its upper
    triangle is read. Holm's family is every pair, n(n − 1)/2 tests; the diagonal of the
    result is 1. Raise ValueError for a matrix that is not square or an upper triangle
    with values outside [0, 1] (NaN included: decide what an untestable pair means
    before correcting).
    """
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 2 or p.shape[0] != p.shape[1]:
        raise ValueError(f"p_values must be a square matrix; got shape {p.shape}")
    n = p.shape[0]
    out = np.ones((n, n))
    upper = np.triu_indices(n, k=1)
    if n > 1:
        out[upper] = holm(p[upper])
        out.T[upper] = out[upper]
    return out


def differ_from_p(adjusted: npt.ArrayLike, alpha: float) -> np.ndarray:
    """Return the boolean matrix "differ significantly": adjusted p ≤ ``alpha``, off the diagonal.

    NaN (no test was possible) never differs.
    """
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1; got {alpha}")
    p = np.asarray(adjusted, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        out = p <= alpha
    np.fill_diagonal(out, False)
    return out


def _validated(differ: npt.ArrayLike, order: npt.ArrayLike | None) -> tuple[np.ndarray, np.ndarray]:
    matrix = np.asarray(differ, dtype=bool)
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1]:
        raise ValueError(f"differ must be a square matrix; got shape {matrix.shape}")
    if not np.array_equal(matrix, matrix.T):
        raise ValueError("differ must be symmetric (a pair differs both ways or not at all)")
    n = matrix.shape[0]
    ranked = np.arange(n) if order is None else np.asarray(order, dtype=np.int64).reshape(-1)
    if sorted(ranked.tolist()) != list(range(n)):
        raise ValueError("order must list every run's row exactly once")
    return matrix, ranked


def letters(differ: npt.ArrayLike, order: npt.ArrayLike | None = None) -> list[tuple[int, ...]]:
    """Return each run's letters (0 = "a"), listed in ``order`` (best first).

    ``differ`` is a symmetric boolean (n × n) matrix: True where two runs differ
    significantly (the diagonal is ignored). ``order`` lists the row indices best first
    (default: the rows as given). Each run gets a sorted tuple of letter numbers; see the
    module docstring for how the groups are built and the edge cases.
    """
    matrix, ranked = _validated(differ, order)
    n = matrix.shape[0]
    if n == 0:
        return []
    # Work in board positions: same[i, j] is True when the runs at positions i and j
    # cannot be told apart (a run can always be grouped with itself).
    same = ~matrix[np.ix_(ranked, ranked)]
    np.fill_diagonal(same, True)
    covered = np.zeros((n, n), dtype=bool)  # pairs (and, on the diagonal, runs) in a group
    groups: list[np.ndarray] = []
    for i in range(n):
        partners = np.flatnonzero(same[i, i + 1 :]) + i + 1
        starts = partners if partners.size else np.array([i])  # alone: a letter of its own
        for j in starts.tolist():
            if covered[i, j]:
                continue
            member = np.zeros(n, dtype=bool)
            member[[i, j]] = True
            fits = same[i] & same[j]  # runs that differ from no member so far
            for k in np.flatnonzero(fits).tolist():  # best first
                if fits[k] and not member[k]:
                    member[k] = True
                    fits &= same[k]
            groups.append(member)
            covered |= np.outer(member, member)
    groups = _without_redundant(groups, n)
    groups.sort(key=lambda m: tuple(np.flatnonzero(m).tolist()))
    return [tuple(g for g, m in enumerate(groups) if m[i]) for i in range(n)]


def _without_redundant(groups: list[np.ndarray], n: int) -> list[np.ndarray]:
    """Drop, last built first, every group whose pairs and runs all lie in another group."""
    count = np.zeros((n, n), dtype=np.int64)
    for member in groups:
        count += np.outer(member, member)
    kept = list(groups)
    for member in reversed(groups):
        block = np.outer(member, member)
        if np.all(count[block] >= 2):
            count -= block
            kept = [g for g in kept if g is not member]
    return kept


def letter_name(number: int) -> str:
    """Return the name of letter ``number`` (0 = "a", 25 = "z", 26 = "A", 52 = "a2", …)."""
    if number < 0:
        raise ValueError(f"a letter number is not negative; got {number}")
    cycle, index = divmod(number, len(_ALPHABET))
    return _ALPHABET[index] + (str(cycle + 1) if cycle else "")


def letter_strings(groups: list[tuple[int, ...]]) -> list[str]:
    """Return each run's letters as printed: ``"ab"``, or ``"a2 b2"`` beyond 52 letters."""
    total = 1 + max((g for run in groups for g in run), default=-1)
    joiner = "" if total <= len(_ALPHABET) else " "
    return [joiner.join(letter_name(g) for g in run) for run in groups]
