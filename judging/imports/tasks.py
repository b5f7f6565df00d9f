"""Background work of file imports (Celery; runs inline when no broker is configured)."""

from __future__ import annotations

from celery import shared_task

from judging.imports import services


@shared_task(name="judging.run_file_import")
def run_file_import(import_id: int) -> None:
    """Run one queued file import (large uploads of the Import files page)."""
    services.file_import_run(import_id=import_id)
