"""Evaluate one run with one tool in its own process (whole-process timing, peak memory).

Usage::

    python benchmarks/evaluate_cli.py --tool pytrec_eval QRELS RUN -m ndcg_cut.10
    python benchmarks/evaluate_cli.py --tool noop QRELS RUN   # interpreter + numpy only

Prints one JSON object: the tool, the measures' means and the time spent inside.
It does what a user's small script would do: import, parse both files, evaluate,
print the mean.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make "benchmarks" importable
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv: list[str] | None = None) -> int:
    """Parse arguments, evaluate and print the result as JSON."""
    parser = argparse.ArgumentParser(description="Evaluate one TREC run with one tool.")
    parser.add_argument("--tool", required=True, choices=["pytrec_eval", "ranx", "engine", "noop"])
    parser.add_argument("qrels", type=Path)
    parser.add_argument("run", type=Path)
    parser.add_argument("-m", "--measure", action="append", default=None)
    args = parser.parse_args(argv)
    measures = args.measure or ["ndcg_cut.10"]

    t0 = time.perf_counter()
    if args.tool == "noop":
        import numpy  # noqa: F401  (the floor: interpreter + numpy)

        print(json.dumps({"tool": "noop", "means": {}, "seconds": time.perf_counter() - t0}))
        return 0

    from benchmarks.adapters import ADAPTERS

    tool = ADAPTERS[args.tool]()
    if not tool.available:
        print(json.dumps({"tool": args.tool, "error": tool.reason}))
        return 2
    qrels = tool.load_qrels(args.qrels)
    run = tool.load_run(args.run)
    result = tool.evaluate(qrels, run, measures)
    means = tool.means(result, measures)
    print(json.dumps({"tool": args.tool, "means": means, "seconds": time.perf_counter() - t0}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
