"""*Mark as gold* where a coordinator looks at a pair (issue 41, item 6).

The adjudication page, the disagreement rows, the pool and a label's history link to the
gold pairs form filled in with the pair (and the final grade, when one is set); judges and
adjudicators see no such link, and what a link carries is checked like typed input.
"""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.urls import reverse

from judging import services as judging_services
from judging.adjudication import services as adjudication_services
from judging.models import Membership
from judging.quality.forms import GoldPairForm
from judging.quality.models import GoldPair
from tests import factories

Role = Membership.Role
pytestmark = pytest.mark.django_db

LINK = re.compile(r'<a [^>]*data-mark-gold href="([^"]+)"')


@pytest.fixture
def pair():
    """Two pairs two judges disagree on (0 and 4), pooled; d1 has a final grade of 3."""
    coll = factories.collection("g", disagreement_spread=2)
    q, d = factories.query(coll, "q1"), factories.document(coll, "d1", title="Doc")
    other = factories.document(coll, "d2", title="Other")
    factories.pool_entry(coll, q, d)
    factories.pool_entry(coll, q, other)
    boss, adj = factories.user("boss"), factories.user("adj")
    factories.member(coll, boss, Role.COORDINATOR)
    factories.member(coll, adj, Role.ADJUDICATOR)
    for name, grade in (("ann", 0), ("ben", 4)):
        usr = factories.user(name)
        factories.member(coll, usr, Role.JUDGE)
        judge = factories.human_judge(usr)
        for doc in (d, other):
            judging_services.judgment_record(judge=judge, query=q, document=doc, grade=grade)
    adjudication_services.adjudication_record(
        query=q, document=d, grade=3, reason="topical", actor=boss
    )
    return coll, q, d, boss, adj


def pages(coll, q, d):
    return {
        "adjudication": reverse("judging:pair_adjudicate", args=[coll.slug, q.pk, d.pk]),
        "disagreements": reverse("judging:disagreement_list", args=[coll.slug]),
        "pool": reverse("metrics:pool", args=[coll.slug]),
        "history": reverse("judging:judgment_history", args=[coll.slug, q.pk, d.pk]),
    }


def test_every_place_links_to_the_form_filled_in_and_it_marks_the_pair(client, pair):
    coll, q, d, boss, _adj = pair
    client.force_login(boss)
    for place, url in pages(coll, q, d).items():
        response = client.get(url)
        assert response.status_code == 200, place
        links = {
            unescape(link).split("docno=")[1].split("&")[0].split("#")[0]: unescape(link)
            for link in LINK.findall(response.content.decode())
        }
        # Each pair the page shows has its link: the pool and the disagreement list show
        # d2 (still open); the pair's own pages show d1.
        want = {"pool": {"d1", "d2"}, "disagreements": {"d2"}}.get(place, {"d1"})
        assert set(links) == want, place
        docno = sorted(want)[0]
        link = links[docno]
        assert "qid=q1" in link, place
        assert ("grade=3" in link) == (place == "adjudication"), place  # the final grade
        form = client.get(link).context["form"]
        assert form.initial["qid"] == "q1" and form.initial["docno"] == docno, place
    response = client.post(
        reverse("judging:gold_list", args=[coll.slug]),
        {"qid": "q1", "docno": "d1", "grade": "3", "reason": "topical"},
    )
    assert response.status_code == 303
    gold = GoldPair.objects.get()
    assert (gold.query, gold.document, gold.grade) == (q, d, 3)


def test_no_link_for_those_who_may_not_mark_gold(client, pair):
    coll, q, d, _boss, adj = pair
    client.force_login(adj)
    for place in ("adjudication", "disagreements", "history"):
        response = client.get(pages(coll, q, d)[place])
        assert response.status_code == 200, place
        assert not LINK.search(response.content.decode()), place


@pytest.mark.parametrize(
    ("params", "initial"),
    [
        ({"qid": " q1 ", "docno": "d1", "grade": "2"}, {"qid": "q1", "docno": "d1", "grade": 2}),
        ({"grade": "5"}, {}),
        ({"grade": "-1"}, {}),
        ({"grade": "²"}, {}),  # a digit to str.isdigit, not a grade
        ({"grade": "1e1"}, {}),
        ({"qid": "x" * 10_000}, {}),
        ({"qid": "", "docno": "   "}, {}),
    ],
)
def test_a_link_carries_only_what_reads_as_a_fields_value(params, initial):
    assert GoldPairForm.initial_from(params) == initial
