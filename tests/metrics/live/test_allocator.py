"""The allocator tuning makes a rescoring-sized array reuse memory (no page faults)."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap

import pytest

from metrics.live import allocator

PROBE = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    from metrics.live import allocator
    if sys.argv[1] == "tuned":
        assert allocator.tune()
    def faults():
        return resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    np.ones(1)
    before = faults()
    for i in range(20):
        a = np.ones((300 + i, 1000))  # ~2.4 MB, a little larger each time, then freed
        del a
    print(faults() - before)
    """
)


def _faults(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True
    )
    return int(out.stdout.strip())


@pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc only"
)
def test_tuned_processes_reuse_the_memory_of_freed_rescoring_arrays():
    # Untuned, glibc maps each array afresh (each is larger than the freed block that
    # raised its threshold last time): ~590 page faults each.
    assert _faults("untuned") > 20 * 500
    # Tuned, the heap's pages are reused; each array adds two pages to the heap's top.
    assert _faults("tuned") < 2 * 600


def test_tune_says_whether_it_applied():
    glibc = platform.system() == "Linux" and platform.libc_ver()[0] == "glibc"
    assert allocator.tune() is glibc  # applied on glibc, a no-op (False) elsewhere
