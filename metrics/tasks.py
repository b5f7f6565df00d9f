"""The metrics app's Celery tasks, one module per capability (found by autodiscovery)."""

from metrics.live.tasks import build_docno_index, rescore_queries

__all__ = ["build_docno_index", "rescore_queries"]
