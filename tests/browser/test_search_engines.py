"""Live search pages in real Chromium at desktop and phone size: configure → try → run.

A coordinator creates a configuration against a local fake Elasticsearch (registered by
the operator, loopback explicitly allowed), tries it on three queries, runs it and reads
the snapshot that became a run. The credential never reaches the page.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from judging.models import Membership
from metrics.models import Run, Team
from metrics.search.models import SearchEndpoint
from tests import factories
from tests.browser.test_llm_jobs import VIEWPORTS, log_in
from tests.metrics.search.fake_engine import FakeEngine

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
SECRET = "es-browser-SECRET-1234"


@pytest.fixture
def engine():
    server = FakeEngine()
    yield server
    server.close()


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_configure_try_and_run_a_search_engine(page, console, engine, viewport, monkeypatch):
    monkeypatch.setenv("GRADED_SEARCH_KEY_BROWSER", SECRET)
    coll = factories.collection("energy", name="Energy")
    for qid, text in (("q1", "solar power"), ("q2", "wind"), ("q3", "coal smoke")):
        factories.query(coll, qid, text=text)
    Team.objects.create(collection=coll, name="search-team")
    factories.member(coll, factories.user("cora"), Membership.Role.COORDINATOR)
    endpoint = SearchEndpoint.objects.create(
        name="local-es",
        kind="elasticsearch",
        base_url=engine.url,
        auth="bearer",
        credential_env="GRADED_SEARCH_KEY_BROWSER",
        allowed_private_hosts=["127.0.0.1"],
    )
    endpoint.allowed_collections.add(coll)
    page.set_viewport_size(viewport)
    log_in(page, f"/c/{coll.slug}/search/", "cora")
    expect(page.locator("h1")).to_have_text("Search engines")
    page.fill("input[name=name]", "bm25")
    page.select_option("select[name=team]", label="search-team")
    page.select_option("select[name=endpoint]", label="local-es")
    page.fill("input[name=path]", "/docs/_search")
    page.fill("input[name=depth]", "10")
    page.click("button:has-text('Create configuration')")
    expect(page.locator("h1")).to_contain_text("bm25")
    page.click("button:has-text('Try it on three queries')")
    expect(page.locator(".try-result")).to_have_count(3)
    expect(page.locator(".try-result[data-query=q2] .mapped-ranking li").first).to_contain_text(
        "d2"
    )
    assert SECRET not in page.content()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"the try page scrolls sideways: {width}px"
    page.fill("input[name=tag]", f"bm25-{viewport['width']}")
    page.click("button:has-text('Run it on every query')")
    expect(page.locator("[data-field=status]")).to_have_text("Done", timeout=20_000)
    expect(page.locator("main")).to_contain_text("3 of 3")
    run = Run.objects.get(collection=coll, tag=f"bm25-{viewport['width']}")
    page.click(f"a:has-text('{run.tag}')")
    expect(page.locator("h1")).to_contain_text(run.tag)
    assert console.page_errors == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_compare_two_snapshots_in_the_browser(page, console, engine, viewport):
    """The diff page: the two newest snapshots, key numbers first, a row per query."""
    from metrics.search import presets, runner, services
    from metrics.search.models import SearchSnapshot

    coll = factories.collection("energy", name="Energy", measures=["nDCG@10"])
    for qid, text in (("q1", "solar power"), ("q2", "wind"), ("q3", "coal smoke")):
        factories.query(coll, qid, text=text)
    team = Team.objects.create(collection=coll, name="search-team")
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    endpoint = SearchEndpoint.objects.create(
        name="local-es",
        kind="elasticsearch",
        base_url=engine.url,
        allowed_private_hosts=["127.0.0.1"],
    )
    endpoint.allowed_collections.add(coll)
    method, _path, template = presets.DEFAULT_REQUESTS[presets.ELASTICSEARCH]
    fields = services.VersionFields(
        endpoint=endpoint, path="/docs/_search", template=template, depth=10, method=method
    )
    configuration = services.configuration_create(
        collection=coll, name="bm25", team=team, fields=fields, user=cora
    )
    tags = []
    for extra in ("", " batteries"):
        if extra:
            services.configuration_change(
                configuration=configuration,
                fields=services.VersionFields(
                    endpoint=endpoint,
                    path="/docs/_search",
                    template={
                        "size": "{{k}}",
                        "query": {"match": {"body": "{{query_text}}" + extra}},
                    },
                    depth=10,
                ),
                user=cora,
            )
        snap = services.snapshot_start(configuration=configuration, user=cora)
        runner.work(SearchSnapshot.objects.get(pk=snap.pk))
        tags.append(snap.tag)
    from judging import services as judging_services

    judge = factories.human_judge(factories.user("jo"))
    factories.member(coll, judge.user)
    for qid, docno, grade in (("q1", "d1", 3), ("q1", "d5", 2), ("q2", "d2", 2)):
        judging_services.judgment_record(
            judge=judge,
            query=coll.queries.get(external_id=qid),
            document=coll.documents.get(external_id=docno),
            grade=grade,
        )
    page.set_viewport_size(viewport)
    log_in(page, f"/c/{coll.slug}/search/", "cora")
    page.click("a:has-text('Compare two snapshots')")
    expect(page.locator("h1")).to_have_text("Compare snapshots")
    expect(page.locator("#diff-title")).to_contain_text(f"{tags[1]} against {tags[0]}")
    expect(page.locator("[data-diff-numbers]")).to_be_visible()
    expect(page.locator("#snapshot-diff tbody tr")).to_have_count(3)
    entered = page.locator("#snapshot-diff tr[data-query=q3] [data-entered]")
    expect(entered).to_contain_text("d5")  # "batteries" brought it into coal smoke's list
    expect(entered).to_contain_text("unjudged")  # no grade yet, and the page says so
    width = page.evaluate("document.documentElement.scrollWidth")
    wide = page.evaluate("""() => [...document.querySelectorAll('main *')].filter(
        e => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 8).map(
        e => e.tagName + '.' + e.className + ' ' + Math.round(e.getBoundingClientRect().right))""")
    assert width <= viewport["width"], f"the diff page scrolls sideways: {width}px {wide}"
    assert console.page_errors == []


@pytest.mark.parametrize("viewport", VIEWPORTS)
def test_schedule_a_configuration_and_read_its_alert(page, console, engine, viewport, monkeypatch):
    """Set a schedule (a refused cron named at its field), then read the alert it raised."""
    from datetime import timedelta

    from metrics.schedules.models import ScheduleCheck
    from tests.metrics.schedules import conftest as schedules
    from tests.metrics.search import fake_engine

    coll = factories.collection("energy", name="Energy", measures=["nDCG@10"])
    for qid, (text, _grades) in schedules.QUERIES.items():
        factories.query(coll, qid, text=text)
    team = Team.objects.create(collection=coll, name="search-team")
    cora = factories.user("cora", email="cora@example.org")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    endpoint = SearchEndpoint.objects.create(
        name="local-es",
        kind="elasticsearch",
        base_url=engine.url,
        allowed_private_hosts=["127.0.0.1"],
    )
    endpoint.allowed_collections.add(coll)
    from tests.metrics.search.test_engines import configure

    configuration = configure(coll, team, cora, endpoint)
    page.set_viewport_size(viewport)
    log_in(page, f"/c/{coll.slug}/search/{configuration.pk}/", "cora")
    page.click("[data-schedule-link] a")
    expect(page.locator("h1")).to_have_text(f"Schedule of {configuration.name}")
    page.select_option("select[name=frequency]", "cron")
    page.fill("input[name=cron]", "*/5 * * * *")
    page.click("button:has-text('Save the schedule')")
    expect(page.locator(".form-errors")).to_contain_text("more often than every 10 minutes")
    page.fill("input[name=cron]", "30 2 * * 1-5")
    page.click("button:has-text('Save the schedule')")
    expect(page.locator("[data-schedule-state]")).to_contain_text("Runs at 30 2 * * 1-5 (UTC)")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"the schedule page scrolls sideways: {width}px"
    # Two scheduled snapshots in accelerated time, the engine broken between them.
    docs = {d: factories.document(coll, d) for d in fake_engine.CORPUS}
    judge = factories.human_judge(factories.user("jo"))
    factories.member(coll, judge.user)
    from judging import services as judging_services

    for qid, (_text, grades) in schedules.QUERIES.items():
        for docno, grade in grades.items():
            judging_services.judgment_record(
                judge=judge,
                query=coll.queries.get(external_id=qid),
                document=docs[docno],
                grade=grade,
            )
    from metrics.schedules import services as schedule_services

    schedule_services.schedule_set(
        configuration=configuration,
        fields=schedule_services.ScheduleFields(frequency="daily"),
        user=cora,
        now=schedules.T0,
    )
    schedules.walk(schedules.T0, hours=24, step=timedelta(hours=6))
    good = fake_engine.rank
    monkeypatch.setattr(fake_engine, "rank", lambda text, k: good(text, k)[1:])
    schedules.walk(schedules.T0 + timedelta(days=1), hours=24, step=timedelta(hours=6))
    schedules.walk(schedules.T0 + timedelta(days=2), hours=0)
    alert = ScheduleCheck.objects.get(fired=True)
    page.goto(f"{page.url.split('/c/')[0]}/c/{coll.slug}/")
    panel = page.locator("[data-search-alerts]")
    expect(panel).to_contain_text("A drop beyond noise")
    page.click("a:has-text('Every check of the scheduled snapshots')")
    expect(page.locator("h1")).to_have_text("Alerts")
    expect(page.locator(f"[data-check='{alert.pk}']").first).to_contain_text("Alert")
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"the alerts page scrolls sideways: {width}px"
    page.locator(f"[data-check='{alert.pk}'] a:has-text('Compare with')").first.click()
    expect(page.locator("h1")).to_have_text("Compare snapshots")
    assert console.page_errors == []
