"""After any qualification change, the live list and every score equal a full recompute.

A judge who qualifies brings every label they gave into the live list, in queries the
triggering label never touched; one who drops below takes them out again; marking,
regrading or unmarking a gold pair and changing the bar do the same. The live grades are
compared with an independent computation from the labels (the pure rule and the policy,
applied by the test), and the stored scores and scoreboard with scoring every run afresh.
"""

from __future__ import annotations

import numpy as np
import pytest

from judging import aggregation, services
from judging.adjudication import services as adjudication_services
from judging.models import Judgment, LiveGrade
from judging.quality import gold as rule
from judging.quality import qualification
from judging.quality import services as quality_services
from judging.quality.models import GoldPair, JudgeQualification
from metrics import services as metrics_services
from metrics.live import store
from tests import factories
from tests.metrics.live.test_interleavings import _assert_equal_to_rescoring

pytestmark = pytest.mark.django_db

QUERIES = ("q1", "q2", "q3")
DOCS = ("d1", "d2", "d3", "d4")


def expected_live(coll) -> dict[tuple[int, int], float]:
    """Return the live list computed from scratch: the rule on the gold labels, then the policy."""
    coll.refresh_from_db()
    gold = {(g.query_id, g.document_id): g.grade for g in GoldPair.objects.filter(collection=coll)}
    labels = list(
        Judgment.objects.filter(collection=coll, status=Judgment.Status.GRADED)
        .order_by("updated_at", "id")
        .values_list("judge_id", "query_id", "document_id", "grade", "judge__kind")
    )
    counted = None
    if coll.qualification_pairs:
        records: dict[int, tuple[list[int], list[int]]] = {}
        for judge_id, q, d, grade, _ in labels:
            if (q, d) in gold:
                records.setdefault(judge_id, ([], []))[0].append(grade)
                records[judge_id][1].append(gold[(q, d)])
        counted = {
            judge_id
            for judge_id, (grades, golds) in records.items()
            if rule.qualification(
                grades, golds, needed=coll.qualification_pairs, share=coll.qualification_share
            ).counted
        }
    kept = [row for row in labels if counted is None or row[0] in counted]
    if not kept:
        return {}
    keys = sorted({(q, d) for _, q, d, _, _ in kept})
    index = {key: i for i, key in enumerate(keys)}
    policy = aggregation.get_policy(coll.aggregation_policy)
    pair_ids, grades = policy(
        np.array([index[(q, d)] for _, q, d, _, _ in kept]),
        np.array([g for _, _, _, g, _ in kept]),
        np.array([kind == "human" for *_, kind in kept]),
        judge_index=np.array([j for j, *_ in kept]),
    )
    return {keys[i]: float(g) for i, g in zip(pair_ids.tolist(), grades.tolist(), strict=True)}


def live(coll) -> dict[tuple[int, int], float]:
    return {
        (q, d): g
        for q, d, g in LiveGrade.objects.filter(collection=coll).values_list(
            "query_id", "document_id", "grade"
        )
    }


def assert_current(coll) -> None:
    """The live list equals a recompute from scratch, and every score a full rescoring."""
    want = expected_live(coll)
    got = live(coll)
    assert got.keys() == want.keys()
    assert all(got[k] == pytest.approx(v) for k, v in want.items())
    _assert_equal_to_rescoring(coll)


@pytest.fixture
def world():
    coll, users = factories.judged_collection(
        "qr", queries=QUERIES, documents=DOCS, judges=["ann", "ben"]
    )
    team = metrics_services.team_create(collection=coll, name="t", members=users)
    for tag, order in (("a", DOCS), ("b", DOCS[::-1])):
        lines = "".join(
            f"{q} Q0 {d} {r + 1} {9 - r} x\n" for q in QUERIES for r, d in enumerate(order)
        )
        metrics_services.run_submit(
            collection=coll, team=team, tag=tag, content=lines.encode(), filename="r.txt",
            user=users[0],
        )  # fmt: skip
    queries = {q.external_id: q for q in coll.queries.all()}
    docs = {d.external_id: d for d in coll.documents.all()}
    judges = [factories.human_judge(u) for u in users]
    return coll, queries, docs, judges


def test_a_judge_who_qualifies_moves_the_scores_of_every_query_they_graded(
    world, django_capture_on_commit_callbacks
):
    coll, queries, docs, (ann, _ben) = world
    with django_capture_on_commit_callbacks(execute=True):
        quality_services.gold_set(query=queries["q1"], document=docs["d1"], grade=3)
        quality_services.gold_set(query=queries["q1"], document=docs["d2"], grade=0)
        quality_services.qualification_set(collection=coll, pairs=2, share=1.0, confirm=True)
    # ann grades q2 and q3 (not gold) and one gold pair: nothing counts yet
    for qid, docno, grade in (("q2", "d1", 4), ("q3", "d4", 3), ("q1", "d1", 3)):
        services.judgment_record(judge=ann, query=queries[qid], document=docs[docno], grade=grade)
    assert live(coll) == {}
    before = store.board_read(coll.pk).means()
    assert_current(coll)
    # the second gold pair qualifies her: q2 and q3 enter the live list in this transaction
    services.judgment_record(judge=ann, query=queries["q1"], document=docs["d2"], grade=0)
    assert {(q, d) for q, d in live(coll)} == {
        (queries[q].pk, docs[d].pk)
        for q, d in (("q2", "d1"), ("q3", "d4"), ("q1", "d1"), ("q1", "d2"))
    }
    after = store.board_read(coll.pk).means()
    assert after != before  # the leaderboard moved with her labels, without a background task
    assert_current(coll)
    # a gold pair regraded against her: she drops below, her labels leave again
    quality_services.gold_set(query=queries["q1"], document=docs["d2"], grade=1)
    assert live(coll) == {}
    assert_current(coll)


ACTIONS = ["judge", "judge", "judge", "unjudge", "import", "gold", "ungold", "bar", "policy"]


@pytest.mark.parametrize("seed", range(12))
def test_any_order_of_changes_keeps_live_grades_and_scores_current(
    world, seed, django_capture_on_commit_callbacks
):
    coll, queries, docs, judges = world
    judges = [*judges, factories.llm_judge(f"llm-{seed}")]
    rng = np.random.default_rng(seed)
    qs, ds = list(queries.values()), list(docs.values())
    with django_capture_on_commit_callbacks(execute=True):
        quality_services.qualification_set(collection=coll, pairs=2, share=0.5, confirm=True)
        for q, d in ((0, 0), (0, 1), (1, 2)):
            quality_services.gold_set(query=qs[q], document=ds[d], grade=int(rng.integers(5)))
    for _ in range(18):
        action = str(rng.choice(ACTIONS))
        coll.refresh_from_db()
        with django_capture_on_commit_callbacks(execute=True):  # background rescoring too
            if action == "judge":  # a gold pair half of the time
                golds = list(GoldPair.objects.filter(collection=coll).order_by("pk"))
                gold = golds[rng.integers(len(golds))] if golds else None
                pair = (
                    (gold.query, gold.document)
                    if gold is not None and rng.random() < 0.6
                    else (qs[rng.integers(3)], ds[rng.integers(4)])
                )
                right = gold is not None and pair[0] == gold.query and rng.random() < 0.5
                services.judgment_record(
                    judge=judges[rng.integers(len(judges))],
                    query=pair[0],
                    document=pair[1],
                    grade=gold.grade if right else int(rng.integers(5)),
                )
            elif action == "unjudge":
                present = list(Judgment.objects.filter(collection=coll).order_by("pk"))
                if present:
                    services.judgment_delete(judgment=present[rng.integers(len(present))])
            elif action == "import":
                rows = [
                    services.JudgmentRow(n + 1, q, d, int(rng.integers(5)))
                    for n, (q, d) in enumerate(
                        (q, d) for q in QUERIES for d in DOCS if rng.random() < 0.3
                    )
                ]
                if rows:
                    services.judgments_import(
                        collection=coll, judge=judges[rng.integers(len(judges))], rows=rows
                    )
            elif action == "gold":
                quality_services.gold_set(
                    query=qs[rng.integers(3)],
                    document=ds[rng.integers(4)],
                    grade=int(rng.integers(5)),
                )
            elif action == "ungold":
                present = list(GoldPair.objects.filter(collection=coll).order_by("pk"))
                if present:
                    quality_services.gold_remove(gold=present[rng.integers(len(present))])
            elif action == "bar":
                quality_services.qualification_set(
                    collection=coll,
                    pairs=int(rng.integers(0, 4)),
                    share=float(rng.choice([0.0, 0.5, 1.0])),
                    confirm=True,  # consistency, whatever the bar leaves
                )
            else:
                adjudication_services.aggregation_settings_update(
                    collection=coll,
                    actor=None,
                    aggregation_policy=str(
                        rng.choice(
                            ["lower_median_human_then_llm", "mean_human_then_llm", "dawid_skene"]
                        )
                    ),
                )
        assert_current(coll)
    coll.refresh_from_db()
    if coll.qualification_pairs:  # the stored standings are the rule's, judge by judge
        stored = dict(
            JudgeQualification.objects.filter(collection=coll).values_list("judge_id", "counted")
        )
        fresh = qualification.standings(coll.pk, qualification.bar(coll.pk))
        assert {j: s.counted for j, s in fresh.items()} == {
            j: c for j, c in stored.items() if j in fresh or c
        }


def test_bias_corrected_means_read_only_counted_llm_judges(world):
    from metrics.analysis import ppi

    coll, queries, docs, _ = world
    robot = factories.llm_judge("robot")
    quality_services.gold_set(query=queries["q1"], document=docs["d1"], grade=2)
    quality_services.qualification_set(collection=coll, pairs=1, share=1.0, confirm=True)
    rows = [services.JudgmentRow(1, "q2", "d2", 3), services.JudgmentRow(2, "q1", "d1", 0)]
    services.judgments_import(collection=coll, judge=robot, rows=rows)
    coll.refresh_from_db()
    assert ppi._llm_grades(coll) == {}  # robot missed its gold pair: not counted
    services.judgments_import(
        collection=coll, judge=robot, rows=[services.JudgmentRow(1, "q1", "d1", 2)]
    )
    assert set(ppi._llm_grades(coll)) == {queries["q1"].pk, queries["q2"].pk}
