"""Inline SVG pictures of judging: agreement heatmap, grade mix, confusion, progress.

Server-side strings, no JavaScript and no CDN; every text is escaped. Each picture is an
``<svg role="img">`` with a ``<title>`` and a ``<desc>`` that states its numbers in words
(the text alternative); pages show the same numbers in tables too. Colours are fixed
attributes (the Content-Security-Policy forbids inline styles).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import date
from html import escape

from judging.chart_text import fit, ink_for, spread, text_width

GRADE_COLOURS = ("#5f6778", "#96590a", "#2764aa", "#237049", "#13693c")  # graded.css --grade-N
FONT = 12


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _n(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


def _open(width: int, height: int, title: str, css: str, desc: str) -> list[str]:
    return [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart {_e(css)}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" '
        f'font-family="system-ui, sans-serif" font-size="{FONT}">',
        f"<title>{_e(title)}</title><desc>{_e(desc)}</desc>",
    ]


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def diverging_colour(value: float) -> str:
    """Return a fill for an agreement value in [-1, 1]: red below 0, white at 0, blue at 1."""
    if math.isnan(value):
        return "#eef0f4"
    v = max(-1.0, min(1.0, value))
    if v >= 0:
        r, g, b = (round(255 - (255 - 36) * v), round(255 - (255 - 84) * v), round(255 - 58 * v))
    else:
        r, g, b = (
            round(255 - (255 - 179) * -v),
            round(255 - (255 - 38) * -v),
            round(255 - 225 * -v),
        )
    return f"#{r:02x}{g:02x}{b:02x}"


def agreement_heatmap(
    names: Sequence[str], matrix: Sequence[Sequence[float]], *, title: str
) -> str:
    """Return a judge × judge heatmap; NaN cells (no common pairs) are grey and say "–"."""
    n = len(names)
    cell, left, top = 52, 120, 96
    width, height = left + cell * n + 16, top + cell * n + 16

    def said(value: float) -> str:
        return "undefined" if math.isnan(value) else f"{value:.2f}"

    desc = "; ".join(
        f"{names[i]} and {names[j]}: {said(matrix[i][j])}"
        for i in range(n)
        for j in range(i + 1, n)
    )
    parts = _open(width, height, title, "chart-heatmap", desc or "Fewer than two judges.")
    for k, name in enumerate(names):
        y = top + k * cell + cell / 2 + 4
        parts.append(
            f'<text x="{left - 8}" y="{_n(y)}" text-anchor="end" fill="#1c2230">'
            f"{_e(_short(name, 16))}<title>{_e(name)}</title></text>"
        )
        x = left + k * cell + cell / 2
        parts.append(
            f'<text x="{_n(x)}" y="{top - 8}" text-anchor="start" fill="#1c2230" '
            f'transform="rotate(-40 {_n(x)} {top - 8})">{_e(_short(name, 14))}</text>'
        )
    for i in range(n):
        for j in range(n):
            value = matrix[i][j]
            x, y = left + j * cell, top + i * cell
            label = "–" if math.isnan(value) else f"{value:.2f}"
            fill = diverging_colour(value)
            ink = ink_for(fill)  # the most contrast against this cell (4.58:1 at worst)
            parts.append(
                f'<g class="heat-cell" data-i="{i}" data-j="{j}"><rect x="{x}" y="{y}" '
                f'width="{cell - 2}" height="{cell - 2}" rx="4" fill="{fill}"/>'
                f'<text x="{_n(x + cell / 2 - 1)}" y="{_n(y + cell / 2 + 4)}" text-anchor="middle" '
                f'fill="{ink}">{_e(label)}</text>'
                f"<title>{_e(names[i])} × {_e(names[j])}: {_e(label)}</title></g>"
            )
    parts.append("</svg>")
    return "".join(parts)


def grade_mix(
    rows: Sequence[tuple[str, Sequence[int]]],
    grade_names: Sequence[str],
    *,
    title: str,
    width: int = 476,
) -> str:
    """Return one horizontal bar per judge, split by the share of each grade 0–4.

    The grades' legend is HTML beside it (:func:`grade_legend`), so that it wraps on a
    narrow screen instead of being cut. Narrower than 476 units (a phone's drawing), the
    names' column is narrower and the names shorter.
    """
    narrow = width < 476
    left, bar, gap, right = (80 if narrow else 120), 22, 8, 16
    inner = width - left - right
    top = 4
    height = top + len(rows) * (bar + gap) + 4
    descs = []
    for name, counts in rows:
        total = sum(counts) or 1
        descs.append(
            f"{name}: "
            + ", ".join(f"grade {g} {round(100 * c / total)}%" for g, c in enumerate(counts))
        )
    parts = _open(width, height, title, "chart-grade-mix", "; ".join(descs) or "No grades yet.")
    for r, (name, counts) in enumerate(rows):
        y = top + r * (bar + gap)
        total = sum(counts)
        parts.append(
            f'<text x="{left - 8}" y="{y + bar / 2 + 4}" text-anchor="end" fill="#1c2230">'
            f"{_e(_short(name, 10 if narrow else 16))}<title>{_e(name)}</title></text>"
        )
        start = 0.0
        for g, count in enumerate(counts):
            if not total or not count:
                continue
            w = inner * count / total
            parts.append(
                f'<rect class="mix-part" data-grade="{g}" x="{_n(left + start)}" y="{y}" '
                f'width="{_n(w)}" height="{bar}" fill="{GRADE_COLOURS[g]}">'
                f"<title>{_e(name)}: grade {g} × {count} "
                f"({round(100 * count / total)}%)</title></rect>"
            )
            start += w
    parts.append("</svg>")
    return "".join(parts)


def grade_legend(grade_names: Sequence[str]) -> str:
    """Return the grades' colours as an HTML list (escaped), for :func:`grade_mix`."""
    items = "".join(
        f'<li><span class="legend-swatch grade-swatch-{g}" aria-hidden="true"></span> '
        f"{g} {_e(name)}</li>"
        for g, name in enumerate(grade_names)
    )
    return f'<ul class="chart-legend">{items}</ul>'


def confusion_matrix(
    a_name: str, b_name: str, counts: Sequence[Sequence[int]], *, title: str
) -> str:
    """Return a 5 × 5 grid: rows are ``a``'s grades, columns ``b``'s, shaded by count."""
    cell, left, top = 48, 110, 70
    width, height = left + 5 * cell + 16, top + 5 * cell + 16
    peak = max((c for row in counts for c in row), default=0) or 1
    total = sum(sum(row) for row in counts)
    same = sum(counts[g][g] for g in range(5))
    desc = f"{total} pairs graded by both; {same} with the same grade. " + "; ".join(
        f"{a_name} {i}, {b_name} {j}: {counts[i][j]}"
        for i in range(5)
        for j in range(5)
        if counts[i][j]
    )
    parts = _open(width, height, title, "chart-confusion", desc)
    parts.append(
        f'<text x="{left + 2.5 * cell}" y="16" text-anchor="middle" fill="#4a5366">'
        f"{_e(_short(b_name, 30))} →</text>"
        f'<text x="12" y="{top + 2.5 * cell}" fill="#4a5366" '
        f'transform="rotate(-90 12 {top + 2.5 * cell})" text-anchor="middle">'
        f"{_e(_short(a_name, 30))} →</text>"
    )
    for g in range(5):
        parts.append(
            f'<text x="{left + g * cell + cell / 2}" y="{top - 8}" text-anchor="middle" '
            f'fill="#1c2230">{g}</text>'
            f'<text x="{left - 10}" y="{top + g * cell + cell / 2 + 4}" text-anchor="end" '
            f'fill="#1c2230">{g}</text>'
        )
    for i in range(5):
        for j in range(5):
            c = counts[i][j]
            shade = c / peak
            fill = diverging_colour(shade) if c else "#f7f8fa"
            outline = ' stroke="#1c2230"' if i == j else ""
            ink = ink_for(fill)  # white on mid-blue was 2.78:1 (issue 34, item 5)
            x, y = left + j * cell, top + i * cell
            parts.append(
                f'<g class="confusion-cell" data-a="{i}" data-b="{j}"><rect x="{x}" y="{y}" '
                f'width="{cell - 2}" height="{cell - 2}" rx="3" fill="{fill}"'
                f"{outline}/>"
                f'<text x="{x + cell / 2 - 1}" y="{y + cell / 2 + 4}" text-anchor="middle" '
                f'fill="{ink}">{c}</text><title>{_e(a_name)} {i}, {_e(b_name)} {j}: {c}</title></g>'
            )
    parts.append("</svg>")
    return "".join(parts)


#: Line (and label text) colours: every one 4.5:1 or more on white.
LINE_COLOURS = ("#2454c5", "#96590a", "#237049", "#b3261e", "#6b3fa0", "#0f6f7c", "#5f6778")


def _day(d: date) -> str:
    return d.isoformat()


def progress_lines(
    series: Sequence[tuple[str, Sequence[tuple[date, int]]]], *, title: str, width: int = 440
) -> str:
    """Return cumulative judgments over days, one line (with dots) per judge.

    The picture is drawn in a ``width`` × 240 ``viewBox`` (440 for a desk, 340 for a
    phone) and scales to its container. Each
    line ends in its judge's name; names are moved apart (:func:`spread`) so that they
    never overlap, and shortened to fit the right margin. The x axis names each distinct
    day once: the first and last day (one label when all judgments fall on one day) and
    a middle day when there is room. Both axes have a title.
    """
    longest = max((len(name) for name, _points in series), default=4)
    most = 150 if width >= 440 else 100  # a phone's drawing keeps more room for the lines
    right = min(most, max(60, int(text_width("m" * min(longest, 18), FONT)) + 14))
    left, top, bottom = 48, 28, 44
    height = 240
    inner_w, inner_h = width - left - right, height - top - bottom
    days = sorted({d for _name, points in series for d, _n in points})
    peak = max((n for _name, points in series for _d, n in points), default=0) or 1
    first = days[0] if days else date.today()
    span = (days[-1] - first).days if days else 0

    def x(d: date) -> float:
        if span == 0:
            return left + inner_w / 2
        return left + inner_w * (d - first).days / span

    def y(n: float) -> float:
        return top + inner_h - inner_h * n / peak

    desc = "; ".join(
        f"{name}: {points[-1][1]} judged by {points[-1][0].isoformat()}"
        for name, points in series
        if points
    )
    parts = _open(width, height, title, "chart-progress", desc or "No judgments yet.")
    parts.append(
        '<text class="chart-axis-label" x="4" y="14" fill="#4a5366">'
        "Pairs judged (cumulative)</text>"
    )
    ticks = sorted({0, round(peak / 2), peak})
    for tick in ticks:
        parts.append(
            f'<line x1="{left}" x2="{left + inner_w}" y1="{_n(y(tick))}" y2="{_n(y(tick))}" '
            'stroke="#dde1e8"/>'
            f'<text x="{left - 6}" y="{_n(y(tick) + 4)}" text-anchor="end" fill="#5f6778">'
            f"{tick}</text>"
        )
    # Distinct days only, and never two labels closer than one label's width.
    label_w = text_width("2026-01-01", FONT) + 8
    shown: list[date] = []
    for d in [first, days[len(days) // 2], days[-1]] if days else []:
        if d in shown:
            continue
        if any(abs(x(d) - x(s)) < label_w for s in shown):
            continue
        shown.append(d)
    if days and days[-1] not in shown and len(shown) > 1:
        shown[-1] = days[-1]  # the last day matters more than a middle one
    for d in shown:
        anchor = "middle"
        if span and d == first:
            anchor = "start"
        elif span and d == days[-1]:
            anchor = "end"
        parts.append(
            f'<text class="chart-tick" x="{_n(x(d))}" y="{top + inner_h + 16}" '
            f'text-anchor="{anchor}" fill="#5f6778">{_day(d)}</text>'
        )
    parts.append(
        f'<text class="chart-axis-label" x="{_n(left + inner_w / 2)}" y="{height - 6}" '
        'text-anchor="middle" fill="#4a5366">Day</text>'
    )
    ends = [y(points[-1][1]) + 4 if points else top for _name, points in series]
    label_ys = spread(ends, gap=FONT + 3, low=top + 4, high=top + inner_h + 4)
    for k, (name, points) in enumerate(series):
        colour = LINE_COLOURS[k % len(LINE_COLOURS)]
        coords = " ".join(f"{_n(x(d))},{_n(y(n))}" for d, n in points)
        parts.append(
            f'<g class="progress-line" data-judge="{_e(name)}">'
            f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>'
        )
        for d, n in points:
            parts.append(
                f'<circle cx="{_n(x(d))}" cy="{_n(y(n))}" r="3" fill="{colour}">'
                f"<title>{_e(name)}: {n} by {d.isoformat()}</title></circle>"
            )
        parts.append(
            f'<text class="chart-series-label" x="{left + inner_w + 8}" '
            f'y="{_n(label_ys[k])}" fill="{colour}">'
            f"{_e(fit(name, right - 10, FONT))}<title>{_e(name)}</title></text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)
