"""Hand work to Celery by task name, so a service never imports the task that calls it.

A task module sits above the services it runs (``judging.llm.tasks`` imports the runner,
which records labels through ``judging.llm.services``); a service that queues the task
looks it up here by its registered name instead of importing it, which would close a
circle. Each app's ``tasks`` module imports its capabilities' task modules, as Celery's
autodiscovery expects.
"""

from __future__ import annotations

import importlib
from typing import Any

from celery import current_app


def task(name: str) -> Any:
    """Return the Celery task registered as ``name`` (``<app>.<task>``), loading its app's tasks."""
    importlib.import_module(f"{name.partition('.')[0]}.tasks")
    return current_app.tasks[name]
