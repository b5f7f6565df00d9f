"""A member who opens a page of another role is told which role it needs (issue 20 item 4)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from judging.models import Membership
from judging.selectors import role_refusal
from tests import factories

Role = Membership.Role


@pytest.fixture
def coll(db):
    coll = factories.collection("roles")
    for name, role in (("tess", Role.TEAM), ("judy", Role.JUDGE), ("cora", Role.COORDINATOR)):
        factories.member(coll, factories.user(name), role)
    return coll


@pytest.mark.parametrize(
    ("user", "page", "message"),
    [
        (
            "tess",
            "judging:judge_next",
            "judges and coordinators; you are a team member here",
        ),
        ("judy", "metrics:leaderboard", "coordinators and team members; you are a judge here"),
        (
            "judy",
            "judging:collection_import",
            "for the collection&#x27;s coordinators; you are a judge",
        ),
    ],
)
def test_the_403_page_names_the_role(client, coll, user, page, message):
    client.force_login(coll.memberships.get(user__username=user).user)
    response = client.get(reverse(page, args=[coll.slug]))
    assert response.status_code == 403
    html = response.content.decode()
    assert message in html and "<h1>Not for your role</h1>" in html


def test_strangers_still_get_404_so_collections_do_not_leak(client, coll):
    client.force_login(factories.user("eve"))
    assert client.get(reverse("judging:judge_next", args=[coll.slug])).status_code == 404
    assert client.get(reverse("judging:judge_next", args=["nope"])).status_code == 404


def test_role_refusal_reads_well():
    assert role_refusal(
        needed=(Role.ADJUDICATOR, Role.COORDINATOR), held={Role.JUDGE, Role.TEAM}
    ) == (
        "This page is for the collection's adjudicators and coordinators; "
        "you are a judge and team member here."
    )
    assert role_refusal(needed=(Role.JUDGE,), held={Role.ADJUDICATOR}).endswith(
        "you are an adjudicator here."
    )
