"""An open leaderboard or run page shows a new grade without a reload (issue 20 item 6).

The page polls every 2 s (htmx; 204 while nothing changed) and swaps its live part when
a judgment changed the scores. How long that takes is a benchmark
(``python -m benchmarks.live_push``, docs/benchmarks.md), not a test: here the change
must arrive, the reader's place and the page's address stay, and nothing breaks.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging import services as judging_services
from judging.models import Collection, Document, Membership, Query
from metrics import services
from tests import factories
from tests.browser.test_run_query import RUN
from tests.browser.test_runs import log_in, runs_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["runs_world"]


@pytest.mark.parametrize("viewport", [(1366, 820), (390, 844)], ids=["desktop", "phone"])
def test_a_new_grade_reaches_open_pages_by_itself(
    browser, live_server, console, runs_world, viewport
):
    coll = runs_world["coll"]
    run = services.run_submit(
        collection=coll,
        team=runs_world["team"],
        tag="live",
        content=RUN,
        filename="r.txt",
        user=None,
    )
    # Teams see live scores once the judgments are published (before, the default score
    # visibility shows them none; docs/security.md).
    Collection.objects.filter(pk=coll.pk).update(judgments_published=True)
    judge_user = factories.user("jo")
    factories.member(coll, judge_user, role=Membership.Role.JUDGE)
    width, height = viewport
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": height}
    )
    try:
        board, detail = context.new_page(), context.new_page()
        for page in (board, detail):
            page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(board, reverse("metrics:leaderboard", args=[coll.slug]))
        expect(board.locator("h1")).to_have_text("Leaderboard")
        # The per-query table is a tab of the run page: it updates itself there too.
        detail.goto(reverse("metrics:run_detail", args=[coll.slug, run.pk]) + "?tab=queries")
        cell = board.locator("tr[data-run='live'] td.score").first
        row = detail.locator("tr[data-query='q1'] td.score").first
        before, before_row = cell.inner_text(), row.inner_text()
        version = coll.judgments_version
        coll.refresh_from_db()
        judging_services.judgment_record(
            judge=judging_services.judge_for_user(user=judge_user),
            query=Query.objects.get(collection=coll, external_id="q1"),
            document=Document.objects.get(collection=coll, external_id="d4"),
            grade=4,
        )
        coll.refresh_from_db()
        assert coll.judgments_version > version
        expect(cell).not_to_have_text(before, timeout=10_000)
        expect(row).not_to_have_text(before_row, timeout=10_000)
        expect(board.locator(".version-line")).to_contain_text(f"version {coll.judgments_version}")
        expect(board.locator("#live-status")).to_have_text(
            f"Scores updated: judgment list version {coll.judgments_version}."
        )
        assert board.url.endswith(reverse("metrics:leaderboard", args=[coll.slug]))
        # Links in the swapped part still work (they do not inherit the poll's settings).
        board.click("tr[data-run='live'] th a")
        expect(board.locator("h1")).to_contain_text("live")
        assert console.problems() == []
    finally:
        context.close()
