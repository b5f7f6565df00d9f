"""Database-level guarantees of the judging model."""

from __future__ import annotations

import pytest
from django.db import IntegrityError, transaction

from judging.models import Judge, Judgment, PoolEntry
from tests import factories

pytestmark = pytest.mark.django_db


def _raw_judgment(judge, q, d, **fields) -> Judgment:
    fields.setdefault("grade", 2)
    return Judgment.objects.create(
        judge=judge, query=q, document=d, collection_id=q.collection_id, **fields
    )


@pytest.mark.parametrize("grade", [-1, 5, 100])
def test_database_rejects_grade_outside_scale(coll, judge_user, grade):
    judge = factories.human_judge(judge_user)
    q, d = factories.query(coll), factories.document(coll)
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_judgment(judge, q, d, grade=grade)
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("grade", [0, 4])
def test_database_accepts_scale_bounds(coll, judge_user, grade):
    judge = factories.human_judge(judge_user)
    j = _raw_judgment(judge, factories.query(coll), factories.document(coll), grade=grade)
    assert Judgment.objects.get(pk=j.pk).grade == grade


def test_database_rejects_grade_with_non_graded_status(coll, judge_user):
    judge = factories.human_judge(judge_user)
    q, d = factories.query(coll), factories.document(coll)
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_judgment(judge, q, d, grade=3, status=Judgment.Status.LATER)
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_judgment(judge, q, d, grade=None, status=Judgment.Status.GRADED)


def test_database_rejects_second_current_judgment(coll, judge_user):
    judge = factories.human_judge(judge_user)
    q, d = factories.query(coll), factories.document(coll)
    _raw_judgment(judge, q, d, grade=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        _raw_judgment(judge, q, d, grade=3)
    assert Judgment.objects.get().grade == 1


def test_database_rejects_cross_collection_judgment(coll, judge_user):
    other = factories.collection("other")
    judge = factories.human_judge(judge_user)
    q, d = factories.query(coll), factories.document(other)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(judge=judge, query=q, document=d, collection=coll, grade=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.create(judge=judge, query=q, document=d, collection=other, grade=2)
    assert not Judgment.objects.exists()


def test_database_rejects_cross_collection_update(coll, judge_user):
    other = factories.collection("other")
    judge = factories.human_judge(judge_user)
    j = _raw_judgment(judge, factories.query(coll), factories.document(coll))
    foreign = factories.document(other)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.filter(pk=j.pk).update(document=foreign)


def test_database_rejects_cross_collection_pool_entry(coll):
    other = factories.collection("other")
    with pytest.raises(IntegrityError), transaction.atomic():
        PoolEntry.objects.create(
            collection=coll, query=factories.query(coll), document=factories.document(other)
        )


def test_judge_kind_requires_matching_fields(db):
    with pytest.raises(IntegrityError), transaction.atomic():
        Judge.objects.create(kind=Judge.Kind.HUMAN, name="nobody")
    with pytest.raises(IntegrityError), transaction.atomic():
        Judge.objects.create(kind=Judge.Kind.LLM, name="no model")
    assert factories.llm_judge("m").kind == Judge.Kind.LLM


def test_database_rejects_cross_collection_rows_in_bulk_and_in_updates(coll, judge_user):
    """One bad row among many, inserted or updated in one statement, refuses the statement.

    (On PostgreSQL the check runs once per statement over every written row: 0012.)
    """
    other = factories.collection("other")
    judge = factories.human_judge(judge_user)
    q = factories.query(coll)
    good = [factories.document(coll) for _ in range(5)]
    foreign = factories.document(other)
    rows = [Judgment(judge=judge, query=q, document=d, collection=coll, grade=1) for d in good]
    bad = Judgment(judge=judge, query=q, document=foreign, collection=coll, grade=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.bulk_create([*rows[:3], bad, *rows[3:]])
    assert not Judgment.objects.exists()
    Judgment.objects.bulk_create(rows)
    with pytest.raises(IntegrityError), transaction.atomic():
        Judgment.objects.filter(document=good[0]).update(document=foreign)
    with pytest.raises(IntegrityError), transaction.atomic():
        PoolEntry.objects.create(query=q, document=foreign, collection=coll)
    assert Judgment.objects.filter(document__in=good).count() == 5
