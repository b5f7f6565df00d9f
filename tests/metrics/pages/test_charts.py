"""The SVG chart helpers: well-formed XML, escaped text, a tooltip per mark."""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET

import pytest

from metrics import charts

SVG = "{http://www.w3.org/2000/svg}"
HOSTILE = "<script>alert(\"x\")</script> & 'q'"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{SVG}svg"
    assert "style=" not in svg and "<style" not in svg  # the CSP forbids inline styles
    return root


def texts(root: ET.Element) -> list[str]:
    return ["".join(el.itertext()) for el in root.iter() if el.tag in {f"{SVG}title", f"{SVG}text"}]


def test_bar_chart_is_well_formed_and_escapes_labels():
    svg = charts.bar_chart(
        [HOSTILE, "q2", "q3"],
        [0.5, None, float("nan")],
        title=f"Scores {HOSTILE}",
        value_label="nDCG@10",
        notes=["text <b>bold</b>", "two", "three"],
        flagged=[True, False, False],
        flag_text="low coverage",
    )
    root = parse(svg)
    assert "<script>" not in svg
    assert "&lt;script&gt;" in svg
    titles = [t for t in texts(root) if HOSTILE in t]
    assert titles  # the raw label comes back intact after parsing
    rects = root.findall(f".//{SVG}rect")
    assert len(rects) == 1  # one bar; two missing values drawn as crosses
    assert "chart-bar-flagged" in rects[0].get("class")
    tip = rects[0].find(f"{SVG}title").text
    assert "0.5000" in tip and "low coverage" in tip and "<b>bold</b>" in tip
    assert sum("not scored" in t for t in texts(root)) == 2


def test_bar_chart_rejects_mismatched_lengths():
    with pytest.raises(ValueError):
        charts.bar_chart(["a"], [0.1, 0.2], title="t")


def test_delta_chart_sorts_and_colours():
    svg = charts.delta_chart(
        ["q1", "q2", "q3", "q4"],
        [-0.2, 0.3, 0.0, 0.1],
        title="A − B",
        a_name="run<A>",
        b_name="B&co",
    )
    root = parse(svg)
    rects = root.findall(f".//{SVG}rect")
    order = [r.find(f"{SVG}title").text.split(":")[0] for r in rects]
    assert order == ["q2", "q4", "q3", "q1"]
    classes = [r.get("class").split()[-1] for r in rects]
    assert classes == ["chart-win", "chart-win", "chart-tie", "chart-loss"]
    assert "run&lt;A&gt;" in svg and "B&amp;co" in svg
    # The axis covers the data.
    tick_values = [
        float(t.text)
        for t in root.iter(f"{SVG}text")
        if t.get("class") == "chart-tick"
        and t.text
        and t.text.lstrip("-").replace(".", "").isdigit()
    ]
    assert min(tick_values) <= -0.2 and max(tick_values) >= 0.3


def test_box_plot_rows_zero_line_and_empty_group():
    groups = [
        charts.BoxGroup("q1", [0.1, 0.2, 0.3, 0.4, 2.0], note="a & b", annotation="0.80"),
        charts.BoxGroup(HOSTILE, [float("nan")]),
        charts.BoxGroup("q3", [-0.5, -0.1]),
    ]
    svg = charts.box_plot(groups, title="sNDCG", value_label="sNDCG@10", annotation_label="d")
    root = parse(svg)
    assert len(root.findall(f".//{SVG}g[@class='chart-box']")) == 2
    assert root.findall(f".//{SVG}line[@class='chart-zero']")
    assert len(root.findall(f".//{SVG}circle")) == 1  # 2.0 is an outlier
    assert "no defined scores" in svg
    assert "&lt;script&gt;" in svg and "<script>" not in svg
    box_tip = root.find(f".//{SVG}g[@class='chart-box']/{SVG}title").text
    assert "median 0.3000" in box_tip and "a & b" in box_tip


def test_box_stats_and_ticks():
    stats = charts.box_stats([1, 2, 3, 4, 100, float("nan")])
    assert stats.n == 5 and stats.median == 3 and stats.outliers == (100.0,)
    assert charts.box_stats([float("nan")]) is None
    ticks = charts.nice_ticks(-0.72, 0.41)
    assert ticks[0] <= -0.72 and ticks[-1] >= 0.41
    assert all(math.isclose(b - a, ticks[1] - ticks[0]) for a, b in itertools.pairwise(ticks))
