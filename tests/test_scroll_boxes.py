"""Every list box (a box that scrolls up and down inside a page) is reachable by keyboard.

A box that scrolls needs focus for the arrow keys to scroll it (WCAG 2.1.1) and a name for
screen readers once focused (issue 41 item 6: the label history on a phone was neither).
scrollable.js does this for boxes that scroll sideways; a list box says it in its HTML.
Charts (``<figure>``) shrink to their box and do not scroll.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TEMPLATES = sorted((Path(__file__).resolve().parent.parent / "templates").rglob("*.html"))
#: An opening tag with ``list-box`` in its class (template tags inside may hold a ``>``).
_ATTRIBUTES = r"(?:\{%.*?%\}|\{\{.*?\}\}|[^>])*?"
BOX = re.compile(rf"<(div|section)\b({_ATTRIBUTES}\blist-box\b{_ATTRIBUTES})>")


def _boxes() -> list[tuple[str, str, str]]:
    found = []
    for path in TEMPLATES:
        for tag, attributes in BOX.findall(path.read_text(encoding="utf-8")):
            found.append((path.name, tag, attributes))
    return found


def test_there_are_list_boxes():
    assert len(_boxes()) >= 20


@pytest.mark.parametrize("name,tag,attributes", _boxes(), ids=lambda v: str(v)[:40])
def test_a_list_box_is_focusable_and_named(name, tag, attributes):
    assert 'tabindex="0"' in attributes, f"{name}: a list box without tabindex"
    assert re.search(r'aria-label(ledby)?="[^"]+"', attributes), f"{name}: a nameless list box"
    if tag == "div":
        assert 'role="region"' in attributes, f"{name}: a list box without a role"
