"""Metrics app configuration."""

from django.apps import AppConfig


class MetricsConfig(AppConfig):
    """Runs, scores and leaderboards; the pure engine lives in ``metrics.engine``."""

    name = "metrics"
    verbose_name = "Metrics"

    def ready(self) -> None:
        """Subscribe to judging's change notifications; weigh pairs for its queue.

        Also set the C allocator's thresholds for rescoring's arrays
        (:mod:`metrics.live.allocator`) unless ``GRADED_TUNE_MALLOC`` is off.
        """
        from django.conf import settings

        from judging import impact
        from metrics.analysis import impact as selectors_impact
        from metrics.live import allocator, receivers

        if getattr(settings, "GRADED_TUNE_MALLOC", True):
            allocator.tune()
        receivers.connect()
        impact.register(selectors_impact.runs_with_pair_in_top)
