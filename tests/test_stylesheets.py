"""The app's own stylesheets parse: every block is closed (a merge once left one open).

A brace left open makes the browser read every later rule as part of that block, so the
pages quietly lose their styles; no browser test names the cause. Comments and strings
are skipped before counting.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

CSS = sorted((Path(__file__).resolve().parent.parent / "static").glob("*/*.css"))


def _depths(text: str) -> list[int]:
    """Return the nesting depth after each line (comments and strings removed)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group().count("\n"), text, flags=re.S)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', '""', text)
    depth, after = 0, []
    for line in text.split("\n"):
        for char in line:
            depth += {"{": 1, "}": -1}.get(char, 0)
            assert depth >= 0, f"a '}}' closes nothing on line {len(after) + 1}"
        after.append(depth)
    return after


def test_there_are_stylesheets():
    assert {path.name for path in CSS} >= {"graded.css", "ui.css"}


@pytest.mark.parametrize("path", CSS, ids=lambda p: p.name)
def test_every_block_is_closed(path):
    depths = _depths(path.read_text(encoding="utf-8"))
    assert depths[-1] == 0, f"{path.name}: {depths[-1]} block(s) still open at the end"


def test_an_open_block_is_found():
    assert _depths(".a {\n  color: red;\n\n.b { color: blue; }\n")[-1] == 1
    assert _depths('.a::after { content: "{"; }\n/* } */\n')[-1] == 0
