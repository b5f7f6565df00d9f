"""Issue 32 item 9: creating a collection says a slug is taken only to who may create one.

Everyone else gets the same 403 whatever the slug (taken, free or malformed), over REST
and on the page, so the answer cannot be used to find out which collections exist.
"""

from __future__ import annotations

import pytest
from django.test import Client

from judging.models import Membership
from tests import factories
from tests.api_client import client_for

pytestmark = pytest.mark.django_db

SLUGS = ("secret-project", "free-slug", "bad slug!", "")


@pytest.fixture
def people(db):
    """Return a judge, a team member, a member of nothing, a coordinator and a staff user."""
    taken = factories.collection("secret-project")
    mine = factories.collection("mine")
    users = {
        "nobody": factories.user("nobody"),
        "judge": factories.user("judge"),
        "coordinator": factories.user("coordinator"),
        "staff": factories.user("staff", is_staff=True),
    }
    factories.member(mine, users["judge"], Membership.Role.JUDGE)
    factories.member(taken, users["judge"], Membership.Role.JUDGE)  # even a member of it
    factories.member(mine, users["coordinator"], Membership.Role.COORDINATOR)
    return users


@pytest.mark.parametrize("role", ["nobody", "judge"])
@pytest.mark.parametrize("encoding", ["json", "multipart"])
def test_callers_who_may_not_create_get_one_answer_whatever_the_slug(people, role, encoding):
    client = client_for(people[role])
    answers = {
        (r.status_code, r.content)
        for r in (
            client.post("/api/v1/collections/", {"slug": slug, "name": "X"}, format=encoding)
            for slug in SLUGS
        )
    }
    assert len(answers) == 1, answers
    ((status, _body),) = answers
    assert status == 403


@pytest.mark.parametrize("role", ["nobody", "judge"])
def test_the_page_gives_the_same_refusal_whatever_the_slug(people, role):
    client = Client()
    client.force_login(people[role])
    for slug in SLUGS:  # (each page carries its own nonce: compare what it says)
        response = client.post("/new/", {"slug": slug, "name": "X"})
        assert response.status_code == 403
        assert b"needs the coordinator role" in response.content
        assert b"exists" not in response.content and b"slug" not in response.content.lower()


@pytest.mark.parametrize("role", ["coordinator", "staff"])
def test_callers_who_may_create_learn_that_a_slug_is_taken(people, role):
    client = client_for(people[role])
    taken = client.post("/api/v1/collections/", {"slug": "secret-project", "name": "X"})
    assert taken.status_code == 400
    assert taken.json()["errors"][0]["field"] == "slug"
    fresh = client.post("/api/v1/collections/", {"slug": "free-slug", "name": "X"})
    assert fresh.status_code == 201
