"""RAG answers submitted by teams: one AnswerRun per file, one Answer per topic."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from judging.models import Collection, Query


class AnswerRun(models.Model):
    """One team's file of RAG answers (TREC RAG 2024/2025 format), one answer per topic."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="answer_runs")
    team = models.ForeignKey("metrics.Team", on_delete=models.CASCADE, related_name="answer_runs")
    tag = models.CharField(
        max_length=100,
        help_text="Unique among the collection's answer runs (ranked runs have their own tags).",
    )
    run_id = models.CharField(
        max_length=500, blank=True, help_text="The run_id the file's records carry."
    )
    description = models.TextField(blank=True, help_text="How the answers were produced.")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    source_format = models.CharField(
        max_length=10, default="jsonl", help_text="jsonl or json (one array)."
    )
    query_count = models.PositiveIntegerField(default=0, help_text="Topics answered.")

    pairs_pooled = 0  # not stored: what the submission added to the judges' pool

    class Meta:
        ordering = ["-submitted_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "tag"], name="answerrun_unique_tag"),
        ]
        indexes = [models.Index(fields=["collection", "team"], name="answerrun_collection_team")]

    def __str__(self) -> str:
        """Return the tag."""
        return self.tag


class Answer(models.Model):
    """One topic's answer: its references (document ids) and its cited sentences."""

    answer_run = models.ForeignKey(AnswerRun, on_delete=models.CASCADE, related_name="answers")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="answers")
    references = models.JSONField(
        default=list, help_text="Document ids (external), in the order citations index them."
    )
    sentences = models.JSONField(
        default=list, help_text='[{"text": ..., "citations": [reference indices]}], in order.'
    )
    length = models.PositiveIntegerField(default=0, help_text="Words in the answer.")

    class Meta:
        ordering = ["answer_run", "query"]
        constraints = [
            models.UniqueConstraint(fields=["answer_run", "query"], name="answer_unique_query"),
        ]
        indexes = [models.Index(fields=["query"], name="answer_query")]

    def __str__(self) -> str:
        """Return ``run tag: query id``."""
        return f"{self.answer_run_id}: {self.query_id}"
