"""trec_eval's ``all_trec`` (and ``official``) as a collection's measure set (issue 45, item 7).

The set names are taken on the settings page and over REST and stored as their members a
leaderboard can show: every member of ``all_trec`` but ``runid`` (a line), ``gm_map`` and
``gm_bpref`` (geometric means) and ``relstring`` (text) — 96 measures. Scores first (so the
board sorts by ``map``), trec_eval's counts last. Every live score then equals
``manage.py evaluate`` on the exported list, and the leaderboard copes with the width.
"""

from __future__ import annotations

import random

import pytest
from django.test import Client

from judging.models import Collection, Membership
from metrics.engine.measures import NICKNAMES
from metrics.live import scoring, store
from tests import factories
from tests.api_client import client_for, errors_of
from tests.metrics.live.test_live_equals_cli import _cli, assert_live_equals_cli, scored_collection

pytestmark = pytest.mark.django_db
LEFT_OUT = {"runid", "gm_map", "gm_bpref", "relstring"}


def test_the_set_expands_to_every_member_a_leaderboard_can_show():
    expanded = scoring.expand_measure_sets(["all_trec"])
    assert set(expanded.left_out) == LEFT_OUT
    assert set(expanded.names) == set(NICKNAMES["all_trec"]) - LEFT_OUT
    assert expanded.names[0] == "map"
    assert expanded.names[-len(scoring.COUNTS) :] == list(scoring.COUNTS)
    assert len(scoring.canonical_names(expanded.names)) == 96
    # Named after another measure, that one stays first; repeats are dropped.
    again = scoring.expand_measure_sets(["ndcg_cut.10", "all_trec", "official", "map"])
    assert again.names[0] == "ndcg_cut.10" and again.names.count("map") == 1
    assert scoring.expand_measure_sets(["official"]).names[:2] == ["map", "Rprec"]


def _coordinator(coll: Collection):
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    return cora


@pytest.mark.parametrize("seed", range(2))
def test_all_trec_over_rest_scores_every_run_as_the_command_does(seed, tmp_path):
    rng = random.Random(4500 + seed)
    coll, files = scored_collection(rng, f"all{seed}", ["P@10"], runs=(2, 3))
    cora = _coordinator(coll)
    url = f"/api/v1/collections/{coll.slug}/settings/"
    response = client_for(cora).patch(url, {"measures": ["all_trec"]}, format="json")
    assert response.status_code == 200, response.content
    stored = response.json()["measures"]
    assert stored == scoring.expand_measure_sets(["all_trec"]).names
    coll.refresh_from_db()
    board = store.board_read(coll.pk)
    assert len(board.names) == 96 and len(board.run_ids) == len(files)
    # num_q is printed for "all" only (the number of queries): compared on its own.
    per_query = [name for name in stored if name != "num_q"]
    assert assert_live_equals_cli(coll, files, per_query, tmp_path) > 95 * 2
    num_q = scoring.canonical_names(["num_q"])[0]
    for run_id, (content, name) in files.items():
        printed = _cli(tmp_path, coll, content, name, ["num_q"])["num_q"]["all"]
        row = list(board.run_ids).index(run_id)
        assert float(board.sums[row, board.names.index(num_q)]) == printed
    leaderboard = client_for(cora).get(f"/api/v1/collections/{coll.slug}/leaderboard/")
    assert leaderboard.status_code == 200
    body = leaderboard.json()
    assert len(body["measures"]) == 96 and len(body["rows"]) == len(files)
    assert body["measures"][0] == scoring.canonical_names(["map"])[0]


def test_a_bad_name_beside_the_set_is_refused_naming_its_line(coll):
    cora = _coordinator(coll)
    url = f"/api/v1/collections/{coll.slug}/settings/"
    before = list(Collection.objects.get(pk=coll.pk).measures)
    response = client_for(cora).patch(url, {"measures": ["all_trec", "nDCG@ten"]}, format="json")
    assert response.status_code == 400
    (error,) = errors_of(response)
    assert error["field"] == "measures" and "'nDCG@ten'" in error["message"]
    assert Collection.objects.get(pk=coll.pk).measures == before


def test_the_settings_page_takes_the_set_and_says_what_it_left_out(coll):
    cora = _coordinator(coll)
    page = Client()
    page.force_login(cora)
    form = {
        "action": "settings",
        "measures": "all_trec",
        "coverage_threshold": "0.5",
    }
    saved = page.post(f"/c/{coll.slug}/settings/?tab=measures", form, follow=True)
    html = saved.content.decode()
    assert "all_trec: 96 measures" in html
    assert "gm_map, gm_bpref" in html and "relstring" in html
    coll.refresh_from_db()
    assert coll.measures == scoring.expand_measure_sets(["all_trec"]).names


def test_the_leaderboard_page_shows_a_few_columns_and_offers_the_rest(db):
    rng = random.Random(7)
    coll, _files = scored_collection(rng, "wide", ["P@10"], runs=(3, 3))
    cora = _coordinator(coll)
    client_for(cora).patch(
        f"/api/v1/collections/{coll.slug}/settings/", {"measures": ["all_trec"]}, format="json"
    )
    page = Client()
    page.force_login(cora)
    html = page.get(f"/c/{coll.slug}/leaderboard/").content.decode()
    assert html.count('class="col-choice"') == 96  # every measure can be shown
    from metrics.views import DEFAULT_SHOWN_COLUMNS

    header = html.split("<thead", 1)[1].split("</thead>", 1)[0]
    assert header.count("data-col=") <= DEFAULT_SHOWN_COLUMNS + 2  # a few, not 96
    assert ">map<" in header
