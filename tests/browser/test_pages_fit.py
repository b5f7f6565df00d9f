"""Pages that fit (issue 20 item 4): cards on a phone, pictures at their own size.

On a 390 px phone the disagreement queue and a judge's own judgments are cards whose
Adjudicate / Edit button is in view without scrolling sideways; on a desktop a 2 × 2
agreement heatmap stays small, the judge table shows its Dawid–Skene column, the grade
legend wraps instead of being cut, and chart text is drawn at a readable size.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging import services
from judging.models import Membership
from tests import factories
from tests.browser.test_pages_phone import DESKTOP, PASSWORD, PHONE, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def judged(settings, tmp_path):
    """Two judges who graded the same 12 pairs, apart on half of them; a coordinator."""
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("fit", name="Pages that fit")
    queries = [
        factories.query(coll, f"q{i}", text=f"query {i}", narrative=f"Narrative {i}")
        for i in range(3)
    ]
    docs = [factories.document(coll, f"doc-{i}", title=f"Document {i}") for i in range(4)]
    judges = {}
    for name, role in (("cora", Membership.Role.COORDINATOR), ("judy", Membership.Role.JUDGE)):
        factories.member(coll, factories.user(name, password=PASSWORD), role)
    factories.member(coll, factories.user("jim", password=PASSWORD), Membership.Role.JUDGE)
    for name in ("judy", "jim"):
        judges[name] = services.judge_for_user(user=coll.memberships.get(user__username=name).user)
    n = 0
    for q in queries:
        for d in docs:
            factories.pool_entry(coll, q, d)
            services.judgment_record(judge=judges["judy"], query=q, document=d, grade=n % 2)
            services.judgment_record(
                judge=judges["jim"], query=q, document=d, grade=(n % 2) + 3 * (n % 2 == 0)
            )
            n += 1
    return coll


def _open(browser, live_server, viewport, user):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    page = context.new_page()
    log_in(page, user)
    return context, page


@pytest.mark.parametrize(
    ("user", "page_name", "button"),
    [
        ("cora", "judging:disagreement_list", "Adjudicate"),
        ("judy", "judging:judgment_list", "Edit"),
    ],
)
def test_tables_to_act_on_are_cards_on_a_phone(
    browser, live_server, judged, user, page_name, button
):
    context, page = _open(browser, live_server, PHONE, user)
    try:
        page.goto(reverse(page_name, args=[judged.slug]))
        rows = page.locator("table.cards-on-phone tbody tr")
        expect(rows.first).to_be_visible()
        # A card: a block, or a grid of two values a line (compact cards, .cards-grid).
        assert rows.first.evaluate("e => getComputedStyle(e).display") in {"block", "grid"}
        action = rows.first.locator(f".card-action a:has-text('{button}')")
        box = action.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        table = page.locator("table.cards-on-phone")
        assert table.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
        # Each value says what it is (the header row is hidden on a phone).
        assert rows.first.locator("td[data-label]").count() >= 3
    finally:
        context.close()


def test_agreement_pictures_keep_their_size_and_the_judge_table_fits(browser, live_server, judged):
    context, page = _open(browser, live_server, DESKTOP, "cora")
    try:
        agreement = reverse("judging:collection_agreement", args=[judged.slug])
        page.goto(agreement + "?tab=agreement")  # the heatmap under every two judges' table
        heatmap = page.locator("svg.chart-heatmap")
        box = heatmap.bounding_box()
        assert box["width"] <= 400 and box["height"] <= 400, box  # 2 judges: 2 × 2 cells
        page.goto(agreement + "?tab=judges")  # the grade mix above the judges' grades
        legend = page.locator("ul.chart-legend li")
        expect(legend).to_have_count(5)
        for i in range(5):
            item = legend.nth(i).bounding_box()
            assert item["x"] + item["width"] <= DESKTOP["width"], item
        page.goto(agreement)  # the Judges tab
        reliability = page.locator("#judge-figures-table th:has-text('Dawid–Skene')")
        right = reliability.bounding_box()
        assert right["x"] + right["width"] <= DESKTOP["width"], right
        page.goto(reverse("judging:collection_detail", args=[judged.slug]) + "?tab=progress")
        # Chart text is drawn at 10 px or more (12 px in the picture, scaled at most a bit).
        sizes = page.evaluate(
            """() => [...document.querySelectorAll("svg.chart-progress text")]
                .filter(t => t.getClientRects().length)
                .map(t => t.getBoundingClientRect().height)"""
        )
        assert sizes and min(sizes) >= 10, sizes
    finally:
        context.close()


# ---- Issue 34, item 6: the smaller defects, in the browser --------------------------------


def _open_pair(coll) -> None:
    """Pool one more pair, with a long body, that nobody has judged (judy's next card)."""
    body = "<p>" + "A long paragraph about floor plans and layouts. " * 40 + "</p>"
    doc = factories.document(coll, "doc-open", title="An open document", body=body)
    factories.pool_entry(coll, coll.queries.order_by("pk").first(), doc)


def test_desktop_card_uses_its_width_and_key_badges_line_up(browser, live_server, judged):
    _open_pair(judged)
    context, page = _open(browser, live_server, DESKTOP, "judy")
    try:
        page.goto(reverse("judging:judge_next", args=[judged.slug]))
        expect(page.locator(".grade-button")).to_have_count(5)
        used = page.evaluate(
            """() => {
                const doc = document.querySelector(".card-document");
                const s = getComputedStyle(doc);
                const pad = parseFloat(s.paddingLeft) + parseFloat(s.paddingRight);
                const body = document.querySelector("[data-doc-body]");
                return [body.getBoundingClientRect().width, doc.clientWidth - pad];
            }"""
        )
        assert used[0] >= 0.95 * used[1], used  # was 616 of 946 px
        tops = page.evaluate(
            """() => [...document.querySelectorAll(".grade-button kbd")]
                .map(k => k.getBoundingClientRect().top)"""
        )
        assert max(tops) - min(tops) <= 1, tops  # "1" sat 9 px higher (its label wraps)
        # The grade bar follows the document: no empty band between them.
        gap = page.evaluate(
            """() => document.querySelector(".card-actions").getBoundingClientRect().top -
                document.querySelector(".card-document").getBoundingClientRect().bottom"""
        )
        assert gap <= 2, gap
    finally:
        context.close()


def test_phone_pages_put_actions_first(browser, live_server, judged):
    _open_pair(judged)
    context, page = _open(browser, live_server, PHONE, "cora")
    try:
        page.goto(reverse("judging:collection_detail", args=[judged.slug]))
        primary = page.locator("[data-primary]").bounding_box()
        assert primary["y"] + primary["height"] <= PHONE["height"], primary
        guidelines = page.locator("[data-guidelines]")
        assert guidelines.get_attribute("open") is None  # folded, after the actions
        assert guidelines.bounding_box()["y"] > primary["y"]
        page.goto(reverse("judging:collection_agreement", args=[judged.slug]))
        expect(page.locator("[data-remove-labels]")).to_have_count(2)
        for i in range(2):
            link = page.locator("[data-remove-labels]").nth(i)
            link.scroll_into_view_if_needed()
            box = link.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        assert "all judges" not in page.content()
    finally:
        context.close()
    context, page = _open(browser, live_server, PHONE, "judy")
    try:
        page.goto(reverse("judging:judge_next", args=[judged.slug]))
        placeholder = page.locator("textarea[data-note]").get_attribute("placeholder")
        assert placeholder == "Note (optional)"  # no keys on a touch screen
    finally:
        context.close()


@pytest.mark.parametrize(
    ("strategy", "shown"),
    [
        ("depth", []),
        ("thompson", ["wave_size", "horizon", "rel_level", "seed"]),
        ("steady", ["wave_size", "horizon", "rel_level", "cutoff"]),
        ("hybrid", ["wave_size", "horizon", "rel_level", "cutoff"]),
        ("llm-check", ["wave_size", "horizon", "rel_level", "cutoff", "seed", "audit_percent"]),
    ],
)
def test_settings_show_only_the_chosen_strategys_parameters(
    browser, live_server, judged, strategy, shown
):
    context, page = _open(browser, live_server, DESKTOP, "cora")
    try:
        page.goto(reverse("metrics:collection_update", args=[judged.slug]))
        expect(page.locator("h1")).to_have_text("Collection settings")
        page.click(".tabs a:has-text('Pooling')")  # one form a tab
        expect(page.locator("nav[aria-label=Settings] [aria-current=page]")).to_have_text("Pooling")
        page.select_option("#pooling-policy select[name=strategy]", strategy)
        visible = page.evaluate(
            """() => [...document.querySelectorAll("#pooling-policy [data-param]")]
                .filter(e => e.getClientRects().length).map(e => e.dataset.param)"""
        )
        assert visible == shown
        helps = page.evaluate(
            """() => [...document.querySelectorAll("#pooling-policy .strategy-help")]
                .filter(e => e.getClientRects().length).map(e => e.dataset.for)"""
        )
        assert helps == [strategy]
    finally:
        context.close()
