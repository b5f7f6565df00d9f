"""Gold pairs (mark, unmark, mixing rate) and canary checks of LLM judges."""

from __future__ import annotations

import secrets

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from judging import services as judging_services
from judging import textpolicy
from judging.llm import runner
from judging.llm.judges import judge_version
from judging.models import GRADE_MAX, GRADE_MIN, Collection, Document, Judge, PoolEntry, Query
from judging.quality import canaries
from judging.quality.models import CanaryCheck, CanaryResult, GoldPair

__all__ = [
    "canary_check_run",
    "gold_rate_set",
    "gold_remove",
    "gold_set",
    "judge_version",
]


@transaction.atomic
def gold_set(
    *,
    query: Query,
    document: Document,
    grade: int,
    reason: str = "",
    actor: AbstractBaseUser | None = None,
) -> GoldPair:
    """Mark (query, document) as gold with ``grade``, or change its grade and reason.

    Raise ``ValidationError`` naming the field for a grade outside 0–4, a refused reason,
    or a query and document of different collections.
    """
    problems: dict[str, list[str]] = {}
    if type(grade) is not int or not GRADE_MIN <= grade <= GRADE_MAX:
        problems["grade"] = [f"Give a whole grade from {GRADE_MIN} to {GRADE_MAX}."]
    problem = textpolicy.text_problem(reason, max_length=textpolicy.MAX_NOTE_LENGTH, what="reason")
    if problem:
        problems["reason"] = [problem]
    if query.collection_id != document.collection_id:
        problems["document"] = ["The document belongs to another collection than the query."]
    if problems:
        raise ValidationError(problems)
    # A gold pair is a pool pair, so judges can be served it (judging.selectors.next_pair).
    judging_services.pool_add_ids(
        collection=query.collection, pairs=[(query.pk, document.pk)], source=PoolEntry.Source.MANUAL
    )
    gold, _created = GoldPair.objects.update_or_create(
        collection_id=query.collection_id,
        query=query,
        document=document,
        defaults={"grade": grade, "reason": reason},
        create_defaults={
            "grade": grade,
            "reason": reason,
            "created_by": actor if getattr(actor, "pk", None) else None,
        },
    )
    return gold


@transaction.atomic
def gold_rate_set(*, collection: Collection, rate: float) -> None:
    """Set the share of served pairs that are gold pairs a judge has not graded (0–1)."""
    if not isinstance(rate, int | float) or not 0 <= rate <= 1 or rate != rate:
        raise ValidationError({"gold_rate": ["Give a share from 0 to 1."]})
    Collection.objects.filter(pk=collection.pk).update(gold_rate=float(rate))
    collection.gold_rate = float(rate)


@transaction.atomic
def gold_remove(*, gold: GoldPair) -> None:
    """Unmark a gold pair (the judges' labels of the pair stay)."""
    gold.delete()


#: Queries a canary check makes canaries for (two canaries each).
CANARY_QUERIES = 5


def canary_check_run(
    *,
    collection: Collection,
    judge: Judge,
    user: AbstractBaseUser | None = None,
    queries: int = CANARY_QUERIES,
    seed: int | None = None,
) -> CanaryCheck:
    """Ask an LLM judge to grade canaries made from the collection's first queries; record it.

    The requests go out first (the provider's egress policy, key, budgets and decoding,
    as when trying a judge: :func:`judging.llm.runner.try_judge`), outside any
    transaction; then the check and every answer are written at once. Canaries are never
    documents: nothing reaches the pool, the live list, exports or scores. Raises
    ``ValidationError`` when the judge cannot run, or the collection has no query.
    """
    if judge.kind != Judge.Kind.LLM:
        raise ValidationError({"judge": ["Canary checks are for LLM judges."]})
    if not 1 <= queries <= 50:
        raise ValidationError({"queries": ["Give from 1 to 50 queries."]})
    picked = list(collection.queries.order_by("external_id")[:queries])
    if not picked:
        raise ValidationError({"queries": ["The collection has no query to make canaries for."]})
    seed = secrets.randbelow(2**31) if seed is None else seed
    made = canaries.make_canaries([(q.external_id, q.text) for q in picked], seed=seed)
    by_qid = {q.external_id: q for q in picked}
    pairs = [
        runner.Pair(
            query_id=by_qid[c.qid].pk,
            document_id=-(i + 1),  # not a document: keys the request only
            values={
                "qid": c.qid,
                "docno": f"canary-{i + 1}",
                "query": by_qid[c.qid].text,
                "description": by_qid[c.qid].description,
                "narrative": by_qid[c.qid].narrative,
                "title": c.title,
                "document": c.text,
            },
        )
        for i, c in enumerate(made)
    ]
    trials = {t.docno: t for t in runner.try_judge(judge, pairs, collection=collection, user=user)}
    with transaction.atomic():
        check = CanaryCheck.objects.create(
            collection=collection,
            judge=judge,
            version=judge_version(judge),
            seed=seed,
            created_by=user if getattr(user, "pk", None) else None,
        )
        CanaryResult.objects.bulk_create(
            [
                CanaryResult(
                    canary_check=check,
                    kind=c.kind,
                    qid=c.qid,
                    title=c.title[:600],
                    text=c.text,
                    grade=trial.grade if trial else None,
                    raw_answer=trial.raw_answer if trial else "",
                    problem=(trial.problem if trial else "No answer in time."),
                )
                for c, pair in zip(made, pairs, strict=True)
                for trial in [trials.get(pair.values["docno"])]
            ]
        )
    return check
