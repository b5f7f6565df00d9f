"""The current-figures tables of docs/benchmarks.md and docs/pooling.md stay usable.

Each opens with one table of every figure as it stands (figure, value, goal, command,
machine, date). Every row must name a command that exists — a ``benchmarks`` module (with
the options it is given), a management command, a make target or a test file — and link
to a heading of the same page, so that a reader can re-measure the figure and find its
history.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = {
    "docs/benchmarks.md": "## Current figures",
    "docs/pooling.md": "### Current figures",
}
COLUMNS = ["Figure", "Value", "Goal", "Command", "Machine", "Date"]


def slug(heading: str) -> str:
    """Return GitHub's anchor for a Markdown heading's text (before de-duplication)."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link keeps its text
    text = text.replace("`", "").strip().lower()
    kept = []
    for char in text:
        if char in " -_" or unicodedata.category(char)[0] in "LN":
            kept.append("-" if char == " " else char)
    return "".join(kept)


def anchors(markdown: str) -> set[str]:
    """Return every heading anchor of a page, numbered as GitHub numbers repeats."""
    seen: dict[str, int] = {}
    found = set()
    fenced = False
    for line in markdown.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = re.match(r"#{1,6} (.+)", line)
        if fenced or not match:
            continue
        base = slug(match.group(1))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def current_rows(markdown: str, heading: str) -> list[list[str]]:
    """Return the cells of each row of the table right under ``heading``."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    table = []
    for line in lines[start + 1 :]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            table.append([cell.strip() for cell in line.strip().strip("|").split(" | ")])
        elif table:
            break
    assert table, f"no table under {heading!r}"
    assert table[0] == COLUMNS, table[0]
    return table[2:]


def _command_problem(command: str) -> str | None:
    """Return why ``command`` does not exist in the repository, or None if it does."""
    words = command.split()
    if words[:2] == ["python", "-m"] and words[2].startswith("benchmarks."):
        module = ROOT / (words[2].replace(".", "/") + ".py")
        if not module.is_file():
            return f"{module.relative_to(ROOT)} does not exist"
        source = module.read_text()
        for flag in (w for w in words[3:] if w.startswith("--")):
            if f'"{flag.split("=")[0]}"' not in source:
                return f"{words[2]} has no option {flag}"
        return None
    if words[0] == "make":
        makefile = (ROOT / "Makefile").read_text()
        if not re.search(rf"^{re.escape(words[1])}:", makefile, re.M):
            return f"the Makefile has no target {words[1]}"
        return None
    if "manage.py" in words:
        name = words[words.index("manage.py") + 1]
        if not list(ROOT.glob(f"*/management/commands/{name}.py")):
            return f"no management command {name}"
        return None
    if words[0] == "pytest":
        path = ROOT / words[1].split("::")[0]
        return None if path.is_file() else f"{words[1]} does not exist"
    return "not a benchmarks module, make target, management command or pytest file"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_current_figure_names_a_command_that_exists(page):
    """Each row's command runs: its module, target, command or test file is there."""
    rows = current_rows((ROOT / page).read_text(), PAGES[page])
    assert len(rows) >= 2
    problems = []
    for figure, _value, _goal, command, _machine, date in rows:
        commands = re.findall(r"`([^`]+)`", command)
        assert commands, f"{page}: {figure} names no command"
        problems += [f"{figure}: {c}: {p}" for c in commands if (p := _command_problem(c))]
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", date), f"{page}: {figure}: date {date!r}"
    assert problems == []


@pytest.mark.parametrize("page", sorted(PAGES))
def test_every_current_figure_links_to_its_section(page):
    """Each row's figure links to a heading of the page (its method and history)."""
    text = (ROOT / page).read_text()
    known = anchors(text)
    for row in current_rows(text, PAGES[page]):
        links = re.findall(r"\]\(#([^)]+)\)", row[0])
        assert links, f"{page}: {row[0]} links to no section"
        assert set(links) <= known, f"{page}: {row[0]}: no heading {set(links) - known}"


def test_the_slug_rules_match_githubs():
    """Punctuation goes, spaces become hyphens, repeats are numbered."""
    assert slug("`manage.py evaluate` under trec_eval's memory (issue 36), 2026-11-26") == (
        "managepy-evaluate-under-trec_evals-memory-issue-36-2026-11-26"
    )
    assert slug("Results (PostgreSQL 15.20), 2026-11-23 10:41 UTC") == (
        "results-postgresql-1520-2026-11-23-1041-utc"
    )
    assert anchors("# A\n```\n# not a heading\n```\n## A\n### B") == {"a", "a-1", "b"}


def test_a_missing_command_is_reported():
    """The command check fails on what does not exist."""
    assert _command_problem("python -m benchmarks.nope") is not None
    assert _command_problem("python -m benchmarks.run --no-such-flag") is not None
    assert _command_problem("make nope") is not None
    assert _command_problem("python manage.py nope") is not None
    assert _command_problem("pytest tests/nope.py") is not None
    assert _command_problem("python -m benchmarks.run --ids") is None
    assert _command_problem("make bench") is None
    assert _command_problem("python manage.py evaluate") is None
