"""Writes of adaptive pooling: set a collection's pooling policy, replan its judging queue.

The plan is the next ``horizon`` unjudged pairs in the strategy's order
(:func:`metrics.pool.strategies.plan` over the collection's runs and live grades), cut
into waves of ``wave_size``; :func:`judging.services.pool_plan_set` stores it on the pool
entries and the judges' queue serves it first. Pairs some judges graded but that still
need more grades are wave 0: started pairs finish first, so every planned pair gets its
``judges_per_pair`` grades. Replanning follows every change of the judgments (see
:mod:`metrics.live.receivers`), the runs and the pool.
"""

from __future__ import annotations

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from judging.agreement.checks import pair_audit_draws
from judging.models import Collection, Judge, Judgment, PoolEntry
from judging.services import pool_plan_set
from metrics.live import store
from metrics.live.scoring import canonical_names
from metrics.models import Run
from metrics.pool import checks, selectors
from metrics.pool.models import (
    LIMITS,
    SNAPSHOT_STRIDE,
    STRATEGY_CHOICES,
    PoolingPolicy,
    RankingSnapshot,
)
from metrics.pool.strategies import Swap, make_strategy, plan


@transaction.atomic
def pooling_policy_set(
    *,
    collection: Collection,
    actor: AbstractBaseUser | None,
    strategy: str,
    wave_size: int = 10,
    horizon: int = 100,
    rel_level: int = 1,
    cutoff: int = 10,
    seed: int = 0,
    audit_percent: int = 10,
) -> PoolingPolicy | None:
    """Make a new version of the collection's pooling policy and replan; None if unchanged.

    Raise ``ValidationError`` naming each bad field. Concurrent changes are serialised by
    the collection's row lock, so versions are 1, 2, 3, ... without gaps or duplicates.
    """
    values = {
        "wave_size": wave_size,
        "horizon": horizon,
        "rel_level": rel_level,
        "cutoff": cutoff,
        "seed": seed,
        "audit_percent": audit_percent,
    }
    errors: dict[str, str] = {}
    if strategy not in dict(STRATEGY_CHOICES):
        names = ", ".join(name for name, _ in STRATEGY_CHOICES)
        errors["strategy"] = f"unknown strategy {str(strategy)[:50]!r}; use one of {names}"
    for name, value in values.items():
        low, high = LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            errors[name] = f"must be a whole number from {low} to {high}"
    if errors:
        raise ValidationError(errors)
    Collection.objects.select_for_update().filter(pk=collection.pk).values_list("pk").get()
    current = selectors.pooling_policy(collection=collection)
    if selectors.pooling_values(collection=collection) == {"strategy": strategy, **values}:
        return None
    policy = PoolingPolicy.objects.create(
        collection=collection,
        version=(current.version + 1) if current else 1,
        strategy=strategy,
        actor=actor,
        **values,
    )
    pool_replan(collection_id=collection.pk, force=True)
    policy.refresh_from_db()
    return policy


@transaction.atomic
def pool_replan(*, collection_id: int, force: bool = False) -> int | None:
    """Replan the collection's judging queue under its pooling policy; return planned pairs.

    None when nothing was done: depth-k with no plan stored, or (unless ``force``) a plan
    already made at the current judgment-list version from the same runs. Concurrent
    replans of one collection take turns (row lock on the policy in force).
    """
    policy = (
        PoolingPolicy.objects.select_for_update()
        .filter(collection_id=collection_id)
        .order_by("-version")
        .first()
    )
    if policy is None:
        return None
    collection = Collection.objects.get(pk=collection_id)
    run_count = collection.runs.count()
    if policy.strategy == "depth":
        if policy.planned_pairs == 0 and not force:
            return None
        waves: dict[tuple[int, int], int] = {}
    elif (
        not force
        and policy.planned_version == collection.judgments_version
        and policy.planned_runs == run_count
    ):
        return None
    else:
        waves = _waves(collection, policy)
    store.lock(collection_id)  # the plan is written under the collection lock (store's "Locks")
    newest = PoolingPolicy.objects.filter(collection_id=collection_id).order_by("-version")
    if newest.values_list("version", flat=True).first() != policy.version:
        return None  # a policy change committed while this plan was made: its replan wins
    planned = pool_plan_set(collection=collection, waves=waves)
    PoolingPolicy.objects.filter(pk=policy.pk).update(
        planned_version=collection.judgments_version,
        planned_runs=run_count,
        planned_pairs=planned,
        planned_at=timezone.now(),
    )
    return planned


def _waves(collection: Collection, policy: PoolingPolicy) -> dict[tuple[int, int], int]:
    """Return the plan: started open pairs in wave 0, then the strategy's next pairs.

    Under ``llm-check`` a pair only the LLM judges graded is not "started": the human
    check is what the plan orders, so only pairs a human started go to wave 0.
    """
    started = PoolEntry.objects.filter(collection=collection, is_open=True, graded_count__gt=0)
    if policy.strategy == "llm-check":
        started = started.filter(
            Exists(
                Judgment.objects.filter(
                    query_id=OuterRef("query_id"),
                    document_id=OuterRef("document_id"),
                    judge__kind=Judge.Kind.HUMAN,
                    status=Judgment.Status.GRADED,
                )
            )
        )
    waves = dict.fromkeys(started.values_list("query_id", "document_id"), 0)
    live = selectors.live_campaign(collection=collection, depth=collection.pool_depth)
    if not live.query_ids or not live.campaign.runs:
        return waves
    if policy.strategy == "llm-check":
        picks = _llm_checks(collection, policy, live)
    else:
        picks = _strategy_plan(collection, policy, live)
    for position, (q, d) in enumerate(picks):
        pair = (live.query_ids[q], int(live.document_ids[q][d]))
        waves.setdefault(pair, position // policy.wave_size)
    return waves


def _strategy_plan(
    collection: Collection, policy: PoolingPolicy, live: selectors.LiveCampaign
) -> list[tuple[int, int]]:
    """Return the next ``horizon`` open pairs in the strategy's order over the live grades."""
    scorer = (
        selectors.leaderboard_scorer(collection=collection, live=live, cutoff=policy.cutoff)
        if policy.strategy == "swap"
        else None
    )
    strategy = make_strategy(
        policy.strategy,
        live.campaign,
        scores=scorer,
        depth=collection.pool_depth,
        cutoff=policy.cutoff,
        seed=policy.seed,
        rel_level=float(policy.rel_level),
    )
    return plan(strategy, live.known, policy.horizon, eligible=live.open)


def _llm_checks(
    collection: Collection, policy: PoolingPolicy, live: selectors.LiveCampaign
) -> list[tuple[int, int]]:
    """Return the next ``horizon`` open pairs by check score (:mod:`metrics.pool.checks`).

    Impact is weighed under the live grades, LLM-filled ones included (the leaderboard as
    it stands); a pair some human already graded is no longer eligible unless it is open.
    """
    evidence = selectors.llm_evidence(collection=collection, live=live)
    scorer = selectors.leaderboard_scorer(collection=collection, live=live, cutoff=policy.cutoff)
    swap = Swap(live.campaign, scores=scorer, cutoff=policy.cutoff, rel_level=policy.rel_level)
    impact = swap.impact(list(live.known))
    unsure = [
        checks.llm_uncertainty(m, s, a, rel_level=policy.rel_level)
        for m, s, a in zip(evidence.mean, evidence.spread, evidence.abstain, strict=True)
    ]
    scores = checks.check_scores(unsure, impact)
    draws = [  # the query-level audit: every pair of a sampled query is in it
        pair_audit_draws(np.full(len(docs), query_id), docs, seed=policy.seed)
        for query_id, docs in zip(live.query_ids, live.document_ids, strict=True)
    ]
    return checks.check_order(
        scores, live.open, policy.horizon, draws=draws, audit_share=policy.audit_percent / 100
    )


def ranking_snapshot_take(*, collection_id: int) -> RankingSnapshot | None:
    """Store the runs' main-measure scores if the judgments entered a new stride; else None.

    The snapshot also records which pairs of runs the leaderboard's paired test told
    apart (:func:`selectors.significance_record`), for the stop rule's look back.

    Nothing is stored while a run is not yet scored at the judgment list's version (the
    rescoring task takes the snapshot when it is done), when the collection has no run or
    no measure, or when the newest snapshot is in the same :data:`SNAPSHOT_STRIDE` of
    judgments. Called after commit; concurrent calls cannot store one count twice (unique
    constraint, ``ignore_conflicts``).
    """
    row = Collection.objects.filter(pk=collection_id).values_list("judgments_version", "measures")
    found = row.first()
    if found is None or not found[1]:
        return None
    version, measures = found
    judged = selectors.judged_count(collection_id=collection_id)
    last = (
        RankingSnapshot.objects.filter(collection_id=collection_id)
        .order_by("-judged")
        .values_list("judged", flat=True)
        .first()
    )
    if last is not None and last // SNAPSHOT_STRIDE == judged // SNAPSHOT_STRIDE:
        return None
    runs = list(
        Run.objects.filter(collection_id=collection_id).values_list(
            "pk", "status", "scored_version"
        )
    )
    board = store.board_read(collection_id)
    if not runs or any(
        status != Run.Status.SCORED or max(scored, board.version) != version
        for _, status, scored in runs
    ):
        return None
    measure = canonical_names(measures[:1])[0]
    means = board.means()
    scores = {str(pk): means.get(pk, {}).get(measure) for pk, _, _ in runs}
    significance = selectors.significance_record(
        collection_id=collection_id, run_ids=sorted(pk for pk, _, _ in runs), measure=measure
    )
    snapshot = RankingSnapshot(
        collection_id=collection_id,
        judged=judged,
        judgments_version=version,
        measure=measure,
        scores=scores,
        significance=significance,
    )
    RankingSnapshot.objects.bulk_create([snapshot], ignore_conflicts=True)
    return snapshot
