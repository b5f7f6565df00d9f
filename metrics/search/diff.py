"""How one query's ranking changed between two snapshots: pure, no Django.

Lists of document ids in, the documents that entered, left and moved within the top
``k`` out. Edge cases: a document listed twice counts at its first rank (engines should
not repeat one; the mapping already drops repeats); ``k`` larger than a list takes the
whole list; two empty lists overlap fully (nothing changed).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Placed:
    """A document and its 1-based rank (before, after or both)."""

    docno: str
    before: int | None
    after: int | None

    @property
    def shift(self) -> int:
        """Return how many ranks it rose (positive) or fell (negative); 0 if not in both."""
        if self.before is None or self.after is None:
            return 0
        return self.before - self.after


@dataclass(frozen=True)
class RankingDiff:
    """The top ``k`` before and after: what entered, left, moved, and their overlap."""

    k: int
    entered: tuple[Placed, ...]
    left: tuple[Placed, ...]
    moved: tuple[Placed, ...]
    unchanged: int
    overlap: float

    @property
    def changed(self) -> bool:
        """Return whether the top ``k`` differs at all."""
        return bool(self.entered or self.left or self.moved)


def _ranks(docnos: list[str], k: int) -> dict[str, int]:
    ranks: dict[str, int] = {}
    for docno in docnos:
        if len(ranks) == k:
            break
        ranks.setdefault(docno, len(ranks) + 1)
    return ranks


def ranking_diff(before: list[str], after: list[str], k: int) -> RankingDiff:
    """Return how the top ``k`` of ``after`` differs from that of ``before``.

    *Entered*: in the top ``k`` after, not before (ordered by their new rank); *left*: the
    reverse (by their old rank); *moved*: in both at different ranks (by the size of the
    move, then the new rank). *Overlap*: the share of documents both tops hold, over the
    larger of the two (1.0 when both are empty). ``k`` must be at least 1.
    """
    if k < 1:
        raise ValueError("k must be at least 1")
    old, new = _ranks(before, k), _ranks(after, k)
    entered = tuple(
        Placed(d, None, r) for d, r in sorted(new.items(), key=lambda x: x[1]) if d not in old
    )
    left = tuple(
        Placed(d, r, None) for d, r in sorted(old.items(), key=lambda x: x[1]) if d not in new
    )
    both = [Placed(d, old[d], new[d]) for d in new if d in old]
    moved = tuple(sorted((p for p in both if p.shift), key=lambda p: (-abs(p.shift), p.after)))
    larger = max(len(old), len(new))
    return RankingDiff(
        k=k,
        entered=entered,
        left=left,
        moved=moved,
        unchanged=len(both) - len(moved),
        overlap=len(both) / larger if larger else 1.0,
    )
