"""The history of what judges read: one row per change after the first version."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q


class GuidelineVersion(models.Model):
    """One numbered change of a collection's guidelines or of its queries' instructions.

    Version 1 is the collection as it was created (or as it was when versions started);
    it has no row. Row *n* ≥ 2 records what changed from version *n* − 1: each entry of
    ``changes`` is ``{"field", "query", "before", "after"}`` (``query`` is the query's
    external id, or null for the collection's guidelines).
    """

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="guideline_versions"
    )
    number = models.PositiveIntegerField(help_text="The version this change starts (2, 3, …).")
    changes = models.JSONField(
        help_text='What changed: a list of {"field", "query", "before", "after"}; '
        "field is guidelines, description or narrative; query is null for guidelines."
    )
    note = models.CharField(
        max_length=500, blank=True, help_text="Why it changed, in the coordinator's words."
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who made the change (empty for imports without a user).",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection_id", "number"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "number"], name="guideline_version_unique_number"
            ),
            models.CheckConstraint(
                condition=Q(number__gte=2), name="guideline_version_after_first"
            ),
        ]

    def __str__(self) -> str:
        """Return ``collection vN``."""
        return f"{self.collection_id} v{self.number}"
