"""The leaderboard fits its box (issue 34 item 2) and shows rank intervals and letters.

At 1366×768 and 1920×1080 the table is no wider than its box and the page does not
scroll sideways; the sorted measure's cell holds its score, 95% interval and "may swap"
mark, all in view. On a 390×844 phone every row is a card with the rank (its interval and
letters), run, team and the sorted measure with its interval, without sideways scrolling.
The column chooser works with JavaScript (a change applies at once) and without (a Show
button). The collection has the default measures and eight runs with long names.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from django.core.cache import cache
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import DEFAULT_MEASURES, Membership
from tests import factories
from tests.browser.test_pages_phone import PASSWORD, log_in
from tests.metrics import pages_factories as pf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOP = {"width": 1366, "height": 768}
WIDE = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}
SHOTS = os.environ.get("GRADED_SCREENSHOTS")

TAGS = [
    "dense-e5-large-v2-rerank-monot5",
    "dense-e5-large-v2",
    "bm25-rm3-k1.2-b0.75-fb10",
    "splade-pp-ensembledistil",
    "bm25-baseline",
    "colbertv2-plaid",
    "hybrid-rrf-bm25-e5",
    "qld-dirichlet-mu1000",
]


@pytest.fixture
def board(settings, tmp_path):
    """A collection with the default measures, 12 queries and 8 runs close together."""
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("lb", name="Leaderboard layout", measures=list(DEFAULT_MEASURES))
    factories.member(coll, factories.user("cora", password=PASSWORD), Membership.Role.COORDINATOR)
    teams = [
        pf.team(coll, name)
        for name in ("Information Retrieval Lab of Somewhere", "Search Quality", "Team three")
    ]
    queries = [factories.query(coll, f"q{i}", text=f"query {i}") for i in range(12)]
    rng = np.random.default_rng(4)
    base = rng.uniform(0.2, 0.8, size=len(queries))
    for i, tag in enumerate(TAGS):
        level = 0.12 - 0.015 * i  # neighbours close together: some may swap
        per_query = {}
        for q, b in zip(queries, base, strict=True):
            v = float(np.clip(b + level + rng.normal(0, 0.06), 0, 1))
            per_query[q] = {
                name: (1.0 if name == "Judged@10" else round(v * (0.9 + 0.02 * k), 4))
                for k, name in enumerate(DEFAULT_MEASURES)
            }
        pf.run(coll, teams[i % 3], tag, per_query=per_query)
    cache.clear()
    return coll


def _open(browser, live_server, viewport, *, javascript=True):
    context = browser.new_context(
        base_url=live_server.url, viewport=viewport, java_script_enabled=javascript
    )
    page = context.new_page()
    log_in(page, "cora")
    return context, page


def _fits(page) -> None:
    """Assert that neither the page nor the table's box scrolls sideways."""
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    box = page.locator(".lb-scroll")
    sizes = box.evaluate("e => [e.scrollWidth, e.clientWidth]")
    assert sizes[0] <= sizes[1] + 1, sizes
    table = page.locator("table.leaderboard").bounding_box()
    outer = box.bounding_box()
    assert table["x"] + table["width"] <= outer["x"] + outer["width"] + 1, (table, outer)


def _answered(page):
    """Wait for the page a change of the chooser loads (the change submits its form)."""
    return page.expect_navigation(url=lambda url: "chosen=1" in url)


def _in_view(locator, width: int) -> None:
    """Assert that the element is visible and lies within the viewport's width."""
    expect(locator).to_be_visible()
    box = locator.bounding_box()
    assert box["x"] >= 0 and box["x"] + box["width"] <= width, box


@pytest.mark.parametrize("viewport", [LAPTOP, WIDE], ids=["1366", "1920"])
def test_the_table_fits_and_shows_interval_and_may_swap(browser, live_server, board, viewport):
    context, page = _open(browser, live_server, viewport)
    try:
        page.goto(reverse("metrics:leaderboard", args=[board.slug]))
        expect(page.locator("table.leaderboard tbody tr")).to_have_count(len(TAGS))
        _fits(page)
        for header in ("nDCG@10", "nDCG(gain=exp)@10", "P@10", "RR", "AP", "R@100"):
            _in_view(page.locator(f"thead a:text-is('{header}')"), viewport["width"])
        _in_view(page.locator("[data-interval]").first, viewport["width"])
        _in_view(page.locator("[data-may-swap]").first, viewport["width"])
        _in_view(page.locator("[data-rank-interval]").last, viewport["width"])
        _in_view(page.locator("[data-groups-label]").last, viewport["width"])
        # The interval sits in the score's own cell, not in a column of its own.
        cell = page.locator("td.lb-primary").nth(1)
        assert cell.locator("[data-interval]").count() == 1
        assert (
            page.locator("table.leaderboard thead th").count() == 3 + 6
        )  # #, run, Judged@10, six measures
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/leaderboard-{viewport['width']}.png")
    finally:
        context.close()


def test_a_phone_shows_cards_with_the_sorted_measure(browser, live_server, board):
    context, page = _open(browser, live_server, PHONE)
    try:
        page.goto(reverse("metrics:leaderboard", args=[board.slug]))
        rows = page.locator("table.leaderboard tbody tr")
        expect(rows).to_have_count(len(TAGS))
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        second = rows.nth(1)
        assert second.evaluate("e => getComputedStyle(e).display") == "grid"
        for part in (
            ".lb-rank-num",
            "[data-rank-interval]",
            "[data-groups-label]",
            ".lb-run a",
            ".lb-team",
            ".lb-primary .lb-value",
            ".lb-primary [data-interval]",
        ):
            _in_view(second.locator(part), PHONE["width"])
        _in_view(second.locator("[data-may-swap]"), PHONE["width"])
        box = page.locator(".lb-scroll")
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        # No "scroll sideways" hint on the leaderboard (the measure legend below may have one).
        assert (
            page.locator(".lb-scroll.is-scrollable, table.leaderboard.is-scrollable").count() == 0
        )
        assert second.locator(".lb-team").inner_text().startswith("Search Quality")
        # Every chosen column is on the card (issue 41), each named, inside the screen;
        # the sorted measure comes first, beside the run.
        chosen = page.locator("thead th.lb-measure").count()
        assert chosen >= 5
        assert second.locator("td.lb-measure:visible").count() == chosen
        for i in range(chosen):
            cell = second.locator("td.lb-measure").nth(i)
            _in_view(cell, PHONE["width"])
            if "lb-primary" not in (cell.get_attribute("class") or ""):
                label = cell.evaluate("e => getComputedStyle(e, '::before').content")
                assert label.strip('"').strip() == cell.get_attribute("data-label")
        run = second.locator(".lb-run").bounding_box()
        primary = second.locator("td.lb-primary").bounding_box()
        others = [
            second.locator("td.lb-measure:not(.lb-primary)").nth(i).bounding_box()
            for i in range(chosen - 1)
        ]
        assert run["y"] < primary["y"] < min(b["y"] for b in others)
        assert len({round(b["x"]) for b in others}) == 2  # two to a line
        # No value runs out of its cell into the next one (a long measure name wraps).
        spilled = page.evaluate(
            "[...document.querySelectorAll('table.leaderboard tbody td')]"
            ".filter(e => e.offsetParent !== null && e.scrollWidth > e.clientWidth + 1)"
            ".map(e => e.dataset.label)"
        )
        assert spilled == []
        # The chooser tells the truth: it counts what the card shows.
        expect(page.locator("[data-columns-count]")).to_have_text(f"({chosen} of {chosen})")
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/leaderboard-phone.png")
    finally:
        context.close()


def test_the_column_chooser_applies_at_once_with_javascript(browser, live_server, board):
    board.measures = [*DEFAULT_MEASURES[:-1], "P@5", "P@20", "Judged@10"]  # eight measures
    board.save(update_fields=["measures"])
    context, page = _open(browser, live_server, LAPTOP)
    try:
        page.goto(reverse("metrics:leaderboard", args=[board.slug]))
        expect(page.locator("thead a:text-is('P@20')")).to_have_count(0)
        expect(page.locator(".lb-chooser button[type=submit]")).to_be_hidden()
        page.locator(".col-chooser summary").click()
        with _answered(page):
            page.locator(".col-choice:has-text('P@20') input").check()
        expect(page.locator("thead a:text-is('P@20')")).to_be_visible()
        # A change loads the page anew (the live part is not boosted): measure only once it
        # has loaded, not the page that is going away.
        page.locator(".col-chooser summary").click()
        with _answered(page):
            page.locator(".col-choice:has-text('AP') input").uncheck()
        expect(page.locator("thead a:text-is('AP')")).to_have_count(0)
        _fits(page)
        # Sorting from the chooser (the phone has no headers to click) keeps the choice.
        with _answered(page):
            page.select_option(".lb-chooser select[name=sort]", "P@20")
        expect(page.locator("thead th[aria-sort] a")).to_have_text("P@20")
        expect(page.locator("thead a:text-is('AP')")).to_have_count(0)
    finally:
        context.close()


def test_the_column_chooser_works_without_javascript(browser, live_server, board):
    board.measures = [*DEFAULT_MEASURES[:-1], "P@5", "P@20", "Judged@10"]
    board.save(update_fields=["measures"])
    context, page = _open(browser, live_server, LAPTOP, javascript=False)
    try:
        page.goto(reverse("metrics:leaderboard", args=[board.slug]))
        # The default set: the first six measures.
        expect(page.locator("thead th.lb-measure")).to_have_count(6)
        _fits(page)
        page.locator(".col-chooser summary").click()
        page.locator(".col-choice:has-text('P@20') input").check()
        page.locator(".lb-chooser button:has-text('Show')").click()
        expect(page.locator("thead a:text-is('P@20')")).to_be_visible()
        expect(page.locator("thead th.lb-measure")).to_have_count(7)
    finally:
        context.close()
