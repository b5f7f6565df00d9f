"""Read side of the metrics API: what only the endpoints need, each in a fixed query count.

Complements :mod:`metrics.selectors` (shared with the pages).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from judging.models import Collection
from metrics.analysis.ppi import leaderboard_ppi
from metrics.live import store
from metrics.models import Run, Team
from metrics.selectors import Viewer


def runs_for_api(runs: QuerySet[Run]) -> QuerySet[Run]:
    """Return ``runs`` with their team and submitter in the same SQL query."""
    return runs.select_related("team", "submitted_by")


def teams_for_viewer(*, collection: Collection, who: Viewer) -> QuerySet[Team]:
    """Return the teams ``who`` may see: all for coordinators, else their own.

    Members come in one extra query, however many teams there are.
    """
    teams = Team.objects.filter(collection=collection).prefetch_related("members")
    if who.is_coordinator:
        return teams
    return teams.filter(pk__in=who.team_ids)


def team_in_collection(*, collection: Collection, team_id: int) -> Team | None:
    """Return the team of ``collection`` with id ``team_id``, or None."""
    return Team.objects.filter(collection=collection, pk=team_id).first()


def users_by_username(*, usernames: list[str]) -> dict[str, AbstractBaseUser]:
    """Return the users among ``usernames``, keyed by username (unknown names left out)."""
    model = get_user_model()
    field = model.USERNAME_FIELD
    return {
        getattr(user, field): user for user in model.objects.filter(**{f"{field}__in": usernames})
    }


@dataclass(frozen=True)
class RunScores:
    """A run's mean and per-query scores, and the judgment-list version they rest on."""

    measures: list[str]
    version: int
    stale: bool
    aggregate: dict[str, float | None]
    per_query: dict[str, dict[str, float | None]]
    visibility: str = "full"
    ppi: dict[str, Any] = field(default_factory=dict)  # measure → PPICell
    ppi_audit: Any = None  # metrics.analysis.ppi.LeaderboardPPI


def run_scores(*, run: Run, collection: Collection, measures: list[str], who: Viewer) -> RunScores:
    """Return the scores of ``run`` for ``measures`` (canonical names), by qid, as ``who`` sees.

    Only queries of the live judgment list (those that score the run) are listed, by
    qid; a measure that left a query out has ``None``. The means come from the
    scoreboard, the per-query values from the query columns (one SQL query each); both
    pass the viewer's score policy (:mod:`metrics.visibility.selectors`), and so do the
    bias-corrected means (:func:`metrics.analysis.ppi.leaderboard_ppi`).
    """
    policy = who.policy
    means = policy.means([run], measures)[run.pk]
    ppi = leaderboard_ppi(
        collection=collection,
        policy=policy,
        runs=[run],
        measures=measures,
        shown={run.pk: means},
    )
    values = {}
    if policy.shows_per_query:
        values = store.run_values(
            collection_id=collection.pk, run_id=run.pk, names=measures, qids=True
        )
    return RunScores(
        measures=measures,
        version=run.scored_version,
        stale=run.scored_version < collection.judgments_version,
        aggregate=means,
        per_query={qid: values[qid] for qid in sorted(values)},
        visibility=str(policy.exposure),
        ppi=ppi.for_run(run.pk),
        ppi_audit=ppi,
    )
