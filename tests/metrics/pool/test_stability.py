"""The stop rule in the app: ranking snapshots as judgments arrive, the API and the page.

Three runs over two queries; a judge grades the pooled pairs one at a time through the
real services (after-commit work executed). A snapshot of the runs' main-measure scores
is stored at the first judgment and each time the count enters a new ten; τ looking
back compares the live scores with the snapshot a step earlier.
"""

from __future__ import annotations

import pytest
from django.urls import reverse
from scipy import stats

from judging import services as judging_services
from judging.models import Membership
from metrics import services as metrics_services
from metrics.live import store, tasks
from metrics.live.scoring import canonical_names
from metrics.models import Run, Scoreboard
from metrics.pool.models import RankingSnapshot
from metrics.pool.services import ranking_snapshot_take
from tests import factories
from tests.api_client import client_for, errors_of
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
Role = Membership.Role
ORDERS = {  # each run's ranking of d0..d9, per query
    "A": list(range(10)),
    "B": [9, 8, 7, 6, 5, 4, 3, 2, 1, 0],
    "C": [1, 3, 5, 7, 9, 0, 2, 4, 6, 8],
}


@pytest.fixture
def campaign(db):
    coll = factories.collection("stab", pool_depth=10, judges_per_pair=1)
    queries = [factories.query(coll, f"q{i}") for i in (1, 2)]
    docs = [factories.document(coll, f"d{i}") for i in range(10)]
    team = metrics_factories.team(coll)
    for tag, order in ORDERS.items():
        run = metrics_factories.run(
            coll, team, tag, rankings={q: [docs[i].pk for i in order] for q in queries}
        )
        metrics_services.pool_from_run(run=run, depth=coll.pool_depth)
    cora = factories.user("cora")
    factories.member(coll, cora, Role.COORDINATOR)
    user = factories.user("jay")
    factories.member(coll, user, Role.JUDGE)
    coll.refresh_from_db()
    return coll, queries, docs, cora, factories.human_judge(user)


def _grades():
    """Yield (query index, doc index, grade): q1 then q2, d0 first; A's top is relevant."""
    for q in (0, 1):
        for d in range(10):
            yield q, d, (3 if d < 3 else 1 if d < 5 else 0) if q == 0 else (d % 3)


def _judge(coll, queries, docs, judge, n, capture):
    seen = {}
    for i, (q, d, grade) in enumerate(_grades()):
        if i == n:
            break
        with capture(execute=True):
            judging_services.judgment_record(
                judge=judge, query=queries[q], document=docs[d], grade=grade
            )
        seen[i + 1] = _scores(coll)
    coll.refresh_from_db()
    return seen


def _scores(coll) -> dict[str, float | None]:
    measure = canonical_names(coll.measures[:1])[0]
    means = store.board_read(coll.pk).means()
    return {
        str(pk): means.get(pk, {}).get(measure) for pk in Run.objects.values_list("pk", flat=True)
    }


def test_snapshots_follow_the_judgments_a_stride_apart(
    campaign, django_capture_on_commit_callbacks
):
    coll, queries, docs, _cora, judge = campaign
    seen = _judge(coll, queries, docs, judge, 15, django_capture_on_commit_callbacks)
    snapshots = {s.judged: s for s in RankingSnapshot.objects.filter(collection=coll)}
    assert sorted(snapshots) == [1, 10]
    for judged, snapshot in snapshots.items():
        assert snapshot.scores == seen[judged]
        assert snapshot.measure == canonical_names(coll.measures[:1])[0]


def test_api_compares_with_the_ranking_a_step_ago(campaign, django_capture_on_commit_callbacks):
    coll, queries, docs, cora, judge = campaign
    seen = _judge(coll, queries, docs, judge, 15, django_capture_on_commit_callbacks)
    url = f"/api/v1/collections/{coll.slug}/pooling/stability/"
    body = client_for(cora).get(url, {"step": 5}).json()
    assert body["judged"] == 15 and body["step"] == 5 and body["open_pairs"] == 5
    runs = sorted(seen[15])
    # now (15) against the snapshot at or before 10: the one at 10; then 10 against 1
    expected = []
    for now, then in ((15, 10), (10, 1)):
        tau = stats.kendalltau([seen[now][r] for r in runs], [seen[then][r] for r in runs])
        expected.append({"judged": now, "then": then, "tau": pytest.approx(tau.statistic)})
    got = [{k: p[k] for k in ("judged", "then", "tau")} for p in body["history"]]
    assert got == expected
    assert body["looking_back"]["tau"] == pytest.approx(expected[0]["tau"])
    assert body["ahead"]["pairs"] == 5 and -1 <= body["ahead"]["mean"] <= 1
    assert body["state"] in ("moving", "stops-paying")
    significance = body["significance"]
    assert significance["then"] == 10 and significance["tested"] == 3
    held = significance["changed"] == 0 and significance["ahead"]["change"] <= 0.05
    assert body["state"] == (
        "stops-paying"
        if body["looking_back"]["tau"] >= 0.95 and body["ahead"]["mean"] >= 0.95 and held
        else "moving"
    )


def test_api_with_no_history_says_so_and_validates_its_parameters(campaign):
    coll, *_, cora, _judge = campaign
    url = f"/api/v1/collections/{coll.slug}/pooling/stability/"
    client = client_for(cora)
    body = client.get(url).json()
    assert (body["judged"], body["looking_back"], body["history"]) == (0, None, [])
    assert body["state"] == "unknown" and body["step"] == 100 and body["target"] == 0.95
    for params, field in (({"step": 0}, "step"), ({"target": "2"}, "target")):
        response = client.get(url, params)
        assert response.status_code == 400
        assert field in str(errors_of(response))


def test_every_pair_judged_stops_the_rule(campaign, django_capture_on_commit_callbacks):
    coll, queries, docs, cora, judge = campaign
    _judge(coll, queries, docs, judge, 20, django_capture_on_commit_callbacks)
    body = client_for(cora).get(f"/api/v1/collections/{coll.slug}/pooling/stability/").json()
    assert body["open_pairs"] == 0 and body["state"] == "done"
    assert body["ahead"] == {"mean": 1.0, "low": 1.0, "pairs": 0, "draws": 0}


def test_the_rescoring_task_takes_the_snapshot_a_stale_run_defers(campaign):
    coll, queries, docs, _cora, judge = campaign
    # recorded without running the after-commit work (as a bulk change leaves it)
    judging_services.judgment_record(judge=judge, query=queries[0], document=docs[0], grade=2)
    assert not RankingSnapshot.objects.exists()
    run = Run.objects.first()
    Run.objects.filter(pk=run.pk).update(scored_version=0)  # one run behind the list
    Scoreboard.objects.filter(collection=coll).update(version=0)
    assert ranking_snapshot_take(collection_id=coll.pk) is None
    tasks.rescore_queries(coll.pk, [queries[0].pk])  # rescoring catches up, then snapshots
    (snapshot,) = RankingSnapshot.objects.filter(collection=coll)
    assert snapshot.judged == 1 and snapshot.scores == _scores(coll)
    assert ranking_snapshot_take(collection_id=coll.pk) is None  # same ten: nothing new


def test_the_page_and_the_collection_panel(campaign, client, django_capture_on_commit_callbacks):
    coll, queries, docs, cora, judge = campaign
    _judge(coll, queries, docs, judge, 12, django_capture_on_commit_callbacks)
    client.force_login(cora)
    url = reverse("metrics:stability", args=[coll.slug])
    page = client.get(url, {"step": 5}).content.decode()
    assert "Is more judging still paying?" in page and "data-stability-history" in page
    panel = client.get(url, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in panel and 'data-state="' in panel
    # The metrics tabs are boosted links: they get the whole page, not the panel.
    boosted = client.get(url, headers={"HX-Request": "true", "HX-Boosted": "true"})
    assert "Is more judging still paying?" in boosted.content.decode()
    detail = reverse("judging:collection_detail", args=[coll.slug])
    detail = client.get(detail, {"tab": "stability"}).content.decode()  # the page's tab
    assert f'hx-get="{url}"' in detail
    bad = client.get(url, {"step": "-3"})
    assert bad.status_code == 200 and "field-error" in bad.content.decode()
