"""Background work of judge quality: canary and version checks of LLM judges (Celery).

Started by :func:`judging.quality.services.canary_check_start` and
:func:`~judging.quality.services.version_check_start` through
:func:`judging.background.start_after_commit` (inline in tests, in a thread without a
broker). Acknowledged only when it ends and requeued if its worker process dies; a
duplicate delivery finds the check claimed and does nothing.
"""

from __future__ import annotations

from celery import shared_task

from judging.quality import checks


@shared_task(name="judging.run_quality_check", acks_late=True, reject_on_worker_lost=True)
def run_quality_check(kind: str, check_id: int) -> None:
    """Run one queued check of an LLM judge (``kind``: ``canary`` or ``version``)."""
    checks.run_check(kind, check_id)
