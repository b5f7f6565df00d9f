"""Every page at 390×844 (and desktop): no sideways scrolling; wide tables scroll in a box."""

from __future__ import annotations

import os
import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from judging import services
from judging.llm.models import LLMJob
from judging.models import Membership
from judging.quality.models import CanaryCheck, CanaryResult, VersionCheck, VersionCheckResult
from metrics.models import Run
from tests import factories
from tests.browser import page_checks
from tests.browser.navigation import go_back
from tests.metrics import pages_factories as pf

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PASSWORD = "phone-pass-1"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1366, "height": 768}
SHOTS = os.environ.get("GRADED_SCREENSHOTS")


@pytest.fixture
def world(settings, tmp_path):
    """Build a collection with long query texts, two scored runs, a team, judge and coordinator."""
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection(
        "phone",
        name="Phone-sized collection",
        guidelines="Judge **topical** relevance.",
        evidence="optional",  # the card's evidence panel and bar are checked too
    )
    queries = [
        factories.query(
            coll,
            f"q{i}",
            text=f"extraordinarily long query number {i} about floor plans vs layouts",
            description="Looking for floor plans.",
            narrative="Plans of floors are relevant.",
        )
        for i in (1, 2, 3)
    ]
    docs = [factories.document(coll, f"doc-with-a-long-identifier-{i:03d}") for i in range(8)]
    for q in queries:
        for d in docs[:4]:
            factories.pool_entry(coll, q, d)
    pf.live_grades(coll, queries[0], {docs[0]: 3.0, docs[1]: 1.0, docs[2]: 0.0})
    pf.live_grades(coll, queries[1], {docs[3]: 2.0, docs[4]: 0.0})
    users = {}
    for name, role in (
        ("cora", Membership.Role.COORDINATOR),
        ("judy", Membership.Role.JUDGE),
    ):
        users[name] = factories.user(name, password=PASSWORD)
        factories.member(coll, users[name], role=role)
    tess = factories.user("tess", password=PASSWORD)
    team = pf.team(coll, "Team with a rather long name", [tess])
    for tag, order in (
        ("baseline-with-long-tag", [0, 1, 2]),
        ("challenger-run-v2", [2, 1, 0]),
        ("third-run", [1, 0, 2]),  # a baseline against two runs: Holm-adjusted p-values
    ):
        pf.run(
            coll,
            team,
            tag,
            per_query={
                q: {"nDCG@10": 0.2 + 0.1 * i, "Judged@10": 1.0, "P@10": 0.1}
                for i, q in enumerate(queries)
            },
            rankings={queries[0]: [docs[i] for i in order], queries[1]: [docs[3], docs[4]]},
        )
    llm = factories.llm_judge("llm-judge-with-a-long-name")
    llm.collections.add(coll)
    canary = CanaryCheck.objects.create(
        collection=coll, judge=llm, version="v-0123456789ab", seed=1, status="done"
    )
    for kind, grade in (("stuffing", 0), ("injection", 3)):
        CanaryResult.objects.create(
            canary_check=canary, kind=kind, qid="q1", title="Household tips", text="Chores. " * 40,
            grade=grade, raw_answer="##final score: 2",
        )  # fmt: skip
    done = VersionCheck.objects.create(
        collection=coll, judge=llm, version="v-0123456789ab", status="done"
    )
    VersionCheckResult.objects.create(
        version_check=done, query=queries[0], document=docs[0], grade=3, human_grade=3
    )
    failed = VersionCheck.objects.create(
        collection=coll, judge=llm, version="v-0123456789ab", status="failed",
        error="Stopped after 3 requests in a row failed: the provider answered 401 "
        "Unauthorized — check the provider's API key (the operator sets it).",
    )  # fmt: skip
    job = LLMJob.objects.create(
        collection=coll, judge=llm, status="done", total=4, done=3, failed=1,
        prompt_tokens=1234, completion_tokens=56,
    )  # fmt: skip
    # Grades of the LLM judge and of a human on q1's pairs: the LLM agreement page has a
    # section per LLM judge, and the agreement page figures to show.
    # Through the service, like every label: the progress counters, the live list and the
    # history stay in step (a bulk insert left them behind, and a later grade then broke
    # the progress counters' check constraint).
    boss = factories.human_judge(users["cora"])
    for judge, grades in ((boss, (3, 1, 0, 2)), (llm, (3, 2, 0, 1))):
        for d, g in zip(docs[:4], grades, strict=True):
            services.judgment_record(judge=judge, query=queries[0], document=d, grade=g)
    checks = {"canary": canary, "version": done, "failed": failed, "llm": llm, "job": job}
    return {"coll": coll, "queries": queries, "checks": checks}


def pages(world, role: str) -> list[str]:
    slug = world["coll"].slug
    one, two, three = Run.objects.order_by("pk")
    common = [reverse("judging:home"), reverse("judging:collection_detail", args=[slug])]
    metrics = [
        reverse("metrics:leaderboard", args=[slug]),
        reverse("metrics:run_detail", args=[slug, one.pk]),
        reverse("metrics:run_query", args=[slug, one.pk, world["queries"][0].pk]),
        reverse("metrics:compare", args=[slug]) + f"?a={one.pk}&b={two.pk}",
        reverse("metrics:difficulty", args=[slug]),
    ]
    if role == "tess":
        return [*common, *metrics, reverse("metrics:run_create", args=[slug])]
    judging = [
        reverse("judging:judge_next", args=[slug]),
        reverse("judging:judgment_list", args=[slug]),
        reverse("profile"),
    ]
    if role == "judy":
        return common + judging
    return [
        *common,
        *judging,
        *metrics,
        reverse("metrics:collection_update", args=[slug]),
        reverse("judging:collection_agreement", args=[slug]),
        reverse("judging:poolentry_create", args=[slug]),
        reverse("judging:document_import", args=[slug]),
        reverse("metrics:pool", args=[slug]),
        reverse("metrics:stability", args=[slug]),
        # One baseline against several runs (Holm-adjusted p-values).
        reverse("metrics:compare", args=[slug])
        + f"?baseline={one.pk}&runs={two.pk}&runs={three.pk}",
    ]


def settings_tabs(world) -> list[str]:
    """Return every tab of the settings page but the first (which ``pages`` opens)."""
    url = reverse("metrics:collection_update", args=[world["coll"].slug])
    tabs = ("visibility", "depth", "pooling", "aggregation", "card", "quotas")
    return [f"{url}?tab={tab}" for tab in tabs]


def judgment_edit(world) -> str:
    """Return the edit page of a judgment of judy's (recorded now, on the first pair)."""
    from judging import services

    judy = Membership.objects.get(collection=world["coll"], user__username="judy").user
    query = world["queries"][2]
    document = world["coll"].documents.order_by("external_id").first()
    judgment = services.judgment_record(
        judge=factories.human_judge(judy), query=query, document=document, grade=2
    )
    return reverse("judging:judgment_update", args=[world["coll"].slug, judgment.pk])


def log_in(page, username: str) -> None:
    page.goto(reverse("login"))
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button:has-text('Log in')")
    expect(page.locator(".site-user")).to_have_text(username)


def more_pages(world, username: str) -> list[str]:
    """Return the pages :func:`pages` leaves out: the coordinator's forms and LLM pages."""
    if username != "cora":
        return []
    slug = world["coll"].slug
    q1 = world["queries"][0]
    d0 = world["coll"].documents.get(external_id="doc-with-a-long-identifier-000")
    return [
        reverse("judging:collection_create"),
        reverse("judging:collection_import", args=[slug]),
        reverse("judging:llmjob_create", args=[slug]),
        reverse("judging:disagreement_list", args=[slug]),
        reverse("metrics:llm_agreement", args=[slug]),
        reverse("judging:judge_list", args=[slug]),
        reverse("judging:canary_check_detail", args=[slug, world["checks"]["canary"].pk]),
        reverse("judging:version_list", args=[slug, world["checks"]["llm"].pk]),
        reverse("judging:version_check_detail", args=[slug, world["checks"]["version"].pk]),
        reverse("judging:version_check_detail", args=[slug, world["checks"]["failed"].pk]),
        # The quality and adjudication pages fitted to one screen (issue 34).
        reverse("judging:gold_list", args=[slug]),
        reverse("judging:llmjob_detail", args=[slug, world["checks"]["job"].pk]),
        reverse("judging:judgment_history", args=[slug, q1.pk, d0.pk]),
        reverse("judging:pair_adjudicate", args=[slug, q1.pk, d0.pk]),
    ]


#: The page's tab links (``.tabs``), as paths with their query, other than the open one.
TAB_LINKS = """() => [...document.querySelectorAll(".tabs a[href]:not([aria-current])")]
    .map(a => new URL(a.href, location.href))
    .filter(u => u.origin === location.origin)
    .map(u => u.pathname + u.search)"""


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
@pytest.mark.parametrize("username", ["cora", "judy", "tess"])
def test_no_page_scrolls_sideways(browser, live_server, console, world, viewport, username):
    """Every page: no sideways page scroll, and the page grammar's checks (page_checks).

    One logged-in context per role and size; on each page and each of its tabs, as loaded:
    its primary action on the first screen, no table wider than its box without a sticky
    first column, every text (SVG included) at 4.5:1 or more against what is behind it,
    no date broken over two lines, and no serious or critical WCAG 2.1 A/AA violation
    that axe-core finds (test_accessibility).
    """
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    grammar: dict[str, dict[str, list[str]]] = {}
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, username)
        extra = {"cora": settings_tabs(world), "judy": [judgment_edit(world)]}.get(username, [])
        todo = [*pages(world, username), *more_pages(world, username), *extra]
        seen, listed = set(todo), set(todo)
        while todo:
            path = todo.pop(0)
            response = page.goto(path)
            assert response.status == 200, path
            # Pages stay light: no page's HTML over 150 KB (these fixtures hold little data).
            assert len(response.body()) <= 150_000, f"{path}: {len(response.body())} bytes"
            widths = page.evaluate(
                "[document.documentElement.scrollWidth, document.documentElement.clientWidth]"
            )
            if SHOTS and viewport is PHONE:
                name = path.strip("/").replace("/", "_").replace("?", "_") or "home"
                page.screenshot(path=f"{SHOTS}/{username}-{name}.png", full_page=True)
            wide = page.evaluate(
                """() => [...document.querySelectorAll("body *")]
                    .filter(e => e.getBoundingClientRect().right > innerWidth + 1)
                    .filter(e => {
                        for (let a = e.parentElement; a; a = a.parentElement) {
                            if (getComputedStyle(a).overflowX !== "visible") return false;
                        }
                        return true;
                    })
                    .slice(0, 5).map(e => e.tagName + "." + e.className)"""
            )
            assert widths[0] <= widths[1], f"{path} scrolls sideways at {viewport}: {wide}"
            problems = page_checks.all_problems(page)
            axe = page_checks.axe_violations(page)
            if axe:
                problems["axe"] = axe
            if problems:
                grammar[path] = problems
            # Every tab of the page too (and the pages the tabs lead to): all fit.
            for tab in page.evaluate(TAB_LINKS):
                if tab not in seen:
                    seen.add(tab)
                    todo.append(tab)
        if username != "judy":  # a judge's pages have no tabs
            assert any("tab=" in path for path in seen - listed), "no tab was followed"
        assert grammar == {}, "\n".join(f"{p}: {v}" for p, v in grammar.items())
        assert console.problems() == []
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_coordinator_reaches_settings_and_the_pool(browser, live_server, console, world, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, "cora")
        page.goto(reverse("judging:collection_detail", args=[world["coll"].slug]))
        tools = page.locator("nav.tool-grid")  # the coordinator's tools, grouped (issue 34)
        tools.get_by_role("link", name="Settings", exact=True).click()
        expect(page.locator("h1")).to_have_text("Collection settings")
        go_back(page, re.compile(r"^Phone-sized collection"))
        tools.get_by_role("link", name="Pool", exact=True).click()
        expect(page.locator("h1")).to_have_text("Judging pool")
        expect(page.locator("#pool tbody tr")).to_have_count(12)
        page.click("details.pool-filters summary")  # the filters fold away (page grammar)
        page.fill("input[name=query]", "q2")
        page.check("input[name=unjudged]")
        page.click("button:has-text('Filter')")
        expect(page.locator("#pool tbody tr")).to_have_count(4)
        expect(page.locator("#pool tbody tr").first).to_have_attribute(
            "data-pair", "q2/doc-with-a-long-identifier-000"
        )
        assert page.evaluate(
            "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
        )
        assert console.problems() == []
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_thin_topics_greyed_out_with_a_note_above_the_chart(
    browser, live_server, console, world, viewport
):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, "cora")
        page.goto(reverse("metrics:difficulty", args=[world["coll"].slug]))
        page.click("a:text-is('Box plot')")  # the table and the box plot are tabs
        expect(page.locator("svg.chart-boxes:visible")).to_be_visible()
        note = page.locator("[data-thin-note]")
        expect(note).to_contain_text("2 of 2 queries are too thin to standardize against")
        assert (
            note.bounding_box()["y"] < page.locator("svg.chart-boxes:visible").bounding_box()["y"]
        )
        assert page.locator("svg.chart-boxes:visible .chart-box.is-thin").count() == 2
        # The chart fits what the screen leaves under the note: the page does not scroll.
        assert page.evaluate("document.documentElement.scrollHeight <= innerHeight")
        page.click("a:text-is('Table')")
        expect(page.locator("svg.chart-boxes")).to_have_count(0)
        row = page.locator("tr[data-query='q1']")
        expect(row).to_have_class("is-thin")
        expect(row.locator("[data-thin-reason]")).to_contain_text(
            "only 4 judged documents"
        )  # q1: 4 graded through the service
        expect(row.locator("[data-field=pool]")).to_have_text("4")
        color = row.locator("th").evaluate("e => getComputedStyle(e).color")
        assert color == "rgb(95, 103, 120)"  # --muted
        assert console.problems() == []
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_settings_number_fields_and_checkbox_are_styled(browser, live_server, world, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        log_in(page, "cora")
        url = reverse("metrics:collection_update", args=[world["coll"].slug])
        page.goto(url + "?tab=aggregation")  # a select and four number fields
        style = """e => { const s = getComputedStyle(e);
            return [s.borderTopLeftRadius, s.paddingLeft, s.borderTopColor, s.fontSize]; }"""
        text_like = page.locator("form.stacked-form textarea, form.stacked-form select").first
        numbers = page.locator("input[type=number]")
        assert numbers.count() >= 2
        for i in range(numbers.count()):
            assert numbers.nth(i).evaluate(style) == text_like.evaluate(style)
        page.goto(url + "?tab=visibility")  # publication's checkboxes
        box = page.locator("input[type=checkbox]").first
        size = box.bounding_box()
        assert size["width"] >= 19 and size["height"] >= 19
        assert box.evaluate("e => getComputedStyle(e).accentColor") == "rgb(36, 84, 197)"
        label = page.locator(f"label[for='{box.get_attribute('id')}']").bounding_box()
        assert label["x"] > size["x"]  # the box comes before its label, on one line
        assert abs((label["y"] + label["height"] / 2) - (size["y"] + size["height"] / 2)) < 8
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_versus_b_names_the_baseline(browser, live_server, world, viewport):
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        log_in(page, "cora")  # teams see no comparison before publication (issue 32)
        one, two, _three = Run.objects.order_by("pk")
        page.goto(reverse("metrics:compare", args=[world["coll"].slug]))
        expect(page.locator("label:has-text('Run B (baseline)')")).to_be_visible()
        page.goto(reverse("metrics:compare", args=[world["coll"].slug]) + f"?a={two.pk}&b={one.pk}")
        expect(page.locator("[data-baseline]")).to_have_text(
            f"Baseline: {one.tag} (run B). Every difference below is run − {one.tag}."
        )
        expect(page.locator("#result-title")).to_contain_text(f"against baseline {one.tag}")
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_settings_tabs_save_and_refuse_on_their_own_tab(
    browser, live_server, console, world, viewport
):
    """One form a tab: saved, it comes back to its tab; refused, its tab shows the errors."""
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, "cora")
        page.goto(reverse("metrics:collection_update", args=[world["coll"].slug]))
        settings_tabs = page.locator("nav[aria-label=Settings]")
        expect(settings_tabs.locator("[aria-current=page]")).to_have_text("Measures")
        settings_tabs.get_by_role("link", name="Visibility").click()
        expect(settings_tabs.locator("[aria-current=page]")).to_have_text("Visibility")
        assert page.locator("#settings-form").count() == 0  # only the chosen tab's form
        # The help is behind a "?" beside its label, and opens in place.
        help_text = page.locator("#score-visibility .explain-body").nth(1)
        expect(help_text).to_be_hidden()
        page.click("summary[aria-label='About What teams see before the judgments are published']")
        expect(help_text).to_contain_text("five one-document runs")
        page.fill("input[name=runs_per_day]", "3")
        page.click("[data-primary]")  # the page top's button submits the tab's form
        expect(page.locator(".messages")).to_contain_text(
            "Score visibility, budget and publication saved."
        )
        expect(settings_tabs.locator("[aria-current=page]")).to_have_text("Visibility")
        assert page.url.endswith("?tab=visibility")
        assert page.input_value("input[name=runs_per_day]") == "3"
        page.fill("input[name=public_share]", "2")
        page.evaluate("document.getElementById('score-visibility').noValidate = true")
        page.click("[data-primary]")  # the server refuses it (the browser would, first)
        expect(page.locator(".form-errors")).to_contain_text("Nothing was changed.")
        expect(settings_tabs.locator("[aria-current=page]")).to_have_text("Visibility")
        problems = page_checks.all_problems(page)
        problems.pop("length", None)  # the error list may take the form past one screen
        assert problems == {}
        # The pooling tab still fits with the strategy that shows the most parameters.
        settings_tabs.get_by_role("link", name="Pooling").click()
        expect(settings_tabs.locator("[aria-current=page]")).to_have_text("Pooling")
        page.select_option("#pooling-policy select[name=strategy]", "llm-check")
        expect(page.locator("#pooling-policy [data-param=audit_percent]")).to_be_visible()
        assert page_checks.all_problems(page) == {}
        assert console.problems() == []
    finally:
        context.close()


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_a_tab_bar_that_scrolls_says_so_and_shows_the_current_tab(
    browser, live_server, console, world, viewport
):
    """The metrics tab bar on a phone fades where tabs are out of view (issue 41)."""
    context = browser.new_context(base_url=live_server.url, viewport=viewport)
    try:
        page = context.new_page()
        page.on("pageerror", lambda error: console.page_errors.append(str(error)))
        log_in(page, "cora")
        bar = page.locator("nav.tabs-line[aria-label='Runs and scores']")
        page.goto(reverse("metrics:leaderboard", args=[world["coll"].slug]))
        scrolls = bar.evaluate("b => b.scrollWidth > b.clientWidth + 1")
        assert scrolls == (viewport is PHONE)
        if not scrolls:
            assert bar.get_attribute("data-more") is None
            assert bar.evaluate("b => getComputedStyle(b).maskImage") == "none"
            return
        expect(bar).to_have_attribute("data-more", "end")
        assert "gradient" in bar.evaluate("b => getComputedStyle(b).maskImage")
        bar.evaluate("b => b.scrollTo(b.scrollWidth, 0)")
        expect(bar).to_have_attribute("data-more", "start")
        # The current tab, last in the bar, is scrolled into view when the page opens.
        page.goto(reverse("metrics:collection_update", args=[world["coll"].slug]))
        current = bar.locator("[aria-current=page]").bounding_box()
        shown = bar.bounding_box()
        assert (
            shown["x"] <= current["x"]
            and current["x"] + current["width"] <= shown["x"] + (shown["width"])
        )
        expect(bar).to_have_attribute("data-more", re.compile(r"^start"))
        assert console.problems() == []
    finally:
        context.close()
