"""Summarise the TSVs ``timeline.py`` wrote (see its docstring)."""

from __future__ import annotations

import collections
import itertools
import os
import sys
from pathlib import Path


def main(folder: Path) -> None:
    """Print each worker's timeline and the slowest files and directories."""
    files = sorted(folder.glob("gw*.tsv")) or sorted(folder.glob("*.tsv"))
    starts = []
    per_file: collections.Counter[str] = collections.Counter()
    per_dir: collections.Counter[str] = collections.Counter()
    total = 0.0
    rows_by_worker = {}
    for path in files:
        rows = [line.rstrip("\n").split("\t") for line in path.open()]
        starts += [float(r[1]) for r in rows if r[0] == "sessionstart"]
        rows_by_worker[path.stem] = rows
    origin = min(starts) if starts else 0.0
    for worker, rows in rows_by_worker.items():
        tests = [(float(r[1]), float(r[2]), r[3]) for r in rows if r[0] == "test"]
        if not tests:
            continue
        busy = sum(end - start for start, end, _ in tests)
        idle = sum(max(0.0, b[0] - a[1]) for a, b in itertools.pairwise(tests))
        print(
            f"{worker}: {len(tests)} tests, first at {tests[0][0] - origin:.0f} s, "
            f"busy {busy:.0f} s, idle between tests {idle:.0f} s, "
            f"last done at {tests[-1][1] - origin:.0f} s"
        )
        for start, end, nodeid in tests:
            name = nodeid.split("::")[0]
            per_file[name] += end - start
            per_dir["/".join(name.split("/")[:2])] += end - start
            total += end - start
    print(f"test time in all: {total:.0f} s")
    for title, counter in (("directories", per_dir), ("files", per_file)):
        print(f"slowest {title}:")
        for name, seconds in counter.most_common(15):
            print(f"  {seconds:6.0f} s  {name}")


if __name__ == "__main__":
    main(
        Path(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("TIMELINE_DIR", "/tmp/timeline"))
    )
