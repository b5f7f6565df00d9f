"""``manage.py import_judgments``: import a judgment file as one judge's labels."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.lists import services as services_lists
from judging.lists.formats import judgments as judgment_formats
from judging.models import Collection, Judge


class Command(BaseCommand):
    """Import qrels, csv, jsonl, json or ranklib judgments, all or nothing."""

    help = (
        "Import a judgment file into a collection as the labels of --judge (an existing "
        "judge's id, or the name of an imported judge created on first use). --scale maps "
        "another grade scale (0-3, 1-5, 0-1 or a table 0=0,1=2,2=4); --dry-run checks only."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the options."""
        parser.add_argument("slug", help="Collection slug.")
        parser.add_argument("file", type=Path, help="The judgment file.")
        parser.add_argument("--format", choices=judgment_formats.IMPORT_FORMATS)
        parser.add_argument("--judge", required=True, help="Judge id, or an imported judge's name.")
        parser.add_argument(
            "--judge-kind", dest="judge_kind", default="human", choices=("human", "llm")
        )
        parser.add_argument("--scale", help="The file's grade scale, when not 0-4.")
        parser.add_argument("--dry-run", dest="dry_run", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        """Run the import and report the counts."""
        collection = Collection.objects.filter(slug=options["slug"]).first()
        if collection is None:
            raise CommandError(f"No collection {options['slug']!r}.")
        name = options["judge"]
        judge = (
            Judge.objects.filter(pk=int(name)).first()
            if name.isascii() and name.isdigit()
            else None
        )
        try:
            path: Path = options["file"]
            fmt = options["format"] or judgment_formats.guess_format(path.name)
            common = {
                "collection": collection,
                "format": fmt,
                "scale": options["scale"],
                "dry_run": options["dry_run"],
            }
            with path.open("rb") as source:
                if judge is None:  # an imported judge, created inside the import if need be
                    summary, judge = services_lists.judgment_list_import_named(
                        judge_name=name, judge_kind=options["judge_kind"], source=source, **common
                    )
                else:
                    summary = services_lists.judgment_list_import(
                        judge=judge, source=source, **common
                    )
        except OSError as exc:
            raise CommandError(f"{options['file']}: {exc.strerror}") from None
        except services_lists.ImportRefused as exc:
            raise CommandError("import refused, nothing written:\n" + str(exc)) from None
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from None
        what = "would import" if options["dry_run"] else "imported"
        who = f"judge {judge.pk} ({judge.name})" if judge else "the book's raters"
        self.stdout.write(
            f"{what} as {who}: {summary.created} created, "
            f"{summary.changed} changed, {summary.unchanged} unchanged; "
            f"version {summary.version}"
            + (f"; {summary.gold} pair(s) marked as gold" if summary.gold else "")
        )
