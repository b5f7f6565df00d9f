"""The metrics admin: teams grant the team role; runs are read-only and deleted via services."""

from __future__ import annotations

import pytest

from judging.models import Membership
from metrics import services
from metrics.models import Run, Team
from tests import factories
from tests.metrics.live.test_scores import trec

pytestmark = pytest.mark.django_db


@pytest.fixture
def admin_client(client, coll):
    boss = factories.user("boss", is_staff=True, is_superuser=True)
    client.force_login(boss)
    return client


def test_team_members_added_in_admin_get_the_team_role(admin_client, coll):
    member = factories.user("m1")
    response = admin_client.post(
        "/admin/metrics/team/add/",
        {"collection": coll.pk, "name": "Blue", "members": [member.pk]},
    )
    assert response.status_code == 302, response.content[:500]
    assert Team.objects.get(name="Blue").members.get() == member
    assert Membership.objects.filter(
        collection=coll, user=member, role=Membership.Role.TEAM
    ).exists()


def test_runs_are_read_only_and_deleted_with_their_file(
    admin_client, coll, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.MEDIA_ROOT = tmp_path
    factories.query(coll, "q1")
    team = services.team_create(collection=coll, name="Red")
    run = services.run_submit(
        collection=coll,
        team=team,
        tag="r1",
        content=trec([("q1", "d1", 1.0)]),
        filename="r1.txt",
        user=None,
    )
    assert admin_client.get("/admin/metrics/run/add/").status_code == 403
    page = admin_client.get(f"/admin/metrics/run/{run.pk}/change/")
    assert page.status_code == 200 and b"r1" in page.content
    stored = tmp_path / run.source_file.name
    assert stored.exists()
    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post(f"/admin/metrics/run/{run.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Run.objects.exists()
    assert not stored.exists()
