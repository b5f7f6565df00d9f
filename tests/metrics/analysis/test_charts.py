"""The confusion heatmap and run scatter plot are well-formed, accessible, escaped SVG."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from metrics.analysis.charts import confusion_heatmap, score_scatter

SVG = "{http://www.w3.org/2000/svg}"
MATRIX = [[6, 6, 0, 0, 0], [0, 6, 6, 0, 0], [0, 0, 12, 3, 0], [0, 0, 0, 3, 6], [0] * 5]


def test_heatmap_cells_counts_and_text_alternative():
    svg = confusion_heatmap(MATRIX, title="gpt <vs> humans")
    root = ET.fromstring(svg)  # well-formed XML
    assert root.get("role") == "img"
    assert root.find(f"{SVG}title").text == "gpt <vs> humans"  # escaped in the source
    assert "&lt;vs&gt;" in svg
    desc = root.find(f"{SVG}desc").text
    assert desc.startswith("48 pairs; rows are the human grade, columns the LLM grade; 27 on")
    assert "Human 2: LLM 0 0, LLM 1 0, LLM 2 12, LLM 3 3, LLM 4 0" in desc
    cells = root.findall(f".//{SVG}g[@class]")
    cells = [c for c in cells if "chart-cell" in c.get("class")]
    assert len(cells) == 25
    counts = {(int(c.get("data-row")), int(c.get("data-column"))): c for c in cells}
    assert counts[(2, 2)].get("data-count") == "12"
    assert "chart-cell-diagonal" in counts[(3, 3)].get("class")
    # The fullest cell gets the darkest shade, empty cells the lightest.
    assert counts[(2, 2)].find(f"{SVG}rect").get("fill") == "#2454c5"
    assert counts[(4, 0)].find(f"{SVG}rect").get("fill") == "#f4f6fb"
    assert counts[(2, 3)].find(f"{SVG}title").text == "Human 2, LLM 3: 3 pairs (6% of pairs)"
    assert "style=" not in svg


def test_heatmap_of_zeros_and_bad_shapes():
    ET.fromstring(confusion_heatmap([[0] * 5] * 5, title="empty"))
    with pytest.raises(ValueError, match="5 × 5"):
        confusion_heatmap([[1, 2], [3, 4]], title="x")


def test_scatter_points_diagonal_and_left_out_points():
    svg = score_scatter(
        ["<b>run</b> (team)", "two", "three"],
        [0.5, 0.25, math.nan],
        [0.75, 0.25, 0.1],
        title="Runs",
        x_label="human",
        y_label="LLM",
    )
    root = ET.fromstring(svg)
    assert root.get("role") == "img"
    points = root.findall(f".//{SVG}circle")
    assert len(points) == 2
    assert points[0].find(f"{SVG}title").text == "<b>run</b> (team): human 0.5000, LLM 0.7500"
    assert "<b>" not in svg
    assert "1 without both scores left out" in root.find(f"{SVG}desc").text
    # The dashed diagonal runs from (0, 0) to (1, 1): a point with equal scores sits on it.
    diagonal = root.find(f".//{SVG}line[@class='chart-diagonal']")
    x1, y1, x2, y2 = (float(diagonal.get(a)) for a in ("x1", "y1", "x2", "y2"))
    on = points[1]
    cx, cy = float(on.get("cx")), float(on.get("cy"))
    assert (cy - y1) * (x2 - x1) == pytest.approx((cx - x1) * (y2 - y1), abs=1.0)
    above = points[0]  # LLM 0.75 > human 0.5: above the diagonal (smaller y)
    ax, ay = float(above.get("cx")), float(above.get("cy"))
    assert ay < y1 + (ax - x1) * (y2 - y1) / (x2 - x1)


def test_scatter_needs_equal_lengths():
    with pytest.raises(ValueError):
        score_scatter(["a"], [0.1, 0.2], [0.3], title="t", x_label="x", y_label="y")
