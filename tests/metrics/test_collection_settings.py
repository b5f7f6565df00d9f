"""Coordinators change measures (rescoring every run), publication and the pool depth."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging import services as judging_services
from judging.models import Collection, PoolEntry
from metrics import services
from metrics.live import scoring
from metrics.models import Run
from tests import factories
from tests.metrics.live.test_scores import trec

pytestmark = pytest.mark.django_db


@pytest.fixture
def scored(coll):
    Collection.objects.filter(pk=coll.pk).update(pool_depth=1)
    coll.refresh_from_db()
    q = factories.query(coll, "q1")
    docs = [factories.document(coll, f"d{i}") for i in range(6)]
    judge = factories.human_judge(factories.user())
    for d, g in zip(docs[:3], [3, 0, 1], strict=True):
        judging_services.judgment_record(judge=judge, query=q, document=d, grade=g)
    team = services.team_create(collection=coll, name="T")
    content = trec([("q1", f"d{i}", 10.0 - i) for i in range(6)])
    run = services.run_submit(
        collection=coll, team=team, tag="r", content=content, filename="r.txt", user=None
    )
    return run


def test_a_new_measure_set_rescores_every_run(coll, scored):
    services.collection_settings_update(collection=coll, measures=["P@2", "ndcg_cut.3"])
    run = Run.objects.get(pk=scored.pk)
    assert set(run.scores) == set(scoring.canonical_names(["P@2", "ndcg_cut.3"]))
    assert run.scores[scoring.canonical_names(["P@2"])[0]] == pytest.approx(0.5)


def test_unknown_measures_are_named_and_nothing_changes(coll, scored):
    before = Collection.objects.get(pk=coll.pk).measures
    with pytest.raises(ValidationError) as exc:
        services.collection_settings_update(
            collection=coll, measures=["P@10", "nDCG(gain=cubic)@10", "bogus"]
        )
    problems = exc.value.message_dict["measures"]
    assert [p.split(":")[0] for p in problems] == ["line 2", "line 3"]
    assert Collection.objects.get(pk=coll.pk).measures == before


def test_geometric_means_are_refused_on_the_leaderboard(coll, scored):
    # The leaderboard averages per-query scores; gm_map under that name would lie.
    with pytest.raises(ValidationError) as exc:
        services.collection_settings_update(collection=coll, measures=["map", "gm_map"])
    (problem,) = exc.value.message_dict["measures"]
    assert problem.startswith("line 2: 'gm_map'") and "geometric mean" in problem
    # trec_eval's other new measures are per-query means and are accepted.
    services.collection_settings_update(collection=coll, measures=["set_F", "iprec_at_recall.0.5"])
    run = Run.objects.get(pk=scored.pk)
    assert len(run.scores) == 2


def test_repool_at_a_deeper_depth_adds_only_unjudged_pairs(coll, scored):
    assert not PoolEntry.objects.exists()  # depth 1: d0 is the top and already judged
    added = services.runs_repool(collection=coll, depth=5)
    pooled = set(PoolEntry.objects.values_list("document__external_id", flat=True))
    assert pooled == {"d3", "d4"} and added == 2  # d1, d2 judged; d5 below depth
    assert Collection.objects.get(pk=coll.pk).pool_depth == 5
    with pytest.raises(ValidationError):
        services.runs_repool(collection=coll, depth=0)


def test_settings_page_is_for_coordinators_and_saves(client, coll, scored):
    from django.urls import reverse

    url = reverse("metrics:collection_update", args=[coll.slug])
    team_member = factories.user("tm")
    services.team_member_add(team=scored.team, user=team_member)
    client.force_login(team_member)
    assert client.get(url).status_code == 403
    boss = factories.user("boss")
    factories.member(coll, boss, role="coordinator")
    client.force_login(boss)
    assert "nDCG@10" in client.get(url).content.decode()
    refused = client.post(
        url,
        {"action": "settings", "measures": "P@2\nbogus", "coverage_threshold": "0.8"},
    )
    assert refused.status_code == 400 and "line 2" in refused.content.decode()
    assert 'id="settings-form"' in refused.content.decode()  # on its own tab
    saved = client.post(
        url,
        {
            "action": "settings",
            "measures": "P@2\nJudged@10",
            "coverage_threshold": "0.8",
        },
    )
    assert saved.status_code == 303 and saved["Location"] == url + "?tab=measures"
    coll.refresh_from_db()
    assert coll.measures == ["P@2", "Judged@10"] and not coll.leaderboard_published
    published = client.post(
        url,
        {
            "action": "visibility",
            "mode": "hidden",
            "min_queries": "25",
            "public_share": "0.5",
            "runs_per_day": "5",
            "leaderboard_published": "on",
        },
    )
    assert published.status_code == 303 and published["Location"] == url + "?tab=visibility"
    coll.refresh_from_db()
    assert coll.leaderboard_published and not coll.judgments_published
    assert client.post(url, {"action": "repool", "depth": "5"}).status_code == 303
    assert PoolEntry.objects.count() == 2


def test_each_settings_tab_shows_its_own_form_and_comes_back_to_it(client, coll, scored):
    from django.urls import reverse

    url = reverse("metrics:collection_update", args=[coll.slug])
    boss = factories.user("boss")
    factories.member(coll, boss, role="coordinator")
    client.force_login(boss)
    forms = {
        "measures": ("settings-form", "Measures"),
        "visibility": ("score-visibility", "Visibility"),
        "depth": ("repool-form", "Pool depth"),
        "pooling": ("pooling-policy", "Pooling"),
        "aggregation": ("aggregation-settings", "Aggregation"),
        "card": ("card-settings", "Card"),
    }
    for tab, (form_id, label) in forms.items():
        html = client.get(f"{url}?tab={tab}").content.decode()
        assert html.count('class="panel stacked-form"') == 1  # one form a tab
        assert f'id="{form_id}"' in html and f'form="{form_id}"' in html  # the primary's
        assert f'aria-current="page">{label}</a>' in html
    assert "?tab=quotas" not in client.get(url).content.decode()  # no judges, no quotas tab
    assert 'id="settings-form"' in client.get(url + "?tab=nonsense").content.decode()
    refused = client.post(url, {"action": "repool", "depth": "0"})
    assert refused.status_code == 400 and 'id="repool-form"' in refused.content.decode()
    assert client.post(url, {"action": "repool", "depth": "3"})["Location"] == url + "?tab=depth"
    card = client.post(url, {"action": "card", "evidence": "required", "evidence_from_grade": "3"})
    assert card.status_code == 303 and card["Location"] == url + "?tab=card"
    coll.refresh_from_db()
    assert (coll.evidence, coll.evidence_from_grade) == ("required", 3)
    bad = client.post(url, {"action": "card", "evidence": "sometimes"})
    assert bad.status_code == 400 and 'id="card-settings"' in bad.content.decode()
