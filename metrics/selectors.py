"""Read side of metrics: leaderboards, per-query scores, comparisons and visibility."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Count, F, Max, Q, QuerySet, Sum
from django.http import Http404

from judging.lists.exports import may_export
from judging.models import Collection, LiveGrade, Membership, Query
from judging.selectors import user_roles
from metrics.engine.letters import letter_strings
from metrics.engine.ranks import leaderboard_ranks
from metrics.engine.uncertainty import PairUncertainty, leaderboard_uncertainty
from metrics.live import scoring, store
from metrics.models import Run, RunQuery, Scoreboard, Team
from metrics.selectors_common import cache_key_for, llm_filled, stored_rankings
from metrics.visibility.selectors import ScorePolicy, score_policy


@dataclass(frozen=True)
class Viewer:
    """What one user may see of a collection's runs."""

    is_coordinator: bool
    team_ids: frozenset[int]
    sees_all_runs: bool
    #: Whether grades, gains and ideal rankings may be shown (scores always may): the same
    #: rule as downloading the judgment list (:func:`judging.lists.exports.may_export`).
    sees_grades: bool = False
    #: What the user sees of scores (:mod:`metrics.visibility.selectors`): every page and
    #: endpoint that shows a score asks this, none decides for itself.
    scores: ScorePolicy | None = None

    @property
    def policy(self) -> ScorePolicy:
        """Return the score policy (set by :func:`viewer`)."""
        assert self.scores is not None, "build viewers with metrics.selectors.viewer"
        return self.scores

    @property
    def may_submit(self) -> bool:
        """Return whether the user belongs to a team that may submit runs."""
        return bool(self.team_ids)


#: The coverage measure shown beside the scores (a share of each run's top 10 judged).
COVERAGE_MEASURE = "Judged@10"


def measure_labels_of(collection: Collection) -> tuple[list[scoring.MeasureLabel], list[str]]:
    """Return the collection's measures (one per canonical name) and any unreadable names.

    A name that stands for several measures (trec_eval's ``P`` is P@5 … P@1000) yields one
    label per measure, each headed by its own trec_eval name so that headers stay distinct.
    """
    labels: list[scoring.MeasureLabel] = []
    unreadable: list[str] = []
    seen: set[str] = set()
    for name in collection.measures:
        try:
            resolved = scoring.measure_labels([name])
        except scoring.MeasureError:
            unreadable.append(str(name))
            continue
        for label in resolved:
            if len(resolved) > 1:  # "P" means P@5 … P@1000: give each its own short name
                label = replace(label, requested=label.trec_name or label.canonical)
            if label.canonical not in seen:
                seen.add(label.canonical)
                labels.append(label)
    return labels, unreadable


def coverage_label(labels: list[scoring.MeasureLabel]) -> scoring.MeasureLabel | None:
    """Return the Judged@10 measure (or another Judged@k) among the labels, if any."""
    judged = [label for label in labels if label.canonical.startswith("Judged@")]
    exact = [label for label in judged if label.canonical == COVERAGE_MEASURE]
    return (exact or judged or [None])[0]


def viewer(*, user: AbstractBaseUser, collection: Collection) -> Viewer:
    """Return what ``user`` may see; judges (only) see no runs at all (judging is blind)."""
    roles = user_roles(user=user, collection=collection)
    is_coordinator = Membership.Role.COORDINATOR in roles
    team_ids = frozenset(
        Team.objects.filter(collection=collection, members=user).values_list("pk", flat=True)
    )
    return Viewer(
        is_coordinator=is_coordinator,
        team_ids=team_ids,
        sees_all_runs=is_coordinator or (bool(team_ids) and collection.leaderboard_published),
        sees_grades=may_export(collection=collection, roles=set(roles), raw=False) is None,
        scores=score_policy(collection=collection, is_coordinator=is_coordinator),
    )


def visible_runs(*, collection: Collection, who: Viewer) -> QuerySet[Run]:
    """Return the runs ``who`` may see: all for coordinators, else own team's (+ published)."""
    # A run made by a search snapshot carries how many of its queries failed (a badge).
    runs = (
        Run.objects.filter(collection=collection)
        .select_related("team")
        .annotate(snapshot_failed=F("search_snapshot__failed"))
    )
    if who.sees_all_runs:
        return runs
    if not who.team_ids:
        return runs.none()
    return runs.filter(team_id__in=who.team_ids)


def live_state(*, collection: Collection, who: Viewer) -> str:
    """Return a short token that changes whenever a leaderboard or run page would.

    Covers the judgment-list version, the publication switches and the viewer's score
    visibility (of ``collection`` as the request loaded it) and, of the runs the viewer
    sees, how many there are, the newest, their scored versions and statuses — one small
    aggregate query, cheap enough for every open page to poll every few seconds.
    """
    current = (
        collection.judgments_version,
        collection.leaderboard_published,
        collection.judgments_published,
        who.policy.exposure,
        None if who.policy.full else who.policy.rules,  # coordinators see all whatever they say
    )
    runs = visible_runs(collection=collection, who=who).aggregate(
        count=Count("pk"),
        newest=Max("pk"),
        scored=Sum("scored_version"),
        done=Count("pk", filter=Q(status=Run.Status.SCORED)),
        latest=Max("scored_version"),
    )
    text = repr((current, sorted(runs.items())))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_for_viewer(*, collection: Collection, who: Viewer, run_id: int) -> Run:
    """Return one visible run or raise ``Http404``."""
    run = visible_runs(collection=collection, who=who).filter(pk=run_id).first()
    if run is None:
        raise Http404("No such run.")
    Scoreboard.attach([run])
    return run


def any_stale(*, collection: Collection, runs: list[Run]) -> bool:
    """Return whether any of ``runs`` has scores older than the judgment list (one query)."""
    Scoreboard.attach(runs)
    return any(run.scored_version < collection.judgments_version for run in runs)


def run_for_owner(*, collection: Collection, who: Viewer, run_id: int) -> Run:
    """Return a run the viewer may change (own team's, or any for coordinators)."""
    runs = Run.objects.filter(collection=collection, pk=run_id)
    if not who.is_coordinator:
        runs = runs.filter(team_id__in=who.team_ids)
    run = runs.select_related("team").first()
    if run is None:
        raise Http404("No such run.")
    Scoreboard.attach([run])
    return run


@dataclass(frozen=True)
class Interval:
    """A run's bootstrap interval of the sorted measure, and its gap to the run above."""

    measure: str
    queries: int
    low: float
    high: float
    above: PairUncertainty | None = None
    above_run: Run | None = None
    #: 95% interval of the run's rank among the runs with an interval (1-based), and its
    #: letters (0 = "a"; :func:`metrics.engine.ranks.leaderboard_ranks`): two runs share a
    #: letter exactly when the paired t-test, Holm-corrected over all pairs, cannot tell
    #: them apart.
    rank_low: int | None = None
    rank_high: int | None = None
    groups: tuple[int, ...] = ()
    #: The letters as printed (``"ab"``).
    letters: str = ""
    #: Whether every run above this one differs significantly from this one and every
    #: run below it (no letter spans the line above it).
    block_start: bool = False

    @property
    def tier(self) -> int | None:
        """Return the number of the run's first letter, 1-based (1 = "a"), if it has one."""
        return self.groups[0] + 1 if self.groups else None


@dataclass(frozen=True)
class LeaderboardRow:
    """One run on the leaderboard."""

    run: Run
    scores: dict[str, float | None]
    stale: bool
    interval: Interval | None = field(default=None)
    human_only: float | None = None  # the sorted measure on human grades alone
    human_rank: int | None = None
    #: Per measure, the bias-corrected mean (``metrics.analysis.ppi.PPICell``).
    ppi: dict[str, Any] = field(default_factory=dict)


#: What a leaderboard is scored against: the live list (human grades, and LLM grades
#: where no human graded), or human grades alone (pairs only LLM judges graded left out).
PROVENANCES = ("all", "human")


@dataclass(frozen=True)
class Leaderboard:
    """Runs × measures, with the judgment-list version they rest on."""

    measures: list[str]
    rows: list[LeaderboardRow]
    version: int
    changed_at: object
    provenance: str = "all"
    llm_filled: bool = False  # some live grades come from LLM judges alone
    human_differs: bool = False  # human-only scores differ from the shown ones
    #: The bias-corrected means and their audit (``metrics.analysis.ppi.LeaderboardPPI``).
    ppi: Any = None

    @property
    def shows_human_only(self) -> bool:
        """Return whether the rows carry a human-only column worth showing."""
        return self.provenance == "all" and self.human_differs


def leaderboard(
    *,
    collection: Collection,
    who: Viewer,
    measures: list[str],
    sort: str | None = None,
    provenance: str = "all",
) -> Leaderboard:
    """Return the visible runs with their mean scores, best first by ``sort`` (or the first).

    ``measures`` are canonical names. A row is stale when its scores were computed against
    an older judgment-list version than the current one. ``provenance="human"`` scores
    every run on the human grades alone (:func:`human_only_means`; no intervals). With
    ``"all"``, when some live grades come from LLM judges alone, each row also carries the
    sorted measure on human grades alone and its rank there, so both can be shown.
    """
    version = collection.judgments_version
    runs = list(visible_runs(collection=collection, who=who))
    Scoreboard.attach(runs)
    if not who.policy.full:
        return _limited_leaderboard(collection, who, runs, measures, sort)
    rows = [
        LeaderboardRow(
            run=run,
            scores={m: run.scores.get(m) for m in measures},
            stale=run.scored_version < version,
        )
        for run in runs
    ]
    key = sort if sort in measures else (measures[0] if measures else None)
    filled = llm_filled(collection=collection)
    human: dict[int, dict[str, float | None]] = {}
    if filled and rows and (provenance == "human" or key):
        wanted = measures if provenance == "human" else [key]
        human = human_only_means(collection=collection, runs=[r.run for r in rows], measures=wanted)
    if provenance == "human" and filled:
        rows = [LeaderboardRow(r.run, human[r.run.pk], r.stale) for r in rows]
    differs = False
    if key:
        rows.sort(key=lambda r: (r.scores.get(key) is None, -(r.scores.get(key) or 0.0)))
        if provenance == "all":
            rows = _with_intervals(collection, rows, key)
            if filled:
                rows, differs = _with_human_only(rows, human, key)
    rows, ppi = _with_ppi(collection, who, rows, measures, filled)
    return Leaderboard(
        measures=measures,
        rows=rows,
        version=version,
        changed_at=collection.judgments_changed_at,
        provenance=provenance,
        llm_filled=filled,
        human_differs=differs,
        ppi=ppi,
    )


def _limited_leaderboard(
    collection: Collection, who: Viewer, runs: list[Run], measures: list[str], sort: str | None
) -> Leaderboard:
    """Return the leaderboard of a viewer who may not see every score (teams, unpublished).

    The means are the viewer's policy's (:meth:`ScorePolicy.means`); there are no
    intervals and no human-only scores (both rest on per-query values).
    """
    shown = who.policy.means(runs, measures)
    version = collection.judgments_version
    rows = [
        LeaderboardRow(run=run, scores=shown[run.pk], stale=run.scored_version < version)
        for run in runs
    ]
    key = sort if sort in measures else (measures[0] if measures else None)
    if key:
        rows.sort(key=lambda r: (r.scores.get(key) is None, -(r.scores.get(key) or 0.0)))
    rows, ppi = _with_ppi(collection, who, rows, measures, None, shown)
    return Leaderboard(
        measures=measures,
        rows=rows,
        version=version,
        changed_at=collection.judgments_changed_at,
        ppi=ppi,
    )


def _with_ppi(
    collection: Collection,
    who: Viewer,
    rows: list[LeaderboardRow],
    measures: list[str],
    filled: bool | None,
    shown: dict[int, dict[str, float | None]] | None = None,
) -> tuple[list[LeaderboardRow], Any]:
    """Return ``rows`` with their bias-corrected means, and the board's audit summary.

    :func:`metrics.analysis.ppi.leaderboard_ppi` under the viewer's score policy; ``shown``
    are the means a limited viewer sees.
    """
    from metrics.analysis.ppi import leaderboard_ppi  # it imports this module

    ppi = leaderboard_ppi(
        collection=collection,
        policy=who.policy,
        runs=[r.run for r in rows],
        measures=measures,
        shown=shown,
        llm_filled=filled,
    )
    return [replace(r, ppi=ppi.for_run(r.run.pk)) for r in rows], ppi


def _with_human_only(
    rows: list[LeaderboardRow], human: dict[int, dict[str, float | None]], key: str
) -> tuple[list[LeaderboardRow], bool]:
    """Return ``rows`` with their human-only score and rank on ``key``; whether any differs."""
    values = {pk: scores.get(key) for pk, scores in human.items()}
    ranked = sorted(
        (pk for pk, v in values.items() if v is not None), key=lambda pk: (-values[pk], pk)
    )
    rank = {pk: i for i, pk in enumerate(ranked, start=1)}
    out = [
        LeaderboardRow(
            r.run,
            r.scores,
            r.stale,
            r.interval,
            human_only=values.get(r.run.pk),
            human_rank=rank.get(r.run.pk),
        )
        for r in rows
    ]
    differs = any(
        (r.human_only is None) != (r.scores.get(key) is None)
        or (r.human_only is not None and abs(r.human_only - r.scores[key]) > 1e-12)
        for r in out
    )
    return out, differs


_HUMAN_TTL = 3600


def human_only_means(
    *, collection: Collection, runs: list[Run], measures: list[str]
) -> dict[int, dict[str, float | None]]:
    """Return each run's mean of ``measures`` on human grades alone (cached per version).

    The live list less the pairs only LLM judges graded (a pair a human graded or an
    adjudicator decided keeps its live grade) is scored as live scoring scores the live
    list (:func:`metrics.live.scoring.evaluate_rows`): over the queries with such grades,
    a run without a ranking for one scoring it as empty. Three SQL queries.
    """
    stamp = ",".join(f"{run.pk}:{run.scored_version}" for run in runs)
    cache_key = cache_key_for(
        "human-only", collection.pk, collection.judgments_version, measures, stamp
    )
    found = cache.get(cache_key)
    if found is not None:
        return found
    grades = scoring.live_grades_by_query(
        LiveGrade.objects.filter(Q(human_count__gt=0) | Q(adjudicated=True), collection=collection)
        .order_by("query_id", "document_id")
        .values_list("query_id", "document_id", "grade", "abstain_probability")
    )
    out: dict[int, dict[str, float | None]] = {run.pk: dict.fromkeys(measures) for run in runs}
    if grades and runs:
        rows = stored_rankings(runs=runs, query_ids=list(grades), measures=measures)
        values = scoring.evaluate_rows(rows=rows, grades_by_query=grades, measures=measures)
        run_index = np.fromiter((r.run_id for r in rows), dtype=np.int64, count=len(rows))
        for run in runs:
            mine = run_index == run.pk
            for name in measures:
                column = values[name][mine]
                column = column[np.isfinite(column)]
                out[run.pk][name] = float(column.mean()) if column.size else None
    cache.set(cache_key, out, _HUMAN_TTL)
    return out


#: Bootstrap resamples and confidence of the leaderboard's intervals; cache lifetime (s).
BOOTSTRAP_RESAMPLES = 1000
BOOTSTRAP_CONFIDENCE = 0.95
_INTERVAL_TTL = 3600


def _with_intervals(
    collection: Collection, rows: list[LeaderboardRow], measure: str
) -> list[LeaderboardRow]:
    """Return ``rows`` with bootstrap intervals of ``measure`` for the runs it scored.

    The runs with a mean on ``measure`` share one paired bootstrap over the queries every
    one of them was scored on (:func:`metrics.engine.uncertainty.leaderboard_uncertainty`;
    one SQL query), which also gives each its rank interval and letters among them
    (:func:`metrics.engine.ranks.leaderboard_ranks`, same draws). The figures are cached
    under the runs' ids, scored versions and times, so live rescoring (which moves them)
    makes the next read current.
    """
    scored = [
        r for r in rows if r.scores.get(measure) is not None and r.run.status == Run.Status.SCORED
    ]
    if not scored:
        return rows
    runs = [r.run for r in scored]
    stamp = ",".join(
        f"{run.pk}:{run.scored_version}:{run.scored_at.isoformat() if run.scored_at else ''}"
        for run in runs
    )
    cache_key = cache_key_for("intervals-letters", collection.pk, measure, stamp)
    figures = cache.get(cache_key)
    if figures is None:
        matrix = _score_matrix(runs, measure)
        if matrix.shape[1] == 0:  # no query scored for every run: nothing to resample
            return rows
        order = np.arange(len(runs))
        settings = {
            "confidence": BOOTSTRAP_CONFIDENCE,
            "resamples": BOOTSTRAP_RESAMPLES,
            "seed": collection.pk,
        }
        figures = (
            matrix.shape[1],
            leaderboard_uncertainty(matrix, order, **settings),
            leaderboard_ranks(matrix, order, **settings),
        )
        cache.set(cache_key, figures, _INTERVAL_TTL)
    n_queries, (intervals, pairs), ranks = figures
    groups = [rank.groups for rank in ranks]
    printed = letter_strings(groups)
    with_interval = {}
    for i, (row, interval, rank) in enumerate(zip(scored, intervals, ranks, strict=True)):
        above = pairs[i - 1] if i else None
        with_interval[row.run.pk] = Interval(
            measure=measure,
            queries=n_queries,
            low=interval.low,
            high=interval.high,
            above=above,
            above_run=scored[i - 1].run if i else None,
            rank_low=rank.low,
            rank_high=rank.high,
            groups=rank.groups,
            letters=printed[i],
            block_start=bool(i) and _splits(groups, i),
        )
    return [LeaderboardRow(r.run, r.scores, r.stale, with_interval.get(r.run.pk)) for r in rows]


def _splits(groups: list[tuple[int, ...]], i: int) -> bool:
    """Return whether no letter is held both above position ``i`` and at or below it.

    The letters are complete (two runs that cannot be told apart share one), so then every
    run above the line differs significantly from every run below it.
    """
    above = {g for run in groups[:i] for g in run}
    return not any(g in above for run in groups[i:] for g in run)


def _score_columns(runs: list[Run], measure: str) -> dict[int, np.ndarray]:
    """Return, per query that scores every run, its ``measure`` in ``runs`` order.

    One SQL query (the collection's query columns). A value left out is NaN:
    :func:`paired_scores` keeps it, the leaderboard's intervals leave such queries out.
    """
    if not runs:
        return {}
    ids = [run.pk for run in runs]
    found = store.measure_matrix(collection_id=runs[0].collection_id, run_ids=ids, name=measure)
    return {q: values for q, (listed, values) in found.items() if listed.all()}


def _score_matrix(runs: list[Run], measure: str) -> np.ndarray:
    """Return (runs × queries) scores of ``measure`` over the queries all runs have finite."""
    columns = _score_columns(runs, measure)
    kept = [columns[q] for q in sorted(columns) if np.all(np.isfinite(columns[q]))]
    return np.column_stack(kept) if kept else np.empty((len(runs), 0))


@dataclass(frozen=True)
class PerQuery:
    """Per-query scores of one run: query objects in order and one array per measure."""

    queries: list[Query]
    retrieved: list[int]
    values: dict[str, np.ndarray]


def run_per_query(*, run: Run, measures: list[str], shown: bool = True) -> PerQuery:
    """Return the run's per-query scores over the live queries (NaN where left out).

    With ``shown`` False (the viewer's policy hides per-query values) nothing is read and
    no query is listed.
    """
    if not shown:
        return PerQuery(queries=[], retrieved=[], values={m: np.zeros(0) for m in measures})
    values = store.run_values(collection_id=run.collection_id, run_id=run.pk, names=measures)
    rows = list(
        RunQuery.objects.filter(run=run, query_id__in=list(values))
        .select_related("query")
        .only("query", "retrieved")
        .order_by("query__external_id")
    )
    return PerQuery(
        queries=[r.query for r in rows],
        retrieved=[r.retrieved for r in rows],
        values={
            m: np.array(
                [np.nan if values[r.query_id][m] is None else values[r.query_id][m] for r in rows]
            )
            for m in measures
        },
    )


def paired_scores(*, runs: list[Run], measure: str) -> tuple[list[Query], np.ndarray]:
    """Return the live queries and a (runs × queries) matrix of one measure's values.

    Queries are those scored for every given run (the live list is shared, so normally all);
    the matrix is ready for paired significance tests.
    """
    columns = _score_columns(runs, measure)
    queries = list(Query.objects.filter(pk__in=list(columns)).order_by("external_id"))
    matrix = np.array([columns[q.pk] for q in queries], dtype=float).T.reshape(
        len(runs), len(queries)
    )
    return queries, matrix


@dataclass(frozen=True)
class RescoreProgress:
    """How many of a collection's runs are scored against the current judgment list."""

    current: int
    total: int

    @property
    def done(self) -> bool:
        """Return whether every run is current."""
        return self.current >= self.total


def rescore_progress(*, collection: Collection) -> RescoreProgress:
    """Return how many runs are scored at the collection's judgment-list version (one query)."""
    row = Run.objects.filter(collection=collection).aggregate(
        total=Count("pk"),
        current=Count("pk", filter=Q(scored_version__gte=collection.judgments_version)),
    )
    if store.board_read(collection.pk).version >= collection.judgments_version:
        return RescoreProgress(current=row["total"], total=row["total"])  # live rescoring
    return RescoreProgress(current=row["current"], total=row["total"])
