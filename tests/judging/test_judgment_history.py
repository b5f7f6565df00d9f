"""The label history page of a pair (issue 34, item 7): every event, who, grade, when, how."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from judging import services
from judging.adjudication import services as adjudication
from judging.models import JudgmentEvent, Membership
from tests import factories

pytestmark = pytest.mark.django_db
Role = Membership.Role


@pytest.fixture
def pair(coll):
    """judy grades 3, changes to 1 (browser); jim grades 4 over the API; an LLM grades 2.

    Then cora (coordinator) sets a final grade of 2. Returns the users, query and document.
    """
    q, d = factories.query(coll, "q1"), factories.document(coll, "d1")
    factories.pool_entry(coll, q, d)
    users = {name: factories.user(name) for name in ("cora", "judy", "jim", "ada", "tess")}
    factories.member(coll, users["cora"], Role.COORDINATOR)
    factories.member(coll, users["judy"], Role.JUDGE)
    factories.member(coll, users["jim"], Role.JUDGE)
    factories.member(coll, users["ada"], Role.ADJUDICATOR)
    factories.member(coll, users["tess"], Role.TEAM)
    judy = services.judge_for_user(user=users["judy"])
    jim = services.judge_for_user(user=users["jim"])
    record = services.judgment_record
    record(judge=judy, query=q, document=d, grade=3, actor=users["judy"])
    record(judge=judy, query=q, document=d, grade=1, note="misread", actor=users["judy"])
    record(judge=jim, query=q, document=d, grade=4, channel="api", actor=users["jim"])
    record(judge=factories.llm_judge("gpt-x"), query=q, document=d, grade=2, channel="llm")
    adjudication.adjudication_record(
        query=q, document=d, grade=2, reason="reads as relevant", actor=users["cora"]
    )
    return users, q, d


def _rows(client, user, q, d):
    client.force_login(user)
    response = client.get(reverse("judging:judgment_history", args=["demo", q.pk, d.pk]))
    if response.status_code != 200:
        return response.status_code, []
    body = response.content.decode()
    table = body[body.index('id="label-history"') :]
    rows = re.findall(r"<tr data-event=\"(\w+)\">(.*?)</tr>", table, re.S)
    cells = [
        (
            action,
            [
                " ".join(re.sub(r"<[^>]+>", " ", c).split())
                for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            ],
        )
        for action, row in rows
    ]
    return response.status_code, cells


def test_a_coordinator_sees_every_event_with_names_and_provenance(client, pair):
    users, q, d = pair
    status, rows = _rows(client, users["cora"], q, d)
    assert status == 200
    events = JudgmentEvent.objects.filter(query=q, document=d).order_by("at", "pk")
    assert len(rows) == events.count() == 5
    # When (as stored), who, change, label, note or reason, evidence, through (and by whom).
    assert [r[1][0] for r in rows] == [e.at.strftime("%Y-%m-%d %H:%M:%S") for e in events]
    assert [(a, c[1:]) for a, c in rows] == [
        ("create", ["judy", "Created", "3 · Highly relevant", "", "", "Browser by judy"]),
        (
            "change",
            [
                "judy",
                "Changed",
                "3 · Highly relevant → 1 · Marginally relevant",
                "misread",
                "",
                "Browser by judy",
            ],
        ),
        ("create", ["jim", "Created", "4 · Perfect match", "", "", "API by jim"]),
        ("create", ["gpt-x LLM", "Created", "2 · Relevant", "", "", "LLM judge run"]),
        (
            "create",
            [
                "Final grade",
                "Created",
                "2 · Relevant",
                "reads as relevant",
                "",
                "Adjudication by cora",
            ],
        ),
    ]


def test_an_adjudicator_sees_every_event_with_judges_numbered(client, pair):
    users, q, d = pair
    status, rows = _rows(client, users["ada"], q, d)
    assert status == 200 and len(rows) == 5
    assert [c[1] for _a, c in rows] == [
        "Judge 1",
        "Judge 1",
        "Judge 2",
        "Judge 3 LLM",
        "Final grade",
    ]
    assert [c[6] for _a, c in rows] == [
        "Browser",
        "Browser",
        "API",
        "LLM judge run",
        "Adjudication by cora",
    ]


def test_a_judge_sees_only_their_own_label_and_others_nothing(client, pair):
    users, q, d = pair
    status, rows = _rows(client, users["judy"], q, d)
    assert status == 200
    assert [(a, c[1], c[3]) for a, c in rows] == [
        ("create", "judy", "3 · Highly relevant"),
        ("change", "judy", "3 · Highly relevant → 1 · Marginally relevant"),
    ]
    other = factories.document(q.collection, "d2")
    client.force_login(users["judy"])
    url = reverse("judging:judgment_history", args=["demo", q.pk, other.pk])
    assert client.get(url).status_code == 404  # no label of hers there
    assert _rows(client, users["tess"], q, d)[0] in (403, 404)  # teams see no labels


def test_the_page_is_linked_from_my_judgments_and_the_adjudication_page(client, pair):
    users, q, d = pair
    url = reverse("judging:judgment_history", args=["demo", q.pk, d.pk])
    client.force_login(users["judy"])
    assert url in client.get(reverse("judging:judgment_list", args=["demo"])).content.decode()
    client.force_login(users["ada"])
    page = client.get(reverse("judging:pair_adjudicate", args=["demo", q.pk, d.pk]))
    assert url in page.content.decode()


def test_the_history_is_read_in_one_query(pair, django_assert_num_queries):
    from judging import selectors

    _users, q, d = pair
    with django_assert_num_queries(1):
        events = selectors.pair_history(collection=q.collection, query_id=q.pk, document_id=d.pk)
    assert [e.judge for e in events] == ["judy", "judy", "jim", "gpt-x", ""]
    assert [e.actor for e in events] == ["judy", "judy", "jim", "", "cora"]


def test_the_history_box_is_reachable_by_keyboard_and_named(client, pair):
    """Issue 41 item 6: on a phone the box scrolls up and down; Tab must reach it."""
    users, q, d = pair
    client.force_login(users["cora"])
    body = client.get(reverse("judging:judgment_history", args=["demo", q.pk, d.pk])).content
    box = re.search(r'<div class="table-scroll list-box"([^>]*)>', body.decode())
    assert box, "no list box around the history"
    assert 'tabindex="0"' in box.group(1)
    assert 'role="region"' in box.group(1)
    assert 'aria-label="Label history"' in box.group(1)
