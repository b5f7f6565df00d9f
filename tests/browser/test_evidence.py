"""Evidence spans on the judging card, in real Chromium (issue 35 item 5).

Selecting by mouse (a drag), by keyboard (evidence mode) and by touch (a selection made
on a touch screen, then a tap on the add button), on a desktop and a 390×844 phone; the
server checks every span against the document, so a span the browser counted wrongly
(UTF-16 against code points: the document holds an emoji and astral letters) would be a
400 here, not a saved label.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging import services
from judging.evidence import document_text
from judging.models import Judgment, JudgmentEvent, Membership, PoolEntry
from judging.selectors import pair_pk, pair_ref
from tests import factories
from tests.browser import page_checks
from tests.browser.page_checks import axe_violations as violations
from tests.browser.test_judging import card, judging_world, log_in, wait_for_new_card
from tests.browser.test_judging_phone import phone, shot

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["judging_world", "phone"]

BODY = (
    "Wave 👋 at the gate. Flights to Helsinki leave every hour from terminal 2.\n"
    "The 𝔣𝔞𝔰𝔱 train takes 30 minutes.\n\n"
    "<p>ignored as text</p>"  # makes the body HTML: the paragraph stays a paragraph
)
HTML_BODY = (
    "<h2>Timetable</h2>\n<p>Wave 👋 at the gate. Flights to <b>Helsinki</b> leave every "
    "hour from terminal 2.</p>\n<p>The 𝔣𝔞𝔰𝔱 train takes 30 minutes.</p>"
)


@pytest.fixture
def world(judging_world):
    coll = judging_world["coll"]
    coll.evidence, coll.evidence_from_grade = "required", 3
    coll.save()
    coll.documents.update(body=HTML_BODY)
    return judging_world


def _current(page) -> tuple[Judgment, PoolEntry]:
    entry = PoolEntry.objects.get(pk=pair_pk(int(card(page).get_attribute("data-entry-id"))))
    return entry


def _word_box(page, word: str) -> dict:
    """Return the client rectangle of ``word``'s first occurrence in the document body."""
    return page.evaluate(
        """(word) => {
          const body = document.querySelector('[data-doc-body]');
          const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
          let node;
          while ((node = walker.nextNode())) {
            const at = node.data.indexOf(word);
            if (at >= 0) {
              const range = document.createRange();
              range.setStart(node, at);
              range.setEnd(node, at + word.length);
              const r = range.getBoundingClientRect();
              return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};
            }
          }
          return null;
        }""",
        word,
    )


#: What a press and hold on "Wave 👋 at" selects.
SELECT_WAVE = """() => {
  const body = document.querySelector('[data-doc-body]');
  const walker = document.createTreeWalker(body, NodeFilter.SHOW_TEXT);
  let node;
  while ((node = walker.nextNode())) {
    const at = node.data.indexOf('Wave 👋 at');
    if (at >= 0) {
      getSelection().setBaseAndExtent(node, at, node, at + 'Wave 👋 at'.length);
      return;
    }
  }
}"""


def _problems(console) -> list[str]:
    """Return the console's problems but the refused label's expected 400."""
    return [p for p in console.problems() if "status of 400" not in p]


def _saved(entry: PoolEntry) -> Judgment:
    return Judgment.objects.get(query=entry.query, document=entry.document)


def test_required_evidence_by_mouse_and_keyboard(page, live_server, console, world):
    log_in(page, live_server, world)
    entry = _current(page)
    text = document_text(HTML_BODY)
    # Grade 3 without evidence: refused on the card, nothing written.
    page.keyboard.press("3")
    expect(page.locator(".form-errors")).to_contain_text("Grade 3 needs evidence")
    assert not Judgment.objects.filter(query=entry.query, document=entry.document).exists()
    expect(card(page)).to_have_attribute("data-entry-id", str(pair_ref(entry.pk)))

    # Mouse: drag from "Flights" to the end of "Helsinki", then add.
    start, end = _word_box(page, "Flights"), _word_box(page, "Helsinki")
    page.mouse.move(start["left"] + 1, (start["top"] + start["bottom"]) / 2)
    page.mouse.down()
    page.mouse.move(end["right"] - 1, (end["top"] + end["bottom"]) / 2, steps=5)
    page.mouse.up()
    expect(page.locator("[data-evidence-pending]")).to_contain_text("Flights to Helsinki")
    page.click("[data-evidence-add]")
    marked = page.locator("mark.evidence-mark").evaluate_all(
        "marks => marks.map(m => m.textContent).join('')"
    )
    assert marked == "Flights to Helsinki"  # in pieces: query terms and <b> split the text
    expect(page.locator("[data-evidence-list] li")).to_have_count(1)

    # Keyboard: E, ↓ selects the next sentence ("The 𝔣𝔞𝔰𝔱 train …"), Enter adds it.
    page.keyboard.press("e")
    expect(page.locator("[data-evidence-pending]")).to_contain_text("Timetable")  # word 1
    page.keyboard.press("ArrowDown")  # "Wave 👋 at the gate." (a heading line ends one)
    expect(page.locator("[data-evidence-pending]")).to_contain_text("Wave 👋 at the gate.")
    page.keyboard.press("ArrowDown")  # "Flights to Helsinki … terminal 2."
    page.keyboard.press("ArrowDown")  # "The 𝔣𝔞𝔰𝔱 train takes 30 minutes."
    expect(page.locator("[data-evidence-pending]")).to_contain_text("The 𝔣𝔞𝔰𝔱 train")
    page.keyboard.press("Enter")
    page.keyboard.press("Escape")
    expect(page.locator("[data-evidence-list] li")).to_have_count(2)
    # a word added and removed again with Delete in evidence mode
    page.keyboard.press("e")
    page.keyboard.press("Shift+ArrowRight")
    page.keyboard.press("Enter")
    expect(page.locator("[data-evidence-list] li")).to_have_count(3)
    page.keyboard.press("Delete")
    page.keyboard.press("Escape")
    expect(page.locator("[data-evidence-list] li")).to_have_count(2)

    shot(page, "evidence-desktop")
    page.keyboard.press("3")
    wait_for_new_card(page, str(pair_ref(entry.pk)))
    saved = _saved(entry)
    flights = text.index("Flights to Helsinki")
    train = text.index("The 𝔣𝔞𝔰𝔱")
    train_end = text.index("minutes.") + len("minutes.")
    assert saved.grade == 3
    assert saved.evidence == [
        {"start": flights, "end": flights + 19, "text": "Flights to Helsinki"},
        {"start": train, "end": train_end, "text": text[train:train_end]},
    ]
    event = JudgmentEvent.objects.get(query=entry.query, document=entry.document)
    assert event.after["evidence"] == saved.evidence
    assert _problems(console) == []

    # Back to the pair: the spans are shown again, and the label keeps them.
    page.goto(live_server.url + reverse("judging:judge_pair", args=["flights", pair_ref(entry.pk)]))
    expect(page.locator("[data-evidence-list] li")).to_have_count(2)
    assert json.loads(page.locator("[data-evidence-field]").input_value()) == saved.evidence
    page.click("[data-evidence-remove='0']")
    expect(page.locator("[data-evidence-list] li")).to_have_count(1)
    page.keyboard.press("1")  # below the required grade: no evidence needed, one span kept
    wait_for_new_card(page, str(pair_ref(entry.pk)))
    saved.refresh_from_db()
    assert saved.grade == 1 and len(saved.evidence) == 1
    assert _problems(console) == []


def test_touch_selection_on_a_phone(phone, live_server, console, world):
    log_in(phone, live_server, world)
    entry = _current(phone)
    # A press-and-hold selects a word on a touch screen; Playwright cannot long-press, so
    # the selection is made as the browser would, then the judge taps the add button.
    phone.evaluate(SELECT_WAVE)
    add = phone.locator("[data-evidence-add]")
    expect(add).to_be_enabled()
    # the add button floats above the grade bar, in view
    button, bar = add.bounding_box(), phone.locator(".grade-buttons").bounding_box()
    assert button["y"] + button["height"] <= bar["y"] + 1
    assert button["x"] + button["width"] <= 390
    shot(phone, "evidence-phone-selected")
    # a selection cleared by a tap elsewhere is forgotten: the floating button goes away
    phone.evaluate("getSelection().removeAllRanges()")
    expect(add).to_be_disabled()
    expect(add).not_to_have_class("is-pending")
    phone.evaluate(SELECT_WAVE)
    expect(add).to_be_enabled()
    add.tap()
    expect(phone.locator("[data-evidence-list] li")).to_have_count(1)
    phone.locator("button.grade-button[value='4']").tap()
    wait_for_new_card(phone, str(pair_ref(entry.pk)))
    text = document_text(HTML_BODY)
    wave = text.index("Wave")
    assert _saved(entry).evidence == [{"start": wave, "end": wave + 9, "text": "Wave 👋 at"}]
    widths = phone.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1]
    assert console.problems() == []


@pytest.mark.parametrize(
    "viewport", [{"width": 1366, "height": 768}, {"width": 390, "height": 844}]
)
def test_adjudication_and_history_show_spans_and_explanations(
    browser, live_server, console, world, viewport
):
    coll = world["coll"]
    cora = factories.user("cora", password="judging-pass-1")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    entry = PoolEntry.objects.filter(collection=coll).order_by("pk").first()
    q, d = entry.query, entry.document
    text = document_text(d.body)
    at = text.index("Flights to Helsinki")
    judy = services.judge_for_user(user=world["user"])
    services.judgment_record(
        judge=judy, query=q, document=d, grade=4,
        evidence=[{"start": at, "end": at + 19, "text": "Flights to Helsinki"}],
    )  # fmt: skip
    llm = factories.llm_judge("gpt-x")
    services.judgment_record(
        judge=llm, query=q, document=d, grade=0, note="The page is about trains, not flights."
    )
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        page.goto(reverse("login"))
        page.fill("input[name=username]", "cora")
        page.fill("input[name=password]", "judging-pass-1")
        page.click("button:has-text('Log in')")
        expect(page.locator(".site-user")).to_have_text("cora")
        found = {}
        for name, path in (
            ("adjudicate", reverse("judging:pair_adjudicate", args=[coll.slug, q.pk, d.pk])),
            ("history", reverse("judging:judgment_history", args=[coll.slug, q.pk, d.pk])),
        ):
            page.goto(path)
            expect(page.locator("mark.evidence-mark").first).to_have_text("Flights to Helsinki")
            expect(page.get_by_text("The page is about trains, not flights.")).to_be_visible()
            found[name] = violations(page)
            problems = page_checks.all_problems(page, primary=name == "adjudicate")
            assert problems == {}, (name, problems)
            widths = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            assert widths[0] <= widths[1], (name, widths)
        assert {name: v for name, v in found.items() if v} == {}
        assert console.problems() == []
    finally:
        context.close()
