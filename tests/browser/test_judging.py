"""Judging in real Chromium: keyboard only, hostile documents, no CSP violations."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import Judgment, JudgmentEvent, PoolEntry
from judging.selectors import pair_pk, pair_ref
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE_BODY = (
    "<p>Cheap flights to Helsinki.</p>"
    "<script>window.__pwned=1</script>"
    '<img src=x onerror="window.__pwned=2">'
    '<p onmouseover="window.__pwned=3">Book <a href="javascript:window.__pwned=4">now</a>.</p>'
)
REASON = "Only an error page"


@pytest.fixture
def judging_world():
    """Build a collection of 3 queries with narratives and 4 pooled documents each."""
    coll = factories.collection(
        "flights",
        name="Flight search",
        guidelines="Judge **topical** relevance.\n\n* Ignore adverts.",
    )
    judge_user = factories.user("judy", password="judging-pass-1")
    factories.member(coll, judge_user)
    hostile_entry = None
    for i in range(1, 4):
        q = factories.query(
            coll,
            f"q{i}",
            text=f"flights to helsinki {i}",
            description=f"Ways to fly to Helsinki ({i}).",
            narrative=f"Relevant documents list flights or fares ({i}).",
        )
        for j in range(1, 5):
            body = HOSTILE_BODY if (i, j) == (3, 4) else f"Fares to Helsinki, option {j}.\n\nMore."
            d = factories.document(coll, f"d{i}{j}", title=f"Helsinki fares {i}.{j}", body=body)
            entry = factories.pool_entry(coll, q, d)
            if (i, j) == (3, 4):
                hostile_entry = entry
    return {"coll": coll, "user": judge_user, "hostile": hostile_entry}


def card(page):
    return page.locator("[data-judging-card]")


def wait_for_new_card(page, old: str) -> str:
    """Wait until the card shows another pair than ``old``; return the new pair id."""
    expect(card(page)).not_to_have_attribute("data-entry-id", old)
    return card(page).get_attribute("data-entry-id")


def log_in(page, live_server, world) -> None:
    page.goto(live_server.url + reverse("judging:judge_next", args=[world["coll"].slug]))
    expect(page.locator("h1")).to_have_text("Log in")
    page.fill("input[name=username]", "judy")
    page.fill("input[name=password]", "judging-pass-1")
    page.click("button:has-text('Log in')")
    expect(card(page)).to_be_visible()


def test_keyboard_judging_round_trip(page, live_server, console, judging_world):
    log_in(page, live_server, judging_world)
    first = card(page).get_attribute("data-entry-id")
    expect(page.locator("#judge-progress")).to_have_attribute("value", "0")
    expect(page.locator("[data-progress-text]")).to_have_text("0 of 12")

    page.keyboard.press("3")
    second = wait_for_new_card(page, first)
    expect(page.locator("[data-progress-text]")).to_have_text("1 of 12")
    # At a desk the buttons name their keys (a phone hides them: test_judging_phone).
    expect(page.locator("[data-undo]")).to_have_text("Undo Ctrl+Z", use_inner_text=True)
    expect(page.locator("[data-cannot-judge]")).to_have_text("C Can't judge", use_inner_text=True)

    page.keyboard.press("0")
    third = wait_for_new_card(page, second)

    page.keyboard.press("Backspace")
    expect(card(page)).to_have_attribute("data-entry-id", second)
    expect(page.locator("button.grade-button.is-current")).to_have_attribute("value", "0")

    page.keyboard.press("4")
    expect(card(page)).to_have_attribute("data-entry-id", third)

    page.keyboard.press("c")
    dialog = page.locator("dialog[data-cannot-judge-dialog]")
    expect(dialog).to_be_visible()
    expect(page.locator("[data-cannot-judge-reason]")).to_be_focused()
    page.keyboard.type(REASON)
    page.keyboard.press("Enter")
    fourth = wait_for_new_card(page, third)
    assert fourth not in {first, second, third}

    progress = page.locator("#judge-progress")
    expect(progress).to_have_attribute("value", "3")
    expect(progress).to_have_attribute("max", "12")
    expect(page.locator("[data-progress-text]")).to_have_text("3 of 12")
    assert page.url.endswith(reverse("judging:judge_next", args=[judging_world["coll"].slug]))

    judgments = {
        j.pk: j
        for j in Judgment.objects.filter(judge__user=judging_world["user"]).select_related(
            "query", "document"
        )
    }
    # the card carries each pair's opaque id (judging.selectors.pair_ref)
    entries = PoolEntry.objects.in_bulk([pair_pk(int(ref)) for ref in (first, second, third)])

    def judgment_of(entry_id: str) -> Judgment:
        entry = entries[pair_pk(int(entry_id))]
        return next(
            j
            for j in judgments.values()
            if (j.query_id, j.document_id) == (entry.query_id, entry.document_id)
        )

    assert len(judgments) == 3
    one, two, three = judgment_of(first), judgment_of(second), judgment_of(third)
    assert (one.status, one.grade) == (Judgment.Status.GRADED, 3)
    assert one.seconds is not None and one.seconds > 0
    assert (two.status, two.grade) == (Judgment.Status.GRADED, 4)
    history = list(JudgmentEvent.objects.filter(judgment=two).order_by("pk"))
    assert [e.after["grade"] for e in history] == [0, 4]
    assert history[1].before["grade"] == 0
    assert {e.channel for e in history} == {JudgmentEvent.Channel.BROWSER}
    assert (three.status, three.grade, three.note) == (Judgment.Status.CANNOT_JUDGE, None, REASON)
    # The judge stayed with one query.
    assert len({one.query_id, two.query_id, three.query_id}) == 1

    assert page.evaluate("window.__cspViolations") == []
    assert console.problems() == []


def test_hostile_document_runs_nothing(page, live_server, console, judging_world):
    log_in(page, live_server, judging_world)
    hostile = judging_world["hostile"]
    page.goto(
        live_server.url + reverse("judging:judge_pair", args=["flights", pair_ref(hostile.pk)])
    )
    body = page.locator("#doc-body")
    expect(body).to_contain_text("Cheap flights to Helsinki.")
    expect(body).to_contain_text("Book now.")
    assert body.locator("script").count() == 0
    assert body.locator("img").count() == 0
    assert body.locator("[onmouseover], [onerror]").count() == 0
    assert "javascript" not in (body.locator("a").get_attribute("href") or "")
    body.hover()
    body.locator("a").click()
    assert page.evaluate("window.__pwned") is None
    expect(body.locator("mark")).to_have_text(["flights", "Helsinki"])
    assert page.evaluate("window.__cspViolations") == []
    assert console.problems() == []


def test_later_and_note_keys(page, live_server, console, judging_world):
    log_in(page, live_server, judging_world)
    first = card(page).get_attribute("data-entry-id")
    page.keyboard.press("n")
    note = page.locator("textarea[name=note]")
    expect(note).to_be_focused()
    page.keyboard.type("4 3 c l ")  # keys are ignored while typing
    # A swap settling meanwhile (the log-in's, late under load, or one elsewhere on the
    # page) moves focus to a new card's heading, never away from a field being typed in.
    page.evaluate("document.body.dispatchEvent(new Event('htmx:afterSettle', {bubbles: true}))")
    expect(note).to_be_focused()
    page.keyboard.type("typed, not keys")
    expect(card(page)).to_have_attribute("data-entry-id", first)
    page.keyboard.press("Escape")
    expect(note).not_to_be_focused()
    page.keyboard.press("Control+3")  # modifiers are ignored too
    page.keyboard.press("l")
    wait_for_new_card(page, first)
    judgment = Judgment.objects.get()
    assert judgment.status == Judgment.Status.LATER
    assert judgment.note == "4 3 c l typed, not keys"
    # Escape cancels the can't-judge dialog without recording anything.
    second = card(page).get_attribute("data-entry-id")
    page.keyboard.press("c")
    expect(page.locator("dialog[data-cannot-judge-dialog]")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("dialog[data-cannot-judge-dialog]")).to_be_hidden()
    expect(card(page)).to_have_attribute("data-entry-id", second)
    assert Judgment.objects.count() == 1
    assert console.problems() == []


def test_judging_works_without_javascript(browser, live_server, judging_world):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(reverse("judging:judge_next", args=[judging_world["coll"].slug]))
        page.fill("input[name=username]", "judy")
        page.fill("input[name=password]", "judging-pass-1")
        page.click("button:has-text('Log in')")
        first = card(page).get_attribute("data-entry-id")
        page.fill("textarea[name=note]", "no js here")
        page.click("button[name=grade][value='2']")
        wait_for_new_card(page, first)
        judgment = Judgment.objects.get()
        assert (judgment.grade, judgment.note, judgment.seconds) == (2, "no js here", None)
        expect(page.locator("[data-progress-text]")).to_have_text("1 of 12")
    finally:
        context.close()


def test_bad_post_shows_the_error_on_the_card(page, live_server, console, judging_world):
    log_in(page, live_server, judging_world)
    first = card(page).get_attribute("data-entry-id")
    # Tamper with a grade button, as a hand-made request would.
    page.evaluate("document.querySelector('button[name=grade][value=\"2\"]').value = '9'")
    page.click("button[name=grade][value='9']")
    alert = page.locator(".form-errors[role=alert]")
    expect(alert).to_contain_text("Grade:")
    expect(card(page)).to_have_attribute("data-entry-id", first)
    assert not Judgment.objects.exists()
    # The keyboard still works on the re-rendered card.
    page.keyboard.press("1")
    wait_for_new_card(page, first)
    assert Judgment.objects.get().grade == 1
    # Chromium logs the 400 response itself; nothing else may appear.
    problems = console.problems()
    assert problems == [
        "error: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]


def test_mouse_cannot_judge_asks_for_a_reason(page, live_server, console, judging_world):
    log_in(page, live_server, judging_world)
    first = card(page).get_attribute("data-entry-id")
    page.click("button[data-cannot-judge]")
    dialog = page.locator("dialog[data-cannot-judge-dialog]")
    expect(dialog).to_be_visible()
    assert not Judgment.objects.exists()
    page.fill("[data-cannot-judge-reason]", "Document is empty")
    page.click("button[data-dialog-confirm]")
    wait_for_new_card(page, first)
    judgment = Judgment.objects.get()
    assert (judgment.status, judgment.note) == (Judgment.Status.CANNOT_JUDGE, "Document is empty")
    assert console.problems() == []
