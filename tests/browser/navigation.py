"""Navigation helpers for the browser tests.

Every page is boosted by htmx, and htmx keeps no history snapshots
(``historyCacheSize: 0``), so *Back* reloads the previous page in full
(``refreshOnHistoryMiss``, templates/base.html). ``page.go_back()`` returns when the
address changes, before that reload has drawn the page: a click right after it could
land on the page being left. :func:`go_back` waits for the page itself.
"""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect


def go_back(page: Page, title: str | re.Pattern[str]) -> None:
    """Go back one page and wait until the page titled ``title`` has loaded."""
    page.go_back()
    expect(page).to_have_title(title)
    page.wait_for_load_state()
