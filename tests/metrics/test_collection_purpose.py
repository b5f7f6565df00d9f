"""Creating a collection asks what it is for; the purpose sets the visibility defaults.

An internal evaluation shows teams their live scores and has no daily run budget; a
shared task hides scores until publication and allows five runs a day. Both stay
changeable under Settings › Visibility (and .../score-visibility/).
"""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse

from judging.models import Collection, Membership
from metrics.visibility.models import ScoreVisibility
from metrics.visibility.selectors import Exposure, budgets, rules, score_policy
from metrics.visibility.services import budget_take, score_visibility_update
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def boss():
    user = factories.user("boss")
    factories.member(factories.collection("first"), user, Role.COORDINATOR)
    return user


def page(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_form_asks_the_purpose_says_the_trade_off_and_has_one_create_button(boss):
    html = page(boss).get(reverse("judging:collection_create")).content.decode()
    assert html.count('type="radio" name="purpose"') == 2
    assert "Internal evaluation" in html and "Shared task" in html
    assert "Live scores let a team infer grades that are not published yet" in html
    assert len(re.findall(r"<button[^>]*>\s*Create\s*</button>", html)) == 1
    assert "<legend>What is it for?</legend>" in html


def test_the_purpose_must_be_chosen_in_the_browser(boss):
    refused = page(boss).post(reverse("judging:collection_create"), {"name": "Soil"})
    assert refused.status_code == 400
    assert "Choose what the collection is for." in refused.content.decode()
    assert not Collection.objects.filter(name="Soil").exists()


def test_an_internal_evaluation_shows_live_scores_and_has_no_daily_limit(boss):
    created = page(boss).post(
        reverse("judging:collection_create"),
        {"name": "Search quality Q3", "purpose": "internal", "judges_per_pair": 1},
    )
    assert created.status_code == 303
    coll = Collection.objects.get(name="Search quality Q3")
    assert (coll.slug, coll.purpose) == ("search-quality-q3", "internal")
    found = rules(collection=coll)
    assert (found.mode, found.runs_per_day, found.stored) == ("live", None, False)
    assert score_policy(collection=coll, is_coordinator=False).exposure == Exposure.FULL
    alice = factories.user("alice")
    team = metrics_factories.team(coll, "Alpha", [alice])
    assert [(b.left, b.limit) for b in budgets(collection=coll, teams=[team])] == [(None, None)]
    assert all(budget_take(collection=coll, team_id=team.pk, user=alice) for _ in range(20))


def test_a_shared_task_hides_scores_and_keeps_the_daily_budget(boss):
    page(boss).post(
        reverse("judging:collection_create"),
        {"name": "TREC-ish", "slug": "trec-ish", "purpose": "shared_task", "judges_per_pair": 1},
    )
    coll = Collection.objects.get(slug="trec-ish")
    found = rules(collection=coll)
    assert (coll.purpose, found.mode, found.runs_per_day) == ("shared_task", "hidden", 5)
    assert score_policy(collection=coll, is_coordinator=False).exposure == Exposure.NONE


def test_every_setting_stays_changeable_and_first_changes_start_from_the_purpose(boss):
    coll = factories.collection("internal", purpose="internal")
    factories.member(coll, boss, Role.COORDINATOR)
    api = client_for(boss)
    url = reverse("metrics-api:score-visibility", args=[coll.slug])
    assert (api.get(url).json()["mode"], api.get(url).json()["runs_per_day"]) == ("live", None)
    changed = api.patch(url, {"min_queries": 7}, format="json").json()  # the rest kept
    assert (changed["mode"], changed["runs_per_day"], changed["min_queries"]) == ("live", None, 7)
    changed = api.patch(url, {"mode": "hidden", "runs_per_day": 3}, format="json").json()
    assert (changed["mode"], changed["runs_per_day"]) == ("hidden", 3)
    assert api.patch(url, {"runs_per_day": None}, format="json").json()["runs_per_day"] is None
    score_visibility_update(collection=coll, mode="split")  # runs_per_day kept
    assert ScoreVisibility.objects.get(collection=coll).runs_per_day is None


def test_the_settings_form_takes_an_empty_daily_limit_as_none(boss):
    coll = factories.collection("shared")
    factories.member(coll, boss, Role.COORDINATOR)
    url = reverse("metrics:collection_update", args=[coll.slug])
    form = {"action": "visibility", "mode": "live", "min_queries": "25", "public_share": "0.5"}
    saved = page(boss).post(url, {**form, "runs_per_day": ""})
    assert saved.status_code == 303
    row = ScoreVisibility.objects.get(collection=coll)
    assert (row.mode, row.runs_per_day) == ("live", None)
    html = page(boss).get(url + "?tab=visibility").content.decode()
    assert "Publish the leaderboard" in html and "Publish the judgment list" in html


def test_rest_creates_with_a_purpose_and_a_derived_short_name(boss):
    api = client_for(boss)
    made = api.post("/api/v1/collections/", {"name": "Café reviews"}, format="json")
    assert made.status_code == 201, made.json()
    body = made.json()
    assert (body["slug"], body["purpose"]) == ("cafe-reviews", "shared_task")  # as before
    made = api.post(
        "/api/v1/collections/", {"name": "Dev eval", "purpose": "internal"}, format="json"
    )
    assert made.status_code == 201 and made.json()["purpose"] == "internal"
    assert rules(collection=Collection.objects.get(slug="dev-eval")).mode == "live"
    wrong = api.post("/api/v1/collections/", {"name": "X", "purpose": "open"}, format="json")
    assert wrong.status_code == 400 and "purpose" in str(wrong.json())


def test_a_short_name_clash_is_a_clear_error_naming_a_free_one(boss):
    api = client_for(boss)
    clash = api.post("/api/v1/collections/", {"name": "First"}, format="json")
    assert clash.status_code == 400
    text = str(clash.json())
    assert "'first' (made from the name) is taken" in text and "'first-2'" in text
    browser = page(boss).post(
        reverse("judging:collection_create"),
        {"name": "Other", "slug": "first", "purpose": "internal", "judges_per_pair": 1},
    )
    assert browser.status_code == 400
    assert "is taken by another collection; choose another, such as" in browser.content.decode()
    nothing = api.post("/api/v1/collections/", {"name": "!!!"}, format="json")
    assert nothing.status_code == 400 and "no letters or digits" in str(nothing.json())


def test_the_purpose_is_constrained_in_the_database():
    from django.db import IntegrityError, transaction

    coll = factories.collection("c")
    with pytest.raises(IntegrityError), transaction.atomic():
        Collection.objects.filter(pk=coll.pk).update(purpose="other")
