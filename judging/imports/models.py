"""Large file imports run in the background: one row per import, with its progress."""

from __future__ import annotations

import datetime

from django.conf import settings
from django.core.cache import cache
from django.db import models
from django.db.models import Q
from django.utils import timezone


class FileImport(models.Model):
    """A large import run by a worker: files of the *Import files* page, or a REST upload.

    The files wait under ``MEDIA_ROOT/imports/<id>/`` until the worker has read them. The
    import itself is the same all-or-nothing one the request would have run: the page's
    ``collection_files_import`` (kind ``files``), or a judgment file posted to
    ``.../judgments/`` or ``.../qrels/`` above ``GRADED_BACKGROUND_IMPORT_BYTES``.
    """

    class Kind(models.TextChoices):
        FILES = "files", "Collection files (topics, documents, pairs, judgments)"
        JUDGMENTS = "judgments", "A judgment file posted to .../judgments/"
        QRELS = "qrels", "A judgment list posted to .../qrels/"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        REFUSED = "refused", "Refused (nothing written)"
        FAILED = "failed", "Failed (nothing written)"

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="file_imports"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The coordinator who uploaded the files.",
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    kind = models.CharField(
        max_length=10,
        choices=Kind.choices,
        default=Kind.FILES,
        help_text="What was uploaded, and so which import runs it.",
    )
    files = models.JSONField(
        default=dict, help_text="Stored file name per role (topics, documents, judgments)."
    )
    options = models.JSONField(
        default=dict, help_text="Formats, judge name and kind, scale and dry run, as submitted."
    )
    bytes_total = models.PositiveBigIntegerField(default=0, help_text="Size of all the files.")
    bytes_read = models.PositiveBigIntegerField(
        default=0, help_text="Bytes read when the import ended (live progress is in the cache)."
    )
    report = models.JSONField(default=list, blank=True, help_text="One line per imported file.")
    problems = models.JSONField(
        default=list, blank=True, help_text="The refused lines (capped), or the failure."
    )
    errors = models.JSONField(
        default=list,
        blank=True,
        help_text="The refused lines as API error items ({message, line, ...}), as a "
        "request refused at once would list them.",
    )
    result = models.JSONField(
        default=dict,
        blank=True,
        help_text="A judgment upload's counts, as the request would have answered them.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the worker running the import last said it is alive (every "
        "GRADED_IMPORT_HEARTBEAT_SECONDS); a running import silent for longer than "
        "GRADED_IMPORT_STALE_SECONDS is interrupted.",
    )
    attempts = models.PositiveSmallIntegerField(
        default=0,
        help_text="How many times a worker has started the import (a retry starts it again; "
        "only the latest attempt may write).",
    )

    class Meta:
        indexes = [models.Index(fields=["collection", "-created_at"], name="fileimport_recent")]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["queued", "running", "done", "refused", "failed"]),
                name="fileimport_status_known",
            ),
            models.CheckConstraint(
                condition=Q(kind__in=["files", "judgments", "qrels"]),
                name="fileimport_kind_known",
            ),
            models.CheckConstraint(
                condition=Q(bytes_read__lte=models.F("bytes_total")),
                name="fileimport_read_within_total",
            ),
        ]

    def __str__(self) -> str:
        """Return ``import N (status)``."""
        return f"import {self.pk} ({self.status})"

    @property
    def finished(self) -> bool:
        """Return whether the import has ended (done, refused or failed)."""
        return self.status in (self.Status.DONE, self.Status.REFUSED, self.Status.FAILED)

    @property
    def progress_key(self) -> str:
        """Return the cache key under which the running import publishes its bytes read."""
        return f"graded:file-import:{self.pk}:bytes"

    @property
    def heartbeat_key(self) -> str:
        """Return the cache key under which the running import's worker says it is alive."""
        return f"graded:file-import:{self.pk}:heartbeat"

    def last_heartbeat(self) -> datetime.datetime | None:
        """Return the worker's last sign of life: its latest heartbeat (row or cache) or start.

        A row no worker has stamped counts from its creation.

        The worker writes the row from a thread of its own; where the database cannot take
        that write while the import's transaction is open (SQLite), the cache has it.
        """
        seen = [t for t in (self.heartbeat_at, self.started_at) if t is not None]
        cached = cache.get(self.heartbeat_key)
        if isinstance(cached, datetime.datetime):
            seen.append(cached)
        return max(seen, default=self.created_at)

    @property
    def interrupted(self) -> bool:
        """Return whether the import is *running* but its worker fell silent (killed, lost).

        Silent means no heartbeat for ``GRADED_IMPORT_STALE_SECONDS``. Nothing of it was
        written (the import is one transaction); a coordinator may retry it.
        """
        if self.status != self.Status.RUNNING:
            return False
        last = self.last_heartbeat()
        limit = datetime.timedelta(seconds=settings.GRADED_IMPORT_STALE_SECONDS)
        return last is None or timezone.now() - last > limit

    @property
    def state(self) -> str:
        """Return the status to show: the stored one, or ``interrupted``."""
        return INTERRUPTED if self.interrupted else self.status


INTERRUPTED = "interrupted"
"""The shown state of a running import whose worker fell silent (never stored)."""
STATES = [*FileImport.Status.values[:2], INTERRUPTED, *FileImport.Status.values[2:]]
"""Every state an import is shown in: queued, running, interrupted, done, refused, failed."""
