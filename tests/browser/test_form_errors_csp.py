"""Boosted htmx forms that answer 400 swap their errors in without any CSP violation.

htmx "settles" a swap by copying some attributes of each old element onto its swapped-in
twin (same id). Its default list includes ``style``, and copying that attribute is an inline
style the page's Content-Security-Policy (``style-src 'self'``) refuses. Anything that
touched an element's ``style`` through the CSSOM (a browser extension, a password manager,
Playwright's full-page screenshot) leaves a ``style`` attribute behind, so a 400 answer to a
form then logged one "Applying inline style violates ... Content Security Policy" per field.
base.html settles ``class``, ``width`` and ``height`` only; these tests mark every control's
style first, as such a script would, then submit each form with bad input.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import Judge, Membership
from tests import factories

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


# What an extension or autofill does: write to element.style (allowed by the CSP, since it
# goes through the CSSOM), which leaves a style attribute on the element.
MARK_STYLES = """
() => document.querySelectorAll("main input, main textarea, main select, main button")
  .forEach((el) => el.style.setProperty("--touched", "1"))
"""


@pytest.fixture
def world():
    """Build a collection with one query and one document, and its coordinator."""
    coll = factories.collection("flights", name="Flight search")
    factories.query(coll, "q1", text="flights to helsinki")
    factories.document(coll, "d1", title="Fares", body="Fares to Helsinki.")
    factories.member(coll, factories.user("cora"), Membership.Role.COORDINATOR)
    factories.llm_provider("http://127.0.0.1:9", name="provider", open_to=[coll])
    llm = Judge.objects.create(kind=Judge.Kind.LLM, name="umbrela", model="fake-model")
    llm.collections.add(coll)
    return {"coll": coll, "llm": llm}


def submit_with_marked_styles(page, path: str, fill: dict[str, str | bool], button: str) -> None:
    """Open ``path``, fill the fields (``True``: check it), mark every style and submit.

    The fields the browser itself requires are filled, so the server is the one refusing.
    """
    page.goto(path)
    for selector, value in fill.items():
        if value is True:
            page.check(selector)
        elif selector.startswith("select"):
            page.select_option(selector, label=value)
        else:
            page.fill(selector, value)
    page.evaluate(MARK_STYLES)
    assert page.locator("main [style]").count() > 0  # the condition that used to break
    page.evaluate("window.__notReloaded = true")
    page.click(f"button:has-text('{button}')")


@pytest.mark.parametrize(
    ("name", "path", "fill", "button", "error"),
    [
        pytest.param(
            "llm judge",
            lambda w: reverse("judging:judge_update", args=[w["coll"].slug, w["llm"].pk]),
            {"textarea[name=prompt_template]": "{body}", "select[name=llm_provider]": "provider"},
            "Save",
            "{body}",
            id="llm-judge",
        ),
        pytest.param(
            "new collection",
            lambda w: reverse("judging:collection_create"),
            {
                "input[name=name]": "Again",
                "input[name=slug]": "flights",
                "input[name=purpose][value=internal]": True,
            },
            "Create",
            "is taken by another collection",
            id="new-collection",
        ),
        pytest.param(
            "pairs",
            lambda w: reverse("judging:poolentry_create", args=[w["coll"].slug]),
            {"textarea[name=pairs]": "q1 nope"},
            "Add pairs",
            "unknown document id 'nope'",
            id="pairs",
        ),
        pytest.param(
            "leaderboard settings",
            lambda w: reverse("metrics:collection_update", args=[w["coll"].slug]),
            {"textarea[name=measures]": "no_such_measure@10"},
            "Save and rescore",
            "no_such_measure",
            id="leaderboard-settings",
        ),
    ],
)
def test_a_400_swap_logs_no_csp_violation(page, console, world, name, path, fill, button, error):
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "cora")
    page.fill("input[name=password]", "pw")
    page.click("button:has-text('Log in')")
    expect(page.locator(".site-user")).to_have_text("cora")

    statuses: list[int] = []
    page.on("response", lambda r: statuses.append(r.status) if r.request.method == "POST" else None)
    submit_with_marked_styles(page, path(world), fill, button)
    expect(page.locator(".form-errors")).to_contain_text(error)
    assert statuses == [400], f"{name}: the form was not refused: {statuses}"
    # htmx swapped the answer into this page (a reload would have dropped the flag).
    assert page.evaluate("window.__notReloaded") is True
    assert page.evaluate("window.__cspViolations") == [], name
    assert [p for p in console.problems() if "status of 400" not in p] == [], name
