"""Runs in real Chromium: upload a run file (drop zone, progress) and find it on the leaderboard."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging.models import Collection, Membership
from metrics import services
from metrics.models import Run
from metrics.visibility.services import score_visibility_update
from tests import factories
from tests.metrics import pages_factories as pf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "team-pass-1"
RUN_FILE = (
    "q1 Q0 d1 1 3.0 my-bm25\n"
    "q1 Q0 d3 2 2.0 my-bm25\n"
    "q1 Q0 d2 3 1.0 my-bm25\n"
    "q2 Q0 d4 1 2.0 my-bm25\n"
    "q2 Q0 d5 2 1.0 my-bm25\n"
)
BAD_FILE = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2\nq9 Q0 d1 1 1.0 r\n"


@pytest.fixture
def runs_world(settings, tmp_path):
    """Build a collection of 2 queries with live grades and a one-member team."""
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("runs", name="Run contest")
    queries = [factories.query(coll, f"q{i}", text=f"query {i}") for i in (1, 2)]
    docs = [factories.document(coll, f"d{i}") for i in range(1, 6)]
    pf.live_grades(coll, queries[0], {docs[0]: 3.0, docs[1]: 1.0, docs[2]: 0.0})
    pf.live_grades(coll, queries[1], {docs[3]: 2.0, docs[4]: 0.0})
    member = factories.user("tess", password=PASSWORD)
    team = pf.team(coll, "Tess & co", [member])
    coordinator = factories.user("cora", password=PASSWORD)
    factories.member(coll, coordinator, role=Membership.Role.COORDINATOR)
    return {"coll": coll, "team": team}


def log_in(page, path: str, username: str = "tess") -> None:
    page.goto(path)
    expect(page.locator("h1")).to_have_text("Log in")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button:has-text('Log in')")


def drop_file(page, selector: str, name: str, content: str) -> None:
    """Drop a file onto an element, as dragging it from the desktop does."""
    # The page's upload script arrives with a boosted page after its heading shows; a drop
    # before it has installed its listeners would be the browser's own (it loads nothing).
    page.wait_for_function("() => window.gradedUpload === true")
    transfer = page.evaluate_handle(
        """([name, content]) => {
            const transfer = new DataTransfer();
            transfer.items.add(new File([content], name, {type: "text/plain"}));
            return transfer;
        }""",
        [name, content],
    )
    page.dispatch_event(selector, "dragover", {"dataTransfer": transfer})
    page.dispatch_event(selector, "drop", {"dataTransfer": transfer})


def test_upload_a_run_and_see_it_scored_on_the_leaderboard(page, console, runs_world):
    slug = runs_world["coll"].slug
    log_in(page, reverse("judging:collection_detail", args=[slug]))
    page.click("a:has-text('Submit a run')")
    expect(page.locator("h1")).to_have_text("Submit a run")

    drop_file(page, "[data-drop-zone]", "my-bm25.txt", RUN_FILE)
    expect(page.locator("[data-drop-text]")).to_contain_text("Selected: my-bm25.txt")
    expect(page.locator("input[name=tag]")).to_have_value("my-bm25")  # filled from the name
    page.click("summary:has-text('Description')")  # optional, folded (issue 34)
    page.fill("textarea[name=description]", "Plain BM25.")
    # The progress indicator appears while the XHR upload runs. A small upload can finish
    # and navigate away before a poll would see it, so the page reports the moment the box
    # is shown through a console message, which outlives the navigation.
    messages = []
    page.on("console", lambda message: messages.append(message.text))
    page.evaluate(
        """() => {
            const box = document.querySelector("[data-upload-progress]");
            new MutationObserver(() => {
                if (!box.hidden) console.log("graded:upload-progress-shown");
            }).observe(box, {attributes: true});
        }"""
    )
    assert page.locator("[data-upload-progress]").is_hidden()
    with page.expect_request(lambda r: r.method == "POST" and "/runs/new/" in r.url):
        page.click("button:has-text('Submit run')")

    page.wait_for_url(re.compile(r"/c/runs/runs/\d+/$"))
    assert "graded:upload-progress-shown" in messages
    expect(page.locator(".messages")).to_contain_text("Run my-bm25 was submitted and scored.")
    run = Run.objects.get(tag="my-bm25")
    assert run.team == runs_world["team"]
    assert run.status == Run.Status.SCORED
    expected = run.scores[pf.NDCG10]
    assert expected is not None and expected > 0
    # The judgments are unpublished: the default score visibility shows the team no score.
    expect(page.locator("[data-score-visibility=none]")).to_be_visible()
    expect(page.locator("td.score").first).to_have_text("–")
    Collection.objects.filter(pk=runs_world["coll"].pk).update(judgments_published=True)

    page.click("nav.tabs a:has-text('Leaderboard')")
    row = page.locator("tr[data-run='my-bm25']")
    expect(row).to_be_visible()
    expect(row).to_contain_text("Tess & co")
    expect(row.locator("td.score .lb-value").first).to_have_text(f"{expected:.4f}")
    expect(row.locator("td.coverage")).to_have_text("1.00")
    assert page.evaluate("window.__cspViolations") == []
    assert console.problems() == []


def test_refused_run_lists_its_lines_in_place(page, console, runs_world):
    slug = runs_world["coll"].slug
    log_in(page, reverse("metrics:run_create", args=[slug]))
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "bad.txt", "mimeType": "text/plain", "buffer": BAD_FILE.encode()}],
    )
    page.fill("input[name=tag]", "bad-run")
    page.click("button:has-text('Submit run')")
    errors = page.locator("[data-run-errors]")
    expect(errors).to_contain_text("Line 2: expected 6 columns")
    expect(page).to_have_url(re.compile(r"/runs/new/$"))
    assert not Run.objects.exists()
    # The replaced form still uploads with JavaScript.
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "ok.txt", "mimeType": "text/plain", "buffer": RUN_FILE.encode()}],
    )
    page.click("button:has-text('Submit run')")
    page.wait_for_url(re.compile(r"/c/runs/runs/\d+/$"))
    assert Run.objects.get().tag == "bad-run"
    assert page.evaluate("window.__cspViolations") == []
    # Chromium logs the 400 response itself; nothing else may appear.
    assert console.problems() == [
        "error: Failed to load resource: the server responded with a status of 400 (Bad Request)"
    ]


def test_a_team_over_its_runs_per_day_is_told_when_in_place(page, console, runs_world):
    coll = runs_world["coll"]
    score_visibility_update(collection=coll, runs_per_day=1)
    services.run_submit(
        collection=coll,
        team=runs_world["team"],
        tag="first",
        content=RUN_FILE.encode(),
        filename="r.txt",
        user=runs_world["team"].members.get(),
    )
    log_in(page, reverse("metrics:run_create", args=[coll.slug]))
    expect(page.locator("[data-budget]")).to_contain_text("0 of 1 run left")
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "two.txt", "mimeType": "text/plain", "buffer": RUN_FILE.encode()}],
    )
    page.fill("input[name=tag]", "second")
    page.click("button:has-text('Submit run')")
    errors = page.locator("[data-run-errors]")
    expect(errors).to_contain_text("next submission is allowed at")
    expect(page).to_have_url(re.compile(r"/runs/new/$"))
    assert Run.objects.count() == 1
    assert page.evaluate("window.__cspViolations") == []
    assert console.problems() == [
        "error: Failed to load resource: the server responded with a status of 429 "
        "(Too Many Requests)"
    ]


def test_upload_works_without_javascript(browser, live_server, runs_world):
    context = browser.new_context(base_url=live_server.url, java_script_enabled=False)
    try:
        page = context.new_page()
        log_in(page, reverse("metrics:run_create", args=[runs_world["coll"].slug]))
        page.set_input_files(
            "input[name=file]",
            files=[{"name": "plain.txt", "mimeType": "text/plain", "buffer": RUN_FILE.encode()}],
        )
        page.fill("input[name=tag]", "no-js")
        page.click("button:has-text('Submit run')")
        page.wait_for_url(re.compile(r"/c/runs/runs/\d+/$"))
        expect(page.locator("h1")).to_contain_text("no-js")
        assert Run.objects.get().tag == "no-js"
    finally:
        context.close()


def test_pages_render_without_csp_violations(page, console, runs_world):
    """Visit every metrics page as a coordinator after a run exists (charts are inline SVG)."""
    slug = runs_world["coll"].slug
    team = runs_world["team"]
    coll = runs_world["coll"]
    queries = list(coll.queries.order_by("external_id"))
    docs = list(coll.documents.order_by("external_id"))
    for tag, order in (("one", [0, 1, 2]), ("two", [2, 1, 0])):
        pf.run(
            coll,
            team,
            tag,
            per_query={
                q: {"nDCG@10": 0.2 + 0.1 * i, "Judged@10": 1.0} for i, q in enumerate(queries)
            },
            rankings={queries[0]: [docs[i] for i in order], queries[1]: [docs[3], docs[4]]},
        )
    one, two = Run.objects.get(tag="one"), Run.objects.get(tag="two")
    log_in(page, reverse("metrics:leaderboard", args=[slug]), username="cora")
    expect(page.locator("tr[data-run='one']")).to_be_visible()
    page.goto(reverse("metrics:run_detail", args=[slug, one.pk]))
    expect(page.locator("svg.chart-bars:visible rect")).to_have_count(2)
    page.goto(reverse("metrics:compare", args=[slug]) + f"?a={one.pk}&b={two.pk}")
    expect(page.locator("[data-seed]")).to_have_text("20201019")
    page.goto(reverse("metrics:difficulty", args=[slug]) + "?tab=chart")
    expect(page.locator("svg.chart-boxes:visible")).to_be_visible()
    assert page.evaluate("window.__cspViolations") == []
    assert console.problems() == []
