"""Real Chromium for the browser tests, driven by Playwright's sync API.

Uses Debian's ``/usr/bin/chromium`` (never ``playwright install``). When it is missing the
tests are skipped with the reason shown, except on CI (``CI=true``), where they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

# Playwright's sync API runs an event loop in this thread; Django must still allow ORM calls.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]


@pytest.fixture(scope="session")
def browser() -> Iterator:
    """Start Chromium once per test session."""
    if not CHROMIUM.exists():
        reason = f"{CHROMIUM} not found: install Debian's chromium to run the browser tests"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    playwright = sync_playwright().start()
    browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
    try:
        yield browser
    finally:
        browser.close()
        playwright.stop()


class ConsoleLog:
    """Console messages, page errors and CSP violations seen by one page."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, str]] = []
        self.page_errors: list[str] = []

    def problems(self) -> list[str]:
        """Return errors, warnings about the security policy, and uncaught exceptions."""
        bad = [
            f"{kind}: {text}"
            for kind, text in self.messages
            if kind == "error"
            or "Content Security Policy" in text
            or "Refused to" in text
            or "htmx" in text.lower()
        ]
        return bad + [f"pageerror: {e}" for e in self.page_errors]


CSP_LISTENER = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__cspViolations.push(e.violatedDirective + " " + e.blockedURI);
  console.error("CSP violation: " + e.violatedDirective + " " + e.blockedURI);
});
"""


@pytest.fixture
def browser_context(browser, live_server) -> Iterator:
    """Return a fresh browser context pointed at the live server, JavaScript on."""
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1366, "height": 820})
    context.add_init_script(CSP_LISTENER)
    try:
        yield context
    finally:
        context.close()


@pytest.fixture
def console() -> ConsoleLog:
    """Return an empty console log to attach to pages."""
    return ConsoleLog()


@pytest.fixture
def page(browser_context, console):
    """Return a page whose console messages and errors are recorded."""
    page = browser_context.new_page()
    page.on("console", lambda msg: console.messages.append((msg.type, msg.text)))
    page.on("pageerror", lambda error: console.page_errors.append(str(error)))
    page.set_default_timeout(10_000)
    return page
