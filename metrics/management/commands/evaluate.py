"""``manage.py evaluate``: trec_eval-style evaluation of run files, without the database.

Usage::

    python manage.py evaluate QRELS RUN [RUN ...] -m MEASURE [-m ...] [-q] [-c|--no-c]
                                [-l N] [--format trec|json|csv]

Output formats
    ``trec`` (default): trec_eval's layout, ``measure<TAB>qid<TAB>value`` with the
    measure padded to 22 characters and 4 decimals (counts as integers).  ``-q``
    adds per-query lines (grouped by query, before the ``all`` lines).  With several
    runs each run's block starts with a ``runid  all  TAG`` line, as trec_eval's
    ``-m runid`` prints it.
    ``json``: ``{"TAG": {"MEASURE": {"all": x, "QID": y, ...}}}`` at full precision
    (per-query values with ``-q``; NaN as ``null``).
    ``csv``: ``run,measure,qid,value`` rows (per-query rows with ``-q``).

Measures requested by their trec_eval name are printed under trec_eval's name
(``ndcg_cut_10``); every other spelling is printed under its canonical name
(``nDCG(gain=exp,discount=log2,ideal=global,empty=zero)@10``).

The command never touches the database: it needs no migrations and no system checks.
"""

from __future__ import annotations

import csv
import json
import math
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metrics.engine import EngineInputError, Evaluation, MeasureError, evaluate_many
from metrics.engine.measures import DEFAULT_SCALE_TOP


def _run_labels(results: list[Evaluation]) -> list[str]:
    """Return one distinct label per run: its tag, ``tag@file`` when tags collide, then ``#n``."""
    tags = [r.run_tag for r in results]
    labels = [
        tag if tags.count(tag) == 1 else f"{tag}@{r.run_name}"
        for tag, r in zip(tags, results, strict=True)
    ]
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label}#{seen[label]}")
    return out


def _trec_value(value: float, integer: bool) -> str:
    if math.isnan(value):
        return "nan"
    return f"{round(value):d}" if integer else f"{value:.4f}"


class Command(BaseCommand):
    """Evaluate TREC (or JSON) runs against qrels and print trec_eval-style results."""

    help = "Evaluate run files against qrels (trec_eval-compatible output; no database)."
    requires_system_checks: list[str] = []
    requires_migrations_checks = False

    def add_arguments(self, parser: CommandParser) -> None:
        """Declare the command-line interface."""
        parser.add_argument("qrels", help="qrels file (TREC 'qid iter docno label', JSON or JSONL)")
        parser.add_argument("runs", nargs="+", metavar="run", help="run file(s)")
        parser.add_argument(
            "-m",
            "--measure",
            action="append",
            dest="measures",
            required=True,
            help="measure name (trec_eval, ir_measures or Graded NDCG flavour); repeatable",
        )
        parser.add_argument(
            "-q", dest="per_query", action="store_true", help="also print per-query values"
        )
        parser.add_argument(
            "-c",
            dest="complete",
            action="store_true",
            default=True,
            help="judged queries missing from a run score 0 and count (default)",
        )
        parser.add_argument(
            "--no-c",
            dest="complete",
            action="store_false",
            help="average only over queries present in both qrels and run",
        )
        parser.add_argument(
            "-l", dest="rel_level", type=float, default=1.0, help="relevance level (default 1)"
        )
        parser.add_argument(
            "--scale-top",
            type=float,
            default=DEFAULT_SCALE_TOP,
            help="top grade of the scale, for ideal=max NDCG and ERR (default 4)",
        )
        parser.add_argument(
            "--format", dest="out_format", choices=["trec", "json", "csv"], default="trec"
        )
        parser.add_argument(
            "--input-format",
            choices=["auto", "trec", "json", "jsonl"],
            default="auto",
            help="format of the qrels and run files (default: detect)",
        )
        parser.add_argument(
            "-j", "--processes", type=int, default=None, help="worker processes for several runs"
        )

    def handle(self, *args: Any, **opts: Any) -> None:
        """Evaluate and print; bad input becomes a CommandError naming file and line."""
        runs: list[str] = opts["runs"]
        processes = opts["processes"]
        if processes is None:
            processes = 1 if len(runs) == 1 else None
        try:
            results = evaluate_many(
                opts["qrels"],
                runs,
                opts["measures"],
                processes=processes,
                rel_level=opts["rel_level"],
                scale_top=opts["scale_top"],
                missing="zero" if opts["complete"] else "ignore",
                qrels_format=opts["input_format"],
                run_format=opts["input_format"],
            )
        except EngineInputError as exc:
            raise CommandError(str(exc)) from exc
        except MeasureError as exc:
            raise CommandError(f"bad measure: {exc}") from exc
        labels = _run_labels(results)
        fmt = opts["out_format"]
        if fmt == "json":
            self._json(results, labels, opts["per_query"])
        elif fmt == "csv":
            self._csv(results, labels, opts["per_query"])
        else:
            self._trec(results, labels, opts["per_query"])

    def _trec(self, results: list[Evaluation], labels: list[str], per_query: bool) -> None:
        write = self.stdout.write
        for res, label in zip(results, labels, strict=True):
            if len(results) > 1:
                write(f"{'runid':<22s}\tall\t{label}")
            for m, qid, value in res.rows():
                if qid != "all" and (not per_query or m.family == "NumQ"):
                    continue
                write(f"{m.display:<22s}\t{qid}\t{_trec_value(value, m.is_integer)}")

    def _json(self, results: list[Evaluation], labels: list[str], per_query: bool) -> None:
        out: dict[str, Any] = {}
        for res, label in zip(results, labels, strict=True):
            block = res.to_dict(per_query=per_query)
            for m in res.measures:
                if m.is_integer:
                    block[m.display] = {
                        k: (None if v is None else round(v)) for k, v in block[m.display].items()
                    }
            out[label] = block
        self.stdout.write(json.dumps(out, indent=2, allow_nan=False))

    def _csv(self, results: list[Evaluation], labels: list[str], per_query: bool) -> None:
        writer = csv.writer(self.stdout, lineterminator="\n")
        writer.writerow(["run", "measure", "qid", "value"])
        for res, label in zip(results, labels, strict=True):
            for m, qid, value in res.rows():
                if qid != "all" and not per_query:
                    continue
                if math.isnan(value):
                    text = ""
                elif m.is_integer:
                    text = str(round(value))
                else:
                    text = repr(float(value))
                writer.writerow([label, m.display, qid, text])
