"""Adjudicating a disagreement in real Chromium, on a desktop and a phone viewport."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from judging import services
from judging.models import Adjudication, LiveGrade, Membership
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def disagreement():
    coll = factories.collection("adj", name="Adjudication")
    adam = factories.user("adam", password="adjudicating-1")
    factories.member(coll, adam, Membership.Role.ADJUDICATOR)
    q = factories.query(coll, "q1", narrative="Only pages about trains count.")
    d = factories.document(coll, "d1", title="Night trains to Helsinki")
    for name, grade in (("ann", 0), ("bob", 4)):
        judge = factories.human_judge(factories.user(name))
        services.judgment_record(
            judge=judge, query=q, document=d, grade=grade, note=f"note {grade}"
        )
    return coll, q, d


@pytest.mark.parametrize("viewport", [(1366, 820), (390, 844)], ids=["desktop", "phone"])
def test_adjudicate_from_the_queue(browser, live_server, disagreement, viewport):
    coll, q, d = disagreement
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": viewport[0], "height": viewport[1]}
    )
    try:
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        page.set_default_timeout(10_000)
        page.goto(f"/c/{coll.slug}/disagreements/")
        page.fill("input[name=username]", "adam")
        page.fill("input[name=password]", "adjudicating-1")
        page.click("button:has-text('Log in')")
        row = page.locator('tr[data-pair="q1/d1"]')
        expect(row).to_be_visible()
        expect(row).to_contain_text("Judge 1")
        expect(row).not_to_contain_text("ann")
        row.get_by_role("link", name="Adjudicate").click()
        expect(page.locator("h1")).to_have_text("Adjudicate a pair")
        expect(page.locator("body")).to_contain_text("Only pages about trains count.")
        page.locator("#adjudication-form input[name=grade][value='3']").check()
        page.fill("#adjudication-form textarea[name=reason]", "Trains, as the narrative asks")
        page.click("#adjudication-form button[type=submit]")
        expect(page.locator('[data-field="adjudicated-grade"]')).to_have_text("3")
        expect(page.locator("[data-provenance]")).to_contain_text("adjudicated")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport[0] + 1, width
        assert errors == []
    finally:
        context.close()
    assert Adjudication.objects.get().reason == "Trains, as the narrative asks"
    assert LiveGrade.objects.get(query=q, document=d).grade == 3.0
