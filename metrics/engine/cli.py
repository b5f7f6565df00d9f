"""trec_eval-style command line, shared by ``manage.py evaluate`` and ``python -m metrics.engine``.

Both take the same arguments and print the same output; the module entry point
starts faster because it loads no Django.

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
(``ndcg_cut_10``); every other spelling is printed under its canonical name.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from collections.abc import Callable, Sequence
from typing import IO, Any

from metrics.engine import _creader
from metrics.engine.errors import EngineInputError, MeasureError
from metrics.engine.evaluation import Evaluation, evaluate_many
from metrics.engine.measures import DEFAULT_SCALE_TOP, Expanded, expand_nicknames, trec_order


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command-line interface on ``parser``."""
    parser.add_argument("qrels", help="qrels file (TREC 'qid iter docno label', JSON or JSONL)")
    parser.add_argument("runs", nargs="+", metavar="run", help="run file(s)")
    parser.add_argument(
        "-m",
        "--measure",
        action="append",
        dest="measures",
        default=None,
        help="measure name (trec_eval, ir_measures or Graded NDCG flavour) or trec_eval's "
        "set 'official' (the default) or 'all_trec'; repeatable",
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
        "-J",
        dest="judged_only",
        action="store_true",
        help="evaluate only judged documents: drop unjudged ones from every ranking",
    )
    parser.add_argument(
        "-M",
        dest="max_ret",
        type=_non_negative,
        default=None,
        metavar="N",
        help="evaluate only the N best documents of each ranking",
    )
    parser.add_argument(
        "-N",
        dest="num_docs",
        type=_non_negative,
        default=0,
        metavar="N",
        help="documents in the collection (trec_eval -N; only utility's fourth "
        "coefficient reads it; default 0, as trec_eval)",
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


def _non_negative(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative, got {value}")
    return value


def evaluate_args(opts: dict[str, Any]) -> list[Evaluation]:
    """Evaluate what the parsed options ask for.

    Raises:
        EngineInputError: an input file has errors.
        MeasureError: a measure name is invalid.
    """
    runs: list[str] = opts["runs"]
    processes = opts.get("processes")
    if processes is None:
        processes = 1 if len(runs) == 1 else None
    expanded = requested_measures(opts)
    if not expanded.names:
        raise MeasureError("no measures given (runid alone prints nothing to evaluate)")
    results = evaluate_many(
        opts["qrels"],
        runs,
        list(expanded.names),
        processes=processes,
        rel_level=opts["rel_level"],
        scale_top=opts["scale_top"],
        missing="zero" if opts["complete"] else "ignore",
        qrels_format=opts["input_format"],
        run_format=opts["input_format"],
        max_ret=opts.get("max_ret"),
        judged_only=bool(opts.get("judged_only", False)),
        num_docs=int(opts.get("num_docs") or 0),
    )
    for res in results:
        res.measures = trec_order(res.measures)
    return results


def requested_measures(opts: dict[str, Any]) -> Expanded:
    """Return the measures asked for, trec_eval's sets expanded (none given: ``official``)."""
    return expand_nicknames(opts.get("measures") or ["official"])


def notes(opts: dict[str, Any]) -> list[str]:
    """Return what the user should know about the measures printed (for stderr)."""
    left_out = requested_measures(opts).left_out
    if not left_out:
        return []
    return [
        "note: not computed by Graded, left out of the set: "
        + ", ".join(left_out)
        + " (see docs/measures.md)"
    ]


def run_labels(results: Sequence[Evaluation]) -> list[str]:
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


def _trec_value(value: float | str, integer: bool) -> str:
    if isinstance(value, str):  # relstring, quoted as trec_eval prints it
        return f"'{value}'"
    if math.isnan(value):
        return "nan"
    return f"{round(value):d}" if integer else f"{value:.4f}"


def write_trec(
    results: Sequence[Evaluation],
    per_query: bool,
    write: Callable[[str], Any],
    *,
    runid: bool = False,
) -> None:
    """Write trec_eval's layout, one line per call of ``write`` (without newline).

    ``runid``: print trec_eval's ``runid`` line first among the summary lines, as
    ``-m runid`` (and ``official``) does; without it, several runs get it as the head
    of each run's block.
    """
    labels = run_labels(results)
    for res, label in zip(results, labels, strict=True):
        runid_line = f"{'runid':<22s}\tall\t{label}"
        if len(results) > 1 and not runid:
            write(runid_line)
        summary_started = False
        rows = res.rows() if per_query else res.summary_rows()
        for m, qid, value in rows:
            if qid != "all" and m.summary_only:
                continue
            if qid == "all" and not summary_started:
                summary_started = True
                if runid:
                    write(runid_line)
            write(f"{m.display:<22s}\t{qid}\t{_trec_value(value, m.is_integer)}")


def to_json(results: Sequence[Evaluation], per_query: bool) -> str:
    """Return ``{"TAG": {"MEASURE": {"all": x, "QID": y}}}`` at full precision."""
    out: dict[str, Any] = {}
    for res, label in zip(results, run_labels(results), strict=True):
        block: dict[str, Any] = res.to_dict(per_query=per_query)
        for m in res.measures:
            if m.is_integer and m.display in block:
                block[m.display] = {
                    k: (None if v is None else round(v)) for k, v in block[m.display].items()
                }
        out[label] = block
    return json.dumps(out, indent=2, allow_nan=False)


def write_csv(results: Sequence[Evaluation], per_query: bool, stream: IO[str]) -> None:
    """Write ``run,measure,qid,value`` rows (full precision; counts as integers)."""
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(["run", "measure", "qid", "value"])
    for res, label in zip(results, run_labels(results), strict=True):
        rows = res.rows() if per_query else res.summary_rows()
        for m, qid, value in rows:
            if qid != "all" and m.summary_only:
                continue
            if isinstance(value, str):
                text = value
            elif math.isnan(value):
                text = ""
            elif m.is_integer:
                text = str(round(value))
            else:
                text = repr(float(value))
            writer.writerow([label, m.display, qid, text])


def output(results: Sequence[Evaluation], opts: dict[str, Any], stream: IO[str]) -> None:
    """Print ``results`` in the requested format on ``stream``."""
    fmt = opts["out_format"]
    if fmt == "json":
        stream.write(to_json(results, opts["per_query"]) + "\n")
    elif fmt == "csv":
        write_csv(results, opts["per_query"], stream)
    else:
        write_trec(
            results,
            opts["per_query"],
            lambda line: stream.write(line + "\n"),
            runid=requested_measures(opts).runid,
        )


def main(argv: Sequence[str] | None = None, *, prog: str = "python -m metrics.engine") -> int:
    """Run the command line; return the exit status (2 for bad input or measures)."""
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Evaluate run files against qrels (trec_eval-compatible output).",
    )
    add_arguments(parser)
    opts = vars(parser.parse_args(argv))
    # A process of its own: big arrays mapped and given back when freed, whatever was
    # freed before (glibc would otherwise move the threshold up, and keep a run's
    # freed arrays in its heap for the next one; see docs/benchmarks.md, issue 36).
    _creader.mmap_threshold(_creader.MMAP_THRESHOLD)
    try:
        results = evaluate_args(opts)
    except EngineInputError as exc:
        print(str(exc), file=sys.stderr)
        return 2
    except MeasureError as exc:
        print(f"bad measure: {exc}", file=sys.stderr)
        return 2
    for note in notes(opts):
        print(note, file=sys.stderr)
    output(results, opts, sys.stdout)
    return 0
