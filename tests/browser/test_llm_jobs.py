"""LLM judge pages in real Chromium, on a desktop and a 390 × 844 phone screen.

A coordinator configures an LLM judge pointing at a local fake OpenAI-compatible server,
starts a job from the collection page and watches htmx poll its progress to the end; a
judge cannot reach any of these pages.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from judging.llm.models import LLMJob, LLMProvider
from judging.models import Judge, Judgment, Membership
from tests import factories
from tests.browser.navigation import go_back
from tests.judging.llm.fake_server import FakeLLM, Reply

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

VIEWPORTS = [
    pytest.param({"width": 1366, "height": 820}, id="desktop"),
    pytest.param({"width": 390, "height": 844}, id="phone"),
]
KEY = "sk-browser-SECRET-9f8e7d6c5b4a"
KEY_ENV = "GRADED_LLM_KEY_BROWSER"
OFF_SCALE = "The passage is perfect.\n##final score: 7"

# Every visible control in the main column: its box and whether it fits the viewport.
CONTROLS_JS = """
() => [...document.querySelectorAll(
  "main input:not([type=hidden]), main select, main textarea, main button, main a.button")]
  .filter((el) => el.offsetParent !== null)
  .map((el) => {
    // A checkbox inside its label is hit through the label.
    const target = ["checkbox", "radio"].includes(el.type) && el.closest("label")
      ? el.closest("label") : el;
    const r = target.getBoundingClientRect();
    return {name: el.name || el.textContent.trim(), left: r.left, right: r.right,
            width: r.width, height: r.height};
  })
"""


@pytest.fixture
def fake():
    """Return a fake server that answers one pair off the 0–3 scale, slowly enough to watch."""

    def script(body, n):
        text = body["messages"][-1]["content"]
        if "option 12" in text:
            return Reply(content=OFF_SCALE, delay=0.25)
        return Reply(content="##final score: 2", delay=0.25)

    server = FakeLLM(script)
    yield server
    server.close()


@pytest.fixture
def world(fake, monkeypatch, settings):
    """Build a collection of 2 queries × 3 pooled documents, a coordinator and a judge."""
    settings.GRADED_LLM_JOBS_INLINE = False  # run jobs in a thread, as in production
    monkeypatch.setenv(KEY_ENV, KEY)
    coll = factories.collection("flights", name="Flight search")
    for i in (1, 2):
        q = factories.query(coll, f"q{i}", text=f"flights to helsinki {i}")
        for j in (1, 2, 3):
            d = factories.document(
                coll, f"d{i}{j}", title=f"Fares {i}.{j}", body=f"Fares, option {i}{j}."
            )
            factories.pool_entry(coll, q, d)
    factories.member(coll, factories.user("cora"), Membership.Role.COORDINATOR)
    factories.member(coll, factories.user("judy"))
    # The operator registered the fake server as a provider (loopback explicitly allowed).
    factories.llm_provider(fake.url, name="fake", api_key_env=KEY_ENV, models=("fake-model",))
    llm = Judge.objects.create(kind=Judge.Kind.LLM, name="umbrela", model="fake-model")
    llm.collections.add(coll)
    return {"coll": coll, "llm": llm}


def log_in(page, path: str, username: str) -> None:
    page.goto(path)
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", "pw")
    page.click("button:has-text('Log in')")


def check_layout(page, viewport: dict, name: str) -> None:
    """Fail if the page scrolls sideways or a control is off screen or too small to hit."""
    page.screenshot(path=f"/tmp/i8browser-{name}-{viewport['width']}.png", full_page=True)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"{name} scrolls sideways: {width}px"
    for control in page.evaluate(CONTROLS_JS):
        assert control["left"] >= 0 and control["right"] <= viewport["width"], control
        assert control["width"] >= 24 and control["height"] >= 24, control
    assert KEY not in page.content(), f"the API key is in the HTML of {name}"


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_coordinator_configures_runs_and_watches_a_job(page, console, world, fake, viewport):
    coll, llm = world["coll"], world["llm"]
    page.set_viewport_size(viewport)
    progress_polls: list[str] = []
    page.on(
        "request",
        lambda r: progress_polls.append(r.url) if "part=progress" in r.url else None,
    )
    log_in(page, f"/c/{coll.slug}/", "cora")
    page.click("a:has-text('Run LLM judge')")
    expect(page.locator("h1")).to_have_text("Run an LLM judge")
    expect(page.locator(".notice")).to_contain_text("No LLM judge can run yet")
    check_layout(page, viewport, "llm-jobs-empty")
    page.locator(".llm-judge-list li", has_text="umbrela").get_by_role(
        "link", name="Configure"
    ).click()
    expect(page.locator("h1")).to_have_text("Configure the LLM judge umbrela")
    check_layout(page, viewport, "llm-judge-edit")

    # The coordinator picks a provider the operator registered; a model it does not allow
    # is refused, naming the field. No URL or key variable can be typed in.
    assert page.locator("input[name=endpoint], input[name=api_key_env]").count() == 0
    page.select_option("select[name=llm_provider]", label="fake")
    page.fill("input[name=model]", "other-model")
    page.fill("input[name=native_scale]", '["0", "1", "2", "3"]')
    page.fill("input[name=scale_mapping]", '{"0": 0, "1": 1, "2": 3, "3": 4}')
    page.click("button:has-text('Save')")
    expect(page.locator("main")).to_contain_text("does not allow this model")
    check_layout(page, viewport, "llm-judge-edit-error")
    page.fill("input[name=model]", "fake-model")
    page.click("button:has-text('Save')")
    expect(page.locator(".messages")).to_contain_text("Saved the LLM judge umbrela")
    llm.refresh_from_db()
    assert llm.llm_provider.name == "fake"
    assert llm.scale_mapping == {"0": 0, "1": 1, "2": 3, "3": 4}

    # Start the job from the form; the job page polls until it is done.
    expect(page.locator(".llm-judge-list li", has_text="umbrela")).to_contain_text(
        "fake-model through fake"
    )
    page.select_option("select[name=judge]", str(llm.pk))
    page.fill("input[name=concurrency]", "1")
    check_layout(page, viewport, "llm-jobs-form")
    page.click("button:has-text('Start')")
    expect(page.locator("h1")).to_contain_text("umbrela")
    live = page.locator("#llm-job-progress")
    expect(live).to_have_attribute("data-status", "done", timeout=15_000)
    expect(live.locator(".progress-text")).to_contain_text("6 of 6 pairs · 5 judged · 1 failed")
    bar = live.locator(".llm-bar")
    expect(bar).to_have_attribute("aria-valuenow", "6")
    expect(bar).to_have_attribute("aria-valuemax", "6")
    assert progress_polls, "htmx never polled the job's progress"
    expect(live).not_to_have_attribute("hx-get", "")  # polling stops once done

    group = live.locator("[data-failure-group]")
    expect(group).to_have_count(1)
    expect(group.locator("[data-failure-count]")).to_have_text("1 pair")
    group.locator("summary:has-text('Answer received')").click()
    expect(group.locator(".llm-raw")).to_contain_text("##final score: 7")
    check_layout(page, viewport, "llm-job-done")
    group.get_by_role("link", name="See the pair").click()
    failure = page.locator("[data-failure]")
    expect(failure).to_have_count(1)
    expect(failure.locator("summary")).to_contain_text("q1 · d12")
    go_back(page, re.compile(r"^LLM job #"))

    job = LLMJob.objects.get()
    assert (job.status, job.done, job.failed) == ("done", 5, 1)
    assert Judgment.objects.filter(judge=llm).count() == 5
    assert fake.requests[0]["headers"]["Authorization"] == f"Bearer {KEY}"

    page.click("nav.breadcrumbs a:has-text('Run LLM judge')")
    page.click("nav[aria-label='LLM jobs'] a:has-text('Recent jobs')")  # the jobs are a tab
    jobs = page.locator(".list-box table.data-table tbody tr")
    expect(jobs).to_have_count(1)
    expect(jobs.locator("td").nth(3)).to_have_text("5 / 6")
    check_layout(page, viewport, "llm-jobs-list")
    # The refused key was a 400 (by design); nothing else may be logged.
    assert [p for p in console.problems() if "status of 400" not in p] == []


def test_a_judge_cannot_reach_the_llm_pages(page, console, world):
    coll, llm = world["coll"], world["llm"]
    job = LLMJob.objects.create(collection=coll, judge=llm, total=1)
    log_in(page, f"/c/{coll.slug}/", "judy")
    expect(page.locator("h1")).to_contain_text("Flight search")
    expect(page.locator("a:has-text('Run LLM judge')")).to_have_count(0)
    for path in (
        f"/c/{coll.slug}/llm-jobs/",
        f"/c/{coll.slug}/llm-jobs/{job.pk}/",
        f"/c/{coll.slug}/llm-judges/{llm.pk}/edit/",
    ):
        response = page.goto(path)  # a member in another role: 403 naming the role needed
        assert response is not None and response.status == 403, path
        expect(page.locator("h1")).to_have_text("Not for your role")
    response = page.request.post(
        f"/c/{coll.slug}/llm-jobs/", form={"judge": str(llm.pk), "concurrency": "1"}
    )
    assert response.status in (403, 404)
    assert LLMJob.objects.count() == 1
    assert [e for e in console.problems() if "404" not in e and "403" not in e] == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_register_try_and_run_a_new_judge_in_the_browser(page, console, world, fake, viewport):
    """Issue 20 item 1: create, try on 3 pairs (prompt, answer, grade), run, watch."""
    coll = world["coll"]
    page.set_viewport_size(viewport)
    log_in(page, f"/c/{coll.slug}/llm-jobs/", "cora")
    page.click("a:has-text('New LLM judge')")
    expect(page.locator("h1")).to_have_text("New LLM judge")
    assert "{document}" in page.locator("textarea[name=prompt_template]").input_value()
    page.fill("input[name=name]", "fresh")
    page.fill("input[name=model]", "fake-model")
    page.select_option("select[name=llm_provider]", label="fake")
    check_layout(page, viewport, "llm-judge-new")
    page.click("button:has-text('Register and try it')")
    expect(page.locator("h1")).to_have_text("Try the LLM judge fresh")
    page.click("button:has-text('Try it on 3 pairs')")
    trials = page.locator("[data-trial]")
    expect(trials).to_have_count(3, timeout=15_000)
    expect(trials.first.locator("[data-trial-answer]")).to_have_text("##final score: 2")
    expect(trials.first.locator("[data-trial-grade]")).to_have_text("grade 3")  # 2 → 3
    check_layout(page, viewport, "llm-judge-try")
    fresh = Judge.objects.get(name="fresh")
    assert not Judgment.objects.filter(judge=fresh).exists()
    page.click("a:has-text('Run it on the pool')")
    expect(page.locator("select[name=judge]")).to_have_value(str(fresh.pk))
    page.fill("input[name=concurrency]", "2")
    page.click("button:has-text('Start')")
    live = page.locator("#llm-job-progress")
    expect(live).to_have_attribute("data-status", "done", timeout=15_000)
    expect(live.locator("[data-job-status]")).to_have_text("Done with 1 failure")
    assert Judgment.objects.filter(judge=fresh).count() == 5
    assert console.problems() == []


FIRST_SCREENS = [
    pytest.param({"width": 1366, "height": 768}, id="desktop"),
    pytest.param({"width": 390, "height": 844}, id="phone"),
]

# The bar's segments and the status, as the browser computed their styles.
BAR_JS = """
() => {
  const fill = (sel) => {
    const el = document.querySelector(sel);
    return el ? getComputedStyle(el).fill : null;
  };
  const bar = document.querySelector(".llm-bar");
  const box = (sel) => {
    const el = document.querySelector(sel);
    if (!el) return null;
    const r = el.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom, left: r.left, right: r.right};
  };
  return {
    done: fill(".llm-bar-done"), failed: fill(".llm-bar-failed"), track: fill(".llm-bar-track"),
    outline: getComputedStyle(bar).outlineColor, outlineStyle: getComputedStyle(bar).outlineStyle,
    status: getComputedStyle(document.querySelector("[data-job-status]")).color,
    failedWidth: document.querySelector(".llm-bar-failed")?.getBoundingClientRect().width ?? 0,
    barWidth: bar.getBoundingClientRect().width,
    boxes: {h1: box("h1"), bar: box(".llm-bar"), numbers: box(".progress-text"),
            error: box("[data-job-error]"), primary: box("#llm-job-progress .button-primary")},
    height: document.documentElement.scrollHeight,
    width: document.documentElement.scrollWidth,
  };
}
"""
GREEN = "rgb(35, 112, 73)"  # --grade-3
RED = "rgb(179, 38, 30)"  # --danger


def _green(rgb: str) -> bool:
    r, g, b = (int(v) for v in rgb[rgb.index("(") + 1 : rgb.index(")")].split(",")[:3])
    return g > r + 40 and g > b + 20


@pytest.mark.parametrize("viewport", FIRST_SCREENS)
def test_a_job_that_fails_fast_reads_as_failed_on_one_screen(page, console, world, fake, viewport):
    """Issue 34 item 4: every request 404 → 3 sent, a red bar, one group, raw outputs."""
    from judging.llm import runner
    from judging.llm import services as services_llm
    from tests.browser.page_checks import axe_violations as violations

    coll, llm = world["coll"], world["llm"]
    llm.llm_provider = LLMProvider.objects.get(name="fake")
    llm.native_scale = ["0", "1", "2", "3"]
    llm.scale_mapping = {"0": 0, "1": 1, "2": 3, "3": 4}
    llm.save()
    for i in range(3, 12):  # 6 + 9 × 5 = 51 pairs
        q = factories.query(coll, f"q{i:02d}", text=f"query {i}")
        for j in range(5):
            d = factories.document(coll, f"x{i}-{j}", title="T", body=f"Body {i} {j}.")
            factories.pool_entry(coll, q, d)
    fake.script = lambda body, n: Reply(status=404, body='{"error": "model not found"}')
    job = services_llm.llm_job_create(collection=coll, judge=llm, concurrency=1)
    job = runner.run_job(job)
    assert (job.status, job.failed, len(fake.requests)) == ("failed", 3, 3)

    page.set_viewport_size(viewport)
    log_in(page, f"/c/{coll.slug}/llm-jobs/{job.pk}/", "cora")
    live = page.locator("#llm-job-progress")
    expect(live).to_have_attribute("data-status", "failed")
    expect(live.locator("[data-job-status]")).to_have_text("Failed")
    expect(live.locator("[data-job-error]")).to_have_text(
        "Stopped after 3 requests in a row failed: the provider answered 404 Not Found — "
        "check the model name and the provider's base URL."
    )
    expect(live.locator(".progress-text")).to_contain_text("3 of 51 pairs · 0 judged · 3 failed")
    bar = page.evaluate(BAR_JS)
    # Not a full green bar: no green segment, a red one, a red-tinted track, a red edge.
    assert bar["done"] is None
    assert bar["failed"] == RED and not _green(bar["track"])
    assert bar["outline"] == RED and bar["outlineStyle"] == "solid"
    assert bar["status"] == RED
    assert 0 < bar["failedWidth"] < bar["barWidth"] / 4
    # Grouped: one line for the three pairs.
    groups = live.locator("[data-failure-group]")
    expect(groups).to_have_count(1)
    expect(groups.locator("[data-failure-count]")).to_have_text("3 pairs")
    # The first screen holds the title, the state and reason, the bar, the numbers and the
    # primary action; the whole page fits in it.
    for name, box in bar["boxes"].items():
        assert box is not None, name
        assert box["top"] >= 0 and box["bottom"] <= viewport["height"], (name, box)
        assert box["left"] >= 0 and box["right"] <= viewport["width"], (name, box)
    assert bar["height"] <= viewport["height"], f"page is {bar['height']} px"
    expect(live.locator(".button-primary")).to_have_text("Configure umbrela")
    check_layout(page, viewport, "llm-job-failed")
    assert violations(page) == []  # axe-core: WCAG 2.1 A/AA, serious or critical

    # The drill-down lists the three pairs, with the answer received.
    groups.get_by_role("link", name="See the pairs").click()
    failures = page.locator("[data-failure]")
    expect(failures).to_have_count(3)
    failures.first.locator("summary").click()
    expect(failures.first.locator(".llm-raw")).to_have_text('{"error": "model not found"}')
    check_layout(page, viewport, "llm-job-failures")
    assert violations(page) == []  # axe-core: WCAG 2.1 A/AA, serious or critical
    go_back(page, re.compile(r"^LLM job #"))

    # The operator fixed it: run again, then read every grade's raw output.
    fake.script = lambda body, n: Reply(content="<b>Relevant</b>\n##final score: 2")
    page.click("button:has-text('Run again')")
    live = page.locator("#llm-job-progress")
    expect(live).to_have_attribute("data-status", "done", timeout=30_000)
    bar = page.evaluate(BAR_JS)
    assert bar["done"] == GREEN and bar["failed"] is None
    page.click("[data-outputs-link]")
    outputs = page.locator("[data-output]")
    expect(outputs).to_have_count(50)  # a page of 50 of the 51
    first = outputs.first
    expect(first.locator("[data-raw-output]")).not_to_be_visible()
    first.locator("summary").click()
    expect(first.locator("[data-raw-output]")).to_have_text("<b>Relevant</b>\n##final score: 2")
    assert first.locator("[data-raw-output] b").count() == 0  # shown as text, not markup
    check_layout(page, viewport, "llm-job-outputs")
    assert violations(page) == []  # axe-core: WCAG 2.1 A/AA, serious or critical
    page.click("a[rel=next]")
    expect(page.locator("[data-output]")).to_have_count(1)
    assert console.problems() == []


def test_a_canary_check_starts_at_once_and_its_page_polls_until_the_answers_are_in(
    page, console, world, fake
):
    """The check runs in a thread of the server (no broker), as in production."""
    coll, llm = world["coll"], world["llm"]
    llm.llm_provider = LLMProvider.objects.get(name="fake")
    llm.native_scale = ["0", "1", "2", "3"]
    llm.scale_mapping = {"0": 0, "1": 1, "2": 3, "3": 4}
    llm.save()
    fake.script = lambda body, n: Reply(content="##final score: 2", delay=1.5)  # to watch
    polls: list[str] = []
    page.on("request", lambda r: polls.append(r.url) if "part=progress" in r.url else None)
    log_in(page, f"/c/{coll.slug}/judges/", "cora")
    page.click("details#canaries > summary")  # the LLM judges' section is folded (issue 34)
    page.get_by_role("button", name="Check umbrela with canaries").click()
    expect(page.locator("h1")).to_have_text("Canary check of umbrela")
    # 4 canaries (2 queries), 4 at once, 1.5 s each: not done when the page first shows;
    # htmx polls, then swaps the answers in.
    expect(page.locator("#check-progress")).to_have_attribute("data-status", "done", timeout=20_000)
    expect(page.locator("[data-kind]")).to_have_count(4)
    expect(page.locator("[data-field=failed]")).to_have_text("4")  # "2" maps to grade 3
    assert polls, "the page never polled"
    assert len(fake.requests) == 4
