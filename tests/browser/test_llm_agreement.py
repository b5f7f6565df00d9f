"""The LLM-vs-human page in real Chromium, on a desktop and a 390 × 844 phone screen."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser import page_checks
from tests.metrics.analysis.test_llm_agreement import build_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = [
    pytest.param({"width": 1366, "height": 820}, id="desktop"),
    pytest.param({"width": 390, "height": 844}, id="phone"),
]


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_heatmap_and_scatter_with_text_alternatives(page, console, viewport):
    world = build_world()
    page.set_viewport_size(viewport)
    agreement = reverse("judging:collection_agreement", args=[world.coll.slug])
    page.goto(agreement)
    page.fill("input[name=username]", "cora")
    page.fill("input[name=password]", "pw")
    page.click("button:has-text('Log in')")
    page.click("a:has-text('LLM judges vs humans')")
    expect(page.locator("h1")).to_have_text("LLM judges vs humans")

    section = page.locator(".llm-judge").first
    expect(section.locator("h2")).to_contain_text("gpt")
    consensus = section.locator("details[data-reference=consensus]")
    expect(consensus).to_have_attribute("open", "")

    heatmap = consensus.locator("svg.chart-heatmap")
    expect(heatmap).to_be_visible()
    expect(heatmap).to_have_attribute("role", "img")
    expect(heatmap.locator("> title")).to_have_text("Confusion matrix, gpt vs Human consensus")
    expect(heatmap.locator("> desc")).to_contain_text("48 pairs")
    expect(heatmap.locator(".chart-cell")).to_have_count(25)
    expect(heatmap.locator(".chart-cell[data-row='2'][data-column='2']")).to_have_attribute(
        "data-count", "12"
    )
    table = consensus.locator("table.confusion-table")
    expect(table.locator("caption")).to_contain_text("Confusion matrix as a table")
    expect(table.locator("tbody tr").nth(2).locator("td").nth(2)).to_have_text("12")

    scatter = consensus.locator("svg.chart-scatter:visible")
    expect(scatter).to_be_visible()
    expect(scatter).to_have_attribute("role", "img")
    expect(scatter.locator("> desc")).to_contain_text("5 points, one per run")
    expect(scatter.locator("circle.chart-point")).to_have_count(5)
    expect(consensus.locator("table.systems-table tbody tr")).to_have_count(5)

    bob = section.locator("tr[data-reference^=judge-]").nth(1)
    expect(bob.locator("[data-field=exact]")).to_have_text("not enough data")

    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"page scrolls sideways: {width}px"
    box = heatmap.bounding_box()
    assert box is not None and box["width"] <= viewport["width"]
    # One LLM judge a tab, then the human checks; the page scrolls, no box scrolls on
    # its own (issue 41).
    tabs = page.locator("nav[aria-label='LLM judges and human checks'] a")
    expect(tabs).to_have_text(["gpt", "tiny", "Human checks"])
    expect(page.locator(".llm-judge")).to_have_count(1)
    assert page_checks.framed_boxes(page) == []
    tabs.filter(has_text="tiny").click()
    expect(page.locator(".llm-judge h2")).to_contain_text("tiny")
    assert page_checks.framed_boxes(page) == []
    tabs.filter(has_text="Human checks").click()
    expect(page.locator("#human-checks-title")).to_be_visible()
    expect(page.locator(".llm-judge")).to_have_count(0)
    assert page_checks.framed_boxes(page) == []
    assert console.problems() == []
