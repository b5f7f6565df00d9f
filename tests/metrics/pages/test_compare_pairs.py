"""The comparison of every pair on the page: a matrix (desk) and a list (phone), engine-exact."""

from __future__ import annotations

import html as html_lib
import re

import numpy as np
import pytest
from django.urls import reverse

from judging.models import Collection
from metrics.engine.letters import letter_strings
from metrics.engine.pairs import all_pairs
from tests.metrics import pages_factories as pf
from tests.metrics.pages.test_compare import NDCG

pytestmark = pytest.mark.django_db

TAGS = list(NDCG)  # a-bm25, a-thin, b-dense, b-old


def url(world, *pairs: tuple[str, object]) -> str:
    query = "&".join(f"{k}={v}" for k, v in [("pairs", 1), *pairs])
    return reverse("metrics:compare", args=[world.coll.slug]) + "?" + query


def cells(html: str) -> dict[tuple[str, str], dict[str, str]]:
    """Return the matrix's cells by (upper, lower) tag, with their data attributes."""
    matrix = re.search(r'<table class="data-table pairs-matrix.*?</table>', html, re.S).group(0)
    found = {}
    for attrs, body in re.findall(r'<td class="num pm-cell[^"]*"([^>]*)>(.*?)</td>', matrix, re.S):
        data = dict(re.findall(r'data-([\w-]+)="([^"]*)"', attrs))
        data["text"] = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)).strip()
        upper, lower = html_lib.unescape(data.pop("pair")).split("|")
        found[upper, lower] = data
    return found


def row_letters(html: str) -> dict[str, str]:
    """Return the letters printed beside each run in the matrix's rows and columns."""
    out = {}
    for tag, letters in re.findall(
        r'<span class="mono(?: pm-tag)?"[^>]*>([^<]+)</span> <span class="pm-letters" '
        r"data-letters>([^<]*)</span>",
        html,
    ):
        assert out.setdefault(tag, letters) == letters, tag
    return out


@pytest.mark.parametrize("correction", ["holm", "tukey"])
def test_the_matrix_and_the_list_are_the_engines(world, correction):
    response = world.client("coord").get(
        url(world, ("measure", "nDCG@10"), ("correction", correction))
    )
    assert response.status_code == 200
    html = response.content.decode()
    scores = np.array([NDCG[t] for t in TAGS])
    expected = all_pairs(scores, correction=correction)
    order = [TAGS[i] for i in expected.order]
    assert order == ["b-dense", "a-bm25", "a-thin", "b-old"]
    found = cells(html)
    assert len(found) == 6
    for pair in expected.pairs:
        cell = found[TAGS[pair.upper], TAGS[pair.lower]]
        assert float(cell["diff"]) == pytest.approx(pair.difference, abs=1e-15)
        assert float(cell["low"]) == pytest.approx(pair.low, abs=1e-12)
        assert float(cell["high"]) == pytest.approx(pair.high, abs=1e-12)
        assert float(cell["p"]) == pytest.approx(pair.p_value, rel=1e-12)
        assert float(cell["p-corrected"]) == pytest.approx(pair.corrected, rel=1e-12, abs=1e-15)
        assert cell["significant"] == ("1" if pair.significant else "0")
        assert f"{pair.difference:+.3f}" in cell["text"]
        assert ("✱" in cell["text"]) == pair.significant
    # The letters beside the names are the engine's, for the pairs the cells mark.
    shown = letter_strings(list(expected.groups))
    assert row_letters(html) == dict(zip(order, shown, strict=True))
    # The correction is named above the matrix; the phone's list holds the same pairs.
    name = {
        "holm": "Holm over all 6 pairs (paired t-test)",
        "tukey": "Tukey&#x27;s HSD, topics as blocks (6 pairs)",
    }
    assert f'data-correction="{correction}">Correction: <strong>{name[correction]}</strong>' in html
    listed = re.findall(r'<li class="[^"]*" data-pair="([^"]+)">', html)
    assert listed == [f"{TAGS[p.upper]}|{TAGS[p.lower]}" for p in expected.pairs]
    assert 'data-field="significant">' + str(sum(p.significant for p in expected.pairs)) in html
    assert "data-stale" in html  # b-old is scored at an older version


def test_the_default_is_every_scored_run_and_holm(world):
    html = world.client("coord").get(url(world)).content.decode()
    assert 'data-correction="holm"' in html and len(cells(html)) == 6
    # Chosen runs only, and a form error for a single run.
    picked = [world.runs[t].pk for t in ("a-bm25", "b-dense")]
    html = world.client("coord").get(url(world, *(("runs", pk) for pk in picked))).content.decode()
    assert list(cells(html)) == [("b-dense", "a-bm25")]
    html = world.client("coord").get(url(world, ("runs", picked[0]))).content.decode()
    assert "Choose at least two runs" in html and "pairs-matrix" not in html
    html = world.client("coord").get(url(world, ("correction", "sidak"))).content.decode()
    assert "Correction: Select a valid choice" in html


def test_a_team_sees_no_pair_before_publication(world):
    # The same ScorePolicy as the rest of the compare page: per-query differences are
    # per-query scores, hidden from teams until the judgments are published.
    mine = [world.runs[t].pk for t in ("a-bm25", "a-thin")]
    page = url(world, *(("runs", pk) for pk in mine))
    html = world.client("alice").get(page).content.decode()
    assert "data-score-visibility" in html
    assert "pairs-matrix" not in html and "data-pairs-list" not in html
    assert "data-diff" not in html and "data-letters" not in html
    Collection.objects.filter(pk=world.coll.pk).update(judgments_published=True)
    html = world.client("alice").get(page).content.decode()
    assert list(cells(html)) == [("a-bm25", "a-thin")]
    # Another team's run stays out until the leaderboard is published.
    theirs = world.client("alice").get(
        url(world, ("runs", mine[0]), ("runs", world.runs["b-dense"].pk))
    )
    assert "Select a valid choice" in theirs.content.decode()
    default = world.client("alice").get(url(world)).content.decode()
    assert {tag for pair in cells(default) for tag in pair} == {"a-bm25", "a-thin"}


def test_the_leaderboard_links_to_every_pair_of_its_measure(world):
    html = world.client("coord").get(reverse("metrics:leaderboard", args=[world.coll.slug]))
    link = re.search(r'href="([^"]*pairs=1[^"]*)"', html.content.decode()).group(1)
    assert "measure=" in link
    target = world.client("coord").get(html_lib.unescape(link)).content.decode()
    assert len(cells(target)) == 6


def test_undefined_values_are_left_out_of_every_pair(world):
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
    ids = [a.pk, b.pk]
    html = (
        world.client("coord")
        .get(url(world, ("measure", "RR"), *(("runs", i) for i in ids)))
        .content.decode()
    )
    assert "1 left out where a run" in html
    (cell,) = cells(html).values()
    expected = all_pairs(np.array([[0.5, 1.0], [0.2, 0.3]])).pairs[0]
    assert float(cell["p"]) == pytest.approx(expected.p_value, rel=1e-12)
