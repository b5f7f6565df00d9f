"""Metrics data model: teams, submitted runs, their stored rankings and scores.

A run's ranking is stored per query as a compact array of document ids (not one row per
run line), so rescoring one query across every run reads one small row per run. Every
score records the judgment-list version it was computed against.
"""

from __future__ import annotations

import numpy as np
from django.conf import settings
from django.db import models

from judging.models import Collection, Query

RANKING_DTYPE = np.dtype("<i8")


def run_upload_path(run: Run, filename: str) -> str:
    """Return where the original run file is kept."""
    return f"runs/{run.collection.slug}/{run.tag}/{filename}"


class Team(models.Model):
    """A group of users who submit runs to one collection."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="teams")
    name = models.CharField(max_length=200, help_text="Team name shown on the leaderboard.")
    members = models.ManyToManyField(
        settings.AUTH_USER_MODEL, related_name="teams", blank=True, help_text="Who may submit."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "name"], name="team_unique_name"),
        ]

    def __str__(self) -> str:
        """Return the team's name."""
        return self.name


class Run(models.Model):
    """One submitted ranking of a collection's queries."""

    class Status(models.TextChoices):
        SCORED = "scored", "Scored"
        PENDING = "pending", "Scoring"

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="runs")
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="runs")
    tag = models.CharField(
        max_length=100, help_text="Run name; unique within the collection (re-use is refused)."
    )
    description = models.TextField(blank=True, help_text="How the run was produced.")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="runs"
    )
    submitted_at = models.DateTimeField(auto_now_add=True)
    source_file = models.FileField(
        upload_to=run_upload_path, max_length=500, help_text="The file as submitted."
    )
    source_format = models.CharField(max_length=10, default="trec", help_text="trec or json.")
    query_count = models.PositiveIntegerField(default=0, help_text="Queries the run ranks.")
    line_count = models.PositiveIntegerField(default=0, help_text="Ranked lines in the file.")
    unknown_document_count = models.PositiveIntegerField(
        default=0, help_text="Distinct documents of the run that the collection did not know."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    scores = models.JSONField(
        default=dict, blank=True, help_text="Mean score per measure (canonical names)."
    )
    score_sums = models.JSONField(
        default=dict,
        blank=True,
        help_text="Per measure: [sum of per-query values, queries left out]; keeps means exact.",
    )
    scored_version = models.PositiveBigIntegerField(
        default=0, help_text="Judgment-list version the scores were computed against."
    )
    scored_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-submitted_at"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "tag"], name="run_unique_tag"),
        ]
        indexes = [models.Index(fields=["collection", "team"], name="run_collection_team")]

    def __str__(self) -> str:
        """Return the run tag."""
        return self.tag


class RunQuery(models.Model):
    """One query's ranking in a run, stored as an array of document ids, and its scores."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="rankings")
    query = models.ForeignKey(Query, on_delete=models.CASCADE, related_name="run_rankings")
    ranking = models.BinaryField(
        help_text="Document primary keys in rank order, little-endian int64 bytes."
    )
    retrieved = models.PositiveIntegerField(
        help_text="Documents the run retrieved for the query; 0 for a query of the live "
        "list that the run left out (it scores as an empty ranking)."
    )
    scores = models.JSONField(
        default=dict, blank=True, help_text="Per-measure value for this query (null = skipped)."
    )
    version = models.PositiveBigIntegerField(
        default=0,
        help_text="Judgment-list version these scores were last written at (rescoring that "
        "leaves them unchanged does not rewrite them); they are current up to the run's "
        "scored_version.",
    )

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "query"], name="run_query_unique"),
        ]
        indexes = [models.Index(fields=["query", "run"], name="run_query_by_query")]

    def __str__(self) -> str:
        """Return ``run/query``."""
        return f"{self.run_id}/{self.query_id}"

    @property
    def document_ids(self) -> np.ndarray:
        """Return the ranked document ids as an int64 array."""
        return np.frombuffer(bytes(self.ranking), dtype=RANKING_DTYPE)


class DocnoIndexToken(models.Model):
    """The current token of a collection's persisted docno index (``metrics.live.docno_index``).

    A random value, replaced whenever a document's id may have changed or a document was
    deleted (``post_save`` of an existing document, ``post_delete``). Index files carry the
    token they were built under, so every process sees at once that they are stale. New
    documents need no new token: the index misses them and the lookup falls back to
    ``external_id IN (...)``, which is exact.
    """

    collection = models.OneToOneField(
        Collection, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    token = models.BigIntegerField(help_text="Random; names the valid index files.")

    def __str__(self) -> str:
        """Return ``collection: token``."""
        return f"{self.collection_id}: {self.token:x}"


from metrics.pool.models import PoolingPolicy  # noqa: E402, F401  (pooling policy versions)
