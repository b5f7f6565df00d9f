"""The judge's pages issue a fixed number of SQL queries, however big the collection.

Counts include the session and user look-ups of every authenticated request (2 queries).
"""

from __future__ import annotations

import itertools

import pytest
from django.urls import reverse

from judging.models import Judgment, Membership, PoolEntry
from judging.selectors import pair_ref
from tests import factories

pytestmark = pytest.mark.django_db
Status = Judgment.Status

# session, user, collection, judge, last query, quota, next pair, own judgment, previous pair,
# progress, progress within the query
CARD_NEXT_QUERIES = 11
# session, user, collection, judge, pool entry, own judgment, previous pair, progress,
# progress within the query
CARD_PAIR_QUERIES = 9
# session, user, judge, collections with progress, roles
HOME_QUERIES = 5
# session, user, collection, judge, count, page
LIST_QUERIES = 6


def build(coll, judge_user, n_queries: int, n_docs: int, n_other_judges: int, n_collections: int):
    """Pool ``n_queries`` × ``n_docs`` pairs; judges (and the judge) label many of them."""
    entries = factories.pool(coll, n_queries, n_docs)
    me = factories.human_judge(judge_user)
    others = [factories.human_judge(factories.user()) for _ in range(n_other_judges)]
    grades = itertools.cycle(range(5))
    rows = []
    for i, judge in enumerate(others):
        for entry in entries[i::2]:
            rows.append(
                Judgment(
                    judge=judge,
                    query_id=entry.query_id,
                    document_id=entry.document_id,
                    collection=coll,
                    grade=next(grades),
                )
            )
    mine = entries[: max(1, len(entries) // 3)]
    for j, entry in enumerate(mine):
        status = (Status.GRADED, Status.CANNOT_JUDGE, Status.LATER)[j % 3]
        rows.append(
            Judgment(
                judge=me,
                query_id=entry.query_id,
                document_id=entry.document_id,
                collection=coll,
                status=status,
                grade=next(grades) if status == Status.GRADED else None,
                note="n",
            )
        )
    Judgment.objects.bulk_create(rows, batch_size=1000)
    for _ in range(n_collections - 1):
        extra = factories.collection()
        factories.member(extra, judge_user, Membership.Role.JUDGE)
        factories.pool(extra, 2, 2)
    return entries, mine


SIZES = [
    pytest.param((2, 3, 1, 1), id="small-2x3"),
    pytest.param((30, 60, 4, 4), id="large-30x60"),
]


@pytest.fixture(params=SIZES)
def sized(request, coll, judge_user, client):
    entries, mine = build(coll, judge_user, *request.param)
    client.force_login(judge_user)
    return coll, entries, mine


def test_card_next_query_count_is_constant(client, sized, django_assert_num_queries):
    coll, _entries, _mine = sized
    url = reverse("judging:judge_next", args=[coll.slug])
    with django_assert_num_queries(CARD_NEXT_QUERIES):
        response = client.get(url)
    assert response.status_code == 200 and b"data-entry-id" in response.content


def test_card_of_a_judged_pair_query_count_is_constant(client, sized, django_assert_num_queries):
    coll, _entries, mine = sized
    url = reverse("judging:judge_pair", args=[coll.slug, pair_ref(mine[-1].pk)])
    with django_assert_num_queries(CARD_PAIR_QUERIES):
        response = client.get(url)
    assert response.status_code == 200 and b"Your label now" in response.content


def test_home_query_count_is_constant(client, sized, django_assert_num_queries):
    coll, _entries, _mine = sized
    with django_assert_num_queries(HOME_QUERIES):
        response = client.get(reverse("judging:home"))
    assert response.status_code == 200 and coll.name.encode() in response.content


def test_judgment_list_query_count_is_constant(client, sized, django_assert_num_queries):
    coll, _entries, _mine = sized
    url = reverse("judging:judgment_list", args=[coll.slug])
    with django_assert_num_queries(LIST_QUERIES):
        response = client.get(url, {"status": "graded"})
    assert response.status_code == 200 and b"/edit/" in response.content


def test_sizes_really_differ(coll, judge_user):
    entries, _ = build(coll, judge_user, 30, 60, 4, 1)
    assert len(entries) == 1800
    assert PoolEntry.objects.count() == 1800 and Judgment.objects.count() > 4000
