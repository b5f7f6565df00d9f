"""``manage.py export_judgments``: write a collection's judgment list to a file or stdout."""

from __future__ import annotations

import sys
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.lists import exports
from judging.lists.formats import judgments as judgment_formats
from judging.models import Collection


class Command(BaseCommand):
    """Stream the live judgment list (or every judge's labels) in any export format."""

    help = (
        "Write the judgment list of a collection: --format qrels (default), csv, jsonl, "
        "json or ranklib; --labels raw for every judge's label (csv or jsonl). Filters as "
        "in the REST export. Streams: memory does not grow with the list."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the options."""
        parser.add_argument("slug", help="Collection slug.")
        parser.add_argument("--format", default="qrels", choices=judgment_formats.FORMATS)
        parser.add_argument("--labels", default="live", choices=("live", "raw"))
        parser.add_argument("--query", help="Only this qid.")
        parser.add_argument("--judge", help="Only pairs this judge (id) graded.")
        parser.add_argument("--kind", choices=("human", "llm"))
        parser.add_argument("--since-version", dest="since_version")
        parser.add_argument("--min-judges", dest="min_judges")
        parser.add_argument("-o", "--output", help="File to write (default: standard output).")

    def handle(self, *args: Any, **options: Any) -> None:
        """Write the export; report its version on stderr."""
        collection = Collection.objects.filter(slug=options["slug"]).first()
        if collection is None:
            raise CommandError(f"No collection {options['slug']!r}.")
        params = {
            key: str(options[key])
            for key in ("format", "labels", "query", "judge", "kind", "since_version", "min_judges")
            if options.get(key) is not None
        }
        try:
            spec = exports.export_spec(params)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        lines = exports.export_lines(collection=collection, spec=spec)
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as out:
                out.writelines(lines)
        else:
            sys.stdout.writelines(lines)
            sys.stdout.flush()
        self.stderr.write(
            f"{collection.slug}: judgment-list version {collection.judgments_version}"
        )
