"""``manage.py evaluate``: trec_eval-style evaluation of run files, without the database.

Usage::

    python manage.py evaluate QRELS RUN [RUN ...] [-m MEASURE ...] [-q] [-c|--no-c]
                                [-l N] [-J] [-M N] [-N N] [--format trec|json|csv]

The options and output formats are those of :mod:`metrics.engine.cli` (also
available without Django as ``python -m metrics.engine``): trec_eval's layout by
default, ``json`` at full precision, or ``csv``.  Without ``-m`` it prints trec_eval's
default set (``-m official``); ``-m all_trec`` prints trec_eval's whole ``all_trec``
set (``relstring`` only with ``-q``, as trec_eval does).  Measures requested by their
trec_eval name are printed under trec_eval's name (``ndcg_cut_10``); every other
spelling under its canonical name.  With several runs each run's block starts with a
``runid  all  TAG`` line.

Bad input ends the command with ``CommandError`` (non-zero exit) listing every
problem as ``file:line: message``.  The command never touches the database: it
needs no migrations and runs no system checks.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metrics.engine import EngineInputError, MeasureError, cli


class Command(BaseCommand):
    """Evaluate TREC (or JSON) runs against qrels and print trec_eval-style results."""

    help = "Evaluate run files against qrels (trec_eval-compatible output; no database)."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the command-line interface (shared with ``python -m metrics.engine``)."""
        cli.add_arguments(parser)

    def handle(self, *args: Any, **opts: Any) -> None:
        """Evaluate and print; bad input becomes a CommandError naming file and line."""
        try:
            results = cli.evaluate_args(opts)
        except EngineInputError as exc:
            raise CommandError(str(exc)) from exc
        except MeasureError as exc:
            raise CommandError(f"bad measure: {exc}") from exc
        for note in cli.notes(opts):
            self.stderr.write(note)
        cli.output(results, opts, self.stdout)
