"""The project's own app: system checks of the deployment (no models)."""

from django.apps import AppConfig


class GradedConfig(AppConfig):
    """Register the checks of :mod:`config.checks`."""

    name = "config"
    label = "graded_config"
    verbose_name = "Graded configuration"

    def ready(self) -> None:
        """Import the checks so that Django registers them."""
        from config import checks  # noqa: F401
