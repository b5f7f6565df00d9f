"""Metrics app configuration."""

from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """Runs, scores and leaderboards; the pure engine lives in ``metrics.engine``."""

    name = "metrics"
    verbose_name = "Metrics"

    def ready(self) -> None:
        """Subscribe to judging's change notifications."""
        from . import receivers

        receivers.connect()
