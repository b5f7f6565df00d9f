"""Every problem of a file in one round, and the chosen file kept (issue 11, items 4 and 9)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import PoolEntry
from metrics.models import Run
from tests.browser.test_runs import RUN_FILE, log_in, runs_world

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
__all__ = ["runs_world"]

VIEWPORTS = [(1366, 820), (390, 844)]
BAD_RUN = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2\nq9 Q0 d1 1 1.0 r\nq1 Q0 d3 3 x r\n"
BAD_PAIRS = "q1 d1\nq1 d2 extra\nq7 d1\nq2 nope\n"


def chosen_files(page) -> list[str]:
    return page.evaluate("[...document.querySelector('input[type=file]').files].map(f => f.name)")


@pytest.fixture(params=VIEWPORTS, ids=["desktop", "phone"])
def viewport_page(request, browser, live_server, console):
    width, height = request.param
    context = browser.new_context(
        base_url=live_server.url, viewport={"width": width, "height": height}
    )
    page = context.new_page()
    page.on("pageerror", lambda error: console.page_errors.append(str(error)))
    page.set_default_timeout(10_000)
    yield page
    context.close()


def test_run_errors_in_one_round_and_the_file_stays(viewport_page, console, runs_world):
    page = viewport_page
    slug = runs_world["coll"].slug
    log_in(page, reverse("metrics:run_create", args=[slug]))
    page.wait_for_function("() => window.gradedUpload === true")  # upload.js is deferred
    # "Choose file" (not a drop) fills the tag from the file's name.
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "my-run.v2.txt", "mimeType": "text/plain", "buffer": BAD_RUN.encode()}],
    )
    expect(page.locator("input[name=tag]")).to_have_value("my-run.v2")
    page.click("button:has-text('Submit run')")
    errors = page.locator("[data-run-errors] li")
    expect(errors).to_have_count(3)
    expect(errors.nth(0)).to_contain_text("Line 2: expected 6 columns")
    expect(errors.nth(1)).to_contain_text("Line 3: query 'q9' is not in the collection")
    expect(errors.nth(2)).to_contain_text("Line 4: score 'x' is not a number")
    assert chosen_files(page) == ["my-run.v2.txt"]
    expect(page.locator("[data-drop-text]")).to_contain_text("Selected: my-run.v2.txt")
    assert not Run.objects.exists()

    # A good file under a used tag: fix only the tag, submit again without choosing again.
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "good.txt", "mimeType": "text/plain", "buffer": RUN_FILE.encode()}],
    )
    Run.objects.create(collection=runs_world["coll"], team=runs_world["team"], tag="taken")
    page.fill("input[name=tag]", "taken")
    page.click("button:has-text('Submit run')")
    expect(page.locator("[data-run-errors]")).to_contain_text("already used")
    assert chosen_files(page) == ["good.txt"]
    page.fill("input[name=tag]", "fresh")
    page.click("button:has-text('Submit run')")
    page.wait_for_url(re.compile(r"/runs/\d+/$"))
    assert Run.objects.filter(tag="fresh").exists()
    # The submission says how many pairs it added to the judges' pool.
    expect(page.locator(".messages")).to_contain_text("added")


def test_pairs_errors_in_one_round_and_the_file_stays(viewport_page, console, runs_world):
    page = viewport_page
    slug = runs_world["coll"].slug
    log_in(page, reverse("judging:poolentry_create", args=[slug]), username="cora")
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "pairs.txt", "mimeType": "text/plain", "buffer": BAD_PAIRS.encode()}],
    )
    page.click("button:has-text('Add pairs')")
    alert = page.locator(".form-errors")
    expect(alert).to_contain_text("line 2: expected two fields")
    expect(alert).to_contain_text("line 3: unknown query id 'q7'")
    expect(alert).to_contain_text("line 4: unknown document id 'nope'")
    assert chosen_files(page) == ["pairs.txt"]
    assert not PoolEntry.objects.exists()
    assert page.evaluate(
        "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
    )
