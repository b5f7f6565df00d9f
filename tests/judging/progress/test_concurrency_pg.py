"""Concurrent writers on PostgreSQL keep the progress counters equal to a recount.

Several threads (each with its own connection) judge the same pairs at once — opening
and closing them, disagreeing so that pairs get a third judge — while another imports
labels in bulk, pools more pairs and gives id-only documents their content. No update
may be lost: afterwards the counters equal the recount by the definition.
"""

from __future__ import annotations

import random
from concurrent.futures import ThreadPoolExecutor

import pytest

from judging import selectors, services
from judging.models import Collection, Document, Judge, Judgment, PoolEntry, Query
from judging.progress import selectors as selectors_progress
from tests import factories
from tests.pg_threads import in_thread

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]
N_JUDGES = 4
WRITES_PER_JUDGE = 25


@pytest.fixture(autouse=True)
def _needs_postgres(needs_postgres):
    """Skip unless on PostgreSQL (see tests.pg_threads)."""


def test_concurrent_judging_keeps_the_counters_equal_to_a_recount():
    coll = factories.collection("race-progress", judges_per_pair=2, max_judges_per_pair=3)
    queries = [factories.query(coll, f"q{i}") for i in range(3)]
    docs = [factories.document(coll, f"d{i}") for i in range(4)]
    hidden = [factories.document(coll, f"h{i}", has_content=False) for i in range(2)]
    services.pool_add_ids(
        collection=coll, pairs=[(q.pk, d.pk) for q in queries for d in docs[:3]], source="run"
    )
    judge_ids = [factories.human_judge(factories.user(f"j{i}")).pk for i in range(N_JUDGES)]
    llm_id = factories.llm_judge("bulk").pk

    def judge_writes(judge_id: int) -> int:
        rng = random.Random(judge_id)
        judge = Judge.objects.get(pk=judge_id)
        qs, ds = list(Query.objects.filter(collection_id=coll.pk)), docs[:3]
        for _ in range(WRITES_PER_JUDGE):
            q, d = rng.choice(qs), rng.choice(ds)
            if rng.random() < 0.15:
                existing = Judgment.objects.filter(judge=judge, query=q, document=d).first()
                if existing is not None:
                    services.judgment_delete(judgment=existing)
                    continue
            status = rng.choice(["graded"] * 5 + ["cannot_judge", "later"])
            grade = rng.choice([0, 4]) if status == "graded" else None  # often disagreeing
            services.judgment_record(judge=judge, query=q, document=d, status=status, grade=grade)
        return judge_id

    def bulk_writes() -> int:
        collection = Collection.objects.get(pk=coll.pk)
        judge = Judge.objects.get(pk=llm_id)
        for round_ in range(4):
            rows = [
                services.JudgmentRow(
                    line=i + 1,
                    query_external_id=q.external_id,
                    document_external_id=d.external_id,
                    grade=(round_ + i) % 5,
                )
                for i, (q, d) in enumerate((q, d) for q in queries for d in docs[:2])
            ]
            services.judgments_import(collection=collection, judge=judge, rows=rows)
            services.pool_add_ids(
                collection=collection,
                pairs=[
                    (queries[round_ % 3].pk, docs[3].pk),
                    (queries[round_ % 3].pk, hidden[0].pk),
                ],
                source="run",
            )
        services.documents_import(
            collection=collection,
            rows=[services.DocumentRow(line=1, external_id="h0", title="now", body="b")],
        )
        return llm_id

    with ThreadPoolExecutor(max_workers=N_JUDGES + 1) as pool:
        futures = [pool.submit(in_thread(judge_writes), j) for j in judge_ids]
        futures.append(pool.submit(in_thread(bulk_writes)))
        finished = sorted(f.result() for f in futures)
    assert finished == sorted([*judge_ids, llm_id])
    coll.refresh_from_db()
    assert Judgment.objects.filter(collection=coll).count() > N_JUDGES * 5
    assert Document.objects.get(pk=hidden[0].pk).has_content
    assert PoolEntry.objects.filter(collection=coll, document=hidden[0]).exists()
    assert selectors_progress.progress_problems(collection=coll) == []
    progress = selectors.judge_progress(judge=Judge.objects.get(pk=judge_ids[0]), collection=coll)
    assert progress == selectors_progress.progress_recount(
        judge=Judge.objects.get(pk=judge_ids[0]), collection=coll
    )
