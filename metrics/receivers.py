"""React to judging's signals: rescore the runs a judgment change affects."""

from __future__ import annotations

from typing import Any

from judging.signals import judgments_changed

from . import services, tasks


def rescore_on_judgments_changed(
    *, collection_id: int, query_ids: frozenset[int], bulk: bool, **_: Any
) -> None:
    """Rescore affected queries: inline for one judgment, in the background for bulk changes.

    Runs after the judgment's transaction commits, so the request that recorded a single
    judgment returns with every run's scores already current.
    """
    if bulk:
        tasks.rescore_queries.delay(collection_id, sorted(query_ids))
    else:
        services.runs_rescore_after_change(collection_id=collection_id, query_ids=query_ids)


def connect() -> None:
    """Connect the receivers (called once from the app config)."""
    judgments_changed.connect(
        rescore_on_judgments_changed, dispatch_uid="metrics.rescore_on_judgments_changed"
    )
