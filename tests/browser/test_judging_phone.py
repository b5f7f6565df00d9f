"""Judging on a 390×844 phone and feedback while judging, in real Chromium (issue 11)."""

from __future__ import annotations

import os

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import Judgment, JudgmentEvent
from tests.browser import page_checks
from tests.browser.test_judging import card, judging_world, log_in, wait_for_new_card

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["judging_world"]

PHONE = {"width": 390, "height": 844}
SHOTS = os.environ.get("GRADED_SCREENSHOTS")  # a folder: save screenshots there to look at


@pytest.fixture
def phone(browser, live_server, console):
    """Return a page in a 390×844 touch viewport."""
    context = browser.new_context(
        base_url=live_server.url, viewport=PHONE, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    page.on("console", lambda msg: console.messages.append((msg.type, msg.text)))
    page.on("pageerror", lambda error: console.page_errors.append(str(error)))
    page.set_default_timeout(10_000)
    try:
        yield page
    finally:
        context.close()


def shot(page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/{name}.png")


def no_sideways_scroll(page) -> None:
    widths = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], f"page scrolls sideways: {widths}"


def box(page, selector: str) -> dict:
    return page.locator(selector).first.bounding_box()


def test_phone_card_shows_query_and_document_above_a_fixed_grade_bar(
    phone, live_server, console, judging_world
):
    long_body = "\n\n".join(f"Paragraph {i} about flights to Helsinki." * 6 for i in range(40))
    judging_world["coll"].documents.update(body=long_body)
    log_in(phone, live_server, judging_world)
    shot(phone, "phone-card")
    no_sideways_scroll(phone)
    viewport_h = PHONE["height"]
    bar = box(phone, ".grade-buttons")
    # The bar sits at the bottom of the screen and stays there while scrolling.
    assert abs(bar["y"] + bar["height"] - viewport_h) <= 1
    query = box(phone, ".query-text")
    title = box(phone, "#doc-title")
    body = box(phone, "#doc-body")
    assert query["y"] >= 0 and query["y"] + query["height"] < title["y"]
    assert body["y"] + 40 < bar["y"], "the document's text starts above the grade bar"
    # Every grade button is a ≥ 44 px touch target, and its label fits inside it.
    for grade in range(5):
        button = phone.locator(f"button.grade-button[value='{grade}']")
        b = button.bounding_box()
        assert b["height"] >= 44 and b["width"] >= 44, (grade, b)
        assert button.evaluate("e => e.scrollWidth <= e.clientWidth + 1"), grade
    # Description, narrative and guidelines fold behind one tap.
    narrative = phone.locator(".query-narrative")
    expect(narrative).to_be_hidden()
    phone.locator(".query-more > summary").tap()
    expect(narrative).to_be_visible()
    expect(phone.locator(".guidelines summary")).to_be_visible()
    phone.locator(".query-more > summary").tap()
    expect(narrative).to_be_hidden()

    # The card fits the screen (issue 34): the long document scrolls in its own box, not
    # the page. Read down it, then tap a grade: the bar never moved, and the next card
    # starts at the query line and the document's start.
    assert phone.evaluate("document.documentElement.scrollHeight") <= viewport_h
    first = card(phone).get_attribute("data-entry-id")
    document = phone.locator("[data-judging-card] .card-document")
    document.evaluate("e => e.scrollTo(0, 2500)")
    assert document.evaluate("e => e.scrollTop") > 1000
    assert phone.evaluate("window.scrollY") == 0
    assert abs(box(phone, ".grade-buttons")["y"] - bar["y"]) <= 1
    phone.locator("button.grade-button[value='2']").tap()
    wait_for_new_card(phone, first)
    expect(phone.locator("[data-saved]")).to_contain_text("Saved 2")
    expect(phone.locator(".query-narrative")).to_be_hidden()
    # card.js scrolls the bar above the card into view one frame after htmx settles (and
    # after htmx's own scroll to the page top): wait for that frame, not for the swap. The
    # page is one screen now, so the bar stays where it is, under the site's header.
    phone.wait_for_function(
        "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame("
        "() => done(document.querySelector('[data-judge-bar]')"
        ".getBoundingClientRect().top >= 0))))",
        timeout=5000,
    )
    # The new card's document starts at its top, the page still one screen.
    assert document.evaluate("e => e.scrollTop") == 0
    assert phone.evaluate("document.documentElement.scrollHeight") <= viewport_h
    grade_bar_y = box(phone, ".grade-buttons")["y"]
    # The confirmation, Undo, Back and the progress are on screen after the tap (the
    # audit found them 4-132 px above it), and so are the query line and the title.
    for what in ("[data-saved]", "[data-undo]", "[data-key-back]", "#judge-progress"):
        b = box(phone, what)
        assert b["y"] >= 0 and b["y"] + b["height"] <= grade_bar_y, (what, b)
    # The same through the shared page checks (tests/browser/page_checks.py, issue 34).
    assert page_checks.off_screen(phone, "[data-saved], [data-undo], [data-key-back]") == []
    assert page_checks.all_problems(phone) == {}
    card_top = box(phone, "[data-judging-card]")["y"]
    title = box(phone, "#doc-title")
    assert 0 < card_top < title["y"] < grade_bar_y - 60, (card_top, title)
    shot(phone, "phone-next-card")
    no_sideways_scroll(phone)
    # No desk key hints on a phone (issue 41): only the grade buttons' numbers, the grades.
    shown_keys = phone.evaluate(
        "[...document.querySelectorAll('main kbd')].filter(k => k.offsetParent !== null"
        " && !k.closest('.grade-button')).map(k => k.textContent)"
    )
    assert shown_keys == []
    expect(phone.locator("[data-undo]")).to_have_text("Undo", use_inner_text=True)
    expect(phone.locator("[data-key-back]")).to_have_text("Back", use_inner_text=True)
    judgment = Judgment.objects.get()
    assert judgment.grade == 2
    assert console.problems() == []


def test_feedback_live_region_focus_query_progress_and_undo(
    page, live_server, console, judging_world
):
    log_in(page, live_server, judging_world)
    expect(page.locator("[data-query-progress]")).to_have_text("1 of 4 for this query")
    live = page.locator("#judge-live")
    expect(live).to_have_attribute("aria-live", "polite")
    expect(live).to_contain_text("1 of 4 for this query")
    page.evaluate("document.getElementById('judge-live').__kept = 1")
    expect(page.locator("#doc-title")).to_be_focused()
    first = card(page).get_attribute("data-entry-id")

    page.keyboard.press("3")
    second = wait_for_new_card(page, first)
    saved = page.locator("[data-saved]")
    expect(saved).to_be_visible()
    expect(saved).to_contain_text("Saved 3 · Highly relevant for q")
    expect(page.locator("[data-query-progress]")).to_have_text("2 of 4 for this query")
    # The live region is the same node (kept across the swap) and announces save and next.
    expect(live).to_contain_text("Saved 3 · Highly relevant")
    expect(live).to_contain_text("2 of 4 for this query")
    assert page.evaluate("document.getElementById('judge-live').__kept") == 1
    # Focus is on the new card's heading, not on BODY.
    expect(page.locator("#doc-title")).to_be_focused()
    assert page.evaluate("document.activeElement.tagName") == "H2"

    page.keyboard.press("1")
    third = wait_for_new_card(page, second)
    judgment = Judgment.objects.get(judge__user=judging_world["user"], grade=1)

    # Ctrl+Z undoes the last grade through the services: the judgment goes, history stays.
    page.keyboard.press("Control+z")
    expect(card(page)).to_have_attribute("data-entry-id", second)
    expect(saved).to_contain_text("Undone")
    expect(live).to_contain_text("Undone")
    assert not Judgment.objects.filter(pk=judgment.pk).exists()
    actions = list(
        JudgmentEvent.objects.filter(
            query_id=judgment.query_id, document_id=judgment.document_id
        ).values_list("action", flat=True)
    )
    assert actions == [JudgmentEvent.Action.CREATE, JudgmentEvent.Action.DELETE]
    # Re-grade it; then undo a change (not a creation): the previous grade comes back.
    page.keyboard.press("2")
    wait_for_new_card(page, second)
    page.keyboard.press("Backspace")
    expect(card(page)).to_have_attribute("data-entry-id", second)
    page.keyboard.press("4")
    expect(card(page)).not_to_have_attribute("data-entry-id", second)
    page.keyboard.press("Control+z")
    expect(card(page)).to_have_attribute("data-entry-id", second)
    expect(page.locator("button.grade-button.is-current")).to_have_attribute("value", "2")
    events = JudgmentEvent.objects.filter(judge__user=judging_world["user"]).order_by("pk")
    assert [e.after and e.after["grade"] for e in events] == [3, 1, None, 2, 4, 2]
    assert third != second
    assert console.problems() == []


def test_card_html_stays_light(client, judging_world):
    client.force_login(judging_world["user"])
    response = client.get(reverse("judging:judge_next", args=[judging_world["coll"].slug]))
    assert response.status_code == 200
    assert len(response.content) <= 15_000, len(response.content)


@pytest.mark.parametrize(
    "viewport", [PHONE, {"width": 1366, "height": 820}], ids=["phone", "desktop"]
)
def test_highlighting_matches_inflections_and_skips_stopwords(
    browser, live_server, console, judging_world, viewport
):
    coll = judging_world["coll"]
    coll.queries.update(text="floor plans vs layout")
    coll.documents.update(
        title="Floors and layouts",
        body="Two floor plans vs three: a plan per floor; layouts, floored, floorboard.",
    )
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        log_in(page, live_server, judging_world)
        expect(page.locator("#doc-title mark")).to_have_text(["Floors", "layouts"])
        expect(page.locator("#doc-body mark")).to_have_text(
            ["floor", "plans", "plan", "floor", "layouts", "floored"]
        )
        assert "vs" not in page.locator("#doc-body mark").all_inner_texts()
    finally:
        context.close()
