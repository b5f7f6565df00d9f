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


def _rule(text: str, selector: str) -> str:
    """Return the declarations of the first rule whose selector list includes ``selector``."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    for selectors, body in re.findall(r"([^{}]+)\{([^{}]*)\}", text):
        if selector in [s.strip() for s in selectors.split(",")]:
            return body
    raise AssertionError(f"no rule for {selector}")


@pytest.mark.parametrize(
    "selector",
    [".compare-bar .field select", ".baseline-fold .field select:not([multiple])"],
)
def test_compare_selects_size_to_their_runs_tags(selector):
    """Issue 41 item 6: the baseline select cut its run's tag off (width 100%, min-width 0)."""
    ui = next(path for path in CSS if path.name == "ui.css")
    body = _rule(ui.read_text(encoding="utf-8"), selector)
    declarations = {
        name.strip(): value.strip()
        for name, _, value in (d.partition(":") for d in body.split(";") if d.strip())
    }
    assert declarations["width"] == "auto"
    assert declarations["max-width"] == "100%"
    assert declarations["flex"] == "1 0 auto"  # grows, never shrinks below its content
