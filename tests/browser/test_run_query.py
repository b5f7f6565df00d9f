"""A run's ranked list for one query, reached from the run page, at desktop and phone size."""

from __future__ import annotations

import math

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import Collection
from metrics import services
from tests.browser.test_runs import log_in, runs_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["runs_world"]

# q1's live grades: d1 = 3, d2 = 1, d3 = 0 (see runs_world); d4 has none for q1.
RUN = b"q1 Q0 d2 1 9 r\nq1 Q0 d4 2 8 r\nq1 Q0 d1 3 7 r\nq2 Q0 d4 1 5 r\n"


@pytest.mark.parametrize("viewport", [(1366, 820), (390, 844)], ids=["desktop", "phone"])
def test_ranked_list_of_one_query(browser, live_server, console, runs_world, viewport):
    run = services.run_submit(
        collection=runs_world["coll"],
        team=runs_world["team"],
        tag="listed",
        content=RUN,
        filename="r.txt",
        user=None,
    )
    coll = runs_world["coll"]
    Collection.objects.filter(pk=coll.pk).update(judgments_published=True)
    width, height = viewport
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": height}
    )
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, reverse("metrics:run_detail", args=[runs_world["coll"].slug, run.pk]))
        page.click("nav[aria-label='Parts of the run'] a:text-is('Queries')")  # a tab
        page.click("tr[data-query='q1'] th a")
        expect(page.locator("h1")).to_contain_text("query q1")
        rows = page.locator("#run-ranking tbody tr")
        expect(rows).to_have_count(3)
        expect(rows.nth(0).locator("[data-grade]")).to_have_text("1")
        expect(rows.nth(1).locator("[data-grade]")).to_have_text("unjudged")
        expect(rows.nth(1).locator("[data-pooled]")).to_have_text("pooled")
        expect(rows.nth(2).locator("[data-contribution]")).to_have_text(f"{3 / 2:.4f}")
        # The ideal ranking sits beside the run's (issue 41: read together, no tab), the
        # first rows on one line at a desk; under it on a phone.
        ideal = page.locator("#ideal-ranking tbody tr")
        expect(ideal).to_have_count(2)
        expect(ideal.nth(0)).to_have_attribute("data-docno", "d1")
        run_box, ideal_box = rows.nth(0).bounding_box(), ideal.nth(0).bounding_box()
        if width >= 1000:
            assert ideal_box["x"] > run_box["x"] + run_box["width"] - 1
            assert abs(ideal_box["y"] - run_box["y"]) < 2
        else:
            assert ideal_box["y"] > rows.nth(2).bounding_box()["y"]
        assert page.locator('nav[aria-label="The run\'s list or the ideal one"]').count() == 0
        dcg, best = 1 + 3 / 2, 3 + 1 / math.log2(3)
        expect(page.locator("[data-field=ndcg]")).to_have_text(f"{dcg / best:.4f}")
        assert page.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        # Unpublished: the team sees the run's order, but no grade, ideal or score (a
        # per-query score gives the grades away; docs/security.md).
        Collection.objects.filter(pk=coll.pk).update(judgments_published=False)
        page.goto(page.url + "?tab=ideal")  # an old link to the ideal's tab shows no ideal
        expect(page.locator("#ideal-ranking")).to_have_count(0)
        expect(page.locator("[data-grades-hidden]")).to_be_visible()
        expect(page.locator("#run-ranking tbody tr")).to_have_count(3)
        assert page.locator("#ideal-ranking, [data-grade], [data-contribution]").count() == 0
        expect(page.locator("[data-field=ndcg]")).to_have_text("–")
        expect(page.locator("[data-field=judged]")).to_have_text("–")
        assert page.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        assert console.problems() == []
    finally:
        context.close()
