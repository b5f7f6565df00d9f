"""LLM jobs grade the collection's gold pairs too, blind, against the local fake server.

A job restricted to some queries, or limited to a few pairs, still asks for every gold
pair the judge has not graded, with exactly the request it would send for the pair were
it not gold; the judge then has a gold record, and with qualification on it qualifies
(or not) like a human.
"""

from __future__ import annotations

import pytest

from judging.llm import runner
from judging.llm import services as services_llm
from judging.models import Judgment, LiveGrade
from judging.quality import selectors as quality_selectors
from judging.quality import services as quality_services
from judging.quality.models import JudgeQualification

pytestmark = pytest.mark.django_db


def _run(coll, judge, **options):
    return runner.run_job(services_llm.llm_job_create(collection=coll, judge=judge, **options))


def _asked(fake) -> list[str]:
    """Return the user message of every request the fake server received."""
    return [r["body"]["messages"][-1]["content"] for r in fake.requests]


def test_a_restricted_limited_job_still_grades_every_gold_pair_blind(coll, pooled, llm, fake):
    first, last = pooled[0], pooled[-1]  # different queries
    assert first.query_id != last.query_id
    quality_services.gold_set(query=last.query, document=last.document, grade=3, reason="secret")
    job = _run(coll, llm, queries=[first.query.external_id], limit=2)
    asked = {(j.query_id, j.document_id) for j in Judgment.objects.filter(judge=llm)}
    # two ordinary pairs of the chosen query, and the gold pair of another query
    assert len(asked) == 3 and (last.query_id, last.document_id) in asked
    assert {q for q, _ in asked} == {first.query_id, last.query_id}
    assert job.total == 3 and job.done == 3
    gold_prompt = next(p for p in _asked(fake) if last.document.external_id in p)
    assert "secret" not in gold_prompt and "gold" not in gold_prompt.lower()
    # the judge has a gold record now: native "2" maps to grade 3, the gold grade
    (row,) = [r for r in quality_selectors.gold_report(collection=coll) if r.judge_id == llm.pk]
    assert (row.accuracy.n, row.accuracy.exact) == (1, 1.0)
    # the same pair, no longer gold, asked again: the request is the same, byte for byte
    fake.requests.clear()
    Judgment.objects.filter(judge=llm, query=last.query, document=last.document).delete()
    quality_services.gold_remove(gold=coll.gold_pairs.get())
    _run(coll, llm, queries=[last.query.external_id])
    again = [r["body"] for r in fake.requests if last.document.external_id in str(r["body"])]
    assert len(again) == 1 and again[0]["messages"][-1]["content"] == gold_prompt


def test_a_job_does_not_ask_again_for_gold_pairs_the_judge_graded(coll, pooled, llm, fake):
    gold = pooled[5]
    quality_services.gold_set(query=gold.query, document=gold.document, grade=1)
    _run(coll, llm, queries=[gold.query.external_id])
    fake.requests.clear()
    job = _run(coll, llm, queries=[pooled[0].query.external_id], limit=1)
    assert job.total == 1 and len(fake.requests) == 1


def test_an_llm_judge_qualifies_through_its_job(coll, pooled, llm, fake):
    for entry, grade in ((pooled[0], 3), (pooled[4], 3)):
        quality_services.gold_set(query=entry.query, document=entry.document, grade=grade)
    quality_services.qualification_set(collection=coll, pairs=2, share=1.0)
    # limited to one ordinary pair of the last query: its label waits for the gold pairs
    _run(coll, llm, queries=[pooled[-1].query.external_id], limit=1)
    standing = JudgeQualification.objects.get(judge=llm)
    assert (standing.status, standing.graded, standing.counted) == ("qualified", 2, True)
    assert LiveGrade.objects.filter(collection=coll).count() == 3  # two gold, one ordinary
