"""WCAG 2.1 AA on every page, checked by axe-core in Chromium (issue 20 item 5).

axe-core is vendored (``tests/browser/vendor/axe-core``, version in its first line, MPL-2.0)
and evaluated in the page through the DevTools protocol, so the pages keep their Content
Security Policy. Every page every role reaches, and each of its tabs, is checked at the
desktop and the phone size, with the rules tagged WCAG 2.0/2.1 A and AA, by the walk that
opens them all (``test_pages_phone.test_no_page_scrolls_sideways``: one visit a page for
every check); a serious or critical violation fails. The states no walk reaches (signed
out, a card being graded) are checked here.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import Judgment
from tests.browser import page_checks
from tests.browser.test_pages_phone import (
    DESKTOP,
    PHONE,
    log_in,
    world,
)

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["world"]

violations = page_checks.axe_violations
AXE = page_checks.AXE


def test_axe_is_the_vendored_pinned_copy():
    head = AXE.read_text()[:40]
    assert head.startswith("/*! axe v4.14.1"), head
    assert (AXE.parent / "LICENSE").is_file()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_the_login_page_and_a_judges_card_states_meet_wcag_aa(
    browser, live_server, console, world, viewport
):
    """The states a page walk does not reach: signed out, and the card as a judge works it.

    Every page each role reaches, and each of its tabs, as loaded, is checked by the page
    walk (``test_pages_phone.test_no_page_scrolls_sideways``), which runs axe on each.
    """
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        page.goto(reverse("login"))
        found = {"login": violations(page)}
        log_in(page, "judy")
        page.goto(reverse("judging:judge_next", args=[world["coll"].slug]))
        expect(page.locator(".grade-button")).to_have_count(5)
        page.keyboard.press("e")  # evidence: the first word, by keyboard
        page.keyboard.press("Enter")
        page.keyboard.press("Escape")
        expect(page.locator("[data-evidence-list] li")).to_have_count(1)
        found["card with evidence"] = violations(page)
        page.keyboard.press("2")
        expect(page.locator("#judge-live")).to_contain_text("Saved")
        page.keyboard.press("Backspace")
        expect(page.locator(".grade-button.is-current")).to_have_count(1)
        found["graded card"] = violations(page)
        judgment = Judgment.objects.get(judge__user__username="judy")
        page.goto(reverse("judging:judgment_update", args=[world["coll"].slug, judgment.pk]))
        found["edit page"] = violations(page)
        history = [world["coll"].slug, judgment.query_id, judgment.document_id]
        page.goto(reverse("judging:judgment_history", args=history))
        expect(page.locator("#label-history tbody tr")).to_have_count(1)  # her one grade
        expect(page.locator("#label-history mark.evidence-mark")).to_have_count(1)
        found["label history"] = violations(page)
        assert {path: v for path, v in found.items() if v} == {}
        assert console.problems() == []
    finally:
        context.close()


def test_a_low_contrast_text_is_caught(page, live_server):
    """The check can fail: a grey-on-white paragraph is a serious contrast violation."""
    page.goto(reverse("login"))
    page.evaluate(
        """() => {
            const p = document.createElement("p");
            p.textContent = "too faint to read";
            p.style.color = "#bbbbbb";
            document.querySelector("main").append(p);
        }"""
    )
    assert [v["id"] for v in violations(page)] == ["color-contrast"]


def test_the_page_grammar_checks_can_fail(page, live_server):
    """Each check of page_checks finds a planted defect (and passes without it)."""
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(reverse("login"))
    assert page_checks.low_contrast(page) == []
    assert page_checks.overflowing_tables(page) == []
    assert page_checks.too_long(page) == []
    page.evaluate(
        """() => {
            const main = document.querySelector("main");
            main.insertAdjacentHTML("beforeend",
              '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="40" id="planted">' +
              '<rect x="0" y="0" width="60" height="40" fill="#7c98dc"/>' +
              '<text x="30" y="25" text-anchor="middle" fill="#ffffff">0.60</text></svg>' +
              '<div><table id="wide"><tr><td>' + "x".repeat(400) + '</td></tr></table></div>' +
              '<button data-primary id="far">Go</button>');
            document.querySelector("#wide td").style.whiteSpace = "nowrap";
            document.querySelector("#far").style.marginTop = "2000px";
        }"""
    )
    assert [p.split(" ")[1] for p in page_checks.low_contrast(page)] == ["“0.60”"]
    assert [p.split(":")[0] for p in page_checks.overflowing_tables(page)] == ["wide"]
    assert "outside 390×844" in page_checks.primary_off_screen(page)[0]
    assert page_checks.off_screen(page, "#far") != []
    assert "page is" in page_checks.too_long(page)[0]
