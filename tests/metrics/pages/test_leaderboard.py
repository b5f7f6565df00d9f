"""The leaderboard page: content, sorting, flavour legend, stale and coverage marks, access."""

from __future__ import annotations

import re

import pytest
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from metrics.live.scoring import measure_labels
from tests import factories
from tests.metrics import pages_factories as pf

pytestmark = pytest.mark.django_db


def url(world, **params) -> str:
    base = reverse("metrics:leaderboard", args=[world.coll.slug])
    return base + ("?" + "&".join(f"{k}={v}" for k, v in params.items()) if params else "")


def tags_in_order(html: str) -> list[str]:
    return re.findall(r'<tr class="[^"]*" data-run="([^"]+)"', html)


def test_coordinator_sees_every_run_best_first(world):
    response = world.client("coord").get(url(world))
    assert response.status_code == 200
    html = response.content.decode()
    assert tags_in_order(html) == ["b-dense", "a-bm25", "a-thin", "b-old"]
    assert "0.6750" in html  # b-dense mean nDCG@10
    assert "0.4500" in html  # a-bm25


def test_sorting_by_any_measure_server_side(world):
    html = world.client("coord").get(url(world, sort="P@10")).content.decode()
    assert tags_in_order(html) == ["b-old", "a-bm25", "b-dense", "a-thin"]
    assert 'aria-sort="descending"' in html
    # The canonical name works as well, and an unknown one falls back to the first measure.
    html = world.client("coord").get(url(world, sort=pf.P10)).content.decode()
    assert tags_in_order(html)[0] == "b-old"
    html = world.client("coord").get(url(world, sort="bogus")).content.decode()
    assert tags_in_order(html)[0] == "b-dense"


def test_headers_and_legend_spell_every_flavour(world):
    html = world.client("coord").get(url(world)).content.decode()
    for label in measure_labels(world.coll.measures):
        assert f'title="{label.canonical}"' in html
        assert f'<code class="canonical">{label.canonical}</code>' in html
        if label.trec_name:
            assert f"<code>{label.trec_name}</code>" in html
    assert "nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10" in html
    assert "ndcg_cut.10" in html
    assert ">nDCG@10</a>" in html


def test_stale_rows_are_marked_never_current(world):
    html = world.client("coord").get(url(world)).content.decode()
    row = re.search(r'data-run="b-old">.*?</tr>', html, re.S).group(0)
    assert "recomputing — scores from version 3" in row
    assert "is-stale" in html.split('data-run="b-old"')[0].rsplit("<tr", 1)[1]
    fresh = re.search(r'data-run="b-dense">.*?</tr>', html, re.S).group(0)
    assert "recomputing" not in fresh


def test_low_coverage_warning(world):
    html = world.client("coord").get(url(world)).content.decode()
    thin = re.search(r'data-run="a-thin">.*?</tr>', html, re.S).group(0)
    assert "data-low-coverage" in thin
    assert "below 90%" in thin
    assert "0.63" in thin  # mean Judged@10 of the thin run (0.625)
    good = re.search(r'data-run="a-bm25">.*?</tr>', html, re.S).group(0)
    assert "data-low-coverage" not in good


def test_version_and_time_shown(world):
    html = world.client("coord").get(url(world)).content.decode()
    assert "version 5" in html
    assert world.coll.judgments_changed_at.strftime("%Y-%m-%d %H:%M") in html


@pytest.mark.parametrize(
    ("who", "published", "expected"),
    [
        ("alice", False, {"a-bm25", "a-thin"}),
        ("bob", False, {"b-dense", "b-old"}),
        ("alice", True, {"a-bm25", "a-thin", "b-dense", "b-old"}),
        ("bob", True, {"a-bm25", "a-thin", "b-dense", "b-old"}),
        ("coord", False, {"a-bm25", "a-thin", "b-dense", "b-old"}),
    ],
)
def test_visibility_matrix(world, who, published, expected):
    world.coll.leaderboard_published = published
    world.coll.save()
    response = world.client(who).get(url(world))
    assert response.status_code == 200
    assert set(tags_in_order(response.content.decode())) == expected


@pytest.mark.parametrize(("who", "status"), [("judy", 403), ("stranger", 404)])
@pytest.mark.parametrize("published", [False, True])
def test_judges_get_403_and_strangers_404(world, who, status, published):
    world.coll.leaderboard_published = published
    world.coll.save()
    response = world.client(who).get(url(world))
    assert response.status_code == status
    if status == 403:  # says which role the page needs
        assert "for the collection&#x27;s coordinators and team members; you are a judge here" in (
            response.content.decode()
        )


def test_anonymous_is_sent_to_login(world):
    response = Client().get(url(world))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_empty_leaderboard(db):
    coll = factories.collection("empty")
    usr = factories.user("teamless")
    pf.team(coll, "Solo", [usr])
    client = Client()
    client.force_login(usr)
    html = client.get(reverse("metrics:leaderboard", args=["empty"])).content.decode()
    assert "No runs to show yet" in html


def test_query_count_is_constant(world, django_assert_num_queries):
    client = world.client("coord")
    client.get(url(world))  # warm the session
    cache.clear()  # count the read that computes the bootstrap intervals (one query)
    # one query more than before for "is any live grade LLM-filled?" (provenance), one
    # for the live token the page polls with, one for the scoreboard (the means), and one
    # for the collection's score visibility (the note telling coordinators what teams see)
    with django_assert_num_queries(11):
        assert client.get(url(world)).status_code == 200
    with django_assert_num_queries(10):  # cached until a run's scores change
        assert client.get(url(world)).status_code == 200
    for i in range(30):
        team = world.team_a if i % 2 else world.team_b
        pf.run(
            world.coll,
            team,
            f"extra{i}",
            per_query={q: {"nDCG@10": i / 40, "Judged@10": 0.5} for q in world.queries},
        )
    with django_assert_num_queries(11):  # new runs: the intervals are computed again
        response = client.get(url(world))
    assert len(tags_in_order(response.content.decode())) == 34


def test_expanding_and_unreadable_measure_names(world):
    world.coll.measures = ["nDCG@10", "P", "bogus", "Judged@10"]
    world.coll.save()
    html = world.client("coord").get(url(world, sort="P.10")).content.decode()
    for cutoff in (5, 10):
        assert f">P.{cutoff}</a>" in html
        assert f'title="P(rel=1)@{cutoff}"' in html
    # Ten measure columns: the first six show, the rest wait in the column chooser.
    assert ">P.1000</a>" not in html and 'name="show" value="P.1000"' in html
    chosen = world.client("coord").get(url(world, chosen=1, show="P.1000")).content.decode()
    assert ">P.1000</a>" in chosen and 'title="P(rel=1)@1000"' in chosen
    assert "Not understood, left out: bogus." in html
    assert tags_in_order(html)[0] == "b-old"  # best P@10


def test_the_column_chooser_keeps_the_sorted_measure_and_ignores_unknown_names(world):
    labels = [label.requested for label in measure_labels(world.coll.measures)]
    html = world.client("coord").get(url(world, chosen=1, show="bogus")).content.decode()
    headers = re.findall(
        r'<th scope="col" class="num lb-measure"[^>]*>\s*<a [^>]*>([^<]+)</a>', html
    )
    assert headers == [labels[0]]  # only the measure the board is sorted by
    html = world.client("coord").get(url(world, chosen=1, sort="P@10")).content.decode()
    headers = re.findall(
        r'<th scope="col" class="num lb-measure"[^>]*>\s*<a [^>]*>([^<]+)</a>', html
    )
    assert headers == ["P@10"]
    # The chooser lists every measure, ticked where shown.
    assert 'name="show" value="P@10" checked disabled' in html
    assert f'name="show" value="{labels[0]}">' in html


@pytest.mark.parametrize(
    "cookie",
    [
        "[" * 3000,  # nested past json's recursion limit
        "%5B" * 1300,  # the same, quoted
        '["P@10", 3]',
        '{"a": 1}',
        "\x00",
        "%FF%FE",
        "1e999999",
        '"' + "x" * 5000 + '"',
    ],
)
def test_an_unreadable_columns_cookie_is_ignored(world, cookie):
    client = world.client("coord")
    client.cookies["graded_columns_leaderboard"] = cookie
    response = client.get(url(world))
    assert response.status_code == 200
    labels = [label.requested for label in measure_labels(world.coll.measures)]
    headers = re.findall(
        r'<th scope="col" class="num lb-measure"[^>]*>\s*<a [^>]*>([^<]+)</a>',
        response.content.decode(),
    )
    assert headers[0] == labels[0] and len(headers) >= 1


def test_a_remembered_columns_cookie_chooses_the_columns(world):
    client = world.client("coord")
    client.cookies["graded_columns_leaderboard"] = '["P@10"]'
    html = client.get(url(world)).content.decode()
    headers = re.findall(
        r'<th scope="col" class="num lb-measure"[^>]*>\s*<a [^>]*>([^<]+)</a>', html
    )
    labels = [label.requested for label in measure_labels(world.coll.measures)]
    assert headers == [labels[0], "P@10"] or headers == ["P@10", labels[0]]
