"""``manage.py rescore_runs``: score every run of collections afresh (or check them)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.models import Collection
from metrics import services
from metrics.live import selectors as selectors_live


class Command(BaseCommand):
    """Rescore (or only check) every run of the given collections, from nothing."""

    help = (
        "Score every run of the given collections (slugs) or all against the live judgment "
        "list, rebuilding the stored per-query scores and the scoreboard. --check compares "
        "the stored scores with a rescoring instead, changes nothing, and exits 1 when they "
        "differ."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the options."""
        parser.add_argument("slugs", nargs="*", help="Collection slugs (default: all).")
        parser.add_argument(
            "--check", action="store_true", help="Only compare with a rescoring; change nothing."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Rescore or check each collection; report what was done."""
        collections = Collection.objects.order_by("slug")
        if options["slugs"]:
            collections = collections.filter(slug__in=options["slugs"])
            missing = set(options["slugs"]) - set(collections.values_list("slug", flat=True))
            if missing:
                raise CommandError(f"No collection {', '.join(sorted(missing))}.")
        failed = False
        for collection in collections:
            if options["check"]:
                problems = selectors_live.scores_problems(collection=collection)
                failed |= bool(problems)
                for problem in problems:
                    self.stdout.write(f"{collection.slug}: {problem}")
                if not problems:
                    self.stdout.write(f"{collection.slug}: scores agree with a rescoring")
            else:
                services.runs_score(collection=collection)
                self.stdout.write(f"{collection.slug}: every run rescored")
        if failed:
            raise CommandError("stored scores differ from a rescoring")
