"""Text on the server-drawn charts: readable colours and labels that never overlap.

Pure functions (no Django), shared by ``judging.charts`` and ``metrics.charts``:

- :func:`contrast` is the WCAG 2.x contrast ratio of two ``#rrggbb`` colours, and
  :func:`ink_for` picks, for a filled shape, the text colour with the most contrast
  against it (the app's ink, white or black). Black or white always reach 4.58:1 or more
  against any opaque colour (the worst background is the one whose luminance sits where
  both ratios are equal, √(1.05 × 0.05) − 0.05), so every label on a cell is readable.
- :func:`spread` moves 1-D label positions (e.g. the y of each line's end label) apart
  until neighbours are at least ``gap`` apart, staying within ``[low, high]`` when there
  is room, keeping the order and moving each label as little as the rule allows.
- :func:`fit` shortens a label to an estimated pixel width (with "…"), for axis titles
  that must stay inside the picture.
- :func:`for_screens` draws a chart twice, for a desk and for a phone, so that no chart
  text is scaled below 11 px on either (issue 41).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

INK = "#1c2230"
WHITE = "#ffffff"
BLACK = "#000000"
#: WCAG AA for normal text.
AA = 4.5
#: Average advance of a character of the UI font at 1 px font size (system-ui sans).
CHAR_EM = 0.6


def _channel(c: int) -> float:
    s = c / 255
    return s / 12.92 if s <= 0.03928 else ((s + 0.055) / 1.055) ** 2.4


def luminance(colour: str) -> float:
    """Return the WCAG relative luminance of ``#rgb`` or ``#rrggbb``."""
    h = colour.lstrip("#")
    if len(h) == 3:
        h = "".join(ch * 2 for ch in h)
    if len(h) != 6:
        raise ValueError(f"not a #rrggbb colour: {colour!r}")
    r, g, b = (int(h[i : i + 2], 16) for i in (0, 2, 4))
    return 0.2126 * _channel(r) + 0.7152 * _channel(g) + 0.0722 * _channel(b)


def contrast(a: str, b: str) -> float:
    """Return the contrast ratio (1–21) between two colours."""
    la, lb = luminance(a), luminance(b)
    hi, lo = max(la, lb), min(la, lb)
    return (hi + 0.05) / (lo + 0.05)


def ink_for(fill: str, choices: Sequence[str] = (INK, WHITE, BLACK)) -> str:
    """Return the text colour among ``choices`` with the most contrast against ``fill``.

    The app's ink comes first and wins ties; black is the fallback that keeps every
    ratio at 4.58:1 or more where neither ink nor white would reach 4.5:1.
    """
    return max(choices, key=lambda c: (contrast(c, fill), c == INK))


def spread(positions: Sequence[float], *, gap: float, low: float, high: float) -> list[float]:
    """Return ``positions`` moved apart so that sorted neighbours are ``gap`` or more apart.

    Labels keep their order. They stay within ``[low, high]`` whenever
    ``(n - 1) × gap`` fits in it; otherwise they are packed from ``low`` at exactly
    ``gap``. An empty list gives an empty list.
    """
    n = len(positions)
    if n == 0:
        return []
    order = sorted(range(n), key=lambda i: (positions[i], i))
    ys = [min(max(positions[i], low), high) for i in order]
    # Push down (towards high) from the first, then up from the last, then down again:
    # each pass keeps the gap, and the second pulls a group back inside ``high``.
    for k in range(1, n):
        ys[k] = max(ys[k], ys[k - 1] + gap)
    if ys[-1] > high and (n - 1) * gap <= high - low:
        ys[-1] = high
        for k in range(n - 2, -1, -1):
            ys[k] = min(ys[k], ys[k + 1] - gap)
    out = [0.0] * n
    for rank, i in enumerate(order):
        out[i] = ys[rank]
    return out


def text_width(text: str, font_size: float) -> float:
    """Return an estimate of ``text``'s width in px at ``font_size``."""
    return len(text) * font_size * CHAR_EM


def fit(text: str, width: float, font_size: float) -> str:
    """Return ``text``, shortened with "…" if its estimated width exceeds ``width``."""
    if text_width(text, font_size) <= width:
        return text
    keep = max(1, int(width / (font_size * CHAR_EM)) - 1)
    return text[:keep].rstrip() + "…"


def for_screens(draw: Callable[[int], str], *, wide: int, narrow: int) -> str:
    """Return a chart drawn at ``wide`` units for a desk and at ``narrow`` for a phone.

    ``draw(width)`` returns one ``<svg>`` (its text escaped); the CSS (``.chart-screens``
    in graded.css) shows the drawing for the screen and hides the other with ``display:
    none``, so neither assistive technology nor find-in-page meets it twice. ``narrow``
    is chosen so that 12-unit text in a phone's 340-366 px column renders at 11 px or
    more; scaling one desk-sized drawing down instead shrinks it to 5-9 px.
    """
    return (
        f'<div class="chart-screens"><div class="chart-wide">{draw(wide)}</div>'
        f'<div class="chart-narrow">{draw(narrow)}</div></div>'
    )
