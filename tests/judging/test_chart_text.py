"""Readable chart text (issue 34, item 5): contrast per cell, labels apart, titles that fit.

No database: the charts are pure functions returning SVG strings. Every ``<text>`` of
every chart is checked against what is drawn behind it — the last filled rectangle or
circle before it (in drawing order) that contains the text's centre, else the page
background (both white panels and the grey page, #f4f5f7).
"""

from __future__ import annotations

import itertools
import math
import xml.etree.ElementTree as ET
from datetime import date

import pytest

from judging import chart_text, charts
from metrics import charts as metrics_charts
from metrics.analysis import charts as analysis_charts

SVG = "{http://www.w3.org/2000/svg}"
PAGE_BACKGROUNDS = ("#ffffff", "#f4f5f7")


def _shapes_and_texts(svg: str) -> list[tuple[str, ET.Element]]:
    root = ET.fromstring(svg)
    return [(el.tag.removeprefix(SVG), el) for el in root.iter()]


def _contains(tag: str, el: ET.Element, x: float, y: float) -> bool:
    if tag == "rect":
        rx, ry = float(el.get("x", 0)), float(el.get("y", 0))
        w, h = float(el.get("width", 0)), float(el.get("height", 0))
        return rx <= x <= rx + w and ry <= y <= ry + h
    if tag == "circle":
        cx, cy, r = float(el.get("cx")), float(el.get("cy")), float(el.get("r"))
        return math.hypot(x - cx, y - cy) <= r
    return False


def low_contrast_texts(svg: str) -> list[tuple[str, str, str, float]]:
    """Return (text, fill, background, ratio) of every text below 4.5:1 in ``svg``."""
    drawn: list[tuple[str, ET.Element]] = []
    bad = []
    for tag, el in _shapes_and_texts(svg):
        if tag in {"rect", "circle"} and el.get("fill", "none") != "none":
            drawn.append((tag, el))
        if tag != "text":
            continue
        words = "".join(el.itertext()).strip()
        fill = el.get("fill", "#000000")
        if el.get("transform"):  # rotated axis titles sit in the margin, on the page
            behind = list(PAGE_BACKGROUNDS)
        else:
            x, y = float(el.get("x", 0)), float(el.get("y", 0)) - 4  # centre of a 12 px text
            under = [e for t, e in drawn if _contains(t, e, x, y)]
            behind = [under[-1].get("fill")] if under else list(PAGE_BACKGROUNDS)
        for background in behind:
            ratio = chart_text.contrast(fill, background)
            if ratio < chart_text.AA:
                bad.append((words, fill, background, round(ratio, 2)))
    return bad


def test_contrast_matches_published_wcag_ratios():
    assert chart_text.contrast("#ffffff", "#000000") == pytest.approx(21.0)
    assert chart_text.contrast("#777777", "#ffffff") == pytest.approx(4.48, abs=0.01)
    assert chart_text.contrast("#2454c5", "#ffffff") == pytest.approx(6.67, abs=0.01)
    assert chart_text.contrast("#abc", "#aabbcc") == pytest.approx(1.0)


def test_white_on_mid_blue_was_the_defect_and_the_chosen_ink_passes():
    # The confusion matrix's old rule: white text on any cell past 55 % of the fullest.
    mid_blue = charts.diverging_colour(0.6)
    assert chart_text.contrast("#ffffff", mid_blue) < 3.0
    assert chart_text.ink_for(mid_blue) != "#ffffff"
    assert chart_text.contrast(chart_text.ink_for(mid_blue), mid_blue) >= 4.5


@pytest.mark.parametrize("step", range(0, 256, 5))
def test_the_chosen_ink_reaches_aa_on_any_grey(step):
    grey = f"#{step:02x}{step:02x}{step:02x}"
    assert chart_text.contrast(chart_text.ink_for(grey), grey) >= 4.58 - 1e-9


def test_spread_moves_labels_apart_in_order_and_inside_bounds():
    assert chart_text.spread([50, 50, 50], gap=15, low=0, high=100) == [50, 65, 80]
    assert chart_text.spread([95, 96, 10], gap=15, low=0, high=100) == [85, 100, 10]
    assert chart_text.spread([], gap=15, low=0, high=100) == []
    packed = chart_text.spread([5] * 10, gap=15, low=0, high=100)  # no room: from low
    assert packed == [5 + 15 * k for k in range(10)]


def test_fit_shortens_to_the_width():
    assert chart_text.fit("nDCG@10", 200, 12) == "nDCG@10"
    short = chart_text.fit("a very long run tag − another very long run tag", 120, 12)
    assert short.endswith("…") and chart_text.text_width(short, 12) <= 120


def _charts() -> dict[str, str]:
    names = ["judy", "jim", "a judge with a long name"]
    matrix = [[1.0, 0.6, -0.7], [0.6, 1.0, float("nan")], [-0.7, float("nan"), 1.0]]
    counts = [[9, 6, 1, 0, 0], [5, 8, 3, 0, 0], [0, 2, 7, 3, 1], [0, 0, 1, 5, 6], [0, 0, 0, 3, 4]]
    day = date(2026, 11, 20)
    return {
        "heatmap": charts.agreement_heatmap(names, matrix, title="κ"),
        "confusion": charts.confusion_matrix("judy", "jim", counts, title="c"),
        "grade mix": charts.grade_mix([("judy", [1, 2, 3, 4, 5])], "01234", title="m"),
        "progress": charts.progress_lines(
            [(n, [(day, 10), (date(2026, 11, 22), 40)]) for n in names], title="p"
        ),
        "llm confusion": analysis_charts.confusion_heatmap(counts, title="c"),
        "scatter": analysis_charts.score_scatter(
            ["a", "b"], [0.2, 0.5], [0.3, 0.4], title="s", x_label="human", y_label="llm"
        ),
        "bars": metrics_charts.bar_chart([f"q{i}" for i in range(30)], [0.5] * 30, title="b"),
        "deltas": metrics_charts.delta_chart(
            ["q1", "q2", "q3"], [0.2, -0.1, 0.0], title="d", a_name="bm25", b_name="dense"
        ),
        "boxes": metrics_charts.box_plot(
            [
                metrics_charts.BoxGroup("q1", (0.1, 0.5, 0.9)),
                metrics_charts.BoxGroup("q2", (0.2, 0.3), muted=True),
            ],
            title="x",
        ),
    }


@pytest.mark.parametrize("name", list(_charts()))
def test_every_chart_text_reaches_aa_against_what_is_behind_it(name):
    assert low_contrast_texts(_charts()[name]) == []


def test_the_checker_catches_white_text_on_a_mid_blue_cell():
    svg = (
        '<svg xmlns="http://www.w3.org/2000/svg"><rect x="0" y="0" width="40" height="40" '
        f'fill="{charts.diverging_colour(0.6)}"/><text x="20" y="24" fill="#ffffff">7</text></svg>'
    )
    assert [row[0] for row in low_contrast_texts(svg)] == ["7"]


def _series_label_ys(svg: str) -> list[float]:
    root = ET.fromstring(svg)
    return [
        float(t.get("y"))
        for t in root.iter(f"{SVG}text")
        if "chart-series-label" in (t.get("class") or "")
    ]


def test_progress_labels_never_overlap_when_judges_finish_level():
    day = date(2026, 11, 20)
    series = [(f"judge{k}", [(day, 5), (date(2026, 11, 21), 30)]) for k in range(5)]
    ys = sorted(_series_label_ys(charts.progress_lines(series, title="p")))
    assert len(ys) == 5
    assert all(b - a >= charts.FONT + 1 for a, b in itertools.pairwise(ys)), ys


def test_progress_prints_each_day_once():
    day = date(2026, 11, 20)
    one_day = charts.progress_lines([("judy", [(day, 5)]), ("jim", [(day, 7)])], title="p")
    assert one_day.count(">2026-11-20<") == 1  # was printed twice (first and last day)
    two_days = charts.progress_lines([("judy", [(day, 5), (date(2026, 11, 23), 9)])], title="p")
    assert two_days.count(">2026-11-20<") == 1 and two_days.count(">2026-11-23<") == 1


def test_progress_is_sized_by_its_container_with_axis_titles():
    svg = charts.progress_lines([("judy", [(date(2026, 11, 20), 5)])], title="p")
    root = ET.fromstring(svg)
    assert root.get("viewBox") == "0 0 440 240"
    words = ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]
    assert "Pairs judged (cumulative)" in words and "Day" in words


def test_compare_y_axis_title_fits_the_axis():
    svg = metrics_charts.delta_chart(
        ["q1", "q2"],
        [0.1, -0.2],
        title="d",
        a_name="a-rather-long-run-tag-name",
        b_name="another-long-run-tag",
    )
    root = ET.fromstring(svg)
    (axis,) = [t for t in root.iter(f"{SVG}text") if t.get("class") == "chart-axis-label"]
    shown = axis.text or ""
    height = float(root.get("viewBox").split()[3])
    assert chart_text.text_width(shown, 12) <= height - 30, shown
    assert (axis.find(f"{SVG}title").text or "").startswith("a-rather-long")


def test_for_screens_draws_one_chart_at_both_widths():
    """``for_screens`` asks for each width once and wraps the two drawings for the CSS."""
    asked: list[int] = []

    def draw(width: int) -> str:
        asked.append(width)
        return f"<svg data-w='{width}'></svg>"

    html = chart_text.for_screens(draw, wide=880, narrow=360)
    assert asked == [880, 360]
    assert html == (
        '<div class="chart-screens"><div class="chart-wide"><svg data-w=\'880\'></svg></div>'
        "<div class=\"chart-narrow\"><svg data-w='360'></svg></div></div>"
    )


def test_a_phones_drawing_keeps_every_label_inside_it():
    """The narrow drawings (360 units) shorten labels so that none leaves the picture."""
    long_ids = [f"query-with-a-long-id-{i}" for i in range(12)]
    svg = metrics_charts.box_plot(
        [metrics_charts.BoxGroup(q, [0.1 * i, 0.2, 0.3]) for i, q in enumerate(long_ids)],
        title="t",
        value_label="sNDCG@10 (0 = random reranking of the pool)",
        width=metrics_charts.NARROW,
    )
    assert 'viewBox="0 0 360 ' in svg
    assert ">query-w…<title>" in svg  # 8 characters in a 64-unit column
    assert "sNDCG@10 (0 = random reranking of the pool)" in svg  # fits in 352 units
    names = ["0", "1", "2", "3", "4"]
    mix = charts.grade_mix(
        [("a-judge-with-a-long-name", [1, 2, 3, 4, 5])], names, title="m", width=340
    )
    assert 'viewBox="0 0 340 ' in mix and ">a-judge-w…<title>" in mix
