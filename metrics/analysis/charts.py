"""Server-rendered SVG charts of the LLM-vs-human page: confusion heatmap and run scatter.

Same conventions as :mod:`metrics.charts` (pure functions, one ``<svg>`` string each,
every text XML-escaped, no ``style`` attribute, a ``<title>`` on every mark, and a
``<title>``/``<desc>`` pair naming the chart for assistive technology). The pages pair
each chart with a table of the same numbers as its full text alternative.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from judging.chart_text import fit, ink_for
from metrics.charts import _e, _n, _svg_open, _tick_label, nice_ticks

__all__ = ["confusion_heatmap", "score_scatter"]

_LOW = (0xF4, 0xF6, 0xFB)  # empty cell
_HIGH = (0x24, 0x54, 0xC5)  # the fullest cell


def _shade(share: float) -> str:
    """Return the fill colour of a cell holding ``share`` (0–1) of the fullest cell."""
    rgb = (round(lo + (hi - lo) * share) for lo, hi in zip(_LOW, _HIGH, strict=True))
    return "#" + "".join(f"{c:02x}" for c in rgb)


def confusion_heatmap(
    matrix: Sequence[Sequence[int]],
    *,
    title: str,
    row_name: str = "Human",
    column_name: str = "LLM",
    labels: Sequence[str] = ("0", "1", "2", "3", "4"),
    cell: int = 50,
) -> str:
    """Return a k × k heatmap of counts: rows ``row_name``'s grade, columns ``column_name``'s.

    Each cell shows its count, shaded by its share of the fullest cell; the diagonal
    (agreement) is outlined. The ``<desc>`` lists every row's counts in words.
    """
    k = len(labels)
    counts = [[int(v) for v in row] for row in matrix]
    if len(counts) != k or any(len(row) != k for row in counts):
        raise ValueError(f"matrix must be {k} × {k}")
    total = sum(map(sum, counts))
    fullest = max((v for row in counts for v in row), default=0) or 1
    left, top = 86, 46
    width, height = left + k * cell + 12, top + k * cell + 12
    rows_text = "; ".join(
        f"{row_name} {labels[i]}: "
        + ", ".join(f"{column_name} {labels[j]} {counts[i][j]}" for j in range(k))
        for i in range(k)
    )
    diagonal = sum(counts[i][i] for i in range(k))
    desc = (
        f"{total} pairs; rows are the {row_name.lower()} grade, columns the "
        f"{column_name} grade; {diagonal} on the diagonal (same grade). {rows_text}."
    )
    parts = _svg_open(width, height, title, "chart-heatmap", desc)
    parts.append(
        f'<text x="{_n(left + k * cell / 2)}" y="14" text-anchor="middle" '
        f'class="chart-axis-label" fill="#4a5366">{_e(column_name)} grade</text>'
        f'<text class="chart-axis-label" fill="#4a5366" text-anchor="middle" '
        f'transform="translate(14 {_n(top + k * cell / 2)}) rotate(-90)">'
        f"{_e(row_name)} grade</text>"
    )
    for j, label in enumerate(labels):
        parts.append(
            f'<text x="{_n(left + j * cell + cell / 2)}" y="{top - 8}" text-anchor="middle" '
            f'class="chart-tick" fill="#5f6778">{_e(label)}</text>'
        )
    parts.append('<g class="chart-marks">')
    for i, label in enumerate(labels):
        y = top + i * cell
        parts.append(
            f'<text x="{left - 10}" y="{_n(y + cell / 2 + 4)}" text-anchor="end" '
            f'class="chart-tick" fill="#5f6778">{_e(label)}</text>'
        )
        for j in range(k):
            value = counts[i][j]
            share = value / fullest
            x = left + j * cell
            percent = f" ({100 * value / total:.0f}% of pairs)" if total else ""
            tip = (
                f"<title>{_e(row_name)} {_e(label)}, {_e(column_name)} {_e(labels[j])}: "
                f"{value} pair{'' if value == 1 else 's'}{_e(percent)}</title>"
            )
            outline = ' stroke="#1c2230" stroke-width="2"' if i == j else ' stroke="#ffffff"'
            css = "chart-cell chart-cell-diagonal" if i == j else "chart-cell"
            fill = _shade(share)
            text_fill = ink_for(fill)  # most contrast against the cell: 4.5:1 or more
            parts.append(
                f'<g class="{css}" data-row="{i}" data-column="{j}" data-count="{value}">'
                f'<rect x="{x}" y="{y}" width="{cell}" height="{cell}" '
                f'fill="{fill}"{outline}/>'
                f'<text x="{_n(x + cell / 2)}" y="{_n(y + cell / 2 + 4)}" text-anchor="middle" '
                f'fill="{text_fill}">{value}</text>{tip}</g>'
            )
    parts.append("</g></svg>")
    return "".join(parts)


def score_scatter(
    labels: Sequence[str],
    x_values: Sequence[float],
    y_values: Sequence[float],
    *,
    title: str,
    x_label: str,
    y_label: str,
    size: int = 420,
) -> str:
    """Return a square scatter plot of one point per label, with the diagonal y = x.

    Both axes share one range (at least 0–1 for unit scores) so that points on the
    dashed diagonal scored alike under both; points above it scored higher on ``y``.
    Points with a non-finite coordinate are left out and counted in the ``<desc>``.
    """
    if not len(labels) == len(x_values) == len(y_values):
        raise ValueError("labels, x_values and y_values must have equal lengths")
    points = [
        (label, float(x), float(y))
        for label, x, y in zip(labels, x_values, y_values, strict=True)
        if math.isfinite(float(x)) and math.isfinite(float(y))
    ]
    values = [v for _, x, y in points for v in (x, y)]
    low, high = min([0.0, *values]), max([1.0, *values])
    ticks = nice_ticks(low, high, 5)
    low, high = ticks[0], ticks[-1]
    left, bottom_pad, top, right_pad = 58, 46, 14, 16
    plot = size - left - right_pad
    height = top + plot + bottom_pad
    right, bottom = left + plot, top + plot

    def sx(v: float) -> float:
        return left + (v - low) / (high - low) * plot

    def sy(v: float) -> float:
        return bottom - (v - low) / (high - low) * plot

    left_out = len(labels) - len(points)
    desc = (
        f"{len(points)} points, one per run: {x_label} across, {y_label} up; on the dashed "
        "diagonal both scores are equal"
        + (f"; {left_out} without both scores left out" if left_out else "")
        + "."
    )
    parts = _svg_open(size, height, title, "chart-scatter", desc)
    parts.append('<g class="chart-grid">')
    for tick in ticks:
        parts.append(
            f'<line x1="{left}" x2="{right}" y1="{_n(sy(tick))}" y2="{_n(sy(tick))}" '
            'stroke="#dde1e8"/>'
            f'<line x1="{_n(sx(tick))}" x2="{_n(sx(tick))}" y1="{top}" y2="{bottom}" '
            'stroke="#dde1e8"/>'
            f'<text x="{left - 6}" y="{_n(sy(tick) + 4)}" text-anchor="end" class="chart-tick" '
            f'fill="#5f6778">{_e(_tick_label(tick))}</text>'
            f'<text x="{_n(sx(tick))}" y="{bottom + 15}" text-anchor="middle" class="chart-tick" '
            f'fill="#5f6778">{_e(_tick_label(tick))}</text>'
        )
    parts.append("</g>")
    parts.append(
        f'<line class="chart-diagonal" x1="{_n(sx(low))}" y1="{_n(sy(low))}" '
        f'x2="{_n(sx(high))}" y2="{_n(sy(high))}" stroke="#b3261e" stroke-width="1.25" '
        'stroke-dasharray="4 3"/>'
        f'<text x="{_n((left + right) / 2)}" y="{bottom + 34}" text-anchor="middle" '
        f'class="chart-axis-label" fill="#4a5366">{_e(fit(x_label, plot, 12))}'
        f"<title>{_e(x_label)}</title></text>"
        f'<text class="chart-axis-label" fill="#4a5366" text-anchor="middle" '
        f'transform="translate(14 {_n((top + bottom) / 2)}) rotate(-90)">'
        f"{_e(fit(y_label, plot, 12))}<title>{_e(y_label)}</title></text>"
    )
    parts.append('<g class="chart-marks">')
    for label, x, y in points:
        parts.append(
            f'<circle class="chart-point" cx="{_n(sx(x))}" cy="{_n(sy(y))}" r="4.5" '
            f'fill="#2454c5" fill-opacity="0.8" stroke="#ffffff">'
            f"<title>{_e(label)}: {_e(x_label)} {x:.4f}, {_e(y_label)} {y:.4f}</title></circle>"
        )
    parts.append("</g></svg>")
    return "".join(parts)
