"""The leaderboard's letters and the comparison of every pair, at 1366×768 and 390×844.

The board of tests/browser/test_leaderboard_layout.py (eight runs close together): each
run shows its letters under its rank; the leaderboard's "?" explains them and links to
every pair of the sorted measure. There a desk shows the matrix (runs × runs, letters
beside the names, significant cells marked) and a phone the list of pairs, neither
scrolling the page sideways.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from django.urls import reverse
from playwright.sync_api import expect

from metrics.engine.letters import letter_strings
from metrics.engine.ranks import letter_groups
from metrics.live import store
from metrics.models import Run
from tests.browser.test_leaderboard_layout import LAPTOP, PHONE, TAGS, _open, board
from tests.metrics import pages_factories as pf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["board"]
SHOTS = os.environ.get("GRADED_SCREENSHOTS")


def _expected_letters(coll) -> dict[str, str]:
    """Return each run's letters on nDCG@10 as the engine gives them."""
    runs = list(Run.objects.filter(collection=coll))
    found = store.measure_matrix(
        collection_id=coll.pk, run_ids=[r.pk for r in runs], name=pf.NDCG10
    )
    matrix = np.column_stack([values for _q, (_listed, values) in sorted(found.items())])
    order = np.argsort(-matrix.mean(axis=1), kind="stable")
    shown = letter_strings(letter_groups(matrix, order))
    return {runs[i].tag: letters for i, letters in zip(order, shown, strict=True)}


@pytest.mark.parametrize("viewport", [LAPTOP, PHONE], ids=["1366", "390"])
def test_the_leaderboard_shows_letters_and_explains_them(browser, live_server, board, viewport):
    expected = _expected_letters(board)
    assert len(set(expected.values())) > 1  # the board has more than one group
    context, page = _open(browser, live_server, viewport)
    try:
        page.goto(reverse("metrics:leaderboard", args=[board.slug]))
        rows = page.locator("table.leaderboard tbody tr")
        expect(rows).to_have_count(len(TAGS))
        shown = {}
        for i in range(len(TAGS)):
            row = rows.nth(i)
            label = row.locator("[data-groups-label]")
            expect(label).to_be_visible()
            box = label.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"], box
            # Read out as "letters ab" (the word is for screen readers only).
            shown[row.get_attribute("data-run")] = label.inner_text().split()[-1]
            assert (
                row.locator("td.lb-rank").get_attribute("data-groups")
                == shown[row.get_attribute("data-run")]
            )
        assert shown == expected
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        page.locator(".lb-explain summary").click()
        expect(page.locator(".lb-explain .explain-body")).to_contain_text("share a letter")
        with page.expect_navigation():
            page.locator(".lb-explain a:has-text('Compare all pairs')").click()
        expect(page.locator("[data-correction=holm]")).to_be_visible()
    finally:
        context.close()


def test_every_pair_on_a_desk_is_a_matrix(browser, live_server, board):
    expected = _expected_letters(board)
    context, page = _open(browser, live_server, LAPTOP)
    try:
        page.goto(reverse("metrics:compare", args=[board.slug]) + "?pairs=1&measure=nDCG@10")
        matrix = page.locator("table.pairs-matrix")
        expect(matrix).to_be_visible()
        expect(page.locator("[data-pairs-list]")).to_be_hidden()
        expect(matrix.locator("td.pm-cell")).to_have_count(len(TAGS) * (len(TAGS) - 1) // 2)
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        box = page.locator(".pairs-matrix-box")
        assert box.evaluate("e => e.scrollWidth <= e.clientWidth + 1")  # 8 runs: no scrolling
        # Letters beside every name: the rows (#1 to #7) and the columns (#2 to #8).
        rows = matrix.locator("tbody tr")
        expect(rows).to_have_count(len(TAGS) - 1)
        for i in range(len(TAGS) - 1):
            row = rows.nth(i)
            expect(row.locator("[data-letters]")).to_have_text(
                expected[row.get_attribute("data-run")]
            )
        columns = matrix.locator("thead th.pm-col")
        for i in range(len(TAGS) - 1):
            column = columns.nth(i)
            expect(column.locator("[data-letters]")).to_have_text(
                expected[column.get_attribute("data-col")]
            )
        significant = matrix.locator("td.pm-cell.is-significant")
        assert significant.count() > 0
        expect(significant.first.locator(".pm-mark")).to_be_visible()
        assert significant.first.evaluate("e => getComputedStyle(e).backgroundColor") != (
            matrix.locator("td.pm-cell:not(.is-significant)").first.evaluate(
                "e => getComputedStyle(e).backgroundColor"
            )
        )
        page.locator(".baseline-line details.explain summary").click()
        expect(page.locator("[data-method]")).to_contain_text("Holm over every pair")
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/compare-pairs-1366.png", full_page=True)
        # Tukey's HSD from the form (folded away while a result shows): the correction is named.
        expect(page.locator("[data-pairs-form]")).to_be_hidden()
        page.locator(".pairs-fold summary").click()
        page.select_option("#pairs-correction", "tukey")
        with page.expect_navigation():
            page.locator("[data-pairs-form] button").click()
        expect(page.locator("[data-correction=tukey]")).to_contain_text("Tukey's HSD")
    finally:
        context.close()


def test_every_pair_on_a_phone_is_a_list(browser, live_server, board):
    context, page = _open(browser, live_server, PHONE)
    try:
        page.goto(reverse("metrics:compare", args=[board.slug]) + "?pairs=1&measure=nDCG@10")
        expect(page.locator("table.pairs-matrix")).to_be_hidden()
        items = page.locator("[data-pairs-list] li")
        expect(items).to_have_count(len(TAGS) * (len(TAGS) - 1) // 2)
        expect(page.locator("[data-pairs-runs] li")).to_have_count(len(TAGS))
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        first = items.first
        expect(first).to_be_visible()
        box = first.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        assert "corrected" in first.inner_text()
        expect(page.locator("[data-pairs-runs] [data-letters]").first).to_be_visible()
        if SHOTS:
            page.screenshot(path=f"{SHOTS}/compare-pairs-390.png", full_page=True)
    finally:
        context.close()
