"""judging.tabs: the chosen section, with a fallback for unknown keys (no database)."""

import pytest

from judging.tabs import tab_context

SECTIONS = [("pool", "Pool"), ("scores", "Scores")]


def test_the_asked_tab_is_chosen():
    assert tab_context({"tab": "scores"}, SECTIONS) == {"tabs": SECTIONS, "tab": "scores"}


@pytest.mark.parametrize("params", [{}, {"tab": "nope"}, {"tab": ""}, {"tab": "Scores"}])
def test_a_missing_or_unknown_tab_falls_back_to_the_first(params):
    assert tab_context(params, SECTIONS)["tab"] == "pool"


def test_a_choice_inside_a_tab_reads_its_own_parameter():
    params = {"tab": "pool", "part": "scores"}
    assert tab_context(params, SECTIONS, name="part")["tab"] == "scores"
    assert tab_context({"tab": "scores"}, SECTIONS, name="part")["tab"] == "pool"


def test_a_posted_form_comes_back_to_its_own_tab_whatever_the_query_says():
    assert tab_context({"tab": "pool"}, SECTIONS, chosen="scores")["tab"] == "scores"
    assert tab_context({"tab": "scores"}, SECTIONS, chosen="")["tab"] == "pool"


@pytest.mark.parametrize(("params", "tab"), [({}, "scores"), ({"tab": "x"}, "scores")])
def test_a_missing_or_unknown_key_opens_the_fallback(params, tab):
    assert tab_context(params, SECTIONS, fallback="scores")["tab"] == tab
    assert tab_context({"tab": "pool"}, SECTIONS, fallback="scores")["tab"] == "pool"
    assert tab_context(params, SECTIONS, fallback="gone")["tab"] == "pool"


def test_a_page_without_sections_is_refused():
    with pytest.raises(ValueError, match="at least one section"):
        tab_context({}, [])
