"""The metrics app's Celery tasks, one module per capability (found by autodiscovery)."""

from metrics.live.tasks import build_docno_index, rescore_queries
from metrics.schedules.tasks import search_schedules_tick
from metrics.search.tasks import remap_search_snapshot, run_search_snapshot

__all__ = [
    "build_docno_index",
    "remap_search_snapshot",
    "rescore_queries",
    "run_search_snapshot",
    "search_schedules_tick",
]
