"""Metrics app configuration."""

from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """Runs, scores and leaderboards; the pure engine lives in ``metrics.engine``."""

    name = "metrics"
    verbose_name = "Metrics"

    def ready(self) -> None:
        """Subscribe to judging's change notifications; weigh pairs for its queue."""
        from judging import impact
        from metrics.analysis import impact as selectors_impact
        from metrics.live import receivers

        receivers.connect()
        impact.register(selectors_impact.runs_with_pair_in_top)
