"""References of judgments, history events and live grades hold on both databases.

On PostgreSQL they are checked once per statement by migration 0015's triggers (no
foreign-key constraint); on SQLite by foreign keys. Either way: a row naming a missing
or foreign row is refused, deleting a row that is still named is refused, what Django
deletes through its cascades still works, and on PostgreSQL no concurrent delete slips
between a writer's check and its commit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from judging import services
from judging.models import (
    Collection,
    Document,
    Judge,
    Judgment,
    JudgmentEvent,
    LiveGrade,
    Query,
)
from tests import factories
from tests.pg_threads import in_thread

pytestmark = pytest.mark.django_db(transaction=True)
MISSING = 987_654_321


@pytest.fixture
def world():
    """Return a collection with a query, a document, a human judge and an actor (a user)."""
    coll = factories.collection("refs")
    usr = factories.user("ref-judge")
    factories.member(coll, usr)
    return {
        "coll": coll,
        "user": factories.user("ref-actor"),
        "judge": factories.human_judge(usr),
        "query": factories.query(coll, "q1"),
        "document": factories.document(coll, "d1"),
    }


def _judgment(w: dict[str, Any], **ids: int) -> dict[str, Any]:
    return {
        "collection_id": w["coll"].pk,
        "judge_id": w["judge"].pk,
        "query_id": w["query"].pk,
        "document_id": w["document"].pk,
        "grade": 2,
        **ids,
    }


def _event(w: dict[str, Any], **ids: int) -> dict[str, Any]:
    return {
        "collection_id": w["coll"].pk,
        "judge_id": w["judge"].pk,
        "query_id": w["query"].pk,
        "document_id": w["document"].pk,
        "actor_id": w["user"].pk,
        "action": "create",
        "channel": "api",
        **ids,
    }


def _live(w: dict[str, Any], **ids: int) -> dict[str, Any]:
    return {
        "collection_id": w["coll"].pk,
        "query_id": w["query"].pk,
        "document_id": w["document"].pk,
        "grade": 2.0,
        **ids,
    }


BAD_ROWS = [
    (Judgment, _judgment, "collection_id"),
    (Judgment, _judgment, "judge_id"),
    (Judgment, _judgment, "query_id"),
    (Judgment, _judgment, "document_id"),
    (JudgmentEvent, _event, "collection_id"),
    (JudgmentEvent, _event, "judge_id"),
    (JudgmentEvent, _event, "query_id"),
    (JudgmentEvent, _event, "document_id"),
    (JudgmentEvent, _event, "actor_id"),
    (JudgmentEvent, _event, "judgment_id"),
    (LiveGrade, _live, "collection_id"),
    (LiveGrade, _live, "query_id"),
    (LiveGrade, _live, "document_id"),
]


@pytest.mark.parametrize(("model", "fields", "column"), BAD_ROWS)
def test_a_row_naming_a_missing_row_is_refused(world, model, fields, column):
    with pytest.raises(IntegrityError), transaction.atomic():
        model.objects.create(**fields(world, **{column: MISSING}))
    assert not model.objects.exists()


@pytest.mark.parametrize("model", [Judgment, JudgmentEvent, LiveGrade])
def test_one_missing_reference_among_many_refuses_the_whole_statement(world, model):
    fields = {Judgment: _judgment, JudgmentEvent: _event, LiveGrade: _live}[model]
    documents = [factories.document(world["coll"], f"bulk{i}") for i in range(6)]
    rows = [model(**fields(world, document_id=d.pk)) for d in documents]
    rows.insert(3, model(**fields(world, query_id=MISSING, document_id=documents[0].pk)))
    with pytest.raises(IntegrityError), transaction.atomic():
        model.objects.bulk_create(rows)
    assert not model.objects.exists()
    model.objects.bulk_create([r for r in rows if r.query_id != MISSING])
    with pytest.raises(IntegrityError), transaction.atomic():
        model.objects.filter(document_id=documents[1].pk).update(query_id=MISSING)
    assert model.objects.filter(query_id=world["query"].pk).count() == 6


def _named_world(w: dict[str, Any]) -> Judgment:
    """Give the world a judgment (with its event) and a live grade; return the judgment."""
    judgment = Judgment.objects.create(**_judgment(w))
    JudgmentEvent.objects.create(**_event(w, judgment_id=judgment.pk))
    LiveGrade.objects.create(**_live(w))
    return judgment


@pytest.mark.parametrize("table", ["collection", "query", "document", "judge", "user", "judgment"])
def test_deleting_a_row_that_is_still_named_is_refused(world, table):
    judgment = _named_world(world)
    model, pk = {
        "collection": (Collection, world["coll"].pk),
        "query": (Query, world["query"].pk),
        "document": (Document, world["document"].pk),
        "judge": (Judge, world["judge"].pk),
        "user": (type(world["user"]), world["user"].pk),
        "judgment": (Judgment, judgment.pk),
    }[table]
    name = connection.ops.quote_name(model._meta.db_table)
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {name} WHERE id = %s", [pk])  # past Django's cascades
    assert model.objects.filter(pk=pk).exists()


def test_ids_that_are_named_cannot_change(world):
    _named_world(world)
    with pytest.raises(IntegrityError), transaction.atomic():
        Query.objects.filter(pk=world["query"].pk).update(id=MISSING)
    assert Query.objects.filter(pk=world["query"].pk).exists()


def test_what_django_deletes_through_its_cascades_still_goes(world):
    mine = {k: world[k] for k in ("judge", "query", "document")}
    judgment = services.judgment_record(**mine, grade=3, actor=world["user"])
    assert LiveGrade.objects.filter(query=world["query"]).exists()
    services.judgment_delete(judgment=judgment, actor=world["user"])
    assert JudgmentEvent.objects.filter(judgment__isnull=True).count() == 2  # kept, emptied
    world["user"].delete()  # the actor of the events: emptied, the events stay
    assert JudgmentEvent.objects.count() == 2
    assert not JudgmentEvent.objects.filter(actor__isnull=False).exists()
    services.judgment_record(**mine, grade=1)
    world["coll"].delete()
    for model in (Judgment, JudgmentEvent, LiveGrade, Query, Document):
        assert not model.objects.exists()
    assert Judge.objects.filter(pk=world["judge"].pk).exists()


# --- PostgreSQL: no delete slips between a writer's check and its commit ----------------


def _race(first: Callable[[threading.Event], None], second: Callable[[], None]) -> list[Any]:
    """Run ``first`` (which sets the event, then waits) and ``second``; return both outcomes."""
    started, outcomes = threading.Event(), [None, None]

    def run(index: int, work: Callable[[], None]) -> None:
        try:
            work()
            outcomes[index] = "ok"
        except IntegrityError as exc:
            outcomes[index] = exc

    one = threading.Thread(target=in_thread(run), args=(0, lambda: first(started)))
    one.start()
    assert started.wait(10)
    two = threading.Thread(target=in_thread(run), args=(1, second))
    two.start()
    one.join(20)
    two.join(20)
    return outcomes


def _hold(seconds: float) -> None:
    """Keep the transaction open a while, so the other thread meets its locks."""
    time.sleep(seconds)


@pytest.mark.postgres
def test_a_delete_waits_for_a_writer_and_then_sees_its_rows(world, needs_postgres):
    document = world["document"]

    def write(started: threading.Event) -> None:
        with transaction.atomic():
            Judgment.objects.create(**_judgment(world))
            started.set()
            _hold(0.5)

    def delete() -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM judging_document WHERE id = %s", [document.pk])

    outcomes = _race(write, delete)
    assert outcomes[0] == "ok"
    assert isinstance(outcomes[1], IntegrityError)
    assert Judgment.objects.filter(document_id=document.pk).exists()
    assert Document.objects.filter(pk=document.pk).exists()


@pytest.mark.postgres
def test_a_writer_waits_for_a_delete_and_then_sees_the_row_gone(world, needs_postgres):
    document = world["document"]

    def delete(started: threading.Event) -> None:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("DELETE FROM judging_document WHERE id = %s", [document.pk])
            started.set()
            _hold(0.5)

    def write() -> None:
        with transaction.atomic():
            JudgmentEvent.objects.create(**_event(world, at=timezone.now()))

    outcomes = _race(delete, write)
    assert outcomes[0] == "ok"
    assert isinstance(outcomes[1], IntegrityError)
    assert not JudgmentEvent.objects.exists()
    assert not Document.objects.filter(pk=document.pk).exists()
