"""Read side of live scoring: whether the stored scores agree with a rescoring from nothing."""

from __future__ import annotations

import math

import numpy as np
from django.db import transaction

from judging.models import Collection
from metrics import services
from metrics.live import store
from metrics.models import Run


def _differs(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return (a is None) != (b is None)
    return not math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def scores_problems(*, collection: Collection) -> list[str]:
    """Return how the stored scores of ``collection`` differ from scoring every run afresh.

    Compares what readers show: the runs the scoreboard lists, their means per measure,
    and every run's per-query values. The fresh scores are computed by a full rescoring
    inside a transaction that is rolled back, so nothing changes; the collection's row
    lock is taken before the stored scores are read and held to the end, so no write
    comes between the two. Empty when they agree.
    """
    with transaction.atomic():
        store.lock(collection.pk)  # what is stored cannot change until the comparison ends
        runs = dict(Run.objects.filter(collection=collection).values_list("pk", "tag"))
        stored_means = store.board_read(collection.pk).means()
        stored_columns = store.columns_read(collection.pk)
        services.runs_score(collection=collection)
        fresh_means = store.board_read(collection.pk).means()
        fresh_columns = store.columns_read(collection.pk)
        transaction.set_rollback(True)
    problems = [
        f"run {runs[pk]!r} is not on the scoreboard (never rescored by judgments)"
        for pk in sorted(runs)
        if pk not in stored_means
    ]
    for pk in sorted(set(runs) & set(stored_means)):
        for name, value in (fresh_means.get(pk) or {}).items():
            old = stored_means[pk].get(name)
            if _differs(old, value):
                problems.append(
                    f"run {runs[pk]!r}: mean {name} is {old}, a rescoring gives {value}"
                )
    ids = np.array(sorted(runs), dtype=np.int64)
    for query_id in sorted(set(stored_columns) | set(fresh_columns)):
        old_column, new_column = stored_columns.get(query_id), fresh_columns.get(query_id)
        was = old_column.listed(ids) if old_column else np.zeros(len(ids), dtype=bool)
        now = new_column.listed(ids) if new_column else np.zeros(len(ids), dtype=bool)
        for pk, scored in zip(ids[was != now].tolist(), now[was != now].tolist(), strict=True):
            state = "has no score" if scored else "has a score it should not"
            problems.append(f"run {runs[pk]!r} {state} for query id {query_id}")
        both = ids[was & now]
        if len(both):
            old = old_column.lookup(both, new_column.names)
            new = new_column.lookup(both, new_column.names)
            same = (np.isnan(old) & np.isnan(new)) | np.isclose(old, new, rtol=1e-9, atol=1e-12)
            for pk in both[~same.all(axis=1)].tolist():
                problems.append(f"run {runs[pk]!r}: scores for query id {query_id} differ")
    return problems
