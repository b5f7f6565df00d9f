"""judging.tabs: the chosen section, with a fallback for unknown keys (no database)."""

import pytest

from judging.tabs import tab_context

SECTIONS = [("pool", "Pool"), ("scores", "Scores")]


def test_the_asked_tab_is_chosen():
    assert tab_context({"tab": "scores"}, SECTIONS) == {"tabs": SECTIONS, "tab": "scores"}


@pytest.mark.parametrize("params", [{}, {"tab": "nope"}, {"tab": ""}, {"tab": "Scores"}])
def test_a_missing_or_unknown_tab_falls_back_to_the_first(params):
    assert tab_context(params, SECTIONS)["tab"] == "pool"


def test_a_page_without_sections_is_refused():
    with pytest.raises(ValueError, match="at least one section"):
        tab_context({}, [])
