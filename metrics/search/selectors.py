"""Reads of live search: which endpoints a user may use, configurations and snapshots."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet

from judging.models import Collection, LiveGrade, Membership, Query
from metrics.analysis.compare import ComparisonError, RunComparison, compare_runs
from metrics.live.scoring import MeasureLabel
from metrics.models import Scoreboard, Team
from metrics.search import diff
from metrics.search.models import (
    SearchConfiguration,
    SearchEndpoint,
    SearchSnapshot,
    SnapshotQuery,
)
from metrics.selectors import coverage_label, measure_labels_of, paired_scores


def endpoints_in(*, collection: Collection, user: AbstractBaseUser) -> QuerySet[SearchEndpoint]:
    """Return the endpoints ``user`` may use in ``collection`` (the LLM providers' rule).

    Superusers: every endpoint. Others: those open to the collection or to one of their
    groups. An endpoint open to no collection and no group is for superusers only.
    """
    endpoints = SearchEndpoint.objects.order_by("name")
    if user.is_superuser:
        return endpoints
    ids = SearchEndpoint.objects.filter(
        Q(allowed_collections=collection) | Q(allowed_groups__in=user.groups.all())
    ).values("pk")
    return endpoints.filter(pk__in=ids)


def endpoint_open_to(
    *, endpoint: SearchEndpoint, collection: Collection, user: AbstractBaseUser | None
) -> bool:
    """Return whether ``user`` may use ``endpoint`` in ``collection`` (None: the operator)."""
    if user is None or user.is_superuser:
        return True
    return endpoints_in(collection=collection, user=user).filter(pk=endpoint.pk).exists()


def search_teams(*, collection: Collection, user: AbstractBaseUser) -> QuerySet[Team] | None:
    """Return the teams whose configurations ``user`` may use; None: every team.

    Coordinators (and superusers) use every configuration. A team member does only where
    the collection lets teams write configurations (``search_by_teams``), and then only
    their own teams'; anyone else gets an empty set.
    """
    if (
        user.is_superuser
        or Membership.objects.filter(
            collection=collection, user=user, role=Membership.Role.COORDINATOR
        ).exists()
    ):
        return None
    if (
        not collection.search_by_teams
        or not Membership.objects.filter(
            collection=collection, user=user, role=Membership.Role.TEAM
        ).exists()
    ):
        return Team.objects.none()
    return Team.objects.filter(collection=collection, members=user).order_by("name")


def configurations_of(
    *, collection: Collection, teams: QuerySet[Team] | None = None
) -> QuerySet[SearchConfiguration]:
    """Return the collection's configurations with their team (of ``teams``, if given)."""
    found = collection.search_configurations.select_related("team").order_by("name")
    return found if teams is None else found.filter(team__in=teams)


def snapshots_of(
    *, collection: Collection, teams: QuerySet[Team] | None = None
) -> QuerySet[SearchSnapshot]:
    """Return the collection's snapshots, newest first, with version and run."""
    found = SearchSnapshot.objects.filter(collection=collection).select_related(
        "version__configuration", "version__endpoint", "run"
    )
    return found if teams is None else found.filter(version__configuration__team__in=teams)


def snapshots_with_runs(
    *, collection: Collection, teams: QuerySet[Team] | None = None
) -> QuerySet[SearchSnapshot]:
    """Return the collection's snapshots that became runs, newest first."""
    return (
        snapshots_of(collection=collection, teams=teams)
        .filter(run__isnull=False)
        .order_by("-created_at", "-pk")
    )


@dataclass(frozen=True)
class SnapshotScore:
    """A snapshot's live score on the collection's first measure, with its coverage.

    ``judged`` is the run's Judged@k (the share of its top k documents with a live grade):
    shown beside the score so that an unjudged snapshot never looks good or bad by
    accident (issue 42 item 6). ``thin`` when it is below the collection's coverage
    threshold, or unknown because no query of the snapshot has a live grade yet (the
    live list scores only judged queries); ``stale`` while the scores rest on an older
    judgment-list version.
    """

    measure: str | None
    score: float | None
    coverage: str | None
    judged: float | None
    thin: bool
    stale: bool


def score_labels(collection: Collection) -> tuple[MeasureLabel | None, MeasureLabel | None]:
    """Return the leaderboard's default measure and its coverage measure (Judged@10 first).

    The default measure is the first of the collection's measures other than the coverage
    one, as the leaderboard sorts by it.
    """
    labels, _unreadable = measure_labels_of(collection)
    coverage = coverage_label(labels)
    return next((label for label in labels if label is not coverage), None), coverage


def snapshot_scores(
    *, collection: Collection, snapshots: list[SearchSnapshot]
) -> dict[int, SnapshotScore]:
    """Return, by snapshot id, the live score and Judged@k of each snapshot that is a run.

    The means are the collection's scoreboard (one read), the numbers every other page
    shows for the run.
    """
    first, coverage = score_labels(collection)
    runs = [snapshot.run for snapshot in snapshots if snapshot.run is not None]
    Scoreboard.attach(runs)
    version = collection.judgments_version
    scores: dict[int, SnapshotScore] = {}
    for snapshot in snapshots:
        run = snapshot.run
        if run is None:
            continue
        judged = run.scores.get(coverage.canonical) if coverage else None
        if judged is not None and math.isnan(judged):
            judged = None
        score = run.scores.get(first.canonical) if first else None
        scores[snapshot.pk] = SnapshotScore(
            measure=first.requested if first else None,
            score=None if score is None or math.isnan(score) else score,
            coverage=coverage.requested if coverage else None,
            judged=judged,
            thin=judged is None or judged < collection.coverage_threshold,
            stale=run.scored_version < version,
        )
    return scores


def score_series(
    *, snapshots: list[SearchSnapshot], scores: dict[int, SnapshotScore]
) -> list[tuple[str, list[tuple[float, float]]]]:
    """Return, per configuration with two scored snapshots or more, its scores in order.

    Each point is (the snapshot's place among the configuration's scored snapshots here,
    1 = the oldest; its live score), oldest first: the measure over several snapshots
    (Quepid diffs several; issue 42 item 4). Configurations are named as on the page.
    """
    by_configuration: dict[str, list[tuple[object, int, float]]] = {}
    for snapshot in snapshots:
        score = scores.get(snapshot.pk)
        if score is None or score.score is None:
            continue
        name = snapshot.version.configuration.name
        by_configuration.setdefault(name, []).append(
            (snapshot.created_at, snapshot.pk, score.score)
        )
    series = []
    for name in sorted(by_configuration):
        points = sorted(by_configuration[name])
        if len(points) >= 2:
            series.append((name, [(float(i), value) for i, (*_, value) in enumerate(points, 1)]))
    return series


def failed_queries(*, snapshot: SearchSnapshot) -> QuerySet[SnapshotQuery]:
    """Return the snapshot's failed queries with their query."""
    return snapshot.queries.filter(status=SnapshotQuery.Status.FAILED).select_related("query")


def unsent_count(*, snapshot: SearchSnapshot) -> int:
    """Return how many queries a finished snapshot never sent (it stopped before them)."""
    if snapshot.status in (SearchSnapshot.Status.QUEUED, SearchSnapshot.Status.RUNNING):
        return 0
    return snapshot.queries.filter(status=SnapshotQuery.Status.PENDING).count()


@dataclass(frozen=True)
class QueryDiff:
    """One query of a diff: its ranking change, the measure before and after, live grades."""

    query: Query
    ranking: diff.RankingDiff
    before: float | None
    after: float | None
    grades: dict[str, float]

    def _graded(self, placed: tuple[diff.Placed, ...]) -> list[tuple[diff.Placed, float | None]]:
        return [(p, self.grades.get(p.docno)) for p in placed]

    @property
    def entered(self) -> list[tuple[diff.Placed, float | None]]:
        """Return the documents that entered the top k, each with its live grade (None)."""
        return self._graded(self.ranking.entered)

    @property
    def left(self) -> list[tuple[diff.Placed, float | None]]:
        """Return the documents that left the top k, each with its live grade (None)."""
        return self._graded(self.ranking.left)

    @property
    def moved(self) -> list[tuple[diff.Placed, float | None]]:
        """Return the documents that moved within the top k, each with its live grade."""
        return self._graded(self.ranking.moved)

    @property
    def delta(self) -> float | None:
        """Return after − before, None where either is undefined (or the query unscored)."""
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass(frozen=True)
class SnapshotDiff:
    """Two snapshots compared: per query, and overall (the paired test of their runs)."""

    a: SearchSnapshot
    b: SearchSnapshot
    measure: str
    k: int
    queries: list[QueryDiff]
    comparison: RunComparison | None
    problem: str


#: Depth of the rankings a diff compares by default (what judges and nDCG@10 look at).
DIFF_K = 10
#: Queries whose live grades one SQL query of a diff reads.
DIFF_QUERY_CHUNK = 500


def snapshot_diff(
    *, a: SearchSnapshot, b: SearchSnapshot, measure: str, k: int = DIFF_K
) -> SnapshotDiff:
    """Compare snapshot ``b`` with ``a`` (the baseline), query by query and overall.

    Per query of either snapshot: the top ``k`` documents that entered, left or moved
    (:func:`metrics.search.diff.ranking_diff`) with their live grades (absent: unjudged),
    and ``measure`` (canonical) before and after, from the runs' live scores; a failed
    query has an empty ranking. Overall: :func:`metrics.analysis.compare.compare_runs` of
    the two runs (the compare page's tests and interval), or ``problem`` saying why there
    is none. Queries are ordered by the size of the change, unscored ones last. Four SQL
    queries besides the comparison's (one more per 500 queries).
    """
    problem = ""
    comparison = None
    scores: dict[int, tuple[float | None, float | None]] = {}
    if a.run_id is None or b.run_id is None:
        problem = "Both snapshots need a run (a snapshot with no answered query has none)."
    else:
        try:
            comparison = compare_runs(baseline=a.run, runs=[b.run], measure=measure)
        except ComparisonError as exc:
            problem = str(exc)
        found, matrix = paired_scores(runs=[a.run, b.run], measure=measure)
        for i, query in enumerate(found):
            before, after = (float(v) for v in matrix[:, i])
            scores[query.pk] = (
                before if math.isfinite(before) else None,
                after if math.isfinite(after) else None,
            )
    hits: dict[int, list[list[str]]] = {}
    queries: dict[int, Query] = {}
    for index, snap in enumerate((a, b)):
        for row in snap.queries.select_related("query").filter(status=SnapshotQuery.Status.DONE):
            queries[row.query_id] = row.query
            hits.setdefault(row.query_id, [[], []])[index] = [h["docno"] for h in row.hits]
    shown = {q: {d for ranked in pair for d in ranked[:k]} for q, pair in hits.items()}
    grades: dict[int, dict[str, float]] = {}
    ids = sorted(hits)
    for start in range(0, len(ids), DIFF_QUERY_CHUNK):  # bounded IN lists (SQLite's limit)
        for query_id, docno, grade in LiveGrade.objects.filter(
            collection_id=a.collection_id, query_id__in=ids[start : start + DIFF_QUERY_CHUNK]
        ).values_list("query_id", "document__external_id", "grade"):
            if docno in shown[query_id]:
                grades.setdefault(query_id, {})[docno] = grade
    rows = [
        QueryDiff(
            query=queries[query_id],
            ranking=diff.ranking_diff(before, after, k),
            before=scores.get(query_id, (None, None))[0],
            after=scores.get(query_id, (None, None))[1],
            grades=grades.get(query_id, {}),
        )
        for query_id, (before, after) in hits.items()
    ]
    rows.sort(
        key=lambda r: (
            r.delta is None,
            -abs(r.delta or 0.0),
            not r.ranking.changed,
            r.query.external_id,
        )
    )
    return SnapshotDiff(
        a=a, b=b, measure=measure, k=k, queries=rows, comparison=comparison, problem=problem
    )
