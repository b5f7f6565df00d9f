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
from metrics.live import store
from metrics.models import Run, RunQuery, Team, ranking_bytes

_seq = itertools.count(1)


def team(coll: Collection, name: str | None = None, members: Iterable = ()) -> Team:
    """Create a team whose members get the collection's team role."""
    return services.team_create(
        collection=coll, name=name or f"team{next(_seq)}", members=list(members)
    )


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
        scored_version=version,
        scored_at=timezone.now(),
    )
    RunQuery.objects.bulk_create(
        RunQuery(
            run=created,
            query=query,
            ranking=ranking_bytes(rankings.get(query, [0])),
            retrieved=max(1, len(rankings.get(query, []))),
        )
        for query in set(per_query) | set(rankings)
    )
    store_scores(coll, created, means=dict(scores or {}), per_query=per_query)
    return created


def store_scores(
    coll: Collection,
    run: Run,
    *,
    means: Mapping[str, float | None],
    per_query: Mapping[Query, Mapping[str, float | None]],
) -> None:
    """Store ``run``'s means and per-query scores as given (no engine), as scoring leaves them.

    The scoreboard's sums are set so that each mean is exactly the one given (a sum of
    the mean over one query; none for None); a query with an empty mapping is not
    scored. The scoreboard keeps version 0, so each run's own ``scored_version`` says
    whether it is current (live rescoring then moves the board).
    """
    board = store.board_read(coll.pk)
    names = list(dict.fromkeys([*board.names, *means, *(n for s in per_query.values() for n in s)]))
    _widen(board, names)
    row = board.rows([run.pk])[0]
    for j, name in enumerate(names):
        value = means.get(name)
        board.sums[row, j] = 0.0 if value is None else value
        board.counts[row, j] = 0 if value is None else 1
    store.board_write(board, version=0)
    columns = store.columns_read(coll.pk, [q.pk for q in per_query])
    written = []
    for query, values in per_query.items():
        if not values:
            continue
        column = columns.get(query.pk) or store.Column.empty(query.pk, names)
        kept = column.lookup(column.run_ids, names)
        new = [[np.nan if values.get(n) is None else values[n] for n in names]]
        written.append(
            store.Column(
                query.pk,
                names,
                np.append(column.run_ids, run.pk),
                np.vstack([kept.reshape(len(column.run_ids), len(names)), new]),
            )
        )
    store.columns_write(coll.pk, written, version=run.scored_version)


def _widen(board: store.Board, names: list[str]) -> None:
    """Give ``board`` the measures ``names`` (a superset of its own), keeping its sums."""
    if names == board.names:
        return
    sums = np.zeros((len(board.run_ids), len(names)))
    counts = np.zeros((len(board.run_ids), len(names)), dtype=np.int64)
    for j, name in enumerate(board.names):
        sums[:, names.index(name)] = board.sums[:, j]
        counts[:, names.index(name)] = board.counts[:, j]
    board.names, board.sums, board.counts = names, sums, counts


def query_scores(run: Run) -> dict[int, dict[str, float | None]]:
    """Return ``run``'s stored scores by query id (the queries that score it)."""
    names = store.board_read(run.collection_id).names
    return store.run_values(collection_id=run.collection_id, run_id=run.pk, names=names)


def stored_scores(runs: Iterable[Run]) -> dict[tuple[int, int], dict[str, float | None]]:
    """Return the stored scores of every ranking of ``runs`` by (run id, query id).

    A ranking whose query does not score the run (no live grades) has ``{}``.
    """
    runs = list(runs)
    out: dict[tuple[int, int], dict[str, float | None]] = {}
    for run_id, query_id in RunQuery.objects.filter(run__in=runs).values_list("run_id", "query_id"):
        out[(run_id, query_id)] = {}
    for run in runs:
        for query_id, values in query_scores(run).items():
            out[(run.pk, query_id)] = values
    return out


def current(run: Run) -> Run:
    """Reload ``run`` with its means and version as the scoreboard has them (as pages do)."""
    run.refresh_from_db()  # reads the scoreboard too
    return run
