"""Large file imports run in the background: one row per import, with its progress."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


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
