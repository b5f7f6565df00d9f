"""Issue 34, item 6 (the smaller defects) on the server side.

Export file names name what is in them; the pooling settings confirm with names, not ids;
the agreement page names "judges (human or LLM)"; an adjudication excerpt keeps list items
apart; the settings page is "Collection settings" and marks which parameters each strategy
reads. The browser side (card width, key badges, phone pages) is in
tests/browser/test_pages_fit.py.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging import services
from judging.agreement.selectors import NOUNS
from judging.lists.exports import ExportSpec, export_filename
from judging.models import Collection, Membership
from judging.templatetags.plain_text import plain_text
from metrics.pool.forms import PARAMETERS
from metrics.pool.models import STRATEGY_CHOICES, strategy_name
from tests import factories


def test_the_three_qrels_exports_of_the_download_menu_have_three_names():
    coll = Collection(slug="home-garden-demo")
    names = {
        export_filename(collection=coll, spec=spec, version=79)
        for spec in (
            ExportSpec(format="qrels"),
            ExportSpec(format="qrels", provenance="human"),
            ExportSpec(format="qrels", unjudged=True, metadata=True),
        )
    }
    assert names == {
        "home-garden-demo-v79.qrels",
        "home-garden-demo-v79-human.qrels",
        "home-garden-demo-v79-with-unjudged-with-metadata.qrels",
    }


def test_export_names_carry_every_filter_and_stay_safe():
    coll = Collection(slug="demo")
    spec = ExportSpec(format="csv", raw=True, query="q 1/..", judge=7, since_version=3)
    assert export_filename(collection=coll, spec=spec, version=9) == (
        "demo-v9-raw-qq_1_..-judge7-since3.csv"
    )


def test_strategies_are_confirmed_by_name():
    names = {value: strategy_name(value) for value, _label in STRATEGY_CHOICES}
    assert names["thompson"] == "Bandit, Thompson sampling"
    assert names["llm-check"] == "LLM first, humans check"
    assert names["mtf"] == "Move-to-front"
    assert names["depth"] == "Depth-k"
    assert strategy_name("retired-one") == "retired-one"
    assert set(PARAMETERS) == set(names)  # every strategy says which parameters it reads


def test_group_nouns_read_as_english():
    assert NOUNS == {
        "human": "human judges",
        "llm": "LLM judges",
        "all": "judges (human or LLM)",
    }


def test_plain_text_keeps_list_items_apart():
    html = "<ul><li>Orbit 3000: $599.</li><li>Orbit Mini</li></ul><p>Sold&nbsp;out<br>soon</p>"
    assert plain_text(html) == "Orbit 3000: $599. Orbit Mini Sold&nbsp;out soon"
    assert plain_text("a <em>b</em>c") == "a bc"  # inline tags join as before


@pytest.fixture
def coordinated(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    coll = factories.collection("ui", name="UI")
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    return coll, cora


@pytest.mark.django_db
def test_settings_page_marks_each_parameter_with_its_strategies(client, coordinated):
    coll, cora = coordinated
    client.force_login(cora)
    url = reverse("metrics:collection_update", args=[coll.slug])
    html = client.get(url + "?tab=pooling").content.decode()
    assert "<h1>Collection settings</h1>" in html and "Leaderboard settings" not in html
    assert 'data-for="llm-check" data-param="audit_percent"' in html
    assert 'data-for="thompson llm-check" data-param="seed"' in html
    assert 'data-for="steady hybrid swap llm-check" data-param="cutoff"' in html


@pytest.mark.django_db
def test_pooling_confirmation_names_the_strategy(client, coordinated):
    coll, cora = coordinated
    client.force_login(cora)
    url = reverse("metrics:collection_update", args=[coll.slug])
    data = {
        "action": "pooling",
        "strategy": "thompson",
        "wave_size": 10,
        "horizon": 50,
        "rel_level": 1,
        "cutoff": 10,
        "seed": 0,
        "audit_percent": 10,
    }
    page = client.post(url, data, follow=True).content.decode()
    assert "Bandit, Thompson sampling" in page
    assert ": thompson," not in page


@pytest.mark.django_db
def test_adjudication_excerpt_keeps_list_items_apart(client, coordinated):
    coll, cora = coordinated
    q = factories.query(coll, "q1")
    body = "<ul><li>Orbit 3000: $599.</li><li>Orbit Mini</li></ul>"
    d = factories.document(coll, "d1", body=body)
    factories.pool_entry(coll, q, d)
    for name, grade in (("ann", 0), ("bob", 3)):
        person = factories.user(name)
        factories.member(coll, person, Membership.Role.JUDGE)
        judge = services.judge_for_user(user=person)
        services.judgment_record(judge=judge, query=q, document=d, grade=grade)
    client.force_login(cora)
    html = client.get(reverse("judging:pair_adjudicate", args=[coll.slug, q.pk, d.pk])).content
    assert "$599. Orbit Mini" in html.decode()
    assert "$599.Orbit" not in html.decode()
