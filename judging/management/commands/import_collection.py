"""Create or update a collection from topic, document, pair and judgment files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from judging import importers, services, services_lists
from judging.formats import collections as collection_formats
from judging.formats import judgments as judgment_formats
from judging.models import Collection, PoolEntry


class Command(BaseCommand):
    """Import topics, documents, judging pairs and judgments into a collection (all or nothing)."""

    help = (
        "Create or update a collection from files: --topics (TREC topics, JSON Lines or "
        "TSV qid<TAB>text; --queries is the same), --documents (JSON Lines or TSV "
        "docno<TAB>text, streamed), --pairs ('qid docno' lines to put in the judging pool), "
        "--judgments (qrels, csv, jsonl, json or ranklib, as --judge). Everything is "
        "imported in one transaction; any bad line aborts the whole import."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the options."""
        parser.add_argument("slug", help="Collection slug (created if missing).")
        parser.add_argument("--name", help="Collection name when creating it.")
        parser.add_argument("--topics", "--queries", dest="topics", type=Path, help="Topics file.")
        parser.add_argument("--topics-format", choices=collection_formats.TOPIC_FORMATS)
        parser.add_argument("--documents", type=Path, help="Documents file.")
        parser.add_argument("--documents-format", choices=collection_formats.DOCUMENT_FORMATS)
        parser.add_argument("--pairs", type=Path, help="Pairs to add to the judging pool.")
        parser.add_argument("--judgments", type=Path, help="Judgments file.")
        parser.add_argument("--judgments-format", choices=judgment_formats.IMPORT_FORMATS)
        parser.add_argument("--judge", default="imported", help="Imported judge's name.")
        parser.add_argument("--scale", help="Grade scale of --judgments when not 0-4.")

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the import and report what changed."""
        try:
            with transaction.atomic():
                self._import(options)
        except services_lists.ImportRefused as exc:
            raise CommandError("import refused, nothing written:\n" + str(exc)) from None
        except ValidationError as exc:
            message = "import refused, nothing written:\n" + "\n".join(exc.messages)
            raise CommandError(message) from None

    def _import(self, options: dict[str, Any]) -> None:
        """Import every file given, in order: topics, documents, pairs, judgments."""
        collection, created = Collection.objects.get_or_create(
            slug=options["slug"], defaults={"name": options["name"] or options["slug"]}
        )
        self._say(f"Collection {collection.slug}: {'created' if created else 'updated'}")
        if options["topics"]:
            path = options["topics"]
            fmt = options["topics_format"] or collection_formats.guess_topic_format(
                path.name, self._head(path)
            )
            with self._open(path) as source:
                done = services_lists.topics_import(
                    collection=collection, source=source, format=fmt
                )
            self._say(f"  queries: {done.created} created, {done.updated} updated")
        if options["documents"]:
            path = options["documents"]
            fmt = options["documents_format"] or collection_formats.guess_document_format(
                path.name, self._head(path)
            )
            with self._open(path) as source:
                done = services_lists.documents_import(
                    collection=collection, source=source, format=fmt
                )
            self._say(f"  documents: {done.created} created, {done.updated} updated")
        if options["pairs"]:
            rows = importers.parse_pairs(self._open(options["pairs"]).read())
            added = services.pool_add(
                collection=collection, pairs=rows, source=PoolEntry.Source.IMPORT
            )
            self._say(f"  pairs: {added} added to the judging pool")
        if options["judgments"]:
            path = options["judgments"]
            judge = services_lists.judge_for_import(name=options["judge"])
            with self._open(path) as source:
                summary = services_lists.judgment_list_import(
                    collection=collection,
                    judge=judge,
                    source=source,
                    format=options["judgments_format"] or judgment_formats.guess_format(path.name),
                    scale=options["scale"],
                )
            self._say(
                f"  judgments ({judge.name}): {summary.created} created, "
                f"{summary.changed} changed, {summary.unchanged} unchanged"
            )

    def _open(self, path: Path) -> Any:
        """Open a file for reading bytes, or fail with its name."""
        try:
            return path.open("rb")
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror}") from None

    def _head(self, path: Path) -> bytes:
        """Return the first bytes of a file (to guess its format)."""
        with self._open(path) as source:
            return source.read(4096)

    def _say(self, text: str) -> None:
        """Print one line of the report."""
        self.stdout.write(text)
