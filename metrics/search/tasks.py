"""Background work of live search: one Celery task per snapshot (acknowledged late)."""

from __future__ import annotations

from celery import shared_task

from metrics.search import runner, services
from metrics.search.models import SearchSnapshot


@shared_task(name="metrics.run_search_snapshot", acks_late=True, reject_on_worker_lost=True)
def run_search_snapshot(snapshot_id: int) -> None:
    """Send a snapshot's pending queries and make its run (resumes where it stopped).

    First drops the raw answers past their retention (``raw_answers_prune``).
    """
    services.raw_answers_prune()
    snapshot = (
        SearchSnapshot.objects.select_related("version__endpoint", "version__configuration__team")
        .filter(pk=snapshot_id)
        .first()
    )
    if snapshot is not None and snapshot.status in (
        SearchSnapshot.Status.QUEUED,
        SearchSnapshot.Status.RUNNING,
    ):
        runner.work(snapshot)


@shared_task(name="metrics.remap_search_snapshot", acks_late=True, reject_on_worker_lost=True)
def remap_search_snapshot(snapshot_id: int) -> None:
    """Map a large re-map's kept answers in batches and make its run (resumes)."""
    snapshot = SearchSnapshot.objects.filter(pk=snapshot_id).first()
    if snapshot is not None and snapshot.status in (
        SearchSnapshot.Status.QUEUED,
        SearchSnapshot.Status.RUNNING,
    ):
        services.remap_work(snapshot)
