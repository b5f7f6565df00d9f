"""Celery application; runs tasks inline when no broker is configured, or when it is down.

Like every entry point it defaults to the production settings (DEBUG off, a strong key
required), so a worker never runs with DEBUG by accident.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from typing import Any

from celery import Celery, Task

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.prod")

log = logging.getLogger("graded.celery")
_warned = threading.Event()
#: Seconds during which, after a failure, tasks run inline without trying the broker.
RETRY_SECONDS = 5.0
_down_until = [0.0]


def _broker_errors() -> tuple[type[BaseException], ...]:
    from kombu.exceptions import OperationalError

    return (OperationalError, ConnectionError, OSError)


class DegradingTask(Task):
    """A task that runs inline when its message cannot reach the broker.

    Every ``.delay``/``.apply_async`` of the project goes through here. With the broker
    down (Redis stopped), queueing raises after Celery's publish retries; instead of turning
    the request that queued the work (a judgment import, a rescoring after a bulk change)
    into a 500 after its data committed, the task runs in the calling process, as it does
    without a broker. For :data:`RETRY_SECONDS` after a failure tasks run inline without
    trying the broker (each try costs Celery's publish retries, about a second). The first
    fallback of the process is logged as a warning, later ones at debug level.
    """

    def apply_async(self, args: Any = None, kwargs: Any = None, **options: Any) -> Any:
        """Queue the task; run it here if the broker cannot be reached."""
        if time.monotonic() < _down_until[0] and not self.app.conf.task_always_eager:
            return self.apply(args, kwargs, **options)
        try:
            return super().apply_async(args, kwargs, **options)
        except _broker_errors() as exc:
            if self.app.conf.task_always_eager:
                raise
            _down_until[0] = time.monotonic() + RETRY_SECONDS
            if not _warned.is_set():
                _warned.set()
                log.warning(
                    "Broker unreachable (%s: %s); running %s and later tasks inline in "
                    "the calling process until it answers.",
                    type(exc).__name__,
                    exc,
                    self.name,
                )
            else:
                log.debug("Broker unreachable; running %s inline.", self.name)
            return self.apply(args, kwargs, **options)


app = Celery("graded", task_cls=DegradingTask)
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
