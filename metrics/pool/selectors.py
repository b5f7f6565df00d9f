"""Reads of the judging pool: the coordinators' listing, the pooling policy and its plan."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from django.core.cache import cache
from django.db.models import BinaryField, Count, Q, QuerySet, Sum
from django.db.models.functions import Substr

from judging.agreement.checks import Audit
from judging.models import Collection, Judge, JudgeProgress, Judgment, LiveGrade, PoolEntry
from metrics.live import store
from metrics.live.scoring import canonical_names
from metrics.models import RANKING_DTYPE, Run, RunQuery
from metrics.pool import stopping
from metrics.pool.models import DEFAULTS, PARAMETERS, PoolingPolicy, RankingSnapshot
from metrics.pool.simulation import make_scorer
from metrics.pool.strategies import Campaign, Scorer
from metrics.selectors_common import cache_key_for

F64 = np.ndarray


def pool_entries(
    *,
    collection: Collection,
    query_external_id: str | None = None,
    graded_count: int | None = None,
    run: Run | None = None,
    unjudged_only: bool = False,
) -> QuerySet[PoolEntry]:
    """Return the collection's pool entries, filtered, with query and document, in order.

    ``run`` keeps the pairs of the run's top ``pool_depth`` (the pairs it pooled, unless
    another source pooled them first); ``unjudged_only`` keeps pairs no judge has graded.
    """
    entries = (
        PoolEntry.objects.filter(collection=collection)
        .select_related("query", "document")
        .only(
            "source",
            "graded_count",
            "added_at",
            "query__external_id",
            "query__text",
            "document__external_id",
            "document__title",
            "document__has_content",
        )
        .order_by("query__external_id", "document__external_id")
    )
    if query_external_id:
        entries = entries.filter(query__external_id=query_external_id)
    if graded_count is not None:
        entries = entries.filter(graded_count=graded_count)
    if unjudged_only:
        entries = entries.filter(graded_count=0)
    if run is not None:
        depth = collection.pool_depth
        pairs = Q(pk__in=[])
        for query_id, ranking in RunQuery.objects.filter(run=run, retrieved__gt=0).values_list(
            "query_id", "ranking"
        ):
            top = np.frombuffer(bytes(ranking), dtype=RANKING_DTYPE)[:depth].tolist()
            pairs |= Q(query_id=query_id, document_id__in=top)
        entries = entries.filter(pairs)
    return entries


def pool_counts(*, collection: Collection) -> dict[str, int]:
    """Return the pool's pairs: ``total``, ``unjudged`` (no grade) and ``complete`` (one query).

    A pair is complete once ``collection.judges_per_pair`` judges graded it.
    """
    return PoolEntry.objects.filter(collection=collection).aggregate(
        total=Count("pk"),
        unjudged=Count("pk", filter=Q(graded_count=0)),
        complete=Count("pk", filter=Q(graded_count__gte=collection.judges_per_pair)),
    )


def pooling_policy(*, collection: Collection) -> PoolingPolicy | None:
    """Return the collection's pooling policy in force (None: depth-k, the default)."""
    return (
        PoolingPolicy.objects.filter(collection=collection)
        .select_related("actor")
        .order_by("-version")
        .first()
    )


def pooling_values(*, collection: Collection) -> dict[str, object]:
    """Return the strategy and parameters in force (depth-k and the defaults if none)."""
    policy = pooling_policy(collection=collection)
    if policy is None:
        return {"strategy": "depth", **DEFAULTS}
    return {"strategy": policy.strategy, **{n: getattr(policy, n) for n in PARAMETERS}}


def audit_sample(*, collection: Collection) -> Audit | None:
    """Return the random audit of the policy in force: under llm-check with a share, else None."""
    policy = pooling_policy(collection=collection)
    if policy is None or policy.strategy != "llm-check" or not policy.audit_percent:
        return None
    return Audit(seed=policy.seed, share=policy.audit_percent / 100)


def pooling_history(*, collection: Collection) -> list[PoolingPolicy]:
    """Return every version of the collection's pooling policy, newest first."""
    return list(
        PoolingPolicy.objects.filter(collection=collection)
        .select_related("actor")
        .order_by("-version")
    )


def pool_plan(*, collection: Collection) -> QuerySet[PoolEntry]:
    """Return the planned pool entries in the order judges get them (wave, then pair)."""
    return (
        PoolEntry.objects.filter(collection=collection, priority__isnull=False)
        .select_related("query", "document")
        .only(
            "priority",
            "graded_count",
            "is_open",
            "query__external_id",
            "document__external_id",
        )
        .order_by("priority", "query__external_id", "document__external_id")
    )


@dataclass(frozen=True)
class LiveCampaign:
    """A collection's runs as a :class:`Campaign`, with what is known of its pairs.

    ``campaign.docnos[q]`` are document pks (as text); ``query_ids[q]`` is query ``q``'s
    pk; ``known[q]`` is each document's live grade (NaN: none yet); ``open[q]`` whether
    its pool entry still needs grades; ``extra[q]`` the live grades of the query's
    documents no run ranks in its top ``depth`` (they count in the ideal ranking).
    """

    campaign: Campaign
    query_ids: tuple[int, ...]
    document_ids: tuple[np.ndarray, ...]
    known: tuple[F64, ...]
    open: tuple[np.ndarray, ...]
    extra: tuple[F64, ...]


def live_campaign(*, collection: Collection, depth: int) -> LiveCampaign:
    """Return the collection's runs cut at ``depth``, with live grades and open pairs.

    Three SQL queries (rankings' first ``depth`` entries, live grades, open entries)
    whatever the numbers of runs and queries. Runs are in submission order (pk), which
    sets move-to-front's cyclic order; queries in pk order.
    """
    runs = list(
        Run.objects.filter(collection=collection).order_by("pk").values_list("pk", flat=True)
    )
    run_index = {pk: i for i, pk in enumerate(runs)}
    width = depth * RANKING_DTYPE.itemsize
    lists: dict[int, list[tuple[int, np.ndarray]]] = {}
    rows = (
        RunQuery.objects.filter(run_id__in=runs, retrieved__gt=0)
        .annotate(top=Substr("ranking", 1, width, output_field=BinaryField()))
        .values_list("run_id", "query_id", "top")
    )
    for run_id, query_id, top in rows:
        docs = np.frombuffer(bytes(top or b""), dtype=RANKING_DTYPE)[:depth]
        if docs.size:
            lists.setdefault(query_id, []).append((run_index[run_id], docs))
    grades: dict[int, dict[int, float]] = {}
    for q, d, grade in LiveGrade.objects.filter(collection=collection).values_list(
        "query_id", "document_id", "grade"
    ):
        grades.setdefault(q, {})[d] = grade
    open_pairs: dict[int, set[int]] = {}
    for q, d in PoolEntry.objects.filter(collection=collection, is_open=True).values_list(
        "query_id", "document_id"
    ):
        open_pairs.setdefault(q, set()).add(d)
    query_ids = tuple(sorted(lists))
    rankings, docnos, document_ids, known, opened, extra = [], [], [], [], [], []
    for q in query_ids:
        ids, inverse = np.unique(
            np.concatenate([docs for _, docs in lists[q]]), return_inverse=True
        )
        matrix = np.full((len(runs), max(docs.size for _, docs in lists[q])), -1, np.int64)
        start = 0
        for r, docs in lists[q]:
            matrix[r, : docs.size] = inverse[start : start + docs.size]
            start += docs.size
        graded = grades.get(q, {})
        rankings.append(matrix)
        docnos.append(tuple(str(d) for d in ids.tolist()))
        document_ids.append(ids)
        known.append(np.array([graded.get(d, np.nan) for d in ids.tolist()], dtype=np.float64))
        wanted = open_pairs.get(q, set())
        opened.append(np.array([d in wanted for d in ids.tolist()], dtype=bool))
        ranked = set(ids.tolist())
        extra.append(np.array([g for d, g in graded.items() if d not in ranked], np.float64))
    campaign = Campaign(
        queries=tuple(str(q) for q in query_ids),
        runs=tuple(str(r) for r in runs),
        rankings=tuple(rankings),
        docnos=tuple(docnos),
    )
    return LiveCampaign(
        campaign=campaign,
        query_ids=query_ids,
        document_ids=tuple(document_ids),
        known=tuple(known),
        open=tuple(opened),
        extra=tuple(extra),
    )


@dataclass(frozen=True)
class LlmEvidence:
    """What the LLM judges said of a live campaign's documents, per query.

    Arrays are aligned with ``LiveCampaign.document_ids``: ``mean`` the mean LLM grade
    (NaN: no LLM grade), ``spread`` max − min of the LLM grades, ``abstain`` the mean
    abstention probability the LLM judges gave (NaN: none).
    """

    mean: tuple[F64, ...]
    spread: tuple[F64, ...]
    abstain: tuple[F64, ...]


def llm_evidence(*, collection: Collection, live: LiveCampaign) -> LlmEvidence:
    """Return what the LLM judges said of the campaign's documents (one SQL query)."""
    codes = {q: i for i, q in enumerate(live.query_ids)}
    shape = [ids.size for ids in live.document_ids]
    total = [np.zeros(n) for n in shape]
    count = [np.zeros(n) for n in shape]
    low = [np.full(n, np.inf) for n in shape]
    high = [np.full(n, -np.inf) for n in shape]
    p_sum = [np.zeros(n) for n in shape]
    p_count = [np.zeros(n) for n in shape]
    rows = Judgment.objects.filter(
        collection=collection, judge__kind=Judge.Kind.LLM, status=Judgment.Status.GRADED
    ).values_list("query_id", "document_id", "grade", "abstain_probability")
    for q, d, grade, p in rows:
        at = _code(live, codes, q, d)
        if at is None:
            continue
        qi, j = at
        total[qi][j] += grade
        count[qi][j] += 1
        low[qi][j] = min(low[qi][j], grade)
        high[qi][j] = max(high[qi][j], grade)
        if p is not None:
            p_sum[qi][j] += p
            p_count[qi][j] += 1
    mean = tuple(_mean_or_nan(t, c) for t, c in zip(total, count, strict=True))
    spread = tuple(np.where(c > 0, h - lo, 0.0) for h, lo, c in zip(high, low, count, strict=True))
    abstain = tuple(_mean_or_nan(t, c) for t, c in zip(p_sum, p_count, strict=True))
    return LlmEvidence(mean=mean, spread=spread, abstain=abstain)


def _mean_or_nan(total: F64, count: F64) -> F64:
    """Return total / count where count > 0, else NaN."""
    return np.where(count > 0, total / np.maximum(count, 1), np.nan)


def _code(live: LiveCampaign, codes: dict[int, int], q: int, d: int) -> tuple[int, int] | None:
    """Return (query index, document code) of pair (q, d) in ``live``, None if not in it."""
    qi = codes.get(q)
    if qi is None:
        return None
    ids = live.document_ids[qi]
    j = int(np.searchsorted(ids, d))
    if j < ids.size and ids[j] == d:
        return qi, j
    return None


def leaderboard_scorer(*, collection: Collection, live: LiveCampaign, cutoff: int = 10) -> Scorer:
    """Return a scorer of the live campaign on the leaderboard's main measure.

    The main measure is tried once on the grades known; a measure the engine cannot
    compute from ranked labels falls back to ``ndcg_cut.<cutoff>``.
    """
    for measure in collection.measures[:1]:
        scorer = make_scorer(live.campaign, measure, extra=list(live.extra))
        try:
            scorer(list(live.known))
        except (ValueError, KeyError):
            break
        return scorer
    return make_scorer(live.campaign, f"ndcg_cut.{cutoff}", extra=list(live.extra))


def judged_count(*, collection_id: int) -> int:
    """Return the collection's final judgments (graded or cannot judge), all judges."""
    total = JudgeProgress.objects.filter(collection_id=collection_id).aggregate(n=Sum("done"))
    return int(total["n"] or 0)


@dataclass(frozen=True)
class StabilityPoint:
    """τ-b between the ranking at ``judged`` judgments and ``step`` judgments earlier."""

    judged: int
    then: int  # the earlier snapshot's count (at most judged - step)
    tau: float
    runs: int

    @property
    def defined(self) -> bool:
        """Return whether τ is a number (two or more runs, not all tied)."""
        return bool(np.isfinite(self.tau))


@dataclass(frozen=True)
class SignificanceStability:
    """Whether the leaderboard's significance decisions held, and are expected to hold.

    ``pairs`` of the ``tested`` pairs of runs differ significantly now (paired t-test
    over ``queries`` queries, Holm, :func:`metrics.pool.stopping.significant_pairs`);
    ``changed`` of the ``compared`` pairs (runs in both) changed decision since the
    snapshot at ``then`` judgments (None: no snapshot a step back, or one taken before
    decisions were recorded); ``ahead`` is the simulated chance that one changes over
    the next step's judgments and the expected number that do.
    """

    judged: int
    pairs: int
    tested: int
    queries: int
    then: int | None
    changed: int | None
    compared: int
    ahead: stopping.ExpectedFlips | None

    @property
    def summary(self) -> str:
        """Return the figures in one line, e.g. for the stop rule's panel."""
        if not self.tested:
            head = "significant pairs: none tested (fewer than two runs or queries)"
        else:
            head = f"significant pairs: {self.pairs} of {self.tested}"
        if self.then is None or self.changed is None:
            back = "no record of them a step ago"
        elif self.changed == 0:
            back = f"unchanged over the last {self.judged - self.then} judgments"
        else:
            back = f"{self.changed} changed over the last {self.judged - self.then} judgments"
        text = f"{head}, {back}"
        if self.ahead is not None and self.ahead.defined and self.ahead.pairs:
            text += (
                f"; {self.ahead.change:.0%} chance one flips in the next {self.ahead.pairs} "
                f"(expected flips {self.ahead.flips:.2f})"
            )
        return text


@dataclass(frozen=True)
class Stability:
    """How stable a collection's system ranking is, and whether more judging pays."""

    measure: str | None
    judged: int
    step: int
    target: float
    looking_back: StabilityPoint | None
    history: tuple[StabilityPoint, ...]  # newest first, one point per step back
    ahead: stopping.ExpectedTau | None
    open_pairs: int
    state: str
    sentence: str
    significance: SignificanceStability | None = None


#: Points of the looking-back history on the page; draws of the look ahead; cache (s).
HISTORY_POINTS = 8
AHEAD_DRAWS = 50
_AHEAD_TTL = 3600


def ranking_stability(
    *,
    collection: Collection,
    step: int = stopping.DEFAULT_STEP,
    target: float = stopping.DEFAULT_TARGET,
) -> Stability:
    """Return the stop rule's figures: τ with the ranking ``step`` judgments ago, and ahead.

    Looking back reads the current runs' means and the stored snapshots (two SQL queries);
    looking ahead replays ``AHEAD_DRAWS`` draws of the next ``step`` judgments over the
    live campaign (:func:`metrics.pool.stopping.expected_tau`), cached per judgment-list
    version, runs and step.
    """
    measure = canonical_names(collection.measures[:1])[0] if collection.measures else None
    judged = judged_count(collection_id=collection.pk)
    open_pairs = PoolEntry.objects.filter(collection=collection, is_open=True).count()
    board = store.board_read(collection.pk)
    means = board.means()
    runs = [
        (pk, max(version, board.version), means.get(pk, {}))
        for pk, version in Run.objects.filter(collection=collection, status=Run.Status.SCORED)
        .order_by("pk")
        .values_list("pk", "scored_version")
    ]
    history: list[StabilityPoint] = []
    if measure is not None and runs:
        now = {str(pk): scores.get(measure) for pk, _, scores in runs}
        history = _history(collection, measure, judged, step, now)
    ahead = flips_ahead = None
    if measure is not None and len(runs) >= 2:
        ahead, flips_ahead = _ahead(collection, runs, step)
    back = history[0] if history else None
    significance = None
    if measure is not None and runs:
        significance = _significance(collection, measure, runs, judged, back, flips_ahead)
    state, sentence = stopping.verdict(
        looking_back=back.tau if back else None,
        ahead=ahead,
        open_pairs=open_pairs,
        target=target,
        flips_back=significance.changed if significance else None,
        flips_ahead=flips_ahead,
    )
    return Stability(
        measure=measure,
        judged=judged,
        step=step,
        target=target,
        looking_back=back,
        history=tuple(history),
        ahead=ahead,
        open_pairs=open_pairs,
        state=state,
        sentence=sentence,
        significance=significance,
    )


def leaderboard_matrix(*, collection_id: int, run_ids: list[int], measure: str) -> np.ndarray:
    """Return (runs × queries) per-query scores of ``measure``, queries every run lists.

    The leaderboard's paired figures rest on these queries (NaN values stay; the test
    leaves their queries out). Queries in pk order.
    """
    if not run_ids:
        return np.empty((0, 0))
    found = store.measure_matrix(collection_id=collection_id, run_ids=run_ids, name=measure)
    columns = [found[q][1] for q in sorted(found) if found[q][0].all()]
    return np.column_stack(columns) if columns else np.empty((len(run_ids), 0))


def significance_record(*, collection_id: int, run_ids: list[int], measure: str) -> dict:
    """Return the leaderboard's significance decisions now, as a snapshot stores them."""
    matrix = leaderboard_matrix(collection_id=collection_id, run_ids=run_ids, measure=measure)
    decided = stopping.significant_pairs(matrix)
    return decided.record([str(pk) for pk in run_ids])


def _significance(
    collection: Collection,
    measure: str,
    runs: list[tuple[int, int, dict]],
    judged: int,
    back: StabilityPoint | None,
    ahead: stopping.ExpectedFlips | None,
) -> SignificanceStability:
    """Return the significance decisions now, their change since ``back``, and ahead.

    Two SQL queries at most: the per-query scores (cached per judgment-list version and
    runs) and the one snapshot a step back.
    """
    stamp = ",".join(f"{pk}:{version}" for pk, version, _ in runs)
    key = cache_key_for(
        "significance", collection.pk, collection.judgments_changed_at, measure, stamp
    )
    now = cache.get(key)
    if now is None:
        now = significance_record(
            collection_id=collection.pk, run_ids=[pk for pk, _, _ in runs], measure=measure
        )
        cache.set(key, now, _AHEAD_TTL)
    tested = len(now["runs"]) * (len(now["runs"]) - 1) // 2 if now["queries"] >= 2 else 0
    then = changed = None
    compared = 0
    if back is not None:
        then = back.then
        earlier = (
            RankingSnapshot.objects.filter(collection=collection, measure=measure, judged=then)
            .values_list("significance", flat=True)
            .first()
        )
        if earlier is not None:
            changed, compared = stopping.flips_between(now, earlier)
    return SignificanceStability(
        judged=judged,
        pairs=len(now["better"]),
        tested=tested,
        queries=now["queries"],
        then=then,
        changed=changed,
        compared=compared,
        ahead=ahead,
    )


def _history(
    collection: Collection, measure: str, judged: int, step: int, now: dict[str, float | None]
) -> list[StabilityPoint]:
    """Return τ-b one step back from now, then from each step before (newest first)."""
    oldest = judged - step * (HISTORY_POINTS + 1)
    snapshots = list(
        RankingSnapshot.objects.filter(
            collection=collection, measure=measure, judged__gte=max(oldest, 0) - step
        )
        .order_by("judged")
        .values_list("judged", "scores")
    )
    counts = [j for j, _ in snapshots]

    def at_or_before(count: int) -> int | None:
        i = int(np.searchsorted(counts, count, side="right")) - 1
        return i if i >= 0 else None

    points: list[StabilityPoint] = []
    current, scores = judged, now
    for _ in range(HISTORY_POINTS):
        i = at_or_before(current - step)
        if i is None:
            break
        then, earlier = snapshots[i]
        tau, n = stopping.tau_between(scores, earlier)
        points.append(StabilityPoint(judged=current, then=then, tau=tau, runs=n))
        current, scores = then, earlier
    return points


def _ahead(
    collection: Collection, runs: list[tuple[int, int, dict]], step: int
) -> tuple[stopping.ExpectedTau | None, stopping.ExpectedFlips | None]:
    """Return the expected τ-b and significance flips after the next ``step`` judgments.

    One simulation gives both (:func:`metrics.pool.stopping.look_ahead`); cached.
    """
    stamp = ",".join(f"{pk}:{version}" for pk, version, _ in runs)
    cache_key = cache_key_for(
        "look-ahead",
        collection.pk,
        collection.judgments_version,
        collection.judgments_changed_at,
        collection.pool_depth,
        collection.measures[:1],
        step,
        stamp,
    )
    found = cache.get(cache_key)
    if found is not None:
        return found
    live = live_campaign(collection=collection, depth=collection.pool_depth)
    if len(live.campaign.runs) < 2 or not live.query_ids:
        return None, None
    scorer = leaderboard_scorer(collection=collection, live=live)
    codes = {q: i for i, q in enumerate(live.query_ids)}
    planned = []
    for q, d in (
        PoolEntry.objects.filter(collection=collection, priority__isnull=False, is_open=True)
        .order_by("priority", "pk")
        .values_list("query_id", "document_id")
    ):
        at = _code(live, codes, q, d)
        if at is not None:
            planned.append(at)
    open_codes = [
        (qi, int(j)) for qi, flags in enumerate(live.open) for j in np.flatnonzero(flags).tolist()
    ]
    best = [live.campaign.best_rank(q) for q in range(len(live.query_ids))]
    prior = stopping.grade_prior(best, live.known)
    ahead = stopping.look_ahead(
        scorer,
        live.known,
        prior,
        planned=planned,
        open_pairs=open_codes,
        step=step,
        draws=AHEAD_DRAWS,
        seed=collection.pk,
    )
    cache.set(cache_key, ahead, _AHEAD_TTL)
    return ahead
