"""Teams writing their own search configurations, where the coordinators allow it.

Off (the default), live search is the coordinators'. On, a team member writes, tries and
runs configurations for their own teams and reads only those and their snapshots; the
schedules, the alerts and the LLM judge of new pairs stay the coordinators'.
"""

from __future__ import annotations

import pytest
from django.test import Client

from judging.models import Membership
from metrics.models import Team
from metrics.search import presets, runner
from metrics.search.models import SearchSnapshot
from tests import factories
from tests.api_client import client_for, errors_of
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.test_engines import FAST, configure

pytestmark = pytest.mark.django_db
BASE = "/api/v1/collections/search"
BODY = {
    "name": "mine",
    "endpoint": "elasticsearch",
    "path": "/docs/_search",
    "template": {"size": "{{k}}", "query": {"match": {"body": "{{query_text}}"}}},
    "depth": 10,
}


@pytest.fixture
def teams(setup, engine):
    coll, team, boss = setup
    tess, toby = factories.user("tess"), factories.user("toby")
    for user in (tess, toby):
        factories.member(coll, user, Membership.Role.TEAM)
    team.members.add(tess)
    other = Team.objects.create(collection=coll, name="other")
    other.members.add(toby)
    endpoint = endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    theirs = configure(coll, other, boss, endpoint)
    snap = runner.work(
        SearchSnapshot.objects.get(
            pk=client_for(boss)
            .post(f"{BASE}/search-snapshots/", {"configuration": theirs.pk}, format="json")
            .json()["id"]
        ),
        retries=FAST,
    )
    return coll, team, other, boss, tess, toby, theirs, snap


def test_off_by_default_and_a_coordinator_turns_it_on(teams):
    coll, _team, _other, boss, tess, _toby, _theirs, _snap = teams
    api = client_for(tess)
    assert api.get(f"{BASE}/search-configurations/").status_code == 403
    page = Client()
    page.force_login(tess)
    assert page.get(f"/c/{coll.slug}/search/").status_code == 403
    coordinator = Client()
    coordinator.force_login(boss)
    html = coordinator.get(f"/c/{coll.slug}/search/").content.decode()
    assert "data-search-by-teams" in html
    coordinator.post(f"/c/{coll.slug}/search/", {"action": "teams", "search_by_teams": "on"})
    coll.refresh_from_db()
    assert coll.search_by_teams
    assert page.post(f"/c/{coll.slug}/search/", {"action": "teams"}).status_code == 403
    assert client_for(boss).get(f"{BASE}/settings/").json()["search_by_teams"] is True


def test_a_team_writes_runs_and_reads_only_its_own(teams):
    coll, team, other, _boss, tess, toby, theirs, snap = teams
    coll.search_by_teams = True
    coll.save(update_fields=["search_by_teams"])
    api = client_for(tess)
    assert api.get(f"{BASE}/search-configurations/").json() == []  # not the other team's
    made = api.post(f"{BASE}/search-configurations/", {**BODY, "team": team.pk}, format="json")
    assert made.status_code == 201, made.json()
    refused = api.post(
        f"{BASE}/search-configurations/", {**BODY, "name": "x", "team": other.pk}, format="json"
    )
    assert refused.status_code == 400 and "team" in str(errors_of(refused))
    mine = made.json()["id"]
    assert api.get(f"{BASE}/search-configurations/{theirs.pk}/").status_code == 404
    assert (
        api.post(f"{BASE}/search-configurations/{theirs.pk}/tries/", {}, format="json").status_code
        == 404
    )
    assert (
        api.post(f"{BASE}/search-configurations/{mine}/tries/", {}, format="json").status_code
        == 200
    )
    started = api.post(f"{BASE}/search-snapshots/", {"configuration": mine}, format="json")
    assert started.status_code == 202
    runner.work(SearchSnapshot.objects.get(pk=started.json()["id"]), retries=FAST)
    listed = [s["id"] for s in api.get(f"{BASE}/search-snapshots/").json()]
    assert listed == [started.json()["id"]]
    assert api.get(f"{BASE}/search-snapshots/{snap.pk}/").status_code == 404
    diff = api.get(f"{BASE}/search-diffs/", {"a": snap.pk, "b": started.json()["id"]})
    assert diff.status_code == 400 and "a" in str(errors_of(diff))
    retry = api.post(f"{BASE}/search-snapshots/", {"retry_of": snap.pk}, format="json")
    assert retry.status_code == 400 and "retry_of" in str(errors_of(retry))
    # What stays the coordinators': the LLM judge of new pairs, schedules, alerts.
    assert (
        api.patch(
            f"{BASE}/search-configurations/{mine}/", {"auto_judge": None}, format="json"
        ).status_code
        == 403
    )
    assert api.get(f"{BASE}/search-configurations/{mine}/schedule/").status_code == 403
    assert api.get(f"{BASE}/search-checks/").status_code == 403
    # The other team's member sees none of it.
    assert client_for(toby).get(f"{BASE}/search-snapshots/").json()[0]["id"] == snap.pk
    assert client_for(toby).get(f"{BASE}/search-configurations/{mine}/").status_code == 404
    page = Client()
    page.force_login(tess)
    html = page.get(f"/c/{coll.slug}/search/").content.decode()
    assert "mine" in html and theirs.name not in html and "data-search-by-teams" not in html
    assert page.get(f"/c/{coll.slug}/search/{theirs.pk}/").status_code == 404
    detail = page.get(f"/c/{coll.slug}/search/{mine}/").content.decode()
    assert "data-auto-judge" not in detail and "data-schedule-link" not in detail
    assert page.get(f"/c/{coll.slug}/search/snapshots/{snap.pk}/").status_code == 404
    assert page.get(f"/c/{coll.slug}/search/{mine}/schedule/").status_code == 403
    assert "Search engines" in page.get(f"/c/{coll.slug}/").content.decode()
