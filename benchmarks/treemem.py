"""Peak memory of a process tree: ``python -m benchmarks.treemem CMD ...``.

``/usr/bin/time -f %M`` gives the peak resident set of one process (and of the children
it waited for); ``evaluate -j 2`` works in worker processes started by a fork server,
which it does not wait for.  This samples ``/proc`` every few milliseconds instead and
prints one JSON line: the largest resident set seen at once summed over the command and
all its descendants (``tree_peak_kib``), the largest peak of any one of them
(``process_peak_kib``, its ``VmHWM``), the number of processes seen, the wall time and
the exit status.  Linux only; the sum is sampled, so a peak shorter than the interval
can be missed (the per-process ``VmHWM`` cannot).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def _status(pid: int) -> tuple[int, int]:
    """Return (VmRSS, VmHWM) of ``pid`` in KiB, zeros if it is gone."""
    rss = hwm = 0
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm = int(line.split()[1])
    except OSError:
        pass
    return rss, hwm


def measure(cmd: list[str], interval: float = 0.005, cwd: str | None = None) -> dict[str, object]:
    """Run ``cmd`` to completion, sampling its process tree; return the peaks."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL)
    tree_peak = proc_peak = 0
    seen: set[int] = set()
    while proc.poll() is None:
        kids = _children()
        todo, tree = [proc.pid], []
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo.extend(kids.get(pid, []))
        total = 0
        for pid in tree:
            rss, hwm = _status(pid)
            total += rss
            proc_peak = max(proc_peak, hwm)
        seen.update(tree)
        tree_peak = max(tree_peak, total)
        time.sleep(interval)
    return {
        "tree_peak_kib": tree_peak,
        "process_peak_kib": proc_peak,
        "processes": len(seen),
        "wall": time.perf_counter() - t0,
        "code": proc.returncode,
    }


if __name__ == "__main__":
    print(json.dumps(measure(sys.argv[1:])))
