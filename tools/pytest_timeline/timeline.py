"""A pytest plugin that records when each test ran on which xdist worker, to find CI's time.

``PYTHONPATH=tools/pytest_timeline pytest -n 2 -p timeline`` writes one TSV per worker to
``$TIMELINE_DIR`` (default ``/tmp/timeline``): the session's start, the end of collection,
then ``test <start> <end> <nodeid>`` per test (setup and teardown included).
``python tools/pytest_timeline/report.py`` then prints, per worker, when its first test
started, how long it was busy and idle, when it finished, and the files and directories
that took the most test time (docs/development.md, *CI's time*).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
FOLDER = Path(os.environ.get("TIMELINE_DIR", "/tmp/timeline"))
FOLDER.mkdir(parents=True, exist_ok=True)
OUT = (FOLDER / f"{WORKER}.tsv").open("a", buffering=1)


def pytest_sessionstart(session: pytest.Session) -> None:
    """Record the session's start."""
    OUT.write(f"sessionstart\t{time.time()}\n")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Record the end of collection."""
    OUT.write(f"collected\t{time.time()}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None):
    """Record one test's start and end."""
    start = time.time()
    yield
    OUT.write(f"test\t{start}\t{time.time()}\t{item.nodeid}\n")
