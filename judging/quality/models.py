"""Gold pairs: (query, document) pairs whose right grade the coordinators know."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from judging.models import GRADE_MAX, GRADE_MIN


class GoldPair(models.Model):
    """A pair with the grade a coordinator expects, to measure how right each judge is."""

    collection = models.ForeignKey(
        "judging.Collection", on_delete=models.CASCADE, related_name="gold_pairs"
    )
    query = models.ForeignKey("judging.Query", on_delete=models.CASCADE, related_name="+")
    document = models.ForeignKey("judging.Document", on_delete=models.CASCADE, related_name="+")
    grade = models.SmallIntegerField(help_text="The expected grade, 0 not relevant … 4 perfect.")
    reason = models.TextField(
        blank=True, help_text="Why this grade (shown to coordinators, never to judges)."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="Who marked the pair as gold.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["collection_id", "query_id", "document_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "query", "document"], name="gold_pair_unique"
            ),
            models.CheckConstraint(
                condition=Q(grade__gte=GRADE_MIN, grade__lte=GRADE_MAX),
                name="gold_pair_grade_range",
                violation_error_message="Grade must be between 0 and 4.",
            ),
        ]

    def __str__(self) -> str:
        """Return ``query/document = grade``."""
        return f"{self.query_id}/{self.document_id} = {self.grade}"
