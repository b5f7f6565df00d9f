"""The one decision of what a viewer sees of scores: :class:`ScorePolicy`.

Every page, endpoint, chart and analysis that shows a score asks the viewer's policy
(``Viewer.scores``, built by :func:`metrics.selectors.viewer` through
:func:`score_policy`) instead of deciding for itself:

* coordinators, and everyone once the judgment list is published, see every score
  (:attr:`Exposure.FULL`) — except that in split mode the teams' means then come from
  the private share of the queries (:attr:`Exposure.PRIVATE`: the final board);
* before publication teams see what the collection's :class:`ScoreVisibility` mode says:
  every score as judgments arrive (live, the default of an internal evaluation: per-query
  scores let a team infer the grades, which an internal evaluation accepts), nothing
  (hidden, the default of a shared task), means rounded to :data:`ROUND_DECIMALS` decimals of
  runs that rank documents for at least ``min_queries`` live queries (aggregate), or
  means over the public share of the queries (split). Never a value per query, never a
  grade, gain, DCG, Judged@k, interval, comparison or difficulty: each of those is a
  per-query figure in disguise.

The public share is fixed by the collection's secret seed and each query's id alone
(:func:`is_public`), so it is stable as queries come and go and says nothing of which
queries are private; teams are told only its size.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

import numpy as np
from django.db.models import Count, Subquery
from django.utils import timezone

from judging.models import Collection, LiveGrade
from metrics.live import store
from metrics.visibility.models import ScoreVisibility, Submission

#: The submission budget counts the submissions of the last 24 hours (a rolling day).
BUDGET_WINDOW = timedelta(days=1)
#: Decimals the aggregate mode rounds means to (two: a change of a few thousandths, what
#: one document of one query moves a mean over dozens of queries, mostly disappears).
ROUND_DECIMALS = 2

Mode = ScoreVisibility.Mode


@dataclass(frozen=True)
class Rules:
    """A collection's visibility settings (the defaults when it has none stored)."""

    mode: str = Mode.HIDDEN
    min_queries: int = 25
    public_share: float = 0.5
    split_seed: int = 0
    runs_per_day: int | None = 5  # None: no daily limit
    stored: bool = False


def _field_default(name: str) -> Any:
    return ScoreVisibility._meta.get_field(name).default


#: The settings each purpose of a collection starts with (``Collection.purpose``): an
#: internal evaluation shows teams their live scores and has no daily run budget; a shared
#: task hides scores until publication and allows five runs per team per day.
PURPOSE_DEFAULTS: dict[str, dict[str, Any]] = {
    Collection.Purpose.INTERNAL: {"mode": Mode.LIVE, "runs_per_day": None},
    Collection.Purpose.SHARED_TASK: {"mode": Mode.HIDDEN, "runs_per_day": 5},
}


def purpose_defaults(purpose: str) -> dict[str, Any]:
    """Return the visibility settings a collection of ``purpose`` has until changed."""
    return {
        "mode": _field_default("mode"),
        "min_queries": _field_default("min_queries"),
        "public_share": _field_default("public_share"),
        "runs_per_day": _field_default("runs_per_day"),
        **PURPOSE_DEFAULTS.get(purpose, {}),
    }


def rules(*, collection: Collection) -> Rules:
    """Return ``collection``'s visibility settings (one SQL query, then cached on it).

    With no stored settings, the defaults of the collection's purpose.
    """
    try:
        row = collection.score_visibility
    except ScoreVisibility.DoesNotExist:
        row = None
    if row is None:
        return Rules(**purpose_defaults(collection.purpose))
    return Rules(
        mode=row.mode,
        min_queries=row.min_queries,
        public_share=row.public_share,
        split_seed=row.split_seed,
        runs_per_day=row.runs_per_day,
        stored=True,
    )


class Exposure(StrEnum):
    """How much of the scores one viewer sees."""

    FULL = "full"  # every score: coordinators, or anyone once grades are published
    NONE = "none"  # hidden mode before publication
    AGGREGATE = "aggregate"  # rounded means of runs over enough queries
    PUBLIC = "public"  # split mode before publication: means on the public share
    PRIVATE = "private"  # split mode after publication: means on the private share


def is_public(*, seed: int, qid: str, share: float) -> bool:
    """Return whether query ``qid`` is in the public share under ``seed``.

    Each query falls on its own side by a keyed hash of its id, so adding or removing
    queries never moves another one, and the side reveals nothing without the seed.
    """
    digest = hashlib.sha256(f"{seed}:{qid}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


@dataclass(frozen=True)
class ScorePolicy:
    """What one viewer sees of one collection's scores (see the module docstring)."""

    exposure: Exposure
    collection: Collection

    @property
    def collection_id(self) -> int:
        """Return the collection's id."""
        return self.collection.pk

    @property
    def rules(self) -> Rules:
        """Return the collection's settings (read once per collection object)."""
        return rules(collection=self.collection)

    @property
    def full(self) -> bool:
        """Return whether every score is shown as stored."""
        return self.exposure == Exposure.FULL

    @property
    def shows_means(self) -> bool:
        """Return whether any mean score is shown."""
        return self.exposure != Exposure.NONE

    @property
    def shows_per_query(self) -> bool:
        """Return whether per-query values (and analyses built on them) are shown."""
        return self.exposure in (Exposure.FULL, Exposure.PRIVATE)

    @property
    def note(self) -> str:
        """Return one sentence telling the viewer what they see and why (empty when all)."""
        r = self.rules
        if self.exposure == Exposure.NONE:
            return (
                "Scores are hidden from teams until the coordinators publish the judgments: "
                "scores would give the unpublished grades away."
            )
        if self.exposure == Exposure.AGGREGATE:
            return (
                f"Until the judgments are published teams see mean scores only, rounded to "
                f"{ROUND_DECIMALS} decimals, for runs that rank documents for at least "
                f"{r.min_queries} judged queries; no score per query."
            )
        if self.exposure == Exposure.PUBLIC:
            return (
                f"Until the judgments are published teams see mean scores on a public share "
                f"({round(100 * r.public_share)}%) of the queries; the final leaderboard "
                "uses the other queries. No score per query."
            )
        if self.exposure == Exposure.PRIVATE:
            return (
                "Final leaderboard: mean scores on the private share of the queries "
                "(the ones not used before publication)."
            )
        return ""

    def share_query(self, qid: str) -> bool:
        """Return whether query ``qid`` counts in this viewer's means (split modes)."""
        public = is_public(seed=self.rules.split_seed, qid=qid, share=self.rules.public_share)
        return public if self.exposure == Exposure.PUBLIC else not public

    def means(
        self, runs: Sequence[Any], measures: Sequence[str]
    ) -> dict[int, dict[str, float | None]]:
        """Return, per run, the means of ``measures`` this viewer sees (None: not shown).

        ``runs`` carry their scoreboard means (``run.scores``). At most two SQL queries
        whatever the number of runs.
        """
        if self.exposure == Exposure.NONE:
            return {run.pk: dict.fromkeys(measures) for run in runs}
        if self.exposure == Exposure.FULL:
            return {run.pk: {m: run.scores.get(m) for m in measures} for run in runs}
        if self.exposure == Exposure.AGGREGATE:
            counts = ranked_live_queries(collection_id=self.collection_id, runs=runs)
            return {
                run.pk: {
                    m: _rounded(run.scores.get(m))
                    if counts.get(run.pk, 0) >= self.rules.min_queries
                    else None
                    for m in measures
                }
                for run in runs
            }
        return share_means(
            collection_id=self.collection_id, runs=runs, measures=measures, keep=self.share_query
        )

    def apply(self, runs: Iterable[Any], measures: Sequence[str] | None = None) -> None:
        """Replace each run's ``scores`` (scoreboard means) by what this viewer sees."""
        runs = list(runs)
        if self.full or not runs:
            return
        if measures is None:
            measures = sorted({m for run in runs for m in run.scores})
        shown = self.means(runs, measures)
        for run in runs:
            run.scores = shown[run.pk]


def _rounded(value: float | None) -> float | None:
    if value is None or not math.isfinite(value):
        return None
    return round(value, ROUND_DECIMALS)


def ranked_live_queries(*, collection_id: int, runs: Sequence[Any]) -> dict[int, int]:
    """Return, per run, how many queries with live grades it ranks documents for (one query)."""
    from metrics.models import RunQuery  # metrics.models imports this package's models

    live = LiveGrade.objects.filter(collection_id=collection_id).values("query_id")
    rows = (
        RunQuery.objects.filter(
            run_id__in=[run.pk for run in runs], retrieved__gt=0, query_id__in=Subquery(live)
        )
        .values("run_id")
        .annotate(n=Count("query_id", distinct=True))
        .order_by()
    )
    return {row["run_id"]: row["n"] for row in rows}


def share_means(
    *, collection_id: int, runs: Sequence[Any], measures: Sequence[str], keep: Any
) -> dict[int, dict[str, float | None]]:
    """Return each run's means of ``measures`` over the scored queries whose qid ``keep``s.

    The same mean as the scoreboard's (listed, finite values only), on a share of the
    query columns; one SQL query.
    """
    ids = [run.pk for run in runs]
    sums = np.zeros((len(ids), len(measures)))
    counts = np.zeros((len(ids), len(measures)), dtype=np.int64)
    for qid, column in store.columns_read(collection_id, qids=True).items():
        if not keep(str(qid)):
            continue
        values = column.lookup(ids, list(measures))
        finite = np.isfinite(values)
        sums += np.where(finite, values, 0.0)
        counts += finite
    return {
        pk: {
            m: float(sums[i, j] / counts[i, j]) if counts[i, j] else None
            for j, m in enumerate(measures)
        }
        for i, pk in enumerate(ids)
    }


def score_policy(*, collection: Collection, is_coordinator: bool) -> ScorePolicy:
    """Return what a member of ``collection`` sees of its scores (coordinators: all).

    Coordinators' policy is decided without reading the settings (no SQL query); anyone
    else's reads them once.
    """
    if is_coordinator:
        return ScorePolicy(exposure=Exposure.FULL, collection=collection)
    mode = rules(collection=collection).mode
    if collection.judgments_published:
        exposure = Exposure.PRIVATE if mode == Mode.SPLIT else Exposure.FULL
    else:
        exposure = {
            Mode.LIVE: Exposure.FULL,
            Mode.HIDDEN: Exposure.NONE,
            Mode.AGGREGATE: Exposure.AGGREGATE,
            Mode.SPLIT: Exposure.PUBLIC,
        }.get(mode, Exposure.NONE)
    return ScorePolicy(exposure=exposure, collection=collection)


@dataclass(frozen=True)
class Budget:
    """A team's submissions left in the rolling day, of how many, and when one frees up."""

    team: Any
    left: int | None  # None: no daily limit
    limit: int | None
    next_allowed: Any = None  # datetime when ``left`` is 0 and the limit above 0


def budgets(*, collection: Collection, teams: Iterable[Any], now: Any = None) -> list[Budget]:
    """Return each team's budget of runs (one SQL query for all the teams; none unlimited)."""
    teams = list(teams)
    limit = rules(collection=collection).runs_per_day
    if limit is None:
        return [Budget(team=team, left=None, limit=None) for team in teams]
    now = now or timezone.now()
    recent: dict[int, list[Any]] = {team.pk: [] for team in teams}
    for team_id, at in (
        Submission.objects.filter(
            team_id__in=list(recent), counted=True, submitted_at__gt=now - BUDGET_WINDOW
        )
        .order_by("-submitted_at")
        .values_list("team_id", "submitted_at")
    ):
        recent[team_id].append(at)
    out = []
    for team in teams:
        times = recent[team.pk]
        left = max(0, limit - len(times))
        next_allowed = times[limit - 1] + BUDGET_WINDOW if limit and not left else None
        out.append(Budget(team=team, left=left, limit=limit, next_allowed=next_allowed))
    return out
