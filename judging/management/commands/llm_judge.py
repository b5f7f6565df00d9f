"""``manage.py llm_judge <slug> --judge <id>``: judge a collection's pool with an LLM judge."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from judging.llm import runner
from judging.llm import services as services_llm
from judging.llm.models import LLMJob
from judging.models import Collection, Judge


class Command(BaseCommand):
    """Judge the pool pairs the judge has not graded yet; safe to re-run."""

    help = (
        "Judge the pool pairs of a collection that an LLM judge has not graded yet. "
        "Ends with 'judged N, failed M, skipped K'; re-running retries failed pairs."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the collection, judge and run options."""
        parser.add_argument("slug", help="Collection slug.")
        parser.add_argument("--judge", type=int, required=True, help="LLM judge id.")
        parser.add_argument(
            "--concurrency", type=int, default=4, help="Requests in flight at once (default 4)."
        )
        parser.add_argument("--limit", type=int, default=None, help="Judge at most N pairs.")
        parser.add_argument(
            "--queries", default="", help="Comma-separated query ids to restrict the run to."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        """Create the job, run it with a progress bar, print the summary line."""
        collection = Collection.objects.filter(slug=options["slug"]).first()
        if collection is None:
            raise CommandError(f"No collection with slug {options['slug']!r}.")
        judge = Judge.objects.filter(pk=options["judge"]).first()
        if judge is None:
            raise CommandError(f"No judge with id {options['judge']}.")
        try:
            job = services_llm.llm_job_create(
                collection=collection,
                judge=judge,
                concurrency=options["concurrency"],
                limit=options["limit"],
                queries=[q for q in options["queries"].split(",") if q.strip()],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(_messages(exc))) from None
        tty = hasattr(self.stdout, "isatty") and self.stdout.isatty()
        job = runner.run_job(job, on_progress=self._bar if tty else None)
        if tty:
            self.stdout.write("")
        if job.status == LLMJob.Status.FAILED:
            raise CommandError(job.error)
        self.stdout.write(f"judged {job.done}, failed {job.failed}, skipped {job.skipped}")

    def _bar(self, progress: runner.Progress) -> None:
        """Redraw a one-line progress bar."""
        width = 30
        processed = progress.done + progress.failed
        filled = width if not progress.total else width * processed // progress.total
        line = (
            f"\r[{'#' * filled}{'.' * (width - filled)}] {processed}/{progress.total} "
            f"{progress.rate:.1f} pairs/s  {progress.tokens} tokens  "
            f"{progress.failed} failed"
        )
        self.stdout.write(line, ending="")
        self.stdout.flush()


def _messages(exc: ValidationError) -> list[str]:
    """Return ``field: message`` strings of a validation error."""
    if hasattr(exc, "message_dict"):
        return [f"{f}: {m}" for f, ms in exc.message_dict.items() for m in ms]
    return list(exc.messages)
