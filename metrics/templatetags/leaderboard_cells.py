"""Template filters of the leaderboard's cells."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django import template

register = template.Library()


@register.filter(name="cell_at")
def cell_at(cells: Sequence[Any], index: int) -> Any:
    """Return ``cells[index]``, or None past the end (the cell of a loop's column)."""
    try:
        return cells[int(index)]
    except (IndexError, TypeError, ValueError):
        return None
