"""Pages that scroll like pages (issue 41): lists use the screen, the page itself scrolls.

On a 390 px phone a list's records fill at least 60 % of the screen once the list is
scrolled to, the header area does not block a wheel scroll, and no list box is taller
than its content; on a desktop the same, for the pages whose list is the page.
"""

from __future__ import annotations

import os

import pytest
from django.urls import reverse

from tests.browser.test_long_pages import _open, _pages, big  # noqa: F401 (fixture)
from tests.browser.test_pages_phone import DESKTOP, PHONE

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SHOTS = os.environ.get("GRADED_SCROLL_SHOTS")

#: Record rows or cards of each page's list, and the tab that shows the list.
LISTS = {
    "difficulty": ("#difficulty tbody tr", None),
    "pool": ("table tbody tr", None),
    "run": ("#per-query tbody tr", "nav[aria-label='Parts of the run'] a:text-is('Queries')"),
    "leaderboard": ("table tbody tr", None),
}

#: Scroll the first record to the top of what can be seen, then measure (JS).
MEASURE = """(sel) => {
  const rows = [...document.querySelectorAll(sel)].filter(r => r.offsetParent !== null);
  if (!rows.length) return {rows: 0, visible: 0, share: 0, boxes: []};
  rows[0].scrollIntoView({block: 'start'});
  const clip = (el) => {
    let top = 0, bottom = innerHeight;
    for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (/(auto|scroll|hidden)/.test(s.overflowY) && p !== document.documentElement
          && p !== document.body) {
        const r = p.getBoundingClientRect();
        top = Math.max(top, r.top); bottom = Math.min(bottom, r.bottom);
      }
    }
    return [top, bottom];
  };
  let visible = 0, px = 0;
  for (const r of rows) {
    const b = r.getBoundingClientRect();
    const [top, bottom] = clip(r);
    if (b.top >= top - 0.5 && b.bottom <= bottom + 0.5) { visible++; px += b.height; }
  }
  const boxes = [...document.querySelectorAll('.list-box')].map(b => ({
    client: b.clientHeight, scroll: b.scrollHeight}));
  return {rows: rows.length, visible, share: px / innerHeight, boxes};
}"""


def _url(coll, name):
    if name == "leaderboard":
        return reverse("metrics:leaderboard", args=[coll.slug])
    return _pages(coll)[name]


def _measure(page, coll, name):
    rows, tab = LISTS[name]
    page.goto(_url(coll, name))
    if tab:
        page.click(tab)
    page.wait_for_load_state("networkidle")
    return page.evaluate(MEASURE, rows)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_lists_use_the_screen_and_the_page_scrolls(browser, live_server, big, viewport):  # noqa: F811
    size = "phone" if viewport is PHONE else "desktop"
    context, page, errors = _open(browser, live_server, viewport)
    problems = []
    try:
        for name in LISTS:
            got = _measure(page, big, name)
            print(f"\n{size} {name}: {got}")
            if SHOTS:
                page.evaluate("scrollTo(0, 0)")
                page.screenshot(path=os.path.join(SHOTS, f"{name}-{size}.png"))
            # A list of more records than a screen holds fills 60 % of it.
            if got["rows"] * 40 > viewport["height"] and got["share"] < 0.6:
                problems.append((name, size, "records fill under 60 %", got))
            # No list box is taller than its content (no half-empty frame).
            for box in got["boxes"]:
                if box["client"] > box["scroll"] + 2:
                    problems.append((name, size, "box taller than its content", box))
            # A wheel over the page's header moves a page longer than the screen.
            if page.evaluate("document.documentElement.scrollHeight <= innerHeight"):
                continue
            page.evaluate("scrollTo(0, 0)")
            page.mouse.move(viewport["width"] / 2, 20)
            page.mouse.wheel(0, 300)
            page.wait_for_timeout(150)
            if page.evaluate("scrollY") == 0:
                problems.append((name, size, "the header blocks scrolling"))
        assert problems == []
        assert errors == []
    finally:
        context.close()
