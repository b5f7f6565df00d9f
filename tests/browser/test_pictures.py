"""Agreement pictures and judging progress over time, in Chromium at desktop and phone size."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from tests.browser import page_checks
from tests.judging.test_pictures import world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["world"]


@pytest.mark.parametrize("viewport", [(1366, 820), (390, 844)], ids=["desktop", "phone"])
def test_agreement_and_progress_pictures(browser, live_server, console, world, viewport):
    world["coord"].set_password("pictures-pass-1")
    world["coord"].save()
    width, height = viewport
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": height}
    )
    context.add_init_script(
        "window.__csp = []; document.addEventListener('securitypolicyviolation',"
        " e => window.__csp.push(e.violatedDirective));"
    )
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        page.goto(reverse("login"))
        page.fill("input[name=username]", "cora")
        page.fill("input[name=password]", "pictures-pass-1")
        page.click("button:has-text('Log in')")
        expect(page.locator(".site-user")).to_have_text("cora")
        slug = world["coll"].slug
        page.goto(reverse("judging:collection_agreement", args=[slug]))
        # No Pictures tab (issue 41): each picture sits with the numbers it draws.
        expect(page.locator("nav .tabs a:has-text('Pictures')")).to_have_count(0)
        # The Judges tab (the default): the grade mix above the judges' grades.
        expect(page.locator("svg.chart-grade-mix:visible rect.mix-part")).not_to_have_count(0)
        mix = page.locator("#grade-mix").bounding_box()
        grades = page.locator("#judges-grades").bounding_box()
        assert mix["y"] < grades["y"], (mix, grades)
        assert page_checks.framed_boxes(page) == []
        # The Agreement tab: its three tables one after the other (overall, every two
        # judges, per query) on a page that scrolls, no second row of tabs, and under the
        # table of every two judges the κ heatmap and two judges' confusion matrix.
        page.click("nav .tabs a:has-text('Agreement')")
        expect(page.locator("#overall-agreement tbody tr")).to_have_count(3)
        expect(page.locator(".list-box #pairwise-agreement tbody tr")).to_have_count(3)
        expect(page.locator("nav[aria-label=Agreement]")).to_have_count(0)
        heatmap = page.locator("svg.chart-heatmap")
        expect(heatmap).to_be_visible()
        assert heatmap.get_attribute("role") == "img"
        expect(heatmap.locator("title").first).to_have_text(
            "Quadratic-weighted Cohen's κ, judge × judge"
        )
        expect(heatmap.locator("g.heat-cell")).to_have_count(9)
        tops = [
            page.locator(selector).bounding_box()["y"]
            for selector in (
                "#overall-agreement",
                "#pairwise-agreement",
                "svg.chart-heatmap",
                "#query-agreement",
            )
        ]
        assert tops == sorted(tops), tops
        confusion = page.locator("svg.chart-confusion")
        expect(confusion.locator("desc")).to_contain_text("6 pairs graded by both")
        # Any two judges: j1 against j3 share two pairs; the page comes back at the matrix.
        j1, _j2, j3 = world["judges"]
        page.select_option("#confusion-a", str(j1.pk))
        page.select_option("#confusion-b", str(j3.pk))
        page.click("button:has-text('Show confusion matrix')")
        expect(page.locator("svg.chart-confusion desc")).to_contain_text("2 pairs graded by both")
        expect(
            page.locator("svg.chart-confusion g.confusion-cell[data-a='0'][data-b='3'] text")
        ).to_have_text("1")
        assert page.url.endswith("#confusion"), page.url
        assert "tab=agreement" in page.url
        assert page_checks.framed_boxes(page) == []
        assert page.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        page.goto(reverse("judging:collection_detail", args=[slug]))
        page.click("nav .tabs a:has-text('Progress')")  # the collection page's Progress tab
        chart = page.locator("[data-progress-chart] svg.chart-progress:visible")
        expect(chart).to_be_visible()
        expect(chart.locator("g.progress-line")).to_have_count(3)
        expect(chart.locator("desc")).to_contain_text("j1: 6 judged by")
        assert page.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        assert page.evaluate("window.__csp") == []
        assert console.problems() == []
    finally:
        context.close()
