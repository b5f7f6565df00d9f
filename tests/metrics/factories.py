"""Builders of metrics test data: teams, and runs with stored rankings and scores.

Runs are written directly (no file, no engine), so tests that do not exercise submission
do not depend on the scoring binding.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from django.utils import timezone

from judging.models import Collection, Query
from metrics import services
from metrics.models import RANKING_DTYPE, Run, RunQuery, Team

_seq = itertools.count(1)


def team(coll: Collection, name: str | None = None, members: Iterable = ()) -> Team:
    """Create a team whose members get the collection's team role."""
    return services.team_create(
        collection=coll, name=name or f"team{next(_seq)}", members=list(members)
    )


def ranking_bytes(document_ids: Sequence[int]) -> bytes:
    """Return document ids as the stored little-endian int64 ranking."""
    return np.array(list(document_ids), dtype=RANKING_DTYPE).tobytes()


def run(
    coll: Collection,
    owner: Team,
    tag: str | None = None,
    *,
    scores: Mapping[str, float | None] | None = None,
    per_query: Mapping[Query, Mapping[str, float | None]] | None = None,
    rankings: Mapping[Query, Sequence[int]] | None = None,
    version: int | None = None,
    submitted_by=None,
    description: str = "",
) -> Run:
    """Create a scored run of ``owner`` with its per-query rows.

    ``per_query`` maps queries to their stored scores; ``rankings`` maps queries to ranked
    document pks (queries with scores but no ranking get a one-document ranking of pk 0).
    ``version`` defaults to the collection's current judgment-list version (not stale).
    """
    per_query = dict(per_query or {})
    rankings = dict(rankings or {})
    version = coll.judgments_version if version is None else version
    created = Run.objects.create(
        collection=coll,
        team=owner,
        tag=tag or f"run{next(_seq)}",
        description=description,
        submitted_by=submitted_by,
        source_file="",
        query_count=len(set(per_query) | set(rankings)),
        line_count=sum(len(r) for r in rankings.values()),
        status=Run.Status.SCORED,
        scores=dict(scores or {}),
        scored_version=version,
        scored_at=timezone.now(),
    )
    RunQuery.objects.bulk_create(
        RunQuery(
            run=created,
            query=query,
            ranking=ranking_bytes(rankings.get(query, [0])),
            retrieved=max(1, len(rankings.get(query, []))),
            scores=dict(per_query.get(query, {})),
            version=version,
        )
        for query in set(per_query) | set(rankings)
    )
    return created
