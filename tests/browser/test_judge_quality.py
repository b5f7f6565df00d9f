"""The judge-quality pages in Chromium, at the phone and the desktop size: real flows.

A coordinator marks a pair as gold, sets the mixing rate and a qualification bar on the
*Gold pairs* page; reads the *Judges* page (attention flags, gold accuracy, who is
qualified, the alert for a judge below the bar); changes the guidelines (a new version);
checks an LLM judge's version and runs a canary check against a local fake model, then
reads its answers. A judge reads their own list, marked *not counted yet*. Every page
passes the page grammar (tests/browser/page_checks.py), scrolls no sideways, and logs no
error.
"""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging import services
from judging.models import Judge, Membership
from judging.quality import services as quality_services
from judging.quality.models import GoldPair
from tests import factories
from tests.browser import page_checks
from tests.browser.page_checks import axe_violations as violations
from tests.browser.test_pages_phone import DESKTOP, PASSWORD, PHONE, log_in
from tests.judging.llm.fake_server import FakeLLM

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
KEY_ENV = "GRADED_LLM_KEY_BROWSER"


@pytest.fixture
def fake(monkeypatch):
    """A fake OpenAI-compatible model on loopback that grades everything 2 (→ 3)."""
    monkeypatch.setenv(KEY_ENV, "sk-browser-test-0123456789")
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture
def world(fake):
    coll = factories.collection("quality", name="Judge quality", guidelines="Grade topicality.")
    queries = [factories.query(coll, f"q{i}", text=f"query about topic {i}") for i in (1, 2)]
    docs = [factories.document(coll, f"d{i}", title=f"Document {i}", body="text") for i in range(5)]
    users = {}
    for name, role in (
        ("cora", Membership.Role.COORDINATOR),
        ("ann", Membership.Role.JUDGE),
        ("ben", Membership.Role.JUDGE),
    ):
        users[name] = factories.user(name, password=PASSWORD)
        factories.member(coll, users[name], role)
    judges = {name: factories.human_judge(users[name]) for name in ("ann", "ben")}
    for doc in docs[:2]:
        quality_services.gold_set(query=queries[0], document=doc, grade=2, reason="known")
    # ann grades both gold pairs right, ben one of two; both grade an ordinary pair
    for name, grades in (("ann", (2, 2)), ("ben", (0, 2))):
        for doc, grade in zip(docs[:2], grades, strict=True):
            services.judgment_record(
                judge=judges[name], query=queries[0], document=doc, grade=grade
            )
        services.judgment_record(judge=judges[name], query=queries[1], document=docs[4], grade=1)
    provider = factories.llm_provider(fake.url, name="fake", api_key_env=KEY_ENV)
    llm = Judge.objects.create(
        kind=Judge.Kind.LLM,
        name="robot",
        provider="fake",
        model="fake-model",
        llm_provider=provider,
        native_scale=["0", "1", "2", "3"],
        scale_mapping={"0": 0, "1": 1, "2": 3, "3": 4},
        decoding={"temperature": 0},
        max_attempts=1,
        timeout_seconds=5,
    )
    llm.collections.add(coll)
    return {"coll": coll, "judges": judges, "llm": llm}


def checked(page, console) -> None:
    """Assert the page scrolls no sideways, passes the grammar and axe, and logged no error.

    Checked from the top of the page (after a form's redirect back to the same page the
    browser keeps the scroll position).
    """
    page.evaluate("window.scrollTo(0, 0)")
    widths = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
    )
    assert widths[0] <= widths[1], f"{page.url} scrolls sideways: {widths}"
    assert page_checks.all_problems(page) == {}, page.url
    assert violations(page) == [], page.url  # axe-core, WCAG 2.1 AA
    assert console.problems() == [], page.url


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_coordinator_runs_the_quality_pages(browser, live_server, console, world, viewport):
    coll, judges, llm = world["coll"], world["judges"], world["llm"]
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("console", lambda m: console.messages.append((m.type, m.text)))
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, "cora")

        # Judges page: attention and gold accuracy; qualification off, nobody flagged
        page.goto(reverse("judging:judge_list", args=[coll.slug]))
        expect(page.locator("h1")).to_have_text("Judges")
        gold_rows = page.locator("#judge-gold tbody tr")
        expect(gold_rows).to_have_count(2)
        ben_gold = page.locator(f"#judge-gold tr[data-judge='{judges['ben'].pk}']")
        expect(ben_gold.locator("[data-field=exact]")).to_have_text("0.500")
        expect(page.locator("[data-field=gold-alerts]")).to_have_count(0)  # 0.5 is not below
        checked(page, console)

        # Gold pairs page: mark a pair, set the rate and a qualification bar
        page.click("a[data-primary]:has-text('Gold pairs')")
        expect(page.locator("h1")).to_have_text("Gold pairs")
        expect(page.locator("[data-field=gold_pairs]")).to_have_text("2")
        checked(page, console)  # the first tab: the judges against gold
        # Its primary action opens the Gold pairs tab with the form unfolded (issue 34).
        page.click("a[data-primary]:has-text('Mark a pair as gold')")
        form = page.locator("details#mark[open] form")
        form.locator("input[name=qid]").fill("q2")
        form.locator("input[name=docno]").fill("d3")
        form.locator("select[name=grade]").select_option("3")
        form.locator("textarea[name=reason]").fill("answers the question directly")
        with page.expect_navigation():
            form.locator("button[type=submit]").click()
        expect(page.locator(".messages")).to_contain_text("is gold with grade 3")
        expect(page.locator("[data-field=gold_pairs]")).to_have_text("3")
        expect(page.locator("#gold-pairs tbody tr")).to_have_count(3)
        assert GoldPair.objects.get(query__external_id="q2", document__external_id="d3").grade == 3
        checked(page, console)
        page.click("nav .tabs a:has-text('Mixing')")  # the rate and the bar: their own tabs
        page.fill("input[name=percent]", "10")
        with page.expect_navigation():
            page.click("button:has-text('Save rate')")
        expect(page.locator(".messages")).to_contain_text("10% of pairs served are gold")
        expect(page.locator("input[name=percent]")).to_have_value("10")
        checked(page, console)
        page.click("nav .tabs a:has-text('Qualification')")
        page.fill("input[name=qualification_pairs]", "2")
        page.fill("input[name=qualification_percent]", "100")
        with page.expect_navigation():
            page.click("button:has-text('Save qualification')")
        expect(page.locator("[data-field=qualification-bar]")).to_contain_text(
            "100% of their last 2 gold pairs"
        )
        checked(page, console)

        # Judges page again: ben is below the bar, his labels do not count
        page.goto(reverse("judging:judge_list", args=[coll.slug]))
        expect(page.locator("[data-field=gold-alerts]")).to_contain_text("1 judge")
        expect(ben_gold.locator("[data-field=qualification]")).to_contain_text("below the bar")
        ann_gold = page.locator(f"#judge-gold tr[data-judge='{judges['ann'].pk}']")
        expect(ann_gold.locator("[data-field=qualification]")).to_contain_text("qualified")
        ben_attention = page.locator(f"#judge-attention tr[data-judge='{judges['ben'].pk}']")
        expect(ben_attention.locator("[data-field=not-counted]")).to_be_visible()
        checked(page, console)

        # Versions of the LLM judge: check the current version against the fake model
        page.click("details#canaries > summary")  # the LLM judges' section is folded
        page.click(f"a:has-text('Versions of {llm.name}')")
        expect(page.locator("h1")).to_have_text(f"Versions of {llm.name}")
        with page.expect_navigation():
            page.click("button[data-primary]:has-text('Check this version')")
        # The check runs in the background; its page polls until the row is there.
        expect(page.locator("h1")).to_have_text(f"Version check of {llm.name}")
        expect(page.locator("#check-progress")).to_have_attribute("data-status", "done")
        expect(page.locator("#versions > tbody > tr")).to_have_count(1)
        checked_version = page.locator("[data-field=version]").inner_text()
        checked(page, console)
        page.click("a[data-primary]:has-text('All versions')")
        expect(page.locator("h1")).to_have_text(f"Versions of {llm.name}")
        expect(page.locator("[data-field=current]")).to_have_text(checked_version)
        expect(page.locator("#versions > tbody > tr")).to_have_count(1)
        expect(page.locator("#versions > tbody > tr").first).to_contain_text(checked_version)
        checked(page, console)

        # Canary check: the fake model grades every canary 3, so every one fails
        page.goto(reverse("judging:judge_list", args=[coll.slug]))
        page.click("details#canaries > summary")
        with page.expect_navigation():
            page.click(f"button:has-text('Check {llm.name} with canaries')")
        expect(page.locator("h1")).to_have_text(f"Canary check of {llm.name}")
        expect(page.locator("[data-field=failed]")).to_have_text("4")  # 2 queries × 2 kinds
        expect(page.locator("section[data-failed='1']")).to_have_count(4)
        page.locator("section[data-kind=injection] summary").first.click()
        expect(page.locator("section[data-kind=injection] pre").first).to_be_visible()
        checked(page, console)
        page.click("a[data-primary]:has-text('Back to judges')")
        expect(page.locator("#canary-rates tbody tr")).to_have_count(1)

        # Guidelines: a change is a new version, in force
        page.goto(reverse("judging:guidelines_versions", args=[coll.slug]))
        expect(page.locator("h1")).to_contain_text("version 1")
        checked(page, console)  # the Versions tab
        page.click("a[data-primary]:has-text('Change the guidelines')")  # its own tab
        page.fill("textarea[name=g-guidelines]", "Grade topicality. A buying guide counts as 2.")
        page.fill("input[name=g-note]", "Buying guides")
        with page.expect_navigation():
            page.click("button:has-text('Save as version 2')")
        expect(page.locator("h1")).to_contain_text("version 2")
        row = page.locator("#guideline-versions tr[data-version='2']")
        expect(row).to_contain_text("Buying guides")
        expect(row).to_contain_text("in force")
        checked(page, console)
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_judge_below_the_bar_sees_their_labels_wait(
    browser, live_server, console, world, viewport
):
    coll = world["coll"]
    quality_services.qualification_set(collection=coll, pairs=2, share=1.0)
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("console", lambda m: console.messages.append((m.type, m.text)))
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, "ben")
        page.goto(reverse("judging:judgment_list", args=[coll.slug]))
        expect(page.locator("[data-field=not-counted]")).to_contain_text("Not counted yet")
        expect(page.locator("table .badge-muted")).to_have_count(3)
        assert not re.search("gold", page.content(), re.IGNORECASE)  # never which pairs
        checked(page, console)
        # ann is qualified, and told so once the pairs she judged reach a multiple of 20
        ann, q2 = world["judges"]["ann"], coll.queries.get(external_id="q2")
        for i in range(17):
            doc = factories.document(coll, f"x{i}", title=f"Extra {i}", body="text")
            services.judgment_record(judge=ann, query=q2, document=doc, grade=0)
        context.clear_cookies()
        log_in(page, "ann")
        page.goto(reverse("judging:judgment_list", args=[coll.slug]))
        expect(page.locator("[data-field=not-counted]")).to_have_count(0)
    finally:
        context.close()
