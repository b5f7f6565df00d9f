"""Keep the C allocator from mapping fresh pages for every rescoring (glibc only).

Rescoring a query of 300 runs allocates a few arrays of about 2.4 MB (the labelled
rankings, the engine's gains and discounts) and frees them before the next judgment.
glibc serves an allocation above ``M_MMAP_THRESHOLD`` (128 KiB at start) with a fresh
``mmap``: every page of it faults on first touch, about 1.5 ms per judgment with 300
runs. glibc raises that threshold by itself once a large mapped block is freed, so the
cost depended on what the process happened to do first: the same judgment took 9 or 6 ms
in two processes (docs/benchmarks.md, 2026-11-26). :func:`tune` sets, at start, what glibc
would settle on after freeing such a block: blocks below ``threshold`` come from the heap
and are reused, and up to twice that stays mapped at the heap's top between judgments.
Larger blocks (an import's buffers) are still mapped and given back when freed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: Blocks below this come from the heap (a rescoring's arrays with up to ~1,000 runs).
THRESHOLD = 8 * 1024 * 1024


def tune(threshold: int = THRESHOLD) -> bool:
    """Set glibc's mmap and trim thresholds; return whether it was done (glibc only)."""
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    path = ctypes.util.find_library("c")
    if path is None:
        return False
    libc = ctypes.CDLL(path)
    ok = libc.mallopt(M_MMAP_THRESHOLD, threshold) == 1
    return libc.mallopt(M_TRIM_THRESHOLD, 2 * threshold) == 1 and ok
