"""The comparison page: its numbers are metrics.engine.stats on the same per-query arrays."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.urls import reverse

from metrics.analysis.compare import SEED
from metrics.engine import stats
from tests import factories
from tests.metrics import pages_factories as pf

pytestmark = pytest.mark.django_db

NDCG = {  # the world's per-query nDCG@10 values, queries q1..q4
    "a-bm25": [0.5, 0.4, 0.3, 0.6],
    "a-thin": [0.2, 0.1, 0.3, 0.2],
    "b-dense": [0.7, 0.6, 0.5, 0.9],
    "b-old": [0.1, 0.2, 0.1, 0.2],
}


def url(world, *pairs: tuple[str, str]) -> str:
    query = "&".join(f"{k}={v}" for k, v in pairs)
    return reverse("metrics:compare", args=[world.coll.slug]) + "?" + query


def cell(html: str, tag: str, field: str) -> dict[str, str]:
    row = re.search(rf'<tr data-run="{re.escape(tag)}">(.*?)</tr>', html, re.S).group(1)
    td = re.search(rf'<td class="num" data-field="{field}"([^>]*)>(.*?)</td>', row, re.S)
    attrs = dict(re.findall(r'data-([\w-]+)="([^"]*)"', td.group(1)))
    attrs["text"] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", td.group(2))).strip()
    return attrs


def fmt_p(p: float) -> str:
    return "&lt;&nbsp;0.0001" if p < 0.0001 else f"{p:.4f}"


def test_pair_numbers_equal_stats_compare(world):
    run_a, run_b = world.runs["b-dense"], world.runs["a-thin"]
    response = world.client("coord").get(
        url(world, ("a", run_a.pk), ("b", run_b.pk), ("measure", "nDCG@10"))
    )
    assert response.status_code == 200
    html = response.content.decode()
    expected = stats.compare(np.array(NDCG["b-dense"]), np.array(NDCG["a-thin"]), seed=SEED)
    assert cell(html, "b-dense", "means")["a"] == repr(expected.mean_a)
    assert cell(html, "b-dense", "means")["b"] == repr(expected.mean_b)
    diff = cell(html, "b-dense", "mean_diff")
    assert float(diff["value"]) == pytest.approx(expected.mean_diff, abs=1e-12)
    assert float(diff["low"]) == pytest.approx(expected.ci_low, abs=1e-12)
    assert float(diff["high"]) == pytest.approx(expected.ci_high, abs=1e-12)
    assert f"[{expected.ci_low:.4f}, {expected.ci_high:.4f}]" in diff["text"]
    t = cell(html, "b-dense", "t")
    assert float(t["statistic"]) == pytest.approx(expected.t_statistic, rel=1e-12)
    assert float(t["p"]) == pytest.approx(expected.t_p_value, rel=1e-12)
    assert f"t = {expected.t_statistic:.3f}" in t["text"]
    assert f"p = {expected.t_p_value:.4f}" in t["text"]
    w = cell(html, "b-dense", "wilcoxon")
    assert float(w["p"]) == pytest.approx(expected.wilcoxon_p_value, rel=1e-12)
    r = cell(html, "b-dense", "randomization")
    assert float(r["p"]) == pytest.approx(expected.randomization_p_value, rel=1e-12)
    assert cell(html, "b-dense", "wlt")["text"] == (
        f"{expected.wins} / {expected.losses} / {expected.ties}"
    )
    assert f"data-seed>{SEED}<" in html
    assert "data-holm" not in html  # one comparison: nothing to adjust
    # The key numbers above the table: the mean difference, its interval, W/L/T and p.
    numbers = re.search(r"<dl[^>]*data-result-numbers>(.*?)</dl>", html, re.S).group(1)
    assert f"{expected.mean_diff:+.4f}" in numbers
    assert f"{expected.wins} / {expected.losses} / {expected.ties}" in numbers
    # Below the table on the same page (issue 41): the sorted delta chart, one bar per
    # query, largest difference first.
    assert html.index('id="compare"') < html.index('class="chart chart-deltas"')
    assert "Table or per-query chart" not in html  # no tabs between them
    svg = re.search(r'<svg[^>]*class="chart chart-deltas".*?</svg>', html, re.S).group(0)
    deltas = [float(x) for x in re.findall(r"<title>q\d: ([+-][\d.]+)", svg)]
    assert deltas == sorted(deltas, reverse=True)
    assert len(deltas) == 4


def test_randomization_uses_many_sign_flips_when_not_exact(world):
    queries = [*world.queries, *(factories.query(world.coll, f"z{i}") for i in range(16))]
    rng = np.random.default_rng(1)
    a_vals, b_vals = rng.random(len(queries)), rng.random(len(queries))
    a = pf.run(
        world.coll,
        world.team_a,
        "many-a",
        per_query={q: {pf.NDCG10: float(v)} for q, v in zip(queries, a_vals, strict=True)},
    )
    b = pf.run(
        world.coll,
        world.team_a,
        "many-b",
        per_query={q: {pf.NDCG10: float(v)} for q, v in zip(queries, b_vals, strict=True)},
    )
    html = world.client("coord").get(url(world, ("a", a.pk), ("b", b.pk))).content.decode()
    order = np.argsort([q.external_id for q in queries], kind="stable")
    expected = stats.compare(a_vals[order], b_vals[order], seed=SEED)
    assert expected.randomization_permutations == 10_000 and not expected.randomization_exact
    assert "10000 random sign assignments" in html
    assert float(cell(html, "many-a", "randomization")["p"]) == pytest.approx(
        expected.randomization_p_value, rel=1e-12
    )


def test_baseline_against_several_runs_applies_holm(world):
    base = world.runs["a-thin"]
    others = ["b-dense", "a-bm25", "b-old"]
    params = [("baseline", base.pk), *(("runs", world.runs[t].pk) for t in others)]
    html = world.client("coord").get(url(world, *params)).content.decode()
    results = [stats.compare(NDCG[t], NDCG["a-thin"], seed=SEED) for t in others]
    for key, attr in [
        ("t", "t_p_value"),
        ("randomization", "randomization_p_value"),
        ("wilcoxon", "wilcoxon_p_value"),
    ]:
        raw = [getattr(r, attr) for r in results]
        adjusted = stats.holm(raw)
        for tag, p_raw, p_adj in zip(others, raw, adjusted, strict=True):
            shown = cell(html, tag, key)
            assert float(shown["p"]) == pytest.approx(p_raw, rel=1e-12)
            assert float(shown["p-adjusted"]) == pytest.approx(p_adj, rel=1e-12)
            assert f"p = {fmt_p(p_adj)} [{fmt_p(p_raw)}]" in shown["text"]
        assert not np.allclose(adjusted, raw)  # Holm changed something
    assert "data-holm" in html
    assert "adjusted with Holm's method across the 3 comparisons" in html
    # Below the table, three charts, each drawn for a desk and for a phone
    # (metrics.charts.for_screens).
    assert html.count('class="chart-wide"') == 3
    assert html.count('class="chart chart-deltas"') == 6


def test_form_errors_and_invisible_runs(world):
    client = world.client("alice")
    hidden = world.runs["b-dense"]
    html = client.get(url(world, ("a", world.runs["a-bm25"].pk), ("b", hidden.pk))).content.decode()
    assert "Select a valid choice" in html
    assert 'data-run="b-dense"' not in html
    mine = world.runs["a-bm25"].pk
    html = client.get(url(world, ("a", mine), ("b", ""), ("measure", "AP"))).content.decode()
    assert "Choose both runs" in html
    html = client.get(url(world, ("baseline", mine), ("measure", "AP"))).content.decode()
    assert "Choose at least one run other than the baseline" in html
    # A link naming one run only preselects it (the run page's "Compare…").
    html = client.get(url(world, ("b", mine))).content.decode()
    assert "form-errors" not in html
    assert f'<option value="{mine}" selected>a-bm25 (Team A)</option>' in html
    html = client.get(reverse("metrics:compare", args=[world.coll.slug])).content.decode()
    assert "Choose two runs, a baseline and the runs to compare with it, or compare" in html


def test_too_few_common_queries(world):
    q = world.queries[0]
    a = pf.run(world.coll, world.team_a, "one-a", per_query={q: {"nDCG@10": 0.1}})
    b = pf.run(world.coll, world.team_a, "one-b", per_query={q: {"nDCG@10": 0.3}})
    html = world.client("coord").get(url(world, ("a", a.pk), ("b", b.pk))).content.decode()
    assert "share 1 scored query" in html


def test_undefined_values_are_left_out(world):
    q1, q2, q3, _ = world.queries
    a = pf.run(
        world.coll,
        world.team_a,
        "nan-a",
        per_query={q1: {"RR": 0.5}, q2: {"RR": None}, q3: {"RR": 1.0}},
    )
    b = pf.run(
        world.coll,
        world.team_a,
        "nan-b",
        per_query={q1: {"RR": 0.2}, q2: {"RR": 0.1}, q3: {"RR": 0.3}},
    )
    html = (
        world.client("coord")
        .get(url(world, ("a", a.pk), ("b", b.pk), ("measure", "RR")))
        .content.decode()
    )
    assert "2 paired queries; 1 left out" in html
    expected = stats.compare([0.5, 1.0], [0.2, 0.3], seed=SEED)
    assert float(cell(html, "nan-a", "t")["p"]) == pytest.approx(expected.t_p_value)


@pytest.mark.parametrize(("who", "status"), [("judy", 403), ("stranger", 404)])
def test_judges_get_403_and_strangers_404(world, who, status):
    assert world.client(who).get(reverse("metrics:compare", args=["trec"])).status_code == status


def test_each_querys_signed_difference_sits_beside_the_chart(world):
    """Issue 41: the per-query numbers sit with the chart, with their signs."""
    run_a, run_b = world.runs["a-bm25"], world.runs["a-thin"]
    params = [("a", run_a.pk), ("b", run_b.pk), ("measure", "nDCG@10")]
    html = world.client("coord").get(url(world, *params)).content.decode()
    beside = html[html.index('class="chart-beside"') :]
    table = re.search(r'<table[^>]*id="per-query-deltas".*?</table>', beside, re.S).group(0)
    shown = dict(re.findall(r'<tr data-query="([^"]+)">.*?data-delta="([^"]+)"', table, re.S))
    want = {
        f"q{i + 1}": a - b
        for i, (a, b) in enumerate(zip(NDCG["a-bm25"], NDCG["a-thin"], strict=True))
    }
    assert shown.keys() == want.keys()
    for qid, delta in want.items():
        assert float(shown[qid]) == pytest.approx(delta, abs=1e-12)
    signs = re.findall(r'<span aria-hidden="true">([▲▼=])</span>', table)
    assert signs == ["▲" if d > 0 else "▼" if d < 0 else "=" for d in want.values()]
