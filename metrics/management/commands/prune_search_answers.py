"""``manage.py prune_search_answers``: drop raw search answers past their retention."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from metrics.search import services


class Command(BaseCommand):
    """Drop the kept raw answers of search snapshots finished long enough ago."""

    help = (
        "Drop the raw answers of search snapshots that finished more than --days days ago "
        "(default GRADED_SEARCH_ANSWERS_KEEP_DAYS; 0 keeps them). Rankings and runs stay; "
        "only re-mapping needs the raw answers. Every snapshot task prunes too."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare --days."""
        parser.add_argument("--days", type=int, default=None, help="Keep this many days.")

    def handle(self, *args: Any, **options: Any) -> None:
        """Prune and say how many answers were dropped."""
        dropped = services.raw_answers_prune(days=options["days"])
        self.stdout.write(f"{dropped} raw answer{'s' if dropped != 1 else ''} dropped")
