"""The metrics pages on every tab (issues 34 and 41), at 1366×768 and 390×844.

The leaderboard, a run (chart, queries, measures, about), one query of a run (its list
beside the ideal one), compare (table and chart on one page, every pair), topic difficulty
(table, box plot), the pool and the stability page: each passes the page grammar's checks; a long
list is as tall as its content and the page scrolls, its table header sticking, and a
chart in a tab is no taller than the room left and keeps its proportions.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import Collection
from metrics.models import Run
from tests.browser import page_checks
from tests.browser.test_long_pages import big
from tests.browser.test_pages_phone import DESKTOP, PHONE, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["big"]


def _pages(coll) -> dict[str, str]:
    run, other = Run.objects.filter(collection=coll).order_by("pk")
    query = coll.queries.order_by("external_id").first()
    slug = coll.slug
    detail = reverse("metrics:run_detail", args=[slug, run.pk])
    compare = reverse("metrics:compare", args=[slug]) + f"?a={other.pk}&b={run.pk}"
    difficulty = reverse("metrics:difficulty", args=[slug])
    ranked = reverse("metrics:run_query", args=[slug, run.pk, query.pk])
    return {
        "leaderboard": reverse("metrics:leaderboard", args=[slug]),
        "run chart": detail,
        "run queries": detail + "?tab=queries",
        "run measures": detail + "?tab=measures",
        "run about": detail + "?tab=about",
        "run query": ranked,
        "compare": compare,
        "compare several": reverse("metrics:compare", args=[slug])
        + f"?baseline={run.pk}&runs={other.pk}&runs={run.pk}",
        "compare pairs": reverse("metrics:compare", args=[slug]) + "?pairs=1",
        "difficulty table": difficulty,
        "difficulty chart": difficulty + "?tab=chart",
        "pool": reverse("metrics:pool", args=[slug]),
        "stability": reverse("metrics:stability", args=[slug]),
    }


#: Pages whose list is long enough here to scroll inside its list box.
SCROLLING = {"run queries", "difficulty table", "pool", "run query"}


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_every_tab_opens_with_its_numbers_and_scrolls(browser, live_server, big, viewport):
    Collection.objects.filter(pk=big.pk).update(judgments_published=True)
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    errors: list[str] = []
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        log_in(page, "cora")
        problems = {}
        for name, path in _pages(big).items():
            page.goto(path)
            found = page_checks.all_problems(page)
            if found:
                problems[name] = found
                continue
            if page.locator("dl.key-numbers").count():
                box = page.locator("dl.key-numbers").first.bounding_box()
                assert box["y"] + box["height"] <= viewport["height"], name
            if name in SCROLLING:
                # The page scrolls (not a box of its own), its table header row sticking
                # to the top of the screen (issue 41).
                listbox = page.locator(".list-box").first
                assert listbox.evaluate("e => e.scrollHeight <= e.clientHeight + 1"), name
                # (A query's six documents beside the ideal ones fit a desk's screen.)
                if not (name == "run query" and viewport is DESKTOP):
                    assert page.evaluate("document.documentElement.scrollHeight > innerHeight"), (
                        name
                    )
                page.evaluate("scrollTo(0, document.documentElement.scrollHeight)")
                # (On a phone, cards have no header row to keep.)
                header = page.locator(".list-box thead th").last
                # (A query's ranking is short beside the ideal one: no page to scroll past it.)
                if (
                    name != "run query"
                    and header.evaluate("e => getComputedStyle(e).position") == "sticky"
                    and (
                        header.evaluate("e => getComputedStyle(e.closest('.list-box')).overflowX")
                        == "visible"
                    )
                ):
                    assert abs(header.bounding_box()["y"]) < 3, name
                page.evaluate("scrollTo(0, 0)")
            for chart in page.locator(".chart-fill svg.chart:visible").all():
                # A chart in a tab: inside the screen, as wide as its box or keeping its
                # proportions when the height left is what limits it.
                box = chart.bounding_box()
                assert box["height"] <= viewport["height"] + 1, name  # a screen holds it
                view = chart.evaluate("e => [e.viewBox.baseVal.width, e.viewBox.baseVal.height]")
                assert box["width"] / box["height"] >= view[0] / view[1] - 0.02, name
        assert problems == {}, problems
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_key_numbers_lead_and_tabs_switch(browser, live_server, big, viewport):
    """A run opens on its chart under its key numbers; its tabs keep them and the address."""
    Collection.objects.filter(pk=big.pk).update(judgments_published=True)
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        log_in(page, "cora")
        page.goto(_pages(big)["run chart"])
        tabs = page.locator("nav[aria-label='Parts of the run'] a")
        expect(tabs).to_have_text(["Chart", "Queries", "Measures", "About"])
        expect(tabs.first).to_have_attribute("aria-current", "page")
        expect(page.locator("svg.chart-bars:visible")).to_be_visible()
        for label, selector in (
            ("Queries", "#per-query"),
            ("Measures", "#run-scores"),
            ("About", ".run-about"),
        ):
            page.click(f"nav[aria-label='Parts of the run'] a:text-is('{label}')")
            expect(page.locator(selector)).to_be_visible()
            expect(page.locator("svg.chart-bars")).to_have_count(0)
            expect(page.locator("dl.key-numbers")).to_be_visible()
        # Compare: the result's key numbers, then the tests' table, then the per-query
        # chart with its numbers, on one page that scrolls (issue 41).
        page.goto(_pages(big)["compare"])
        tops = [
            page.locator(selector).first.bounding_box()["y"]
            for selector in ("[data-result-numbers]", "#compare", "svg.chart-deltas:visible")
        ]
        assert tops == sorted(tops), tops
        expect(page.locator("#per-query-deltas")).to_be_attached()
        # The metrics tabs (one line on a phone, scrolling sideways) reach the stability
        # page whole, not the panel the collection page loads.
        page.click("nav.tabs-line a:text-is('Stability')")
        expect(page.locator("h1")).to_have_text("Is more judging still paying?")
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    finally:
        context.close()
