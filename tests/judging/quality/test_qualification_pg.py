"""Gold labels committed at the same time still qualify the judge (PostgreSQL, threads).

Each of two gold labels alone leaves the judge one short of the bar; together they
qualify them. Written at once by two connections, each transaction must see the other's
label once it holds the collection's lock, or the judge would stay *qualifying* with
both labels in. A gold pair marked while a judge grades it is the same race.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from judging import services
from judging.models import Document, Judge, LiveGrade, Query
from judging.quality import qualification
from judging.quality import services as quality_services
from judging.quality.models import JudgeQualification
from tests import factories
from tests.pg_threads import in_thread

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
ROUNDS = 6


@pytest.fixture(autouse=True)
def _needs_postgres(needs_postgres):
    """Skip unless on PostgreSQL."""


def _at_once(*works):
    barrier = threading.Barrier(len(works))

    def run(work):
        barrier.wait()
        return work()

    with ThreadPoolExecutor(len(works)) as pool:
        return [f.result() for f in [pool.submit(in_thread(run), w) for w in works]]


def test_two_gold_labels_at_once_qualify_the_judge():
    coll = factories.collection("race-gold")
    q = factories.query(coll, "q1")
    other = factories.query(coll, "q2")
    plain = factories.document(coll, "plain")
    for i in range(2 * ROUNDS):
        doc = factories.document(coll, f"g{i}")
        quality_services.gold_set(query=q, document=doc, grade=2)
    quality_services.qualification_set(collection=coll, pairs=2, share=1.0)
    for r in range(ROUNDS):
        judge = factories.human_judge(factories.user(f"racer{r}"))
        services.judgment_record(judge=judge, query=other, document=plain, grade=r % 5)
        golds = [Document.objects.get(collection=coll, external_id=f"g{2 * r + k}") for k in (0, 1)]

        def label(doc, judge_id=judge.pk):
            services.judgment_record(
                judge=Judge.objects.get(pk=judge_id),
                query=Query.objects.get(pk=q.pk),
                document=doc,
                grade=2,
            )

        _at_once(lambda d=golds[0]: label(d), lambda d=golds[1]: label(d))
        standing = JudgeQualification.objects.get(collection=coll, judge=judge)
        assert (standing.status, standing.graded, standing.counted) == ("qualified", 2, True), r
        live = LiveGrade.objects.get(collection=coll, query=other, document=plain)
        assert judge.pk in live.judge_ids, r  # their ordinary label entered the live list
    fresh = qualification.standings(coll.pk, qualification.bar(coll.pk))
    assert all(fresh[j].counted for j in fresh)


def test_a_gold_pair_marked_while_it_is_graded():
    coll = factories.collection("race-mark")
    q = factories.query(coll, "q1")
    first = factories.document(coll, "g0")
    quality_services.gold_set(query=q, document=first, grade=1)
    quality_services.qualification_set(collection=coll, pairs=2, share=1.0)
    for r in range(ROUNDS):
        judge = factories.human_judge(factories.user(f"marker{r}"))
        services.judgment_record(judge=judge, query=q, document=first, grade=1)
        doc = factories.document(coll, f"new{r}")

        def mark(doc_id=doc.pk):
            quality_services.gold_set(
                query=Query.objects.get(pk=q.pk), document=Document.objects.get(pk=doc_id), grade=3
            )

        def label(doc_id=doc.pk, judge_id=judge.pk):
            services.judgment_record(
                judge=Judge.objects.get(pk=judge_id),
                query=Query.objects.get(pk=q.pk),
                document=Document.objects.get(pk=doc_id),
                grade=3,
            )

        _at_once(mark, label)
        standing = JudgeQualification.objects.get(collection=coll, judge=judge)
        assert standing.counted and standing.graded == 2, r
