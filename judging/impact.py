"""How much a pair moves runs' scores: a hook other apps fill in (judging never imports them).

The disagreement queue puts first the pairs that matter most to the leaderboard. Judging
knows nothing of runs, so the app that does (metrics) registers a provider at start-up:
a function ``(collection_id, pairs) -> {(query_id, document_id): weight}``, the number of
runs that rank the document in their top ``IMPACT_DEPTH`` for the query. Without a
provider every weight is 0 (the queue is then ordered by spread alone).
"""

from __future__ import annotations

from collections.abc import Callable, Collection

#: Rank cut-off of "moves the scores": the top 10, where nDCG@10 and P@10 look.
IMPACT_DEPTH = 10

Pair = tuple[int, int]
Provider = Callable[[int, Collection[Pair]], dict[Pair, int]]

_provider: Provider | None = None


def register(provider: Provider) -> None:
    """Install the function that weighs pairs (called once, from an app's ``ready``)."""
    global _provider
    _provider = provider


def runs_in_top(*, collection_id: int, pairs: Collection[Pair]) -> dict[Pair, int]:
    """Return how many runs rank each pair's document in their top 10 (0 if unknown)."""
    if _provider is None or not pairs:
        return {}
    return _provider(collection_id, pairs)
