"""In-page checks of the page grammar (docs/ui.md, issue 34), run on every page a role reaches.

Each check is JavaScript evaluated in the page (no extra library) and returns a list of
problems, empty when the page passes:

- :func:`overflowing_tables`: a table wider than the box it sits in, unless it keeps its
  first column in view while it scrolls (``.table-sticky``) or is laid out as cards.
- :func:`low_contrast`: text below 4.5:1 against what is behind it, HTML and SVG alike.
  The text colour is the computed ``color`` (``fill`` for SVG text), composited over the
  effective background: for HTML, the ancestors' background colours from the element up
  to an opaque one (white canvas at the end); for SVG text, the last filled shape drawn
  before it whose box contains the text's centre, over the SVG's own HTML background.
  Text inside a closed ``<details>``, hidden or clipped to 1 px (screen-reader only) is
  not shown and not checked.
- :func:`primary_off_screen`: no ``[data-primary]`` element, or the first one not wholly
  within the first screen (the viewport before any scrolling).
- :func:`too_long`: a document taller than the viewport (the page runs past its first
  screen; long lists scroll in their own ``.list-box``, sections sit behind tabs).
- :func:`off_screen`: any element matching a selector that is not wholly within the
  viewport (e.g. the phone card's "✓ Saved", Undo and Back after a grade).
- :func:`axe_violations`: the serious and critical WCAG 2.0/2.1 A and AA violations
  axe-core finds (vendored: ``tests/browser/vendor/axe-core``, version in its first line,
  MPL-2.0), evaluated through the DevTools protocol so that the page keeps its Content
  Security Policy.
"""

from __future__ import annotations

from pathlib import Path

AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
WCAG_AA = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {
    runOnly: {type: "tag", values: tags},
    resultTypes: ["violations"],
  });
  return result.violations
    .filter(v => v.impact === "serious" || v.impact === "critical")
    .map(v => ({
      id: v.id,
      impact: v.impact,
      nodes: v.nodes.slice(0, 4).map(n => n.target.join(" ") + " :: " + n.failureSummary),
    }));
}"""

OVERFLOWING_TABLES = """() => {
  const bad = [];
  for (const table of document.querySelectorAll("table")) {
    if (!table.getClientRects().length) continue;
    if (table.classList.contains("table-sticky")) continue;
    const row = table.querySelector("tbody tr");
    const asCards = table.classList.contains("cards-on-phone");
    if (asCards && row && ["block", "grid"].includes(getComputedStyle(row).display)) continue;
    const box = table.parentElement;
    const room = box.clientWidth;
    if (table.scrollWidth > room + 1 || table.getBoundingClientRect().width > room + 1) {
      bad.push(`${table.id || table.className || "table"}: ${table.scrollWidth} px in ${room} px`);
    }
  }
  return bad;
}"""

LOW_CONTRAST = """(minimum) => {
  const parse = (text) => {
    const m = text.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const p = m[1].split(/[ ,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map(i => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const ratio = (a, b) => {
    const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p);
    return (x + 0.05) / (y + 0.05);
  };
  const htmlBackground = (el) => {
    const layers = [];
    for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
      if (e instanceof SVGElement && !(e instanceof SVGSVGElement)) continue;
      const bg = parse(getComputedStyle(e).backgroundColor);
      if (bg && bg[3] > 0) { layers.push(bg); if (bg[3] >= 1) break; }
    }
    let colour = [255, 255, 255, 1];
    for (const layer of layers.reverse()) colour = over(layer, colour);
    return colour;
  };
  const shapes = "rect, circle, ellipse, polygon, path";
  const svgBackground = (text) => {
    const svg = text.ownerSVGElement;
    const r = text.getBoundingClientRect();
    const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
    let behind = null;
    for (const shape of svg.querySelectorAll(shapes)) {
      if (shape.compareDocumentPosition(text) & Node.DOCUMENT_POSITION_PRECEDING) break;
      const style = getComputedStyle(shape);
      const fill = parse(style.fill);
      if (!fill || style.fill === "none" || style.display === "none") continue;
      const b = shape.getBoundingClientRect();
      if (cx >= b.left && cx <= b.right && cy >= b.top && cy <= b.bottom) {
        const alpha = Number(style.fillOpacity || 1) * Number(style.opacity || 1);
        behind = [fill[0], fill[1], fill[2], alpha];
      }
    }
    const base = htmlBackground(svg);
    return behind ? over(behind, base) : base;
  };
  const shown = (el) => {
    if (!el.getClientRects().length) return false;
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1) return false;
    for (let e = el; e; e = e.parentElement) {
      const s = getComputedStyle(e);
      if (s.visibility === "hidden" || s.display === "none") return false;
      if (Number(s.opacity) === 0) return false;
      if (s.clipPath && s.clipPath !== "none" && e.getBoundingClientRect().width <= 1) return false;
    }
    return true;
  };
  const bad = [];
  const skip = ":not(script):not(style):not(option):not(title):not(desc)";
  const all = document.querySelectorAll("body *" + skip);
  for (const el of all) {
    const own = [...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim());
    if (!own || !shown(el) || el.closest(":disabled")) continue;
    const isSvg = el instanceof SVGElement;
    const style = getComputedStyle(el);
    const ink = parse(isSvg ? style.fill : style.color);
    if (!ink) continue;
    const behind = isSvg ? svgBackground(el) : htmlBackground(el);
    const value = ratio(over(ink, behind), behind);
    if (value < minimum) {
      const words = el.textContent.trim().slice(0, 30);
      const name = `${el.tagName.toLowerCase()}.${el.getAttribute("class") || ""}`;
      bad.push(`${name} “${words}” ${value.toFixed(2)}:1`);
    }
  }
  return bad;
}"""

PRIMARY_OFF_SCREEN = """() => {
  const primary = [...document.querySelectorAll("[data-primary]")]
    .filter(e => e.getClientRects().length);
  if (!primary.length) return ["no [data-primary] action on the page"];
  const r = primary[0].getBoundingClientRect();
  const inside = r.top >= 0 && r.left >= 0 && r.bottom <= innerHeight && r.right <= innerWidth;
  return inside ? [] : [`primary action “${primary[0].textContent.trim().slice(0, 40)}” at ` +
    `${Math.round(r.left)},${Math.round(r.top)}–${Math.round(r.right)},${Math.round(r.bottom)} ` +
    `outside ${innerWidth}×${innerHeight}`];
}"""

OFF_SCREEN = """(selector) => [...document.querySelectorAll(selector)]
  .filter(e => e.getClientRects().length)
  .map(e => [e, e.getBoundingClientRect()])
  .filter(([e, r]) => r.top < 0 || r.left < 0 || r.bottom > innerHeight || r.right > innerWidth)
  .map(([e, r]) => `${e.tagName.toLowerCase()} “${e.textContent.trim().slice(0, 30)}” at ` +
    `${Math.round(r.left)},${Math.round(r.top)}`)"""


TOO_LONG = """() => {
  const height = document.documentElement.scrollHeight;
  const problem = `page is ${height} px tall, the screen ${innerHeight} px`;
  return height > innerHeight + 1 ? [problem] : [];
}"""


FRAMED_BOXES = """() => [...document.querySelectorAll('main *')]
  .filter(e => e.offsetParent !== null && /(auto|scroll)/.test(getComputedStyle(e).overflowY)
    && e.scrollHeight > e.clientHeight + 1)
  .map(e => `${e.tagName.toLowerCase()}.${[...e.classList].join('.')} scrolls up and down ` +
    `by itself (${e.clientHeight} of ${e.scrollHeight} px shown)`)"""


def framed_boxes(page) -> list[str]:
    """Return the boxes in <main> that scroll up and down on their own (a frame in the page).

    Pages scroll like pages (issue 41): a list is as tall as its content and the page
    scrolls; a box of its own is a second scrollbar, and on a phone a list in a frame.
    """
    return page.evaluate(FRAMED_BOXES)


BROKEN_TOKENS = """() => [...document.querySelectorAll('main time')]
  .filter(e => e.offsetParent !== null && e.getClientRects().length > 1)
  .map(e => `moment “${e.textContent.trim()}” breaks over ${e.getClientRects().length} lines`)"""


def broken_tokens(page) -> list[str]:
    """Return the moments (``<time>``, from ``|when``) that wrap onto a second line."""
    return page.evaluate(BROKEN_TOKENS)


def too_long(page) -> list[str]:
    """Return a problem when the document runs past the first screen."""
    return page.evaluate(TOO_LONG)


def overflowing_tables(page) -> list[str]:
    """Return the tables wider than their box (without a sticky first column)."""
    return page.evaluate(OVERFLOWING_TABLES)


def low_contrast(page, minimum: float = 4.5) -> list[str]:
    """Return the texts (HTML and SVG) whose contrast is below ``minimum``."""
    return page.evaluate(LOW_CONTRAST, minimum)


def primary_off_screen(page) -> list[str]:
    """Return a problem when the page's primary action is missing or not on the first screen."""
    return page.evaluate(PRIMARY_OFF_SCREEN)


def off_screen(page, selector: str) -> list[str]:
    """Return the shown elements matching ``selector`` that are not wholly in the viewport."""
    return page.evaluate(OFF_SCREEN, selector)


def axe_violations(page) -> list[dict]:
    """Return the serious and critical WCAG A/AA violations axe finds on the page."""
    if not page.evaluate("typeof axe !== 'undefined'"):
        page.evaluate(AXE.read_text())
    return page.evaluate(RUN_AXE, WCAG_AA)


def all_problems(page, *, primary: bool = True, one_screen: bool = False) -> dict[str, list[str]]:
    """Return every check's problems on the page as loaded (first screen, no scrolling).

    Pages scroll like pages (issue 41), so the length check runs only when ``one_screen``
    asks for it (a page that must fit, such as the judging card's).
    """
    found = {
        "primary": primary_off_screen(page) if primary else [],
        "length": too_long(page) if one_screen else [],
        "tables": overflowing_tables(page),
        "contrast": low_contrast(page),
        "tokens": broken_tokens(page),
    }
    return {name: problems for name, problems in found.items() if problems}
