"""``manage.py rescore_runs``: score every run of collections afresh (or check them)."""

from __future__ import annotations

from judging.management.collections_command import CollectionsCommand
from judging.models import Collection
from metrics import services
from metrics.live import selectors as selectors_live


class Command(CollectionsCommand):
    """Rescore (or only check) every run of the given collections, from nothing."""

    help = (
        "Score every run of the given collections (slugs) or all against the live judgment "
        "list, rebuilding the stored per-query scores and the scoreboard. --check compares "
        "the stored scores with a rescoring instead, changes nothing, and exits 1 when they "
        "differ."
    )
    agrees = "scores agree with a rescoring"
    repaired = "every run rescored"
    differs = "stored scores differ from a rescoring"

    def problems(self, collection: Collection) -> list[str]:
        """Return how the stored scores differ from a rescoring."""
        return selectors_live.scores_problems(collection=collection)

    def repair(self, collection: Collection) -> None:
        """Score every run afresh."""
        services.runs_score(collection=collection)
