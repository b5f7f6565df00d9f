"""The states of a background job: queued, running, done or failed.

LLM jobs, quality checks and search snapshots share them.

Each job model names it as its own ``Status`` (``Status = JobStatus``), so callers keep
writing ``LLMJob.Status.DONE``; the values stored in the database are these strings.
"""

from __future__ import annotations

from django.db import models


class JobStatus(models.TextChoices):
    """Where a background job is."""

    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
