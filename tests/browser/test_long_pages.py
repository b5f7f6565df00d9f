"""Long pages made short (issue 34): topic difficulty, the pool and a run, at both sizes.

Each opens with its primary action and key numbers on the first screen, pages or folds
what is long, and its wide tables get the shared column chooser (a column hidden stays
hidden after a reload, kept per table in the browser) and compact cards on a 390 px phone.
The leaderboard's chooser is the same component and remembers its columns too.
"""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import DEFAULT_MEASURES, Membership
from metrics.models import Run
from tests import factories
from tests.browser import page_checks
from tests.browser.test_pages_phone import DESKTOP, PASSWORD, PHONE, log_in
from tests.metrics import pages_factories as pf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUERIES = 24

#: The run page's tab holding its per-query table.
QUERIES_TAB = "nav[aria-label='Parts of the run'] a:text-is('Queries')"


@pytest.fixture
def big(settings, tmp_path):
    """24 queries with pools of 4 graded documents, two runs over them, a coordinator."""
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("long", name="Long pages", measures=list(DEFAULT_MEASURES))
    factories.member(coll, factories.user("cora", password=PASSWORD), Membership.Role.COORDINATOR)
    team = pf.team(coll, "Team")
    docs = [factories.document(coll, f"doc-{i:02d}", title=f"Document {i}") for i in range(8)]
    queries = []
    for i in range(QUERIES):
        q = factories.query(coll, f"q{i:02d}", text=f"a longer query text number {i}")
        queries.append(q)
        pool = docs[i % 4 : i % 4 + 4]
        for d in pool:
            factories.pool_entry(coll, q, d)
        pf.live_grades(coll, q, {d: float((i + k) % 3) for k, d in enumerate(pool)})
    for r, tag in enumerate(("run-one", "run-two")):
        pf.run(
            coll,
            team,
            tag,
            per_query={
                q: {name: round(0.1 + 0.03 * ((i + r) % 9), 4) for name in DEFAULT_MEASURES}
                for i, q in enumerate(queries)
            },
            rankings=dict.fromkeys(queries, docs[r : r + 6]),
        )
    cache.clear()
    return coll


def _pages(coll) -> dict[str, str]:
    run, other = Run.objects.filter(collection=coll).order_by("pk")
    return {
        "difficulty": reverse("metrics:difficulty", args=[coll.slug]),
        "pool": reverse("metrics:pool", args=[coll.slug]),
        "run": reverse("metrics:run_detail", args=[coll.slug, run.pk]),
        "compare": reverse("metrics:compare", args=[coll.slug]) + f"?a={other.pk}&b={run.pk}",
        # The overall agreement table is on the page's Agreement tab (issue 34).
        "agreement": reverse("judging:collection_agreement", args=[coll.slug]) + "?tab=agreement",
    }


#: The longest each page may be (px) with this fixture: about two screens on a desktop.
MOST = {
    ("difficulty", "desktop"): 2000,
    ("difficulty", "phone"): 3800,
    ("pool", "desktop"): 1700,
    ("pool", "phone"): 4200,
    ("run", "desktop"): 1600,
    ("run", "phone"): 2600,
}


def _open(browser, live_server, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    log_in(page, "cora")
    return context, page, errors


def _in_first_screen(page, selector: str) -> None:
    box = page.locator(selector).first.bounding_box()
    size = page.viewport_size
    assert box is not None, selector
    assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"], (selector, box)
    assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"], (selector, box)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_long_pages_open_with_action_and_numbers_and_stay_short(
    browser, live_server, big, viewport
):
    size = "phone" if viewport is PHONE else "desktop"
    context, page, errors = _open(browser, live_server, viewport)
    try:
        for name in ("difficulty", "pool", "run"):
            page.goto(_pages(big)[name])
            assert page_checks.all_problems(page) == {}, name
            _in_first_screen(page, "[data-primary]")
            _in_first_screen(page, "dl.key-numbers")
            assert page.locator("dl.key-numbers > div").count() >= 4, name
            height = page.evaluate("document.documentElement.scrollHeight")
            assert height <= MOST[(name, size)], (name, size, height)
            assert page.evaluate("document.documentElement.scrollWidth <= innerWidth"), name
        # Topic difficulty pages its queries: 10 here, the rest on page 2 (same sort).
        page.goto(_pages(big)["difficulty"])
        expect(page.locator("#difficulty tbody tr")).to_have_count(10)
        expect(page.locator("[data-thin-note]")).to_be_visible()
        page.click(".pagination a[rel=next]")
        expect(page.locator(".pagination")).to_contain_text("Page 2 of 3")
        expect(page.locator("#difficulty tbody tr")).to_have_count(10)
        # The run's per-query table is a tab of its own; its chart comes first.
        page.goto(_pages(big)["run"])
        expect(page.locator("svg.chart:visible").first).to_be_visible()
        expect(page.locator("#per-query")).to_have_count(0)
        page.click(QUERIES_TAB)
        expect(page.locator("#per-query tbody tr")).to_have_count(QUERIES)
        assert page_checks.overflowing_tables(page) == []
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize(
    ("name", "table", "fold"),
    [
        ("difficulty", "#difficulty", None),
        ("pool", "#pool", None),
        ("run", "#per-query", QUERIES_TAB),
    ],
)
def test_wide_tables_are_compact_cards_on_a_phone(browser, live_server, big, name, table, fold):
    context, page, errors = _open(browser, live_server, PHONE)
    try:
        page.goto(_pages(big)[name])
        if fold:
            page.click(fold)
        row = page.locator(f"{table} tbody tr").first
        assert row.evaluate("e => getComputedStyle(e).display") == "grid"
        # The header row is out of sight; each value names itself, two values to a line.
        expect(page.locator(f"{table} thead")).to_have_css("position", "absolute")
        labelled = row.locator("td[data-label]")
        assert labelled.count() >= 2
        first, second = labelled.nth(0).bounding_box(), labelled.nth(1).bounding_box()
        assert abs(first["y"] - second["y"]) < 2 and second["x"] > first["x"], (first, second)
        assert page.locator(table).evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        box = row.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        assert errors == []
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
@pytest.mark.parametrize(
    ("name", "table", "column", "fold"),
    [
        ("difficulty", "#difficulty", "rndcg", None),
        ("pool", "#pool", "added", None),
        ("run", "#per-query", "P@10", QUERIES_TAB),
        ("compare", "#compare", "wilcoxon", None),
        ("agreement", "#overall-agreement", "alpha-ratio", None),
    ],
)
def test_a_hidden_column_stays_hidden_after_a_reload(
    browser, live_server, big, viewport, name, table, column, fold
):
    context, page, errors = _open(browser, live_server, viewport)
    try:
        page.goto(_pages(big)[name])
        if fold:
            page.click(fold)
        chooser = page.locator(f"details.col-chooser[data-columns-for='{table[1:]}']")
        header = page.locator(f"{table} thead th[data-col='{column}']")
        expect(header).to_be_visible()
        total = page.locator(f"{table} thead th[data-col]").count()
        expect(chooser.locator("[data-columns-count]")).to_have_text(f"({total} of {total})")
        # With the keyboard: focus the summary, open it, tick the column off with Space.
        chooser.locator("summary").focus()
        page.keyboard.press("Enter")
        box = chooser.locator(f"input[data-col='{column}']")
        box.focus()
        page.keyboard.press("Space")
        expect(box).not_to_be_checked()
        expect(header).to_be_hidden()
        expect(page.locator(f"{table} tbody tr").first.locator("td[hidden]")).to_have_count(1)
        expect(chooser.locator("[data-columns-count]")).to_have_text(f"({total - 1} of {total})")
        page.reload()
        if fold:
            page.click(fold)
        expect(page.locator(f"{table} thead th[data-col]").first).to_be_attached()
        expect(header).to_be_hidden()
        expect(chooser.locator(f"input[data-col='{column}']")).not_to_be_checked()
        # Another table keeps its own choice: nothing is hidden there.
        other = "pool" if name != "pool" else "difficulty"
        page.goto(_pages(big)[other])
        assert page.locator("table[id] thead th[data-col][hidden]").count() == 0
        # Ticking it again brings it back, after a reload too.
        page.goto(_pages(big)[name])
        if fold:
            page.click(fold)
        chooser.locator("summary").click()
        chooser.locator(f"input[data-col='{column}']").check()
        expect(header).to_be_visible()
        page.reload()
        if fold:
            page.click(fold)
        expect(header).to_be_visible()
        assert errors == []
    finally:
        context.close()


def test_the_column_chooser_is_hidden_without_javascript(browser, live_server, big):
    context = browser.new_context(
        base_url=live_server.url, viewport=DESKTOP, java_script_enabled=False
    )
    try:
        page = context.new_page()
        log_in(page, "cora")
        page.goto(_pages(big)["difficulty"])
        expect(page.locator("details.col-chooser")).to_be_hidden()
        expect(page.locator("#difficulty thead th[data-col='rndcg']")).to_be_visible()
    finally:
        context.close()


def test_the_leaderboard_remembers_its_columns(browser, live_server, big):
    context, page, errors = _open(browser, live_server, DESKTOP)
    try:
        url = reverse("metrics:leaderboard", args=[big.slug])
        page.goto(url)
        expect(page.locator("thead a:text-is('AP')")).to_be_visible()
        page.locator(".col-chooser summary").click()
        with page.expect_navigation(url=lambda address: "chosen=1" in address):
            page.locator(".col-choice:has-text('AP') input").uncheck()  # submits its form
        expect(page.locator("thead a:text-is('AP')")).to_have_count(0)
        page.goto(url)  # no choice in the address: the remembered one applies
        expect(page.locator("thead a:text-is('AP')")).to_have_count(0)
        expect(page.locator("thead a:text-is('RR')")).to_be_visible()
        assert errors == []
    finally:
        context.close()
