"""Create or update a collection from query, document and pair files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from judging import importers, services
from judging.models import Collection, PoolEntry


class Command(BaseCommand):
    """Import queries, documents and judging pairs into a collection (all or nothing)."""

    help = (
        "Create or update a collection from files: --queries (JSON Lines or TSV), "
        "--documents (JSON Lines), --pairs ('qid docno' lines to put in the judging pool). "
        "Everything is imported in one transaction; any bad line aborts the whole import."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the options."""
        parser.add_argument("slug", help="Collection slug (created if missing).")
        parser.add_argument("--name", help="Collection name when creating it.")
        parser.add_argument("--queries", type=Path, help="Queries file.")
        parser.add_argument("--documents", type=Path, help="Documents file.")
        parser.add_argument("--pairs", type=Path, help="Pairs to add to the judging pool.")

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the import and report what changed."""
        try:
            with transaction.atomic():
                collection, created = Collection.objects.get_or_create(
                    slug=options["slug"],
                    defaults={"name": options["name"] or options["slug"]},
                )
                self._say(f"Collection {collection.slug}: {'created' if created else 'updated'}")
                if options["queries"]:
                    rows = importers.parse_queries(self._read(options["queries"]))
                    summary = services.queries_import(collection=collection, rows=rows)
                    self._say(f"  queries: {summary.created} created, {summary.updated} updated")
                if options["documents"]:
                    rows = importers.parse_documents(self._read(options["documents"]))
                    summary = services.documents_import(collection=collection, rows=rows)
                    self._say(f"  documents: {summary.created} created, {summary.updated} updated")
                if options["pairs"]:
                    rows = importers.parse_pairs(self._read(options["pairs"]))
                    added = services.pool_add(
                        collection=collection, pairs=rows, source=PoolEntry.Source.IMPORT
                    )
                    self._say(f"  pairs: {added} added to the judging pool")
        except ValidationError as exc:
            message = "import refused, nothing written:\n" + "\n".join(exc.messages)
            raise CommandError(message) from None

    def _read(self, path: Path) -> bytes:
        """Read a file or fail with its name."""
        try:
            return path.read_bytes()
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror}") from None

    def _say(self, text: str) -> None:
        """Print one line of the report."""
        self.stdout.write(text)
