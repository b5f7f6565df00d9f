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


def start_after_commit(name: str, *args: Any, thread_name: str) -> None:
    """Run task ``name`` with ``args`` in the background once the current transaction commits.

    With a Celery broker the work is a task; without one it runs inline when Celery is
    eager in tests (``GRADED_LLM_JOBS_INLINE``), else in a daemon thread of this process
    (named ``thread_name``) that closes its database connection when done. LLM jobs and the
    checks of LLM judges start this way.
    """
    import threading

    from django.conf import settings
    from django.db import connection, transaction

    def start() -> None:
        work = task(name)
        if settings.CELERY_BROKER_URL or getattr(settings, "GRADED_LLM_JOBS_INLINE", False):
            work.delay(*args)
            return

        def target() -> None:
            try:
                work(*args)
            finally:
                connection.close()

        threading.Thread(target=target, name=thread_name, daemon=True).start()

    transaction.on_commit(start)
