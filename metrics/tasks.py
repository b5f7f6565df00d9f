"""The metrics app's Celery tasks, one module per capability (found by autodiscovery)."""

from metrics.live.tasks import rescore_queries

__all__ = ["rescore_queries"]
