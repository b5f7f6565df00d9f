"""Gold pairs (mark, unmark, mixing rate) and the checks of LLM judges (canaries, versions).

A check is started here (validated, created *queued*, handed to the background once the
transaction commits: :func:`canary_check_start`, :func:`version_check_start`); the
background task (:mod:`judging.quality.checks`) asks the judge outside any transaction
and records the outcome through :func:`check_claim`, :func:`check_fail`,
:func:`canary_check_finish` and :func:`version_check_finish`.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from graded import textpolicy
from judging import background
from judging import services as judging_services
from judging.llm import runner
from judging.llm import services as services_llm
from judging.llm.judges import judge_version
from judging.models import (
    GRADE_MAX,
    GRADE_MIN,
    Collection,
    Document,
    Judge,
    Judgment,
    PoolEntry,
    Query,
)
from judging.quality import canaries, qualification
from judging.quality import selectors as quality_selectors
from judging.quality.models import (
    CanaryCheck,
    CanaryResult,
    GoldPair,
    QualityCheck,
    VersionCheck,
    VersionCheckResult,
    VersionSamplePair,
)

__all__ = [
    "canary_check_finish",
    "canary_check_start",
    "check_claim",
    "check_fail",
    "gold_rate_set",
    "gold_remove",
    "gold_set",
    "gold_set_many",
    "qualification_set",
    "version_check_finish",
    "version_check_start",
]


@transaction.atomic
def gold_set(
    *,
    query: Query,
    document: Document,
    grade: int,
    reason: str = "",
    actor: AbstractBaseUser | None = None,
    pool_now: bool = False,
) -> GoldPair:
    """Mark (query, document) as gold with ``grade``, or change its grade and reason.

    A pair already pooled stays as it is. A pair not pooled yet waits and enters the pool
    with the next pairs pooled, with their source and time
    (:func:`judging.services.pool_add_ids`), so nothing a judge sees marks it; with
    ``pool_now`` it enters at once, as a coordinator's pair (a judge watching the pool
    could then notice a pair that came alone). Raise ``ValidationError`` naming the field
    for a grade outside 0–4, a refused reason, or a query and document of different
    collections.
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
    judging_services.lock_collection(query.collection_id)  # judges' standings read it next
    if pool_now:  # else it waits for the next pairs pooled (judging.services.pool_add_ids)
        judging_services.pool_add_ids(
            collection=query.collection,
            pairs=[(query.pk, document.pk)],
            source=PoolEntry.Source.MANUAL,
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
    judging_services.qualification_refresh(collection_id=query.collection_id)
    return gold


@dataclass(frozen=True)
class GoldMark:
    """One pair a judgment import marks as gold, with its line."""

    line: int
    query_id: int
    document_id: int
    grade: int
    reason: str = ""


@transaction.atomic
def gold_set_many(
    *,
    collection: Collection,
    marks: Sequence[GoldMark],
    actor: AbstractBaseUser | None = None,
) -> int:
    """Mark many pairs of ``collection`` as gold at once (a judgment import's gold column).

    As :func:`gold_set` for each pair (pairs not pooled wait for the next pairs pooled),
    all or nothing: each problem raises
    ``ValidationError`` with messages ``line N: <field>: ...``. A pair marked twice is
    refused (naming the first line). The judges' standings are re-derived once. Return
    how many pairs were marked (new or changed).
    """
    problems: list[str] = []
    first: dict[tuple[int, int], int] = {}
    for mark in marks:
        key = (mark.query_id, mark.document_id)
        if type(mark.grade) is not int or not GRADE_MIN <= mark.grade <= GRADE_MAX:
            problems.append(
                f"line {mark.line}: gold: give a whole grade from {GRADE_MIN} to {GRADE_MAX}"
            )
        problem = textpolicy.text_problem(
            mark.reason, max_length=textpolicy.MAX_NOTE_LENGTH, what="gold_reason"
        )
        if problem:
            problems.append(f"line {mark.line}: gold_reason: {problem}")
        if key in first:
            problems.append(
                f"line {mark.line}: gold: pair marked twice (first on line {first[key]})"
            )
        first.setdefault(key, mark.line)
    queries = set(
        Query.objects.filter(collection=collection, pk__in={m.query_id for m in marks}).values_list(
            "pk", flat=True
        )
    )
    documents = set(
        Document.objects.filter(
            collection=collection, pk__in={m.document_id for m in marks}
        ).values_list("pk", flat=True)
    )
    for mark in marks:
        if mark.query_id not in queries or mark.document_id not in documents:
            problems.append(f"line {mark.line}: gold: the pair is not of this collection")
    if problems:
        raise ValidationError(problems)
    if not marks:
        return 0
    judging_services.lock_collection(collection.pk)
    existing = {
        (g.query_id, g.document_id): g for g in GoldPair.objects.filter(collection=collection)
    }
    created, changed = [], []
    by_actor = actor if getattr(actor, "pk", None) else None
    for mark in marks:
        gold = existing.get((mark.query_id, mark.document_id))
        if gold is None:
            created.append(
                GoldPair(
                    collection=collection,
                    query_id=mark.query_id,
                    document_id=mark.document_id,
                    grade=mark.grade,
                    reason=mark.reason,
                    created_by=by_actor,
                )
            )
        elif (gold.grade, gold.reason) != (mark.grade, mark.reason):
            gold.grade, gold.reason, gold.updated_at = mark.grade, mark.reason, timezone.now()
            changed.append(gold)
    GoldPair.objects.bulk_create(created)
    GoldPair.objects.bulk_update(changed, ["grade", "reason", "updated_at"])
    judging_services.qualification_refresh(collection_id=collection.pk)
    return len(created) + len(changed)


@transaction.atomic
def gold_rate_set(*, collection: Collection, rate: float) -> None:
    """Set the share of served pairs that are gold pairs a judge has not graded (0–1)."""
    if not isinstance(rate, int | float) or not 0 <= rate <= 1 or rate != rate:
        raise ValidationError({"gold_rate": ["Give a share from 0 to 1."]})
    Collection.objects.filter(pk=collection.pk).update(gold_rate=float(rate))
    collection.gold_rate = float(rate)


@transaction.atomic
def gold_remove(*, gold: GoldPair) -> None:
    """Unmark a gold pair (the judges' labels of the pair stay, as ordinary labels).

    The judges who graded it lose it from their gold record, so their qualification is
    re-derived (and the live list follows) in the same transaction.
    """
    judging_services.lock_collection(gold.collection_id)
    gold.delete()
    judging_services.qualification_refresh(collection_id=gold.collection_id)


#: Most gold pairs a collection may ask a judge to qualify on.
MAX_QUALIFICATION_PAIRS = 1000


@transaction.atomic
def qualification_set(
    *, collection: Collection, pairs: int, share: float, confirm: bool = False
) -> bool:
    """Set the qualification bar: ``pairs`` gold pairs (0: off) at ``share`` exact (0–1).

    The rule is :func:`judging.quality.gold.qualification`. A changed bar re-derives
    every judge's standing and rebuilds the whole live list under a new judgment-list
    version (every run is rescored in the background), as a change of aggregation policy
    does. A bar that would keep less than half of the judgment list's lines, or no judge
    (:func:`judging.quality.selectors.bar_effect`), is refused unless ``confirm``: a
    ``ValidationError`` on ``confirm`` giving the counts. Raise ``ValidationError`` naming
    the field for a bad value; nothing changes then. Return whether the bar changed.
    """
    problems: dict[str, list[str]] = {}
    if (
        isinstance(pairs, bool)
        or not isinstance(pairs, int)
        or not 0 <= pairs <= MAX_QUALIFICATION_PAIRS
    ):
        problems["qualification_pairs"] = [
            f"Give a whole number of gold pairs from 0 (off) to {MAX_QUALIFICATION_PAIRS}."
        ]
    if (
        isinstance(share, bool)
        or not isinstance(share, int | float)
        or share != share
        or not 0 <= share <= 1
    ):
        problems["qualification_share"] = ["Give a share from 0 to 1."]
    if problems:
        raise ValidationError(problems)
    judging_services.lock_collection(collection.pk)
    current = Collection.objects.filter(pk=collection.pk).values_list(
        "qualification_pairs", "qualification_share"
    )[0]
    collection.qualification_pairs, collection.qualification_share = pairs, float(share)
    if current == (pairs, float(share)):
        return False
    if pairs and not confirm:
        effect = quality_selectors.bar_effect(collection=collection, pairs=pairs, share=share)
        if effect.needs_confirm:
            collection.qualification_pairs, collection.qualification_share = current
            raise ValidationError({"confirm": [effect.reason, *effect.warnings]})
    Collection.objects.filter(pk=collection.pk).update(
        qualification_pairs=pairs, qualification_share=float(share)
    )
    if not pairs:
        qualification.reset(collection.pk)
    judging_services.live_grades_rebuild(collection=collection)
    return True


#: Queries a canary check makes canaries for (two canaries each).
CANARY_QUERIES = 5
#: Longest error kept on a failed check.
MAX_CHECK_ERROR = 2000
#: A check running for longer than this is taken as lost (its worker died): a redelivered
#: task may run it again.
CHECK_STALE_AFTER = dt.timedelta(hours=1)
#: The task that runs a check, by kind (:mod:`judging.quality.tasks`).
CHECK_TASK = "judging.run_quality_check"
CHECK_KINDS: dict[str, type[QualityCheck]] = {"canary": CanaryCheck, "version": VersionCheck}


def _kind(check: QualityCheck) -> str:
    return "canary" if isinstance(check, CanaryCheck) else "version"


def _check_judge(*, collection: Collection, judge: Judge, user: AbstractBaseUser | None) -> None:
    """Raise ``ValidationError`` unless the LLM ``judge`` can run for ``user`` in ``collection``.

    As for an LLM job, everything that needs no request is checked before the check is
    queued (provider, model, key variable, the provider open to the collection).
    """
    services_llm.check_runnable(judge)
    services_llm.check_open_to(
        judge=judge, collection=collection, user=user if getattr(user, "pk", None) else None
    )


def _start(check: QualityCheck) -> None:
    """Hand ``check`` to the background once the transaction commits."""
    kind = _kind(check)
    background.start_after_commit(
        CHECK_TASK, kind, check.pk, thread_name=f"{kind}-check-{check.pk}"
    )


@transaction.atomic
def canary_check_start(
    *,
    collection: Collection,
    judge: Judge,
    user: AbstractBaseUser | None = None,
    queries: int = CANARY_QUERIES,
    seed: int | None = None,
) -> CanaryCheck:
    """Queue a canary check of an LLM judge on the collection's first ``queries`` queries.

    Returns at once: the check is *queued*, and a background task asks the judge
    (:func:`judging.quality.checks.run_check`). Raises ``ValidationError`` naming the
    field when the judge cannot run, ``queries`` is out of range, or the collection has
    no query. Canaries are never documents: nothing reaches the pool, the live list,
    exports or scores.
    """
    if judge.kind != Judge.Kind.LLM:
        raise ValidationError({"judge": ["Canary checks are for LLM judges."]})
    if type(queries) is not int or not 1 <= queries <= 50:
        raise ValidationError({"queries": ["Give from 1 to 50 queries."]})
    if not collection.queries.exists():
        raise ValidationError({"queries": ["The collection has no query to make canaries for."]})
    _check_judge(collection=collection, judge=judge, user=user)
    check = CanaryCheck.objects.create(
        collection=collection,
        judge=judge,
        version=judge_version(judge),
        seed=secrets.randbelow(2**31) if seed is None else seed,
        queries=queries,
        created_by=user if getattr(user, "pk", None) else None,
    )
    _start(check)
    return check


@transaction.atomic
def version_check_start(
    *, collection: Collection, judge: Judge, user: AbstractBaseUser | None = None
) -> VersionCheck:
    """Queue a check of an LLM judge's current version on the gold pairs and frozen sample.

    Draws the frozen sample if it is the collection's first check. Returns at once; a
    background task asks the judge. Raises ``ValidationError`` when the judge cannot run
    or there is nothing to check on.
    """
    if judge.kind != Judge.Kind.LLM:
        raise ValidationError({"judge": ["Version checks are for LLM judges."]})
    if not version_check_pairs(collection)[0]:
        raise ValidationError({"judge": [NOTHING_TO_CHECK]})
    _check_judge(collection=collection, judge=judge, user=user)
    check = VersionCheck.objects.create(
        collection=collection,
        judge=judge,
        version=judge_version(judge),
        created_by=user if getattr(user, "pk", None) else None,
    )
    _start(check)
    return check


@transaction.atomic
def check_claim(*, check: QualityCheck) -> bool:
    """Mark a queued check *running* for this worker; return whether it is this worker's.

    A check already running is left to its worker unless it started more than
    :data:`CHECK_STALE_AFTER` ago (that worker died: a redelivered task runs it again).
    The check's ``version`` becomes the judge's configuration now, the one it runs with.
    """
    model = type(check)
    locked = model.objects.select_for_update().filter(pk=check.pk).first()
    if locked is None:
        return False
    now = timezone.now()
    stale = (
        locked.status == QualityCheck.Status.RUNNING
        and locked.started_at is not None
        and locked.started_at < now - CHECK_STALE_AFTER
    )
    if locked.status != QualityCheck.Status.QUEUED and not stale:
        return False
    version = judge_version(check.judge)
    model.objects.filter(pk=check.pk).update(
        status=QualityCheck.Status.RUNNING, started_at=now, version=version
    )
    check.status, check.started_at, check.version = QualityCheck.Status.RUNNING, now, version
    return True


@transaction.atomic
def check_fail(*, check: QualityCheck, error: str) -> None:
    """End ``check`` as *failed* with ``error`` (no results are kept)."""
    now = timezone.now()
    error = (error or "The check failed.")[:MAX_CHECK_ERROR]
    type(check).objects.filter(pk=check.pk).update(
        status=QualityCheck.Status.FAILED, error=error, finished_at=now
    )
    check.status, check.error, check.finished_at = QualityCheck.Status.FAILED, error, now


def _end_done(check: QualityCheck, trials: Sequence[runner.Trial]) -> None:
    """End ``check`` as *done*, with the tokens its answers reported."""
    now = timezone.now()
    prompt = sum(t.prompt_tokens or 0 for t in trials)
    completion = sum(t.completion_tokens or 0 for t in trials)
    type(check).objects.filter(pk=check.pk).update(
        status=QualityCheck.Status.DONE,
        error="",
        finished_at=now,
        prompt_tokens=prompt,
        completion_tokens=completion,
    )
    check.status, check.finished_at = QualityCheck.Status.DONE, now
    check.prompt_tokens, check.completion_tokens = prompt, completion


def canary_pairs(
    collection: Collection, *, queries: int, seed: int
) -> tuple[list[canaries.Canary], list[runner.Pair]]:
    """Return the canaries of the collection's first ``queries`` queries and their requests."""
    picked = list(collection.queries.order_by("external_id")[:queries])
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
    return made, pairs


@transaction.atomic
def canary_check_finish(
    *,
    check: CanaryCheck,
    made: Sequence[canaries.Canary],
    pairs: Sequence[runner.Pair],
    trials: Sequence[runner.Trial],
) -> None:
    """Record every canary with the judge's answer (if any) and end the check *done*."""
    by_docno = {t.docno: t for t in trials}
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
            for trial in [by_docno.get(pair.values["docno"])]
        ]
    )
    _end_done(check, trials)


#: Human-graded pairs in a collection's frozen sample for version checks.
VERSION_SAMPLE = 40


def _frozen_sample(collection: Collection) -> list[tuple[int, int]]:
    """Return the collection's frozen sample of human-graded pairs, drawing it the first time.

    The draw orders the human-graded pairs by a hash of (collection, query, document) and
    keeps the first :data:`VERSION_SAMPLE`; once drawn it never changes.
    """
    kept = list(
        VersionSamplePair.objects.filter(collection=collection).values_list(
            "query_id", "document_id"
        )
    )
    if kept:
        return kept
    graded = set(
        Judgment.objects.filter(
            collection=collection, status=Judgment.Status.GRADED, judge__kind=Judge.Kind.HUMAN
        ).values_list("query_id", "document_id")
    )

    def key(pair: tuple[int, int]) -> bytes:
        return hashlib.sha256(f"{collection.pk}:{pair[0]}:{pair[1]}".encode()).digest()

    picked = sorted(graded, key=key)[:VERSION_SAMPLE]
    VersionSamplePair.objects.bulk_create(
        [VersionSamplePair(collection=collection, query_id=q, document_id=d) for q, d in picked],
        ignore_conflicts=True,
    )
    return picked


def _human_reference(collection: Collection, pairs: list[tuple[int, int]]) -> dict:
    """Return the lower median of the human grades of each of ``pairs`` that has one."""
    grades: dict[tuple[int, int], list[int]] = {}
    rows = Judgment.objects.filter(
        collection=collection,
        status=Judgment.Status.GRADED,
        judge__kind=Judge.Kind.HUMAN,
        query_id__in={q for q, _ in pairs},
        document_id__in={d for _, d in pairs},
    ).values_list("query_id", "document_id", "grade")
    for q, d, grade in rows:
        grades.setdefault((q, d), []).append(grade)
    return {pair: sorted(g)[(len(g) - 1) // 2] for pair, g in grades.items()}


NOTHING_TO_CHECK = "Nothing to check on: no gold pair and no human-graded pair yet."


def version_check_pairs(
    collection: Collection,
) -> tuple[list[tuple[int, int]], dict[tuple[int, int], int]]:
    """Return the pairs a version check asks (frozen sample and gold), and the gold grades."""
    gold = {
        (q, d): g
        for q, d, g in GoldPair.objects.filter(collection=collection).values_list(
            "query_id", "document_id", "grade"
        )
    }
    return sorted(set(_frozen_sample(collection)) | set(gold)), gold


def version_requests(pairs: Sequence[tuple[int, int]]) -> list[runner.Pair]:
    """Return the requests of a version check's pairs (the document as stored)."""
    queries = Query.objects.in_bulk({q for q, _ in pairs})
    documents = Document.objects.in_bulk({d for _, d in pairs})
    return [
        runner.Pair(
            query_id=q,
            document_id=d,
            values={
                "qid": queries[q].external_id,
                "docno": documents[d].external_id,
                "query": queries[q].text,
                "description": queries[q].description,
                "narrative": queries[q].narrative,
                "title": documents[d].title,
                "document": documents[d].body,
            },
        )
        for q, d in pairs
    ]


@transaction.atomic
def version_check_finish(
    *,
    check: VersionCheck,
    asked: Sequence[runner.Pair],
    trials: Sequence[runner.Trial],
    gold: dict[tuple[int, int], int],
) -> None:
    """Record each pair's grade beside the human and gold grades; end the check *done*.

    Nothing is labelled: the grades stay on the check. The human reference is the lower
    median of the human grades at the time of recording.
    """
    by_key = {(t.qid, t.docno): t for t in trials}
    human = _human_reference(check.collection, [(p.query_id, p.document_id) for p in asked])
    results = []
    for pair in asked:
        trial = by_key.get((pair.values["qid"], pair.values["docno"]))
        key = (pair.query_id, pair.document_id)
        results.append(
            VersionCheckResult(
                version_check=check,
                query_id=pair.query_id,
                document_id=pair.document_id,
                grade=trial.grade if trial else None,
                human_grade=human.get(key),
                gold_grade=gold.get(key),
                prompt_tokens=trial.prompt_tokens if trial else None,
                completion_tokens=trial.completion_tokens if trial else None,
                latency_ms=trial.latency_ms if trial else None,
                problem=trial.problem if trial else "No answer in time.",
            )
        )
    VersionCheckResult.objects.bulk_create(results)
    _end_done(check, trials)
