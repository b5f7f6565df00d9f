"""Background work of adaptive pooling (Celery; runs inline when no broker is configured)."""

from __future__ import annotations

from celery import shared_task
from django.db import transaction

from metrics.pool import services
from metrics.pool.models import PoolingPolicy


@shared_task(name="metrics.pool_replan")
def pool_replan(collection_id: int, force: bool = False) -> int | None:
    """Replan the collection's judging queue (see :func:`metrics.pool.services.pool_replan`)."""
    return services.pool_replan(collection_id=collection_id, force=force)


def pool_replan_soon(*, collection_id: int, force: bool = False) -> None:
    """Replan after commit, in the background, if the collection's strategy plans.

    One indexed look-up when the strategy is depth-k (nothing to plan): judging a pair
    under the default policy costs no more than before.
    """
    strategy = (
        PoolingPolicy.objects.filter(collection_id=collection_id)
        .order_by("-version")
        .values_list("strategy", flat=True)
        .first()
    )
    if strategy in (None, "depth"):
        return
    transaction.on_commit(lambda: pool_replan.delay(collection_id, force))


@shared_task(name="metrics.ranking_snapshot")
def ranking_snapshot(collection_id: int) -> bool:
    """Store a ranking snapshot if due (see :func:`services.ranking_snapshot_take`)."""
    return services.ranking_snapshot_take(collection_id=collection_id) is not None
