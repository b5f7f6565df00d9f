"""Builders for the metrics pages' tests: teams, runs and per-query rows with stored scores.

They write rows directly (no scoring engine), the way ``metrics.services`` leaves them after
scoring, so the pages can be tested against stored data. Live grades are created without
sending ``judgments_changed`` (no rescoring is triggered).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import numpy as np
from django.core.files.base import ContentFile
from django.utils import timezone

from judging.models import Collection, Document, LiveGrade, Membership, Query
from metrics.live.scoring import measure_labels
from metrics.models import Run, RunQuery, Team, ranking_bytes
from tests import factories
from tests.metrics.factories import store_scores

_seq = itertools.count(1)


def canonical(name: str) -> str:
    """Return the canonical name of a measure written any way the engine accepts."""
    return measure_labels([name])[0].canonical


NDCG10 = canonical("nDCG@10")
P10 = canonical("P@10")
JUDGED10 = canonical("Judged@10")


def team(coll: Collection, name: str | None = None, members: Sequence = ()) -> Team:
    """Create a team whose members hold the collection's team role."""
    t = Team.objects.create(collection=coll, name=name or f"Team {next(_seq)}")
    for usr in members:
        t.members.add(usr)
        factories.member(coll, usr, role=Membership.Role.TEAM)
    return t


def _names(scores: Mapping[str, float | None]) -> dict[str, float | None]:
    """Key scores by canonical name, accepting any spelling."""
    return {canonical(k): v for k, v in scores.items()}


def run(
    coll: Collection,
    team_: Team,
    tag: str | None = None,
    *,
    per_query: Mapping[Query, Mapping[str, float | None]] | None = None,
    rankings: Mapping[Query, Sequence[Document | int]] | None = None,
    scores: Mapping[str, float | None] | None = None,
    scored_version: int | None = None,
    content: bytes | None = None,
    description: str = "",
    submitted_by=None,
) -> Run:
    """Create a scored run with per-query rows.

    ``per_query`` maps queries to their scores (any measure spelling); the run's means are
    computed from them unless ``scores`` is given. ``rankings`` gives each query's ranked
    documents (default: none stored, one retrieved). ``scored_version`` defaults to the
    collection's current judgment-list version. ``content`` is kept as the run file.
    """
    version = coll.judgments_version if scored_version is None else scored_version
    per_query = {q: _names(s) for q, s in (per_query or {}).items()}
    rankings = dict(rankings or {})
    if scores is None:
        names = sorted({n for s in per_query.values() for n in s})
        means: dict[str, float | None] = {}
        for name in names:
            vals = [s[name] for s in per_query.values() if s.get(name) is not None]
            means[name] = float(np.mean(vals)) if vals else None
    else:
        means = _names(scores)
    r = Run(
        collection=coll,
        team=team_,
        tag=tag or f"run{next(_seq)}",
        description=description,
        submitted_by=submitted_by,
        query_count=len(set(per_query) | set(rankings)),
        status=Run.Status.SCORED,
        scored_version=version,
        scored_at=timezone.now(),
    )
    if content is not None:
        r.source_file.save(f"{r.tag}.txt", ContentFile(content), save=False)
    r.save()
    rows = []
    for q in dict.fromkeys([*per_query, *rankings]):
        docs = [d if isinstance(d, int) else d.pk for d in rankings.get(q, [])]
        rows.append(
            RunQuery(
                run=r,
                query=q,
                ranking=ranking_bytes(docs),
                retrieved=max(1, len(docs)),
            )
        )
    RunQuery.objects.bulk_create(rows)
    store_scores(coll, r, means=means, per_query=per_query)
    return r


def live_grades(coll: Collection, query: Query, grades: Mapping[Document, float]) -> None:
    """Write the live grades of one query directly (no signal, no rescoring)."""
    LiveGrade.objects.bulk_create(
        [
            LiveGrade(collection=coll, query=query, document=d, grade=g, human_count=1)
            for d, g in grades.items()
        ]
    )


def bump_version(coll: Collection, to: int) -> None:
    """Set the collection's judgment-list version (as if judgments had changed)."""
    coll.judgments_version = to
    coll.judgments_changed_at = timezone.now()
    coll.save(update_fields=["judgments_version", "judgments_changed_at"])
