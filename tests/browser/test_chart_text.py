"""Charts drawn for the screen they are on (issue 41): no chart text below 11 px.

Every SVG chart's text is measured as rendered (its font size times the SVG's scale on
screen), at 1366×768 and at 390×844, on each page that draws a chart.
"""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from tests.browser.test_long_pages import _open, _pages, big  # noqa: F401 (fixture)
from tests.browser.test_pages_phone import DESKTOP, PHONE
from tests.judging.test_pictures import world  # noqa: F401 (fixture)
from tests.metrics.analysis.test_llm_agreement import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("GRADED_SCREENSHOTS")

#: The smallest chart text, in CSS pixels as rendered.
SMALLEST = 11.0

#: Every visible SVG text's rendered size (px), with its words, for the smallest ones.
MEASURE = """() => [...document.querySelectorAll('main svg text')]
  .filter(t => t.getClientRects().length && t.textContent.trim()
    && t.closest('svg').getBoundingClientRect().width > 0)
  .map(t => {
    const m = t.getScreenCTM();
    const px = parseFloat(getComputedStyle(t).fontSize) * Math.hypot(m.a, m.b);
    return [Math.round(px * 10) / 10, t.textContent.trim().slice(0, 24),
            t.closest('svg').getAttribute('class')];
  })"""


def chart_pages(coll) -> dict[str, str]:
    """Return each page (and tab) that draws a chart."""
    pages = _pages(coll)
    return {
        "run chart": pages["run"] + "?tab=chart",
        "compare chart": pages["compare"],
        "difficulty box plot": pages["difficulty"] + "?tab=chart",
    }


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_no_chart_text_is_smaller_than_11_px(browser, live_server, big, viewport):  # noqa: F811
    size = "phone" if viewport is PHONE else "desktop"
    context, page, errors = _open(browser, live_server, viewport)
    small = {}
    try:
        for name, url in chart_pages(big).items():
            page.goto(url)
            texts = page.evaluate(MEASURE)
            assert texts, f"{name}: no chart text found"
            tiny = sorted(t for t in texts if t[0] < SMALLEST)
            if tiny:
                small[name] = tiny[:3]
            if SHOTS:
                page.screenshot(path=f"{SHOTS}/chart-{name.replace(' ', '-')}-{size}.png")
            width = page.evaluate("document.documentElement.scrollWidth")
            assert width <= viewport["width"], f"{name} scrolls sideways: {width}px"
        assert small == {}
        assert errors == []
    finally:
        context.close()


def _small_text(page) -> list:
    return sorted(t for t in page.evaluate(MEASURE) if t[0] < SMALLEST)[:3]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_agreement_pictures_and_progress_text_is_11_px_or_more(
    browser,
    live_server,
    world,  # noqa: F811
    viewport,
):
    pictures = world
    pictures["coord"].set_password("pw")
    pictures["coord"].save()
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    small = {}
    try:
        page = context.new_page()
        page.goto(reverse("login"))
        page.fill("input[name=username]", "cora")
        page.fill("input[name=password]", "pw")
        page.click("button:has-text('Log in')")
        slug = pictures["coll"].slug
        agreement = reverse("judging:collection_agreement", args=[slug])
        for name, url in {
            "grade mix": f"{agreement}?tab=judges",
            "heatmap and confusion": f"{agreement}?tab=agreement",
            "progress": reverse("judging:collection_detail", args=[slug]) + "?tab=progress",
        }.items():
            page.goto(url)
            assert page.evaluate(MEASURE), f"{name}: no chart text found"
            if tiny := _small_text(page):
                small[name] = tiny
        assert small == {}
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_llm_agreement_charts_text_is_11_px_or_more(browser, live_server, viewport):
    llm_world = build_world()
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.goto(reverse("metrics:llm_agreement", args=[llm_world.coll.slug]))
        page.fill("input[name=username]", "cora")
        page.fill("input[name=password]", "pw")
        page.click("button:has-text('Log in')")
        page.locator(".llm-judge details").evaluate_all("ds => ds.forEach(d => d.open = true)")
        assert page.evaluate(MEASURE), "no chart text found"
        assert _small_text(page) == []
    finally:
        context.close()
