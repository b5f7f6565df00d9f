"""A management command that repairs, or only checks, derived state of collections."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.models import Collection


class CollectionsCommand(BaseCommand):
    """Repair (or with ``--check`` only check) each collection given by slug, or all.

    Subclasses set the three messages and implement :meth:`problems` (what differs from a
    recomputation; empty when nothing does) and :meth:`repair`. ``--check`` prints each
    problem under the collection's slug and exits 1 when there was any.
    """

    #: What ``--check`` prints for a collection without problems.
    agrees = "agrees"
    #: What a repair prints for a collection.
    repaired = "repaired"
    #: The error ``--check`` exits with when a collection had problems.
    differs = "differs"

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the options."""
        parser.add_argument("slugs", nargs="*", help="Collection slugs (default: all).")
        parser.add_argument(
            "--check",
            action="store_true",
            help="Only compare with a recomputation; change nothing.",
        )

    def problems(self, collection: Collection) -> list[str]:
        """Return what differs from a recomputation (to implement)."""
        raise NotImplementedError

    def repair(self, collection: Collection) -> None:
        """Recompute the collection's state (to implement)."""
        raise NotImplementedError

    def handle(self, *args: Any, **options: Any) -> None:
        """Repair or check each collection; report what was done."""
        collections = Collection.objects.order_by("slug")
        if options["slugs"]:
            collections = collections.filter(slug__in=options["slugs"])
            missing = set(options["slugs"]) - set(collections.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"No collection {', '.join(sorted(missing))}.")
        failed = False
        for collection in collections:
            if options["check"]:
                problems = self.problems(collection)
                failed |= bool(problems)
                for problem in problems:
                    self.stdout.write(f"{collection.slug}: {problem}")
                if not problems:
                    self.stdout.write(f"{collection.slug}: {self.agrees}")
            else:
                self.repair(collection)
                self.stdout.write(f"{collection.slug}: {self.repaired}")
        if failed:
            raise CommandError(self.differs)
