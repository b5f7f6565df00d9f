"""A small process that starts the benchmark's child processes and reports their rusage.

Why: on Linux a child's ``ru_maxrss`` includes the resident memory it inherited at
``fork`` (the kernel keeps the high-water mark across ``exec``), so children forked
from a benchmark process holding a parsed 1M-line run would all report that
process's size.  The benchmark starts this launcher first, while it is small, and
lets it fork every measured command.

Protocol: one JSON object per line on stdin, ``{"cmd": [...], "cwd": "..."}``; one
JSON object per line on stdout, ``{"wall": s, "code": n, "maxrss_kib": n,
"cpu": s, "output": "..."}`` (``cpu`` is the child's user + system time).  Only the
standard library is imported, to stay small.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time


def run(cmd: list[str], cwd: str | None) -> dict[str, object]:
    """Run ``cmd`` to completion; return wall time, exit code, peak RSS and output."""
    with tempfile.TemporaryFile() as out:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return {
        "wall": wall,
        "code": proc.returncode,
        "maxrss_kib": usage.ru_maxrss,
        "cpu": usage.ru_utime + usage.ru_stime,
        "output": text,
    }


def main() -> None:
    """Serve requests until stdin closes."""
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.write(json.dumps(run(req["cmd"], req.get("cwd"))) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
