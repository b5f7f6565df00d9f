"""``manage.py rebuild_progress``: recompute the judges' progress counters."""

from __future__ import annotations

from judging.management.collections_command import CollectionsCommand
from judging.models import Collection
from judging.progress import selectors as selectors_progress
from judging.progress import services as services_progress


class Command(CollectionsCommand):
    """Rebuild (or only check) the open-pair and per-judge counters of collections."""

    help = (
        "Recompute which pool pairs are open and every judge's progress counters, for the "
        "given collections (slugs) or all. --check compares them with a recount instead "
        "and exits 1 when they differ."
    )
    agrees = "counters agree with a recount"
    repaired = "progress counters rebuilt"
    differs = "progress counters differ from a recount"

    def problems(self, collection: Collection) -> list[str]:
        """Return how the counters differ from a recount."""
        return selectors_progress.progress_problems(collection=collection)

    def repair(self, collection: Collection) -> None:
        """Rebuild the counters."""
        services_progress.progress_rebuild(collection=collection)
