"""Score writers that wait for the collection lock read what was committed before it was granted.

PostgreSQL, two real connections. In READ COMMITTED a statement that waits for a row lock
re-reads only the rows it locks; every other row it returns is as its snapshot saw it, from
before the wait. A writer that locked the collection and read the scoreboard in that one
statement got the board as it was before the submission it waited for, and wrote it back:
the new run left the board and the old epoch came back (issue 32). Each test here makes one
writer wait behind another's open transaction and checks what the waiting one then wrote.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import numpy as np
import pytest
from django.db import connection, transaction

from judging import services
from judging.models import Collection, LiveGrade
from metrics import services as metrics_services
from metrics.live import rescore as live_rescore
from metrics.live import selectors as live_selectors
from metrics.live import store
from metrics.models import Run
from tests import factories
from tests.metrics import factories as metrics_factories
from tests.pg_threads import in_thread

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _needs_postgres(needs_postgres):
    """Skip unless on PostgreSQL."""


def _lock_waiters() -> int:
    """Return how many other backends of this database wait for a lock right now."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
            "AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()"
        )
        return cursor.fetchone()[0]


def _behind(holder: Callable[[], object], waiter: Callable[[], object]) -> tuple[object, object]:
    """Run ``holder`` in a transaction that commits only once ``waiter`` waits for a lock.

    Both run in threads of their own (own connections). Returns both results.
    """
    held, release = threading.Event(), threading.Event()
    results: dict[str, object] = {}
    errors: list[BaseException] = []

    def hold() -> None:
        try:
            with transaction.atomic():
                results["holder"] = holder()
                held.set()
                assert release.wait(30), "the waiter never waited"
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
            held.set()

    def wait() -> None:
        try:
            assert held.wait(30)
            with transaction.atomic():
                results["waiter"] = waiter()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=in_thread(hold)), threading.Thread(target=in_thread(wait))]
    threads[0].start()
    assert held.wait(30)
    threads[1].start()
    deadline = time.monotonic() + 30
    while not _lock_waiters() and time.monotonic() < deadline and not errors:
        time.sleep(0.01)
    waited = _lock_waiters() > 0
    release.set()
    for thread in threads:
        thread.join(60)
    if errors:
        raise errors[0]
    assert waited, "the waiter never waited for the holder's lock"
    return results["holder"], results["waiter"]


def _submit(coll: Collection, team, tag: str, lines: str) -> Run:
    """Submit a TREC run through the service, as the REST and browser paths do."""
    return metrics_services.run_submit(
        collection=coll, team=team, tag=tag, content=lines.encode(), filename=f"{tag}.txt",
        user=None,
    )  # fmt: skip


def _judged_with_run(slug: str):
    coll, (user,) = factories.judged_collection(
        slug, queries=("q1", "q2"), documents=("d1", "d2", "d3"), judges=["j"]
    )
    judge = factories.human_judge(user)
    for qid, docno, grade in (("q1", "d1", 3), ("q1", "d2", 1), ("q2", "d3", 2)):
        services.judgment_record(
            judge=judge,
            query=coll.queries.get(external_id=qid),
            document=coll.documents.get(external_id=docno),
            grade=grade,
        )
    team = metrics_factories.team(coll, "t")
    first = _submit(coll, team, "first", "q1 Q0 d1 1 3 r\nq2 Q0 d3 1 2 r\n")
    return coll, judge, team, first


def test_locked_board_returns_the_board_committed_while_it_waited():
    coll, _, team, _ = _judged_with_run("stale-board")
    before = store.board_read(coll.pk)

    def submit() -> Run:
        return _submit(coll, team, "second", "q1 Q0 d2 1 3 r\n")

    run, (_, _, board) = _behind(submit, lambda: store.locked_board(coll.pk))
    committed = store.board_read(coll.pk)
    assert run.pk in committed.run_ids.tolist()
    assert run.pk in board.run_ids.tolist()  # not the board from before the wait
    assert board.epoch == committed.epoch != before.epoch


def test_bulk_rescoring_behind_a_submission_keeps_the_new_run():
    """The Celery path of a bulk change (few queries: the fast path) behind a submission."""
    coll, judge, team, _ = _judged_with_run("stale-bulk")
    q1 = coll.queries.get(external_id="q1")
    services.judgment_record(
        judge=judge, query=q1, document=coll.documents.get(external_id="d3"), grade=4
    )

    def submit() -> Run:
        return _submit(coll, team, "second", "q1 Q0 d3 1 3 r\nq2 Q0 d1 1 1 r\n")

    def bulk() -> None:
        metrics_services.runs_rescore_bulk(collection_id=coll.pk, query_ids=[q1.pk])

    run, _ = _behind(submit, bulk)
    assert run.pk in store.board_read(coll.pk).run_ids.tolist()
    assert live_selectors.scores_problems(collection=Collection.objects.get(pk=coll.pk)) == []


def test_rankings_cached_before_a_run_came_are_not_used_after_it():
    """A process that prepared a query before a submission rescores the new run's ranking."""
    coll, judge, team, _ = _judged_with_run("stale-cache")
    q1 = coll.queries.get(external_id="q1")
    d2 = coll.documents.get(external_id="d2")
    live_rescore.cache_clear()
    services.judgment_record(judge=judge, query=q1, document=d2, grade=2)  # q1 prepared here

    def submit() -> Run:
        return _submit(coll, team, "second", "q1 Q0 d2 1 3 r\n")

    def judge_again() -> None:
        services.judgment_record(judge=judge, query=q1, document=d2, grade=4)

    _behind(submit, judge_again)
    assert live_selectors.scores_problems(collection=Collection.objects.get(pk=coll.pk)) == []


def test_run_deletion_behind_a_submission_keeps_the_new_run():
    coll, _, team, first = _judged_with_run("stale-delete")

    def submit() -> Run:
        return _submit(coll, team, "second", "q1 Q0 d2 1 3 r\n")

    run, _ = _behind(submit, lambda: metrics_services.run_delete(run=first))
    board = store.board_read(coll.pk)
    assert board.run_ids.tolist() == [run.pk]
    assert live_selectors.scores_problems(collection=Collection.objects.get(pk=coll.pk)) == []


def test_a_submission_behind_a_judgment_scores_the_judgment():
    coll, judge, team, _ = _judged_with_run("stale-submit")
    q2, d1 = coll.queries.get(external_id="q2"), coll.documents.get(external_id="d1")

    def record() -> None:
        services.judgment_record(judge=judge, query=q2, document=d1, grade=3)

    def submit() -> Run:
        return _submit(coll, team, "second", "q2 Q0 d1 1 3 r\n")

    _, run = _behind(record, submit)
    assert LiveGrade.objects.filter(query=q2, document=d1, grade=3).exists()
    column = store.columns_read(coll.pk, [q2.pk])[q2.pk]
    assert np.isfinite(column.lookup([run.pk], column.names)).all()
    assert live_selectors.scores_problems(collection=Collection.objects.get(pk=coll.pk)) == []
