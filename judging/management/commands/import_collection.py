"""Create or update a collection from topic, document, pair and judgment files."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from judging.imports import services as services_files
from judging.lists import services as services_lists
from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats


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
        with ExitStack() as stack:
            opened = {
                name: stack.enter_context(self._open(options[name]))
                for name in ("topics", "documents", "pairs", "judgments")
                if options[name]
            }
            files = services_files.CollectionFiles(
                topics_format=options["topics_format"] or "",
                documents_format=options["documents_format"] or "",
                judgments_format=options["judgments_format"] or "",
                judge_name=options["judge"],
                scale=options["scale"],
                **opened,
            )
            try:
                with transaction.atomic():
                    collection, created = services_lists.collection_get_or_create(
                        slug=options["slug"], name=options["name"] or options["slug"]
                    )
                    done = services_files.collection_files_import(
                        collection=collection, files=files
                    )
            except services_lists.ImportRefused as exc:
                raise CommandError("import refused, nothing written:\n" + str(exc)) from None
            except ValidationError as exc:
                message = "import refused, nothing written:\n" + "\n".join(exc.messages)
                raise CommandError(message) from None
        self._say(f"Collection {collection.slug}: {'created' if created else 'updated'}")
        if done.topics is not None:
            self._say(f"  queries: {done.topics.created} created, {done.topics.updated} updated")
        if done.documents is not None:
            self._say(
                f"  documents: {done.documents.created} created, {done.documents.updated} updated"
            )
        if done.pairs_added is not None:
            self._say(f"  pairs: {done.pairs_added} added to the judging pool")
        if done.judge is not None and done.judgments is not None:
            self._say(
                f"  judgments ({done.judge.name}): {done.judgments.created} created, "
                f"{done.judgments.changed} changed, {done.judgments.unchanged} unchanged"
            )

    def _open(self, path: Path) -> Any:
        """Open a file for reading bytes, or fail with its name."""
        try:
            return path.open("rb")
        except OSError as exc:
            raise CommandError(f"{path}: {exc.strerror}") from None

    def _say(self, text: str) -> None:
        """Print one line of the report."""
        self.stdout.write(text)
