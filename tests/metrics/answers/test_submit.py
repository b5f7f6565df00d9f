"""Submitting RAG answers (metrics/answers/services.py): atomic, one round, budget, pool."""

from __future__ import annotations

import json

import pytest

from judging.models import Membership, PoolEntry
from metrics.answers import services
from metrics.answers.models import Answer, AnswerRun
from metrics.visibility.models import Submission
from metrics.visibility.services import BudgetExhausted
from tests import factories
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db


@pytest.fixture
def world():
    coll = factories.collection("rag")
    q1, q2 = factories.query(coll, "t1"), factories.query(coll, "t2")
    d1, d2 = factories.document(coll, "d1"), factories.document(coll, "d2")
    alice, cora = factories.user("alice"), factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    team = metrics_factories.team(coll, "Alpha", [alice])
    return coll, team, alice, cora, (q1, q2), (d1, d2)


def record(topic, refs=("d1", "d2"), sentences=(("Sun is a star.", [0]),), run="r1"):
    return json.dumps(
        {
            "run_id": run,
            "topic_id": topic,
            "references": list(refs),
            "answer": [{"text": t, "citations": c} for t, c in sentences],
        }
    )


def test_answers_are_stored_and_cited_documents_pooled(world):
    coll, team, alice, _, (q1, q2), (d1, d2) = world
    content = "\n".join(
        [record("t1", sentences=[("A b c.", [0]), ("D e.", [0, 1])]), record("t2", refs=["d2"])]
    ).encode()
    run = services.answers_submit(
        collection=coll, team=team, tag="rag-1", content=content, user=alice
    )
    assert (run.query_count, run.run_id, run.source_format) == (2, "r1", "jsonl")
    stored = {a.query_id: a for a in Answer.objects.filter(answer_run=run)}
    assert stored[q1.pk].sentences == [
        {"text": "A b c.", "citations": [0]},
        {"text": "D e.", "citations": [0, 1]},
    ]
    assert stored[q1.pk].length == 5 and stored[q1.pk].references == ["d1", "d2"]
    pooled = set(PoolEntry.objects.filter(collection=coll).values_list("query_id", "document_id"))
    assert pooled == {(q1.pk, d1.pk), (q1.pk, d2.pk), (q2.pk, d2.pk)}
    assert run.pairs_pooled == 3
    (sub,) = Submission.objects.filter(team=team)
    assert sub.counted and sub.run_id is None and sub.tag == "answers:rag-1"


def test_every_problem_in_one_round_and_nothing_written(world):
    coll, team, alice, _, _, _ = world
    services.answers_submit(
        collection=coll, team=team, tag="taken", content=record("t1").encode(), user=alice
    )
    content = "\n".join(
        [
            record("t1"),
            record("zz"),  # unknown topic
            record("t2", refs=["d1", "missing"]),  # unknown document
            record("t1"),  # repeated topic
            record("t2", sentences=[("x", [5])]),  # out of range (and repeated)
        ]
    ).encode()
    with pytest.raises(services.AnswersRejected) as caught:
        services.answers_submit(
            collection=coll, team=team, tag="taken", content=content, user=alice
        )
    places = [(e.get("line"), e.get("field")) for e in caught.value.errors]
    assert places[0] == (None, "tag")
    assert (2, "topic_id") in places and (3, "references[1]") in places
    assert (4, "topic_id") in places and (5, "answer[0].citations[0]") in places
    assert "line 3, references[1]: document 'missing'" in str(caught.value)
    assert AnswerRun.objects.count() == 1 and Answer.objects.count() == 1
    assert Submission.objects.count() == 1


def test_the_budget_is_shared_with_runs_and_coordinators_are_not_counted(world):
    coll, team, alice, cora, _, _ = world
    from metrics.visibility.services import score_visibility_update

    score_visibility_update(collection=coll, runs_per_day=1)
    content = record("t1").encode()
    services.answers_submit(collection=coll, team=team, tag="a", content=content, user=alice)
    with pytest.raises(BudgetExhausted):
        services.answers_submit(collection=coll, team=team, tag="b", content=content, user=alice)
    services.answers_submit(collection=coll, team=team, tag="c", content=content, user=cora)
    assert list(AnswerRun.objects.order_by("tag").values_list("tag", flat=True)) == ["a", "c"]


def test_a_team_of_another_collection_and_a_hostile_tag(world):
    coll, _, alice, _, _, _ = world
    other = factories.collection("other")
    stranger = metrics_factories.team(other, "Beta", [alice])
    with pytest.raises(services.AnswersRejected) as caught:
        services.answers_submit(
            collection=coll,
            team=stranger,
            tag="bad\x1b",
            content=b"\x00",
            user=alice,
        )
    fields = {e.get("field") for e in caught.value.errors}
    assert {"team", "tag"} <= fields
    assert AnswerRun.objects.count() == 0


@pytest.mark.parametrize("kind", ["run", "answers"])
def test_runs_and_answers_share_the_upload_checks(world, kind):
    """One check of tags, team and size for both uploads (metrics.services.submission_checks)."""
    from metrics import services as run_services
    from metrics.models import Run

    coll, team, alice, _, _, _ = world
    other = metrics_factories.team(factories.collection("elsewhere"), "Beta", [alice])
    if kind == "run":
        submit, rejected, content = (
            run_services.run_submit,
            run_services.RunRejected,
            b"t1 Q0 d1 1 2 r\n",
        )
        extra = {"filename": "run.txt"}
    else:
        submit, rejected, content = (
            services.answers_submit,
            services.AnswersRejected,
            record("t1").encode(),
        )
        extra = {}
    with pytest.raises(rejected) as caught:
        submit(collection=coll, team=other, tag="x" * 101, content=content, user=alice, **extra)
    assert [e["field"] for e in caught.value.errors] == ["tag", "team"]
    assert "at most 100 characters" in caught.value.errors[0]["message"]
    with pytest.raises(rejected) as caught:
        submit(collection=coll, team=team, tag="  ", content=content, user=alice, **extra)
    noun = "A run" if kind == "run" else "An answer run"
    assert caught.value.errors == [{"field": "tag", "message": f"{noun} needs a tag."}]
    assert not Run.objects.exists() and not AnswerRun.objects.exists()
