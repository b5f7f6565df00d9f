"""``manage.py rebuild_live_list``: recompute the live judgment lists from the labels."""

from __future__ import annotations

from judging import services
from judging.management.collections_command import CollectionsCommand
from judging.models import Collection


class Command(CollectionsCommand):
    """Rebuild (or only check) the live judgment list and the judges' qualification.

    For a list that may not match its labels any more: after a fix to the aggregation or
    the qualification rules (a collection that set a qualification bar before the fix of
    issue 45 counted its imported judges out), or after rows were loaded around the
    services. A rebuild is one new judgment-list version; the runs are rescored after it.
    """

    help = (
        "Recompute the judges' qualification and the whole live judgment list of the given "
        "collections (slugs) or all, under a new judgment-list version, and rescore their "
        "runs. --check compares the stored list with a recomputation instead, changes "
        "nothing, and exits 1 when they differ."
    )
    agrees = "live judgment list agrees with a recomputation"
    repaired = "live judgment list rebuilt"
    differs = "live judgment lists differ from a recomputation"

    def problems(self, collection: Collection) -> list[str]:
        """Return the pairs whose stored live grade differs from a recomputation."""
        return services.live_grades_differences(collection=collection)

    def repair(self, collection: Collection) -> None:
        """Rebuild the list."""
        services.live_grades_rebuild(collection=collection)
