"""Ids sort as people read them, and an id with a digit that is not a number still sorts.

``"²".isdigit()`` is true but ``int("²")`` fails: an accepted query id such as ``q1²`` made
the agreement page's and the LLM agreement page's sorting raise (a 500).
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from graded import textpolicy
from graded.textpolicy import natural_key
from judging.models import Membership
from tests import factories


def test_numbers_sort_as_numbers_and_other_digits_as_text():
    ids = ["q10", "q2", "Q1", "q1²", "q١٠", "q1", "q²"]
    assert all(textpolicy.id_problem(i, "qid") is None for i in ids)  # all accepted ids
    assert sorted(ids, key=natural_key) == ["Q1", "q1", "q1²", "q2", "q10", "q١٠", "q²"]
    assert natural_key("") == ()


@pytest.mark.django_db
def test_the_agreement_page_sorts_an_id_with_a_superscript(client):
    coll = factories.collection("sup")
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    for qid in ("q1²", "q2", "q10"):
        factories.query(coll, qid)
    client.force_login(boss)
    url = reverse("judging:collection_agreement", args=[coll.slug])
    for tab in ("judges", "coverage", "agreement"):
        assert client.get(url, {"tab": tab}).status_code == 200, tab


@pytest.mark.django_db
def test_a_superscript_digit_in_a_judge_parameter_is_no_500(client):
    coll = factories.collection("sup2")
    boss = factories.user("boss")
    factories.member(coll, boss, Membership.Role.COORDINATOR)
    client.force_login(boss)
    url = reverse("judging:llmjob_create", args=[coll.slug])
    assert client.get(url, {"judge": "²"}).status_code == 200
