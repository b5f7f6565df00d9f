"""Server-rendered SVG charts: per-query bars, sorted deltas and box plots.

Pure functions (no Django, no JavaScript, no chart library): each returns one ``<svg>``
element as a string, ready to be marked safe and embedded in a page. Every piece of text
is XML-escaped here, so labels taken from user data (query ids, run tags) cannot inject
markup. Colours come from CSS classes (``graded.css``) with SVG presentation attributes as
fall-backs; nothing uses a ``style`` attribute, which the Content-Security-Policy forbids.
Every mark carries a ``<title>`` child, which browsers show as a tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from judging import chart_text
from judging.chart_text import fit, text_width

__all__ = [
    "BoxGroup",
    "bar_chart",
    "box_plot",
    "box_stats",
    "delta_chart",
    "for_screens",
    "line_chart",
    "nice_ticks",
]

_FONT = 12
_PAD_LEFT = 52
_PAD_RIGHT = 16
_PAD_TOP = 14
_PAD_BOTTOM = 34


def _e(text: object) -> str:
    """Escape text for XML content and double-quoted attributes."""
    return escape(str(text), quote=True)


def _n(value: float) -> str:
    """Format a coordinate compactly (two decimals, no trailing zeros)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in {"-0", ""} else text


def _fmt(value: float | None, digits: int = 4) -> str:
    """Format a data value for a tooltip; None or NaN reads "not scored"."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "not scored"
    return f"{value:.{digits}f}"


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Return about ``count`` round tick values, the first <= ``low`` and the last >= ``high``."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0, 1.0]
    if high <= low:
        high = low + 1.0
    raw = (high - low) / max(1, count)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(low / step + 1e-9)
    last = math.ceil(high / step - 1e-9)
    return [round(i * step, 10) for i in range(first, last + 1)]


def _tick_label(value: float) -> str:
    """Format a tick value without needless digits."""
    return f"{value:.3f}".rstrip("0").rstrip(".") if value else "0"


#: The width of a chart drawn for a desk and for a phone (``for_screens``): at 360 units in
#: a phone's ~340-366 px column, 12-unit text renders at 11 px or more.
WIDE, NARROW = 880, 360

#: Below this width a chart is drawn for a narrow screen: fewer ticks, shorter labels.
_NARROW_BELOW = 600


def for_screens(draw: Callable[[int], str]) -> str:
    """Return a chart drawn for a desk (``WIDE``) and a phone (``NARROW``).

    See :func:`judging.chart_text.for_screens`.
    """
    return chart_text.for_screens(draw, wide=WIDE, narrow=NARROW)


def _svg_open(width: int, height: int, title: str, css_class: str, desc: str = "") -> list[str]:
    """Return the opening of an accessible, responsive SVG with a title and description."""
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {_e(css_class)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'font-family="system-ui, sans-serif" font-size="{_FONT}">',
        f"<title>{_e(title)}</title>",
    ]
    if desc:
        parts.append(f"<desc>{_e(desc)}</desc>")
    return parts


def _y_axis(
    ticks: list[float], y: Callable[[float], float], left: float, right: float, label: str = ""
) -> list[str]:
    """Return horizontal grid lines with tick labels, and an optional axis label."""
    parts = ['<g class="chart-grid">']
    for tick in ticks:
        ty = y(tick)
        parts.append(
            f'<line x1="{_n(left)}" x2="{_n(right)}" y1="{_n(ty)}" y2="{_n(ty)}" '
            'stroke="#dde1e8" stroke-width="1"/>'
            f'<text x="{_n(left - 6)}" y="{_n(ty + 4)}" text-anchor="end" '
            f'class="chart-tick" fill="#5f6778">{_e(_tick_label(tick))}</text>'
        )
    parts.append("</g>")
    if label:
        mid = (y(ticks[0]) + y(ticks[-1])) / 2
        # The title runs along the axis: shortened to the axis' length so that it is never
        # cut off at the top or bottom of the picture (issue 34, item 5); full in <title>.
        room = abs(y(ticks[0]) - y(ticks[-1])) + 16
        parts.append(
            f'<text class="chart-axis-label" fill="#4a5366" text-anchor="middle" '
            f'transform="translate(12 {_n(mid)}) rotate(-90)">{_e(fit(label, room, _FONT))}'
            f"<title>{_e(label)}</title></text>"
        )
    return parts


def _value_range(values: np.ndarray, *, unit: bool) -> tuple[float, float]:
    """Return the plotted range: always including 0, and [0, 1] for unit-interval data."""
    finite = values[np.isfinite(values)]
    low = min(0.0, float(finite.min())) if finite.size else 0.0
    high = max(0.0, float(finite.max())) if finite.size else 1.0
    if unit and low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    if high == low:
        high = low + 1.0
    return low, high


def bar_chart(
    labels: Sequence[str],
    values: Sequence[float | None],
    *,
    title: str,
    value_label: str = "",
    notes: Sequence[str] | None = None,
    flagged: Sequence[bool] | None = None,
    flag_text: str = "flagged",
    width: int = WIDE,
    height: int = 260,
) -> str:
    """Return a bar chart of one value per label (e.g. per-query scores), in the given order.

    ``None``/NaN values leave a gap marked with a small cross. ``flagged`` bars (for example
    queries with thin judgments) get the ``chart-bar-flagged`` class and ``flag_text`` in
    their tooltip. ``notes`` add a line (e.g. the query text) to each tooltip.
    """
    n = len(labels)
    vals = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    if vals.size != n:
        raise ValueError(f"{n} labels but {vals.size} values")
    low, high = _value_range(vals, unit=True)
    ticks = nice_ticks(low, high)
    low, high = min(low, ticks[0]), max(high, ticks[-1])
    left, right = _PAD_LEFT, width - _PAD_RIGHT
    top, bottom = _PAD_TOP, height - _PAD_BOTTOM

    def y(v: float) -> float:
        return bottom - (v - low) / (high - low) * (bottom - top)

    parts = _svg_open(width, height, title, "chart-bars", f"{n} bars; {value_label}")
    parts += _y_axis(ticks, y, left, right, value_label)
    slot = (right - left) / max(1, n)
    bar = max(1.0, slot * 0.78)
    zero = y(0.0)
    show_labels = n <= 40
    # Every ``step``-th label, so that no two labels overlap (each is ≤ 8 characters).
    widest = max((text_width(_short(label), _FONT) for label in labels), default=0.0)
    step = max(1, math.ceil((widest + 4) / slot)) if n else 1
    parts.append('<g class="chart-marks">')
    for i, label in enumerate(labels):
        x = left + i * slot + (slot - bar) / 2
        note = f" — {notes[i]}" if notes else ""
        is_flagged = bool(flagged[i]) if flagged is not None else False
        flag = f" ({flag_text})" if is_flagged else ""
        tip = f"<title>{_e(label)}{_e(note)}: {_e(_fmt(vals[i]))}{_e(flag)}</title>"
        if math.isnan(vals[i]):
            cx = x + bar / 2
            parts.append(
                f'<g class="chart-missing"><path d="M{_n(cx - 3)} {_n(zero - 3)}l6 6m0 -6l-6 6" '
                f'stroke="#6b7385" stroke-width="1.5"/>{tip}</g>'
            )
            continue
        top_y, bottom_y = sorted((y(vals[i]), zero))
        css = "chart-bar chart-bar-flagged" if is_flagged else "chart-bar"
        fill = "#c27c0e" if is_flagged else "#2454c5"
        parts.append(
            f'<rect class="{css}" x="{_n(x)}" y="{_n(top_y)}" width="{_n(bar)}" '
            f'height="{_n(max(bottom_y - top_y, 1.5))}" fill="{fill}">{tip}</rect>'
        )
        if show_labels and i % step == 0:
            parts.append(
                f'<text x="{_n(x + bar / 2)}" y="{_n(bottom + 14)}" text-anchor="middle" '
                f'class="chart-tick" fill="#5f6778">{_e(_short(label))}</text>'
            )
    parts.append("</g>")
    parts.append(
        f'<line class="chart-zero" x1="{left}" x2="{right}" y1="{_n(zero)}" y2="{_n(zero)}" '
        'stroke="#1c2230" stroke-width="1"/>'
    )
    if not show_labels:
        parts.append(
            f'<text x="{_n((left + right) / 2)}" y="{_n(bottom + 18)}" text-anchor="middle" '
            f'class="chart-tick" fill="#5f6778">{n} queries (hover a bar for its id)</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _short(label: str, limit: int = 8) -> str:
    """Shorten an axis label to ``limit`` characters."""
    return label if len(label) <= limit else label[: limit - 1] + "…"


def delta_chart(
    labels: Sequence[str],
    deltas: Sequence[float],
    *,
    title: str,
    a_name: str,
    b_name: str,
    width: int = WIDE,
    height: int = 240,
) -> str:
    """Return the per-query differences ``a - b`` as bars sorted from largest to smallest.

    Bars above the zero line are queries ``a_name`` won (class ``chart-win``), below it
    queries it lost (``chart-loss``); ties sit on the line (``chart-tie``).
    """
    vals = np.asarray(deltas, dtype=float)
    if vals.size != len(labels):
        raise ValueError(f"{len(labels)} labels but {vals.size} deltas")
    order = np.argsort(-vals, kind="stable")
    n = int(vals.size)
    low = min(0.0, float(vals.min())) if n else 0.0
    high = max(0.0, float(vals.max())) if n else 0.0
    if high - low < 1e-9:
        low, high = -0.05, 0.05
    ticks = nice_ticks(low, high, 5)
    low, high = ticks[0], ticks[-1]
    left, right = _PAD_LEFT, width - _PAD_RIGHT
    top, bottom = _PAD_TOP + 16, height - _PAD_BOTTOM

    def y(v: float) -> float:
        return bottom - (v - low) / (high - low) * (bottom - top)

    parts = _svg_open(
        width,
        height,
        title,
        "chart-deltas",
        f"{n} queries sorted by {a_name} minus {b_name}; above the line {a_name} is better.",
    )
    parts += _y_axis(ticks, y, left, right, f"{_short(a_name, 14)} − {_short(b_name, 14)}")
    slot = (right - left) / max(1, n)
    bar = max(1.0, slot * 0.8)
    zero = y(0.0)
    parts.append('<g class="chart-marks">')
    for rank, i in enumerate(order):
        d = float(vals[i])
        x = left + rank * slot + (slot - bar) / 2
        if d > 1e-12:
            css, fill, word = "chart-win", "#2e8b57", f"{a_name} better"
        elif d < -1e-12:
            css, fill, word = "chart-loss", "#b3261e", f"{b_name} better"
        else:
            css, fill, word = "chart-tie", "#8a93a6", "tie"
        top_y, bottom_y = sorted((y(d), zero))
        tip = f"<title>{_e(labels[i])}: {_e(f'{d:+.4f}')} ({_e(word)})</title>"
        parts.append(
            f'<rect class="chart-bar {css}" x="{_n(x)}" y="{_n(top_y)}" width="{_n(bar)}" '
            f'height="{_n(max(bottom_y - top_y, 1.0))}" fill="{fill}">{tip}</rect>'
        )
    parts.append("</g>")
    half = (right - left) / 2 - 8  # the two notes above the chart never meet
    parts.append(
        f'<line class="chart-zero" x1="{left}" x2="{right}" y1="{_n(zero)}" y2="{_n(zero)}" '
        'stroke="#1c2230" stroke-width="1.25"/>'
    )
    parts.append(
        f'<text x="{_n(left)}" y="{_PAD_TOP}" class="chart-note" fill="#237049">'
        f"{_e(fit(f'▲ above the line: {a_name} better', half, _FONT))}</text>"
        f'<text x="{_n(right)}" y="{_PAD_TOP}" text-anchor="end" class="chart-note" '
        f'fill="#b3261e">{_e(fit(f"▼ below the line: {b_name} better", half, _FONT))}</text>'
        f'<text x="{_n((left + right) / 2)}" y="{_n(bottom + 18)}" text-anchor="middle" '
        f'class="chart-tick" fill="#5f6778">{n} queries, largest difference first</text>'
    )
    parts.append("</svg>")
    return "".join(parts)


@dataclass(frozen=True)
class BoxStats:
    """Five-number summary with Tukey whiskers (1.5 IQR) and the points beyond them."""

    n: int
    low: float
    q1: float
    median: float
    q3: float
    high: float
    outliers: tuple[float, ...]


def box_stats(values: Sequence[float]) -> BoxStats | None:
    """Summarise the finite ``values`` for a box plot; None when there are none."""
    v = np.asarray(values, dtype=float)
    v = np.sort(v[np.isfinite(v)])
    if not v.size:
        return None
    q1, median, q3 = (float(x) for x in np.percentile(v, [25, 50, 75]))
    reach = 1.5 * (q3 - q1)
    inside = v[(v >= q1 - reach) & (v <= q3 + reach)]
    outliers = tuple(float(x) for x in v[(v < q1 - reach) | (v > q3 + reach)])
    return BoxStats(int(v.size), float(inside[0]), q1, median, q3, float(inside[-1]), outliers)


@dataclass(frozen=True)
class BoxGroup:
    """One row of a box plot: a label, its values and an optional note for the tooltip."""

    label: str
    values: Sequence[float]
    note: str = ""
    annotation: str = ""
    muted: bool = False  # drawn greyed out (e.g. a query whose pool is too thin)


def box_plot(
    groups: Sequence[BoxGroup],
    *,
    title: str,
    value_label: str = "",
    zero_line: bool = True,
    width: int = WIDE,
    row_height: int = 26,
    label_width: int | None = None,
    annotation_label: str = "",
) -> str:
    """Return horizontal box plots, one row per group, on a shared value axis.

    Boxes span the quartiles with the median marked; whiskers reach the furthest values
    within 1.5 IQR; points beyond are drawn as circles. A dashed zero line (the random
    reranker for sNDCG) is drawn when ``zero_line`` is true. Groups without values show
    "no defined scores". Each group's ``annotation`` is written at the right, in a column
    headed ``annotation_label``. Narrower than 600 units (a phone's drawing), the labels
    column, the labels and the ticks are fewer and shorter; ``label_width`` overrides.
    """
    narrow = width < _NARROW_BELOW
    if label_width is None:
        label_width = 64 if narrow else 120
    summaries = [box_stats(g.values) for g in groups]
    finite = [x for g in groups for x in np.asarray(g.values, dtype=float) if math.isfinite(x)]
    low = min([0.0, *finite]) if finite else -1.0
    high = max([0.0, *finite]) if finite else 1.0
    if high - low < 0.5:
        low, high = min(low, -0.25), max(high, 0.25)
    ticks = nice_ticks(low, high, 4 if narrow else 6)
    low, high = ticks[0], ticks[-1]
    annotated = any(g.annotation for g in groups)
    left, right = label_width, width - _PAD_RIGHT - ((44 if narrow else 64) if annotated else 0)
    top = _PAD_TOP + (8 if annotated else 0)
    height = top + row_height * max(1, len(groups)) + _PAD_BOTTOM

    def x(v: float) -> float:
        return left + (v - low) / (high - low) * (right - left)

    parts = _svg_open(
        width, height, title, "chart-boxes", f"{len(groups)} rows; {value_label}".strip("; ")
    )
    bottom = top + row_height * max(1, len(groups))
    parts.append('<g class="chart-grid">')
    for tick in ticks:
        tx = x(tick)
        parts.append(
            f'<line x1="{_n(tx)}" x2="{_n(tx)}" y1="{top}" y2="{bottom}" stroke="#dde1e8"/>'
            f'<text x="{_n(tx)}" y="{bottom + 14}" text-anchor="middle" class="chart-tick" '
            f'fill="#5f6778">{_e(_tick_label(tick))}</text>'
        )
    parts.append("</g>")
    if value_label:
        parts.append(
            f'<text x="{_n((left + right) / 2)}" y="{bottom + 29}" text-anchor="middle" '
            f'class="chart-axis-label" fill="#4a5366">'
            f"{_e(fit(value_label, width - 8, _FONT))}</text>"
        )
    if annotated and annotation_label:
        parts.append(
            f'<text x="{width - _PAD_RIGHT}" y="{top - 6}" text-anchor="end" '
            f'class="chart-annotation" fill="#5f6778">{_e(annotation_label)}</text>'
        )
    if zero_line:
        parts.append(
            f'<line class="chart-zero" x1="{_n(x(0.0))}" x2="{_n(x(0.0))}" y1="{top - 4}" '
            f'y2="{bottom}" stroke="#b3261e" stroke-width="1.25" stroke-dasharray="4 3"/>'
        )
    parts.append('<g class="chart-marks">')
    box_h = row_height * 0.56
    for row, (group, stats_) in enumerate(zip(groups, summaries, strict=True)):
        cy = top + row * row_height + row_height / 2
        note = f" — {group.note}" if group.note else ""
        parts.append(
            f'<text x="{left - 8}" y="{_n(cy + 4)}" text-anchor="end" class="chart-label" '
            f'fill="{"#5f6778" if group.muted else "#1c2230"}">'
            f"{_e(_short(group.label, 8 if narrow else 16))}"
            f"<title>{_e(group.label)}{_e(note)}</title></text>"
        )
        if group.annotation:
            parts.append(
                f'<text x="{width - _PAD_RIGHT}" y="{_n(cy + 4)}" text-anchor="end" '
                f'class="chart-annotation" fill="#4a5366">{_e(group.annotation)}</text>'
            )
        if stats_ is None:
            parts.append(
                f'<text x="{_n(left + 6)}" y="{_n(cy + 4)}" class="chart-tick" fill="#5f6778">'
                "no defined scores</text>"
            )
            continue
        tip = (
            f"<title>{_e(group.label)}{_e(note)}: n={stats_.n}, min {_fmt(stats_.low)}, "
            f"Q1 {_fmt(stats_.q1)}, median {_fmt(stats_.median)}, Q3 {_fmt(stats_.q3)}, "
            f"max {_fmt(stats_.high)}"
            + (f", {len(stats_.outliers)} outlier(s)" if stats_.outliers else "")
            + "</title>"
        )
        y0 = cy - box_h / 2
        muted = ' is-thin" opacity="0.35' if group.muted else ""
        parts.append(
            f'<g class="chart-box{muted}">{tip}'
            f'<line x1="{_n(x(stats_.low))}" x2="{_n(x(stats_.high))}" y1="{_n(cy)}" '
            f'y2="{_n(cy)}" stroke="#4a5366"/>'
            f'<line x1="{_n(x(stats_.low))}" x2="{_n(x(stats_.low))}" y1="{_n(cy - 5)}" '
            f'y2="{_n(cy + 5)}" stroke="#4a5366"/>'
            f'<line x1="{_n(x(stats_.high))}" x2="{_n(x(stats_.high))}" y1="{_n(cy - 5)}" '
            f'y2="{_n(cy + 5)}" stroke="#4a5366"/>'
            f'<rect class="chart-box-body" x="{_n(x(stats_.q1))}" y="{_n(y0)}" '
            f'width="{_n(max(x(stats_.q3) - x(stats_.q1), 1.0))}" height="{_n(box_h)}" '
            'fill="#e8eefb" stroke="#2454c5"/>'
            f'<line class="chart-median" x1="{_n(x(stats_.median))}" '
            f'x2="{_n(x(stats_.median))}" y1="{_n(y0)}" y2="{_n(y0 + box_h)}" '
            'stroke="#1c2230" stroke-width="2"/>'
        )
        for value in stats_.outliers:
            parts.append(
                f'<circle class="chart-outlier" cx="{_n(x(value))}" cy="{_n(cy)}" r="2.5" '
                'fill="none" stroke="#4a5366"/>'
            )
        parts.append("</g>")
    parts.append("</g></svg>")
    return "".join(parts)


def line_chart(
    series: Sequence[tuple[str, Sequence[tuple[float, float]]]],
    *,
    title: str,
    x_label: str,
    y_label: str,
    width: int = 640,
    height: int = 320,
) -> str:
    """Return an SVG of one line per named series of ``(x, y)`` points, with a legend.

    Points with a non-finite ``y`` are left out. Line colours come from CSS classes
    ``chart-line-0`` … ``chart-line-5`` (with stroke attributes as fall-backs).
    """
    palette = ("#1f5fbf", "#c2410c", "#15803d", "#7e22ce", "#b91c1c", "#0e7490")
    points = [
        (name, [(x, y) for x, y in pts if math.isfinite(x) and math.isfinite(y)])
        for name, pts in series
    ]
    xs = [x for _, pts in points for x, _ in pts] or [0.0, 1.0]
    ys = [y for _, pts in points for _, y in pts] or [0.0, 1.0]
    y_ticks = nice_ticks(min(0.0, min(ys)), max(1.0, max(ys)))
    x_ticks = nice_ticks(min(0.0, min(xs)), max(xs))
    legend = 18 * len(points)
    left, right = _PAD_LEFT, width - _PAD_RIGHT
    top, bottom = _PAD_TOP, height - _PAD_BOTTOM - legend

    def x(value: float) -> float:
        return left + (value - x_ticks[0]) / ((x_ticks[-1] - x_ticks[0]) or 1) * (right - left)

    def y(value: float) -> float:
        return bottom - (value - y_ticks[0]) / ((y_ticks[-1] - y_ticks[0]) or 1) * (bottom - top)

    parts = _svg_open(width, height, title, "chart-lines", f"{y_label} against {x_label}")
    parts += _y_axis(y_ticks, y, left, right, y_label)
    parts.append('<g class="chart-ticks">')
    for tick in x_ticks:
        parts.append(
            f'<text x="{_n(x(tick))}" y="{_n(bottom + 16)}" text-anchor="middle" '
            f'class="chart-tick" fill="#5f6778">{_e(_tick_label(tick))}</text>'
        )
    parts.append(
        f'<text x="{_n((left + right) / 2)}" y="{_n(bottom + 30)}" text-anchor="middle" '
        f'class="chart-axis-label" fill="#4a5366">{_e(x_label)}</text></g>'
    )
    for i, (name, pts) in enumerate(points):
        colour = palette[i % len(palette)]
        path = " ".join(f"{_n(x(px))},{_n(y(py))}" for px, py in pts)
        parts.append(
            f'<polyline class="chart-line-{i % len(palette)}" fill="none" stroke="{colour}" '
            f'stroke-width="2" points="{path}"><title>{_e(name)}</title></polyline>'
        )
        ly = height - legend + 18 * i + 4
        parts.append(
            f'<line x1="{_n(left)}" x2="{_n(left + 24)}" y1="{_n(ly)}" y2="{_n(ly)}" '
            f'stroke="{colour}" stroke-width="3"/>'
            f'<text x="{_n(left + 30)}" y="{_n(ly + 4)}" fill="#1f2430">{_e(name)}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)
