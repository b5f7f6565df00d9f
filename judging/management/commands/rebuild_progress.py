"""``manage.py rebuild_progress``: recompute the judges' progress counters."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.models import Collection
from judging.progress import selectors as selectors_progress
from judging.progress import services as services_progress


class Command(BaseCommand):
    """Rebuild (or only check) the open-pair and per-judge counters of collections."""

    help = (
        "Recompute which pool pairs are open and every judge's progress counters, for the "
        "given collections (slugs) or all. --check compares them with a recount instead "
        "and exits 1 when they differ."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the options."""
        parser.add_argument("slugs", nargs="*", help="Collection slugs (default: all).")
        parser.add_argument(
            "--check", action="store_true", help="Only compare with a recount; change nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Rebuild or check each collection; report what was done."""
        collections = Collection.objects.order_by("slug")
        if options["slugs"]:
            collections = collections.filter(slug__in=options["slugs"])
            missing = set(options["slugs"]) - set(collections.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"No collection {', '.join(sorted(missing))}.")
        failed = False
        for collection in collections:
            if options["check"]:
                problems = selectors_progress.progress_problems(collection=collection)
                failed |= bool(problems)
                for problem in problems:
                    self.stdout.write(f"{collection.slug}: {problem}")
                if not problems:
                    self.stdout.write(f"{collection.slug}: counters agree with a recount")
            else:
                services_progress.progress_rebuild(collection=collection)
                self.stdout.write(f"{collection.slug}: progress counters rebuilt")
        if failed:
            raise CommandError("progress counters differ from a recount")
