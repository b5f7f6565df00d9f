"""The judges' queue follows the collection's pooling strategy live, as grades arrive.

A hand-made campaign (one query, run A ranks d1 d2 d3, run B ranks d4 d5 d6 d7) where
move-to-front's order is known: stay with a run after a relevant document, move to the
next run with the top priority after a miss (Cormack, Palmer and Clarke 1998). Judging
goes through the real services and the after-commit replanning.
"""

from __future__ import annotations

import numpy as np
import pytest
from django.core.exceptions import ValidationError

from judging import selectors
from judging import services as judging_services
from judging.models import Membership, PoolEntry
from judging.progress import services as progress_services
from metrics import services as metrics_services
from metrics.pool import selectors as pool_selectors
from metrics.pool import services
from metrics.pool.models import RECOMMENDATION, STRATEGY_CHOICES, PoolingPolicy
from metrics.pool.strategies import RECOMMENDED, STRATEGIES, Campaign, make_strategy
from metrics.pool.strategies import plan as plan_of
from tests import factories
from tests.api_client import client_for, errors_of
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def campaign(db):
    coll = factories.collection("mtf", pool_depth=10, judges_per_pair=1)
    query = factories.query(coll, "q1")
    docs = {f"d{i}": factories.document(coll, f"d{i}") for i in range(1, 8)}
    team = metrics_factories.team(coll)
    for tag, names in (("A", ["d1", "d2", "d3"]), ("B", ["d4", "d5", "d6", "d7"])):
        run = metrics_factories.run(coll, team, tag, rankings={query: [docs[n].pk for n in names]})
        metrics_services.pool_from_run(run=run, depth=coll.pool_depth)
    coordinator = factories.user("cora")
    factories.member(coll, coordinator, Role.COORDINATOR)
    judges = []
    for name in ("jay", "kim"):
        user = factories.user(name)
        factories.member(coll, user, Role.JUDGE)
        judges.append(factories.human_judge(user))
    coll.refresh_from_db()
    return coll, query, docs, coordinator, judges


def _next(coll, judge) -> str | None:
    entry = selectors.next_pair(judge=judge, collection=coll)
    return entry and entry.document.external_id


def _grade(coll, judge, query, doc, grade, capture) -> None:
    with capture(execute=True):
        judging_services.judgment_record(judge=judge, query=query, document=doc, grade=grade)
    coll.refresh_from_db()


def test_the_queue_follows_move_to_front_grade_by_grade(
    campaign, django_capture_on_commit_callbacks
):
    coll, query, docs, cora, (jay, _kim) = campaign
    with django_capture_on_commit_callbacks(execute=True):
        policy = services.pooling_policy_set(
            collection=coll, actor=cora, strategy="mtf", wave_size=1, horizon=3
        )
    assert (policy.version, policy.planned_pairs) == (1, 3)
    plan = [(e.document.external_id, e.priority) for e in pool_selectors.pool_plan(collection=coll)]
    # nothing known: A's d1, then (no grade, so no reason to stay) B's d4, then A's d2
    assert plan == [("d1", 0), ("d4", 1), ("d2", 2)]

    seen = []
    for grade_of in ({"d1": 3}, {"d2": 0}, {"d4": 0}, {"d3": 2}):
        name = _next(coll, jay)
        seen.append(name)
        _grade(coll, jay, query, docs[name], grade_of[name], django_capture_on_commit_callbacks)
    # d1 relevant: stay with A (d2); d2 missed: B (d4); d4 missed: both at -1, A again (d3)
    assert seen == ["d1", "d2", "d4", "d3"]
    assert _next(coll, jay) == "d5"  # d3 was relevant but A is done: B's next
    assert PoolingPolicy.objects.get().planned_version == coll.judgments_version


def test_under_depth_k_nothing_is_planned_and_switching_back_clears_the_plan(
    campaign, django_capture_on_commit_callbacks
):
    coll, query, docs, cora, (jay, _kim) = campaign
    assert services.pool_replan(collection_id=coll.pk) is None  # no policy: depth-k
    services.pooling_policy_set(collection=coll, actor=cora, strategy="thompson", horizon=5)
    assert PoolEntry.objects.filter(collection=coll, priority__isnull=False).count() == 5
    back = services.pooling_policy_set(collection=coll, actor=cora, strategy="depth")
    assert back.version == 2
    assert not PoolEntry.objects.filter(collection=coll, priority__isnull=False).exists()
    _grade(coll, jay, query, docs["d1"], 1, django_capture_on_commit_callbacks)
    assert not PoolEntry.objects.filter(collection=coll, priority__isnull=False).exists()


def test_started_pairs_stay_planned_until_they_have_their_judges(
    campaign, django_capture_on_commit_callbacks
):
    coll, query, docs, cora, (jay, kim) = campaign
    coll.judges_per_pair = 2
    coll.save(update_fields=["judges_per_pair"])
    progress_services.progress_rebuild(collection=coll)
    services.pooling_policy_set(collection=coll, actor=cora, strategy="mtf", wave_size=1, horizon=2)
    assert _next(coll, jay) == "d1"
    _grade(coll, jay, query, docs["d1"], 0, django_capture_on_commit_callbacks)
    d1 = PoolEntry.objects.get(collection=coll, document=docs["d1"])
    assert (d1.graded_count, d1.is_open, d1.priority) == (1, True, 0)  # started: wave 0
    # d1 missed: move-to-front plans B next; kim, who has not judged d1, gets it in wave 0
    planned = dict(
        PoolEntry.objects.filter(collection=coll, priority__isnull=False).values_list(
            "document__external_id", "priority"
        )
    )
    assert planned == {"d1": 0, "d4": 0, "d5": 1}
    assert _next(coll, jay) == "d4"
    assert {_next(coll, kim)} <= {"d1", "d4"}
    _grade(coll, kim, query, docs["d1"], 0, django_capture_on_commit_callbacks)
    d1.refresh_from_db()
    assert (d1.graded_count, d1.is_open, d1.priority) == (2, False, None)


def test_a_new_run_and_a_repool_replan(campaign, django_capture_on_commit_callbacks):
    coll, query, _docs, cora, _judges = campaign
    services.pooling_policy_set(collection=coll, actor=cora, strategy="mtf", wave_size=1, horizon=1)
    extra = factories.document(coll, "d8")
    team = metrics_factories.team(coll)
    with django_capture_on_commit_callbacks(execute=True):
        run = metrics_factories.run(coll, team, "C", rankings={query: [extra.pk]})
        metrics_services.pool_from_run(run=run, depth=coll.pool_depth)
        metrics_services.runs_repool(collection=coll, depth=10)
    policy = PoolingPolicy.objects.get()
    assert policy.planned_runs == 3


def test_policy_versions_and_field_errors(campaign):
    coll, _query, _docs, cora, _judges = campaign
    first = services.pooling_policy_set(collection=coll, actor=cora, strategy="mm-ns")
    assert services.pooling_policy_set(collection=coll, actor=cora, strategy="mm-ns") is None
    second = services.pooling_policy_set(collection=coll, actor=cora, strategy="mm-ns", seed=4)
    assert (first.version, second.version) == (1, 2)
    assert [p.version for p in pool_selectors.pooling_history(collection=coll)] == [2, 1]
    with pytest.raises(ValidationError) as error:
        services.pooling_policy_set(
            collection=coll, actor=cora, strategy="nope", wave_size=0, rel_level=9
        )
    assert set(error.value.message_dict) == {"strategy", "wave_size", "rel_level"}
    assert PoolingPolicy.objects.filter(collection=coll).count() == 2


def test_the_model_offers_exactly_the_engine_strategies_and_llm_checks():
    # llm-check needs LLM grades, which only a live collection has (not the simulation)
    assert [name for name, _ in STRATEGY_CHOICES] == [*STRATEGIES, "llm-check"]


def test_swap_plans_the_pairs_that_decide_the_runs(campaign):
    _coll, _query, _docs, cora, _judges = campaign
    # Both runs rank s first: its grade moves both the same and cannot reorder them, so
    # swap plans a2 and b2 (second in one run only) before it; depth-k would take s first.
    coll = factories.collection("swap", pool_depth=3, judges_per_pair=1)
    query = factories.query(coll, "q1")
    docs = {name: factories.document(coll, name) for name in ("s", "a2", "a3", "b2", "b3")}
    team = metrics_factories.team(coll)
    for tag, names in (("A", ["s", "a2", "a3"]), ("B", ["s", "b2", "b3"])):
        run = metrics_factories.run(coll, team, tag, rankings={query: [docs[n].pk for n in names]})
        metrics_services.pool_from_run(run=run, depth=coll.pool_depth)
    coll.refresh_from_db()
    services.pooling_policy_set(
        collection=coll, actor=cora, strategy="swap", cutoff=2, wave_size=2, horizon=4
    )
    plan = [e.document.external_id for e in pool_selectors.pool_plan(collection=coll)]
    assert len(plan) == 4
    assert set(plan[:2]) == {"a2", "b2"}
    # wave 1: nothing left within the cut-off can reorder the runs, so depth order (s
    # first, then a3); the listing sorts a wave's pairs by document id. (The default
    # explore share, one pick in ten, takes no depth-order pick among the first four.)
    assert set(plan[2:]) == {"s", "a3"}


def test_hybrid_plans_the_documents_of_the_run_the_unjudged_part_underrates(campaign):
    coll, _query, _docs, cora, _judges = campaign
    # Nothing judged: every grade has the prior's mean 2 and variance 2; no ideal yet
    # (scale 1). A's three and B's four documents are all unjudged, so the unjudged part
    # adds 2 * c4 (c_k = 1 / log2(k + 1)) more to B than to A, and the tied pair counts
    # 1/2 * (1/1 + 2/2) = 1. B's document at rank k weighs 2 * 2 * c_k * 2 c4 - 2 c_k^2
    # = c_k (3.45 - 2 c_k): 1.45, 1.38, 1.22, 1.11; A's weigh nothing (they would widen
    # the gap). So the plan is B's four documents, in rank order.
    services.pooling_policy_set(collection=coll, actor=cora, strategy="hybrid", horizon=4)
    plan = [e.document.external_id for e in pool_selectors.pool_plan(collection=coll)]
    assert sorted(plan) == ["d4", "d5", "d6", "d7"]  # one wave, listed by document id


def test_steady_plans_live_through_rest_and_follows_each_grade(
    campaign, django_capture_on_commit_callbacks
):
    coll, query, docs, cora, (jay, _kim) = campaign
    url = f"/api/v1/collections/{coll.slug}/pooling/"
    api = client_for(cora)
    body = api.get(url).json()
    recommended = [s["name"] for s in body["strategies"] if s["recommended"]]
    assert recommended == [RECOMMENDED] == ["steady"]
    assert body["recommendation"] == RECOMMENDATION and "depth-k" in body["recommendation"]
    with django_capture_on_commit_callbacks(execute=True):
        changed = api.patch(url, {"strategy": "steady", "wave_size": 1, "horizon": 2})
    assert changed.status_code == 200, changed.content
    assert (changed.json()["strategy"], changed.json()["planned_pairs"]) == ("steady", 2)
    # Nothing known (test_steady.py works it by hand): B's unjudged part is larger, and
    # only each run's frontier weighs, so B's documents from the top down.
    plan = [(p["document"], p["wave"]) for p in api.get(url + "plan/").json()["results"]]
    assert plan == [("d4", 0), ("d5", 1)]
    for name, grade in (("d4", 0), ("d5", 3)):
        _grade(coll, jay, query, docs[name], grade, django_capture_on_commit_callbacks)
        # the live plan is the strategy replayed over the live grades (plan())
        campaign_ = Campaign.from_rankings(
            {"A": {"q1": ["d1", "d2", "d3"]}, "B": {"q1": ["d4", "d5", "d6", "d7"]}}
        )
        known = {"d4": 0.0} if name == "d4" else {"d4": 0.0, "d5": 3.0}
        grades = [np.array([known.get(n, np.nan) for n in campaign_.docnos[0]])]
        expected = [
            campaign_.docnos[0][d]
            for _, d in plan_of(make_strategy("steady", campaign_), grades, 2)
        ]
        live = [e.document.external_id for e in pool_selectors.pool_plan(collection=coll)]
        assert live == expected, name
    html = _settings_page(coll, cora)
    assert 'id="pooling-recommendation"' in html and "Steady is recommended" in html


def test_the_settings_form_sets_steady(campaign, client):
    coll, _query, _docs, cora, _judges = campaign
    client.force_login(cora)
    form = {
        "action": "pooling",
        "strategy": "steady",
        "wave_size": "1",
        "horizon": "2",
        "rel_level": "1",
        "cutoff": "10",
        "seed": "0",
        "audit_percent": "10",
    }
    page = client.post(f"/c/{coll.slug}/settings/", form, follow=True).content.decode()
    assert "Pooling policy version 1: Steady, 2 pairs planned." in page
    planned = pool_selectors.pool_plan(collection=coll)
    assert [(e.document.external_id, e.priority) for e in planned] == [("d4", 0), ("d5", 1)]


def _settings_page(coll, user) -> str:
    from django.test import Client

    client = Client()
    client.force_login(user)
    return client.get(f"/c/{coll.slug}/settings/?tab=pooling").content.decode()


def test_rest_reads_and_changes_the_policy_for_coordinators_only(campaign):
    coll, _query, _docs, cora, (jay, _kim) = campaign
    url = f"/api/v1/collections/{coll.slug}/pooling/"
    api = client_for(cora)
    body = api.get(url).json()
    assert (body["strategy"], body["version"], body["history"]) == ("depth", 0, [])
    assert [s["name"] for s in body["strategies"]] == [*STRATEGIES, "llm-check"]
    changed = api.patch(url, {"strategy": "mtf", "wave_size": 1, "horizon": 2}, format="json")
    assert changed.status_code == 200, changed.content
    body = changed.json()
    assert (body["strategy"], body["version"], body["planned_pairs"]) == ("mtf", 1, 2)
    assert body["history"][0]["actor"] == "cora"
    plan = api.get(url + "plan/").json()
    assert [(p["document"], p["wave"]) for p in plan["results"]] == [("d1", 0), ("d4", 1)]
    bad = api.patch(url, {"strategy": "best", "horizon": -1}, format="json")
    assert bad.status_code == 400
    assert {e["field"] for e in errors_of(bad)} == {"strategy", "horizon"}
    assert body["audit_percent"] == 10  # the default share of llm-check's random audit
    bad = api.patch(url, {"audit_percent": 101}, format="json")
    assert bad.status_code == 400 and [e["field"] for e in errors_of(bad)] == ["audit_percent"]
    audited = api.patch(url, {"strategy": "llm-check", "audit_percent": 30}, format="json")
    assert audited.status_code == 200, audited.content
    assert (audited.json()["audit_percent"], audited.json()["version"]) == (30, 2)
    assert audited.json()["history"][0]["audit_percent"] == 30
    checks = api.get(f"/api/v1/collections/{coll.slug}/agreement/llm/").json()["checks"]
    assert [g["label"] for g in checks["groups"]][-1] == "random audit"
    judge_api = client_for(jay.user)
    assert judge_api.get(url).status_code == 403
    assert judge_api.patch(url, {"strategy": "depth"}, format="json").status_code == 403
    assert judge_api.get(url + "plan/").status_code == 403
    assert client_for(factories.user("stranger")).get(url).status_code == 404


def test_the_settings_page_sets_a_version_and_shows_the_history(campaign, client):
    coll, _query, _docs, cora, (jay, _kim) = campaign
    url = f"/c/{coll.slug}/settings/"
    client.force_login(cora)
    form = {
        "action": "pooling",
        "strategy": "mtf",
        "wave_size": "1",
        "horizon": "2",
        "rel_level": "1",
        "cutoff": "10",
        "seed": "0",
        "audit_percent": "10",
    }
    response = client.post(url, form, follow=True)
    assert response.status_code == 200
    page = response.content.decode()
    assert "Pooling policy version 1: Move-to-front, 2 pairs planned." in page
    assert "Version 1," in page and "by cora" in page
    assert PoolEntry.objects.filter(collection=coll, priority__isnull=False).count() == 2
    bad = client.post(url, {**form, "strategy": "best", "wave_size": "0"})
    assert bad.status_code == 400
    assert "The pooling policy was not changed." in bad.content.decode()
    assert PoolingPolicy.objects.filter(collection=coll).count() == 1
    client.force_login(jay.user)
    assert client.post(url, form).status_code == 403
