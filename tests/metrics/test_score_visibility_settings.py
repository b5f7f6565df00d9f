"""Coordinators set the score visibility and runs per day: the settings page and REST."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.models import Membership
from metrics.visibility.models import ScoreVisibility
from metrics.visibility.selectors import is_public, rules
from tests import factories
from tests.api_client import client_for
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def world():
    coll = factories.collection("vis")
    for i in range(40):
        factories.query(coll, f"q{i}")
    users = {name: factories.user(name) for name in ("cora", "alice", "judy")}
    factories.member(coll, users["cora"], Role.COORDINATOR)
    factories.member(coll, users["judy"], Role.JUDGE)
    metrics_factories.team(coll, "Alpha", [users["alice"]])
    return coll, users


def endpoint(coll) -> str:
    return reverse("metrics-api:score-visibility", args=[coll.slug])


def test_defaults_without_a_row(world):
    coll, users = world
    assert not ScoreVisibility.objects.exists()
    body = client_for(users["cora"]).get(endpoint(coll)).json()
    assert (body["mode"], body["runs_per_day"], body["round_decimals"]) == ("hidden", 5, 2)
    assert body["queries"] == 40


def test_coordinators_change_it_over_rest(world):
    coll, users = world
    api = client_for(users["cora"])
    response = api.patch(
        endpoint(coll), {"mode": "split", "public_share": 0.25, "runs_per_day": 3}, format="json"
    )
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["mode"], body["public_share"], body["runs_per_day"]) == ("split", 0.25, 3)
    row = ScoreVisibility.objects.get(collection=coll)
    expected = sum(is_public(seed=row.split_seed, qid=f"q{i}", share=0.25) for i in range(40))
    assert body["public_queries"] == expected
    assert "split_seed" not in body  # the seed stays on the server
    # A partial change keeps the rest.
    api.patch(endpoint(coll), {"min_queries": 7}, format="json")
    row.refresh_from_db()
    assert (row.mode, row.min_queries, row.runs_per_day) == ("split", 7, 3)


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("mode", "open"),
        ("public_share", 1.5),
        ("public_share", -0.1),
        ("min_queries", 0),
        ("runs_per_day", -1),
        ("runs_per_day", 10**12),
    ],
)
def test_bad_values_are_400_naming_the_field(world, field, value):
    coll, users = world
    response = client_for(users["cora"]).patch(endpoint(coll), {field: value}, format="json")
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {field}
    assert not ScoreVisibility.objects.exclude(mode="hidden").exists()


FIELDS = st.sampled_from(["mode", "public_share", "min_queries", "runs_per_day", "x"])
VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)


@settings(max_examples=40, deadline=None)
@given(body=st.dictionaries(FIELDS, VALUES))
def test_any_body_is_200_or_400_never_500(body):
    coll = factories.collection()
    cora = factories.user()
    factories.member(coll, cora, Role.COORDINATOR)
    response = client_for(cora).patch(endpoint(coll), body, format="json")
    assert response.status_code in (200, 400), response.content
    found = rules(collection=type(coll).objects.get(pk=coll.pk))
    assert 0.0 <= found.public_share <= 1.0 and found.min_queries >= 1


@pytest.mark.parametrize("raw", ['{"public_share": NaN}', '{"public_share": Infinity}'])
def test_non_finite_numbers_are_400(world, raw):
    coll, users = world
    response = client_for(users["cora"]).generic(
        "PATCH", endpoint(coll), raw, content_type="application/json"
    )
    assert response.status_code == 400
    assert not ScoreVisibility.objects.exists()


def test_only_coordinators(world):
    coll, users = world
    for name, status in (("alice", 403), ("judy", 403)):
        assert client_for(users[name]).get(endpoint(coll)).status_code == status
        patched = client_for(users[name]).patch(endpoint(coll), {"mode": "split"}, format="json")
        assert patched.status_code == status
    assert client_for(factories.user("stranger")).get(endpoint(coll)).status_code == 404
    assert not ScoreVisibility.objects.exists()


def test_settings_page_form(world):
    coll, users = world
    client = Client()
    client.force_login(users["cora"])
    url = reverse("metrics:collection_update", args=[coll.slug])
    html = client.get(url + "?tab=visibility").content.decode()  # the page has a tab a form
    assert 'id="score-visibility"' in html and "five one-document runs" in html
    assert 'id="settings-form"' not in html  # only the chosen tab is in the page
    response = client.post(
        url,
        {
            "action": "visibility",
            "mode": "aggregate",
            "min_queries": 12,
            "public_share": 0.5,
            "runs_per_day": 2,
        },
    )
    assert response.status_code == 303
    assert response["Location"] == url + "?tab=visibility"  # back to its own tab
    row = ScoreVisibility.objects.get(collection=coll)
    assert (row.mode, row.min_queries, row.runs_per_day) == ("aggregate", 12, 2)
    bad = client.post(
        url,
        {
            "action": "visibility",
            "mode": "aggregate",
            "min_queries": 0,
            "public_share": 2,
            "runs_per_day": 2,
        },
    )
    assert bad.status_code == 400
    assert "Nothing was changed." in bad.content.decode()
    assert 'id="score-visibility"' in bad.content.decode()  # refused on its own tab
    row.refresh_from_db()
    assert row.min_queries == 12
    # Teams see the mode's note on the leaderboard.
    team = Client()
    team.force_login(users["alice"])
    html = team.get(reverse("metrics:leaderboard", args=[coll.slug])).content.decode()
    assert 'data-score-visibility="aggregate"' in html and "at least 12 judged queries" in html


def test_the_split_is_stable_and_follows_the_share():
    qids = [f"topic-{i}" for i in range(2000)]
    half = {q for q in qids if is_public(seed=7, qid=q, share=0.5)}
    assert 900 < len(half) < 1100
    assert half == {q for q in qids if is_public(seed=7, qid=q, share=0.5)}  # stable
    quarter = {q for q in qids if is_public(seed=7, qid=q, share=0.25)}
    assert quarter < half  # a smaller share only moves queries to the private side
    other = {q for q in qids if is_public(seed=8, qid=q, share=0.5)}
    assert other != half
    assert not any(is_public(seed=7, qid=q, share=0.0) for q in qids)
    assert all(is_public(seed=7, qid=q, share=1.0) for q in qids)
