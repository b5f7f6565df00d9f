"""UDCG in the app uses the judges' recorded abstention probabilities, and follows them live.

The live list keeps one aggregated probability per pair (``LiveGrade.abstain_probability``,
rule in ``judging.abstain``); the live scorer passes it to the engine's ``abstain``
argument. References: the measure's definition computed by hand, and the engine's
``udcg_single`` over the stored ranking.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from judging import services as judging_services
from judging.abstain import aggregate_abstain
from judging.models import LiveGrade
from metrics import services
from metrics.engine.udcg import udcg_single
from metrics.models import Run, RunQuery
from tests import factories
from tests.metrics import factories as metrics_factories

pytestmark = pytest.mark.django_db

MEASURES = ["UDCG@10", "nDCG@10"]
UDCG = "UDCG(rel=1,w_irr=-1/3)@10"


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def test_aggregate_abstain_prefers_humans_and_averages():
    # pair 0: two LLMs (0.2, 0.6) -> 0.4; pair 1: human 0.9 beats LLM 0.1 -> 0.9;
    # pair 2: human without probability, LLM 0.5 -> 0.5; pair 3: nothing recorded -> NaN.
    out = aggregate_abstain(
        [0, 0, 1, 1, 2, 2, 3],
        [0.2, 0.6, 0.9, 0.1, np.nan, 0.5, np.nan],
        [False, False, True, False, True, False, True],
        4,
    )
    assert out[:3].tolist() == pytest.approx([0.4, 0.9, 0.5], abs=1e-15)
    assert math.isnan(out[3])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        aggregate_abstain([0], [1.5], [True], 1)
    with pytest.raises(ValueError, match=r"0\.\.0"):
        aggregate_abstain([1], [0.5], [True], 1)


@pytest.fixture
def world(db):
    coll = factories.collection("udcg", measures=MEASURES, pool_depth=3)
    q1, q2 = factories.query(coll, "q1"), factories.query(coll, "q2")
    docs = {name: factories.document(coll, name) for name in ["d1", "d2", "d3", "d4"]}
    llm = factories.llm_judge("abstainer")
    human = factories.human_judge(factories.user())
    team = services.team_create(collection=coll, name="T")
    return coll, (q1, q2), docs, llm, human, team


def _record(judge, query, document, grade, p=None):
    judging_services.judgment_record(
        judge=judge, query=query, document=document, grade=grade, abstain_probability=p
    )


def test_live_udcg_uses_and_follows_abstain_probabilities(
    world, django_capture_on_commit_callbacks
):
    coll, (q1, q2), docs, llm, human, team = world
    _record(llm, q1, docs["d1"], 3, 0.5)  # relevant, half the utility
    _record(llm, q1, docs["d2"], 0)  # irrelevant, no probability: 0
    _record(llm, q2, docs["d4"], 2, 0.25)
    content = b"q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d4 1 1 r\n"
    run = services.run_submit(
        collection=coll, team=team, tag="r", content=content, filename="r.txt", user=None
    )
    # By hand: q1 = sigmoid((1·(1 − 0.5) − 1/3 − 1/3) / 3), q2 = sigmoid(1 · (1 − 0.25)).
    q1_value = _sigmoid((0.5 - 2 / 3) / 3)
    q2_value = _sigmoid(0.75)
    scores = metrics_factories.query_scores(run)
    assert scores[q1.pk][UDCG] == pytest.approx(q1_value, abs=1e-12)
    assert scores[q2.pk][UDCG] == pytest.approx(q2_value, abs=1e-12)
    assert run.scores[UDCG] == pytest.approx((q1_value + q2_value) / 2, abs=1e-12)
    ndcg_before = run.scores["nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"]

    # The defect of issue 12: the same grade with abstain_probability 0.9 must rescore live.
    with django_capture_on_commit_callbacks(execute=True):
        _record(llm, q1, docs["d1"], 3, 0.9)
    assert LiveGrade.objects.get(query=q1, document=docs["d1"]).abstain_probability == 0.9
    run.refresh_from_db()
    q1_after = _sigmoid((0.1 - 2 / 3) / 3)
    assert metrics_factories.query_scores(run)[q1.pk][UDCG] == pytest.approx(q1_after, abs=1e-12)
    assert run.scores[UDCG] == pytest.approx((q1_after + q2_value) / 2, abs=1e-12)
    assert run.scores[UDCG] < (q1_value + q2_value) / 2
    assert run.scores["nDCG(gain=linear,discount=log2,ideal=global,empty=zero)@10"] == ndcg_before

    # A human grade without a probability keeps the LLM's; a human probability wins.
    with django_capture_on_commit_callbacks(execute=True):
        _record(human, q1, docs["d1"], 3)
    assert LiveGrade.objects.get(query=q1, document=docs["d1"]).abstain_probability == 0.9
    with django_capture_on_commit_callbacks(execute=True):
        _record(human, q1, docs["d1"], 3, 0.0)
    run.refresh_from_db()
    assert LiveGrade.objects.get(query=q1, document=docs["d1"]).abstain_probability == 0.0
    q1_human = _sigmoid((1.0 - 2 / 3) / 3)
    assert run.scores[UDCG] == pytest.approx((q1_human + q2_value) / 2, abs=1e-12)


def test_bulk_import_of_probabilities_rescores_and_matches_the_definition(
    world, django_capture_on_commit_callbacks
):
    coll, (q1, _q2), docs, llm, _human, team = world
    _record(llm, q1, docs["d1"], 2)
    content = b"q1 Q0 d1 1 4 r\nq1 Q0 d2 2 3 r\nq1 Q0 d3 3 2 r\nq1 Q0 d4 4 1 r\n"
    run = services.run_submit(
        collection=coll, team=team, tag="b", content=content, filename="b.txt", user=None
    )
    rows = [
        judging_services.JudgmentRow(1, "q1", "d1", grade=2, abstain_probability=0.3),
        judging_services.JudgmentRow(2, "q1", "d3", grade=4, abstain_probability=0.8),
        judging_services.JudgmentRow(3, "q1", "d4", grade=0, abstain_probability=1.0),
    ]
    with django_capture_on_commit_callbacks(execute=True):
        judging_services.judgments_import(collection=coll, judge=llm, rows=rows)
    run.refresh_from_db()
    live = {g.document_id: g for g in LiveGrade.objects.filter(query=q1).order_by("document_id")}
    ranking = RunQuery.objects.get(run=run, query=q1).document_ids
    relevant = [d in live and live[d].grade >= 1 for d in ranking.tolist()]
    p0 = [
        live[d].abstain_probability
        if d in live and live[d].abstain_probability is not None
        else np.nan
        for d in ranking.tolist()
    ]
    expected = udcg_single(relevant, p0, 10)
    assert expected == pytest.approx(_sigmoid((0.7 - 1 / 3 + 0.2 - 0) / 4), abs=1e-15)
    assert run.scores[UDCG] == pytest.approx(expected, abs=1e-12)
    assert Run.objects.get(pk=run.pk).status == Run.Status.SCORED
