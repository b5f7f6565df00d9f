"""What teams may see of scores before the grades are published, and their submission budget.

Scores are made of grades: a team that reads its runs' per-query scores can read the
unpublished grades off them (five single-document runs for one query score in the ratio
of the documents' grades). :class:`ScoreVisibility` is a collection's choice of what
teams see until the judgment list is published (coordinators always see everything),
and how many runs a team may submit per day; :class:`Submission` records every accepted
submission, and outlives the run, so that deleting runs does not refill the budget.
See docs/security.md, "Grade inference from scores".
"""

from __future__ import annotations

import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q

from judging.models import Collection


def new_split_seed() -> int:
    """Return a random seed for a collection's public/private split of its queries."""
    return secrets.randbelow(2**62)


class ScoreVisibility(models.Model):
    """A collection's rules for the scores teams see before its grades are published.

    No row means the defaults of the collection's purpose: live scores and no daily limit
    for an internal evaluation, hidden scores and five runs per team per day for a shared
    task (:func:`metrics.visibility.selectors.rules`).
    """

    class Mode(models.TextChoices):
        LIVE = "live", "Live: teams see every score as judgments arrive (internal evaluation)"
        HIDDEN = "hidden", "Hidden: teams see no score until the grades are published"
        AGGREGATE = "aggregate", "Aggregate: rounded means over enough queries, nothing per query"
        SPLIT = "split", "Public/private split: means on a public share of the queries"

    collection = models.OneToOneField(
        Collection, primary_key=True, on_delete=models.CASCADE, related_name="score_visibility"
    )
    mode = models.CharField(
        max_length=10,
        choices=Mode.choices,
        default=Mode.HIDDEN,
        help_text="What teams see of scores until the judgment list is published "
        "(coordinators always see every score).",
    )
    min_queries = models.PositiveIntegerField(
        default=25,
        help_text="Aggregate mode: a run shows a mean only when it ranks documents for at "
        "least this many queries of the live judgment list.",
    )
    public_share = models.FloatField(
        default=0.5,
        help_text="Split mode: the share of queries (0 to 1) whose scores teams see before "
        "publication; the final board uses the other queries.",
    )
    split_seed = models.BigIntegerField(
        default=new_split_seed,
        help_text="Split mode: seed of the public/private split (random, never shown to teams).",
    )
    runs_per_day = models.PositiveIntegerField(
        null=True,
        blank=True,
        default=5,
        help_text="Runs a team may submit in any 24 hours; deleted runs still count. "
        "0 stops team submissions; null: no daily limit.",
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "score visibilities"
        constraints = [
            models.CheckConstraint(
                condition=Q(public_share__gte=0.0) & Q(public_share__lte=1.0),
                name="score_visibility_share_0_1",
            ),
            models.CheckConstraint(
                condition=Q(min_queries__gte=1), name="score_visibility_min_queries_1"
            ),
        ]

    def __str__(self) -> str:
        """Return ``collection: mode``."""
        return f"{self.collection_id}: {self.mode}"


class Submission(models.Model):
    """One accepted run submission, kept when the run is deleted (the budget counts it)."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+")
    team = models.ForeignKey("metrics.Team", on_delete=models.CASCADE, related_name="submissions")
    run = models.ForeignKey(
        "metrics.Run",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="The run while it exists; null once deleted.",
    )
    tag = models.CharField(max_length=100, help_text="The run's tag when submitted.")
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    submitted_at = models.DateTimeField(db_index=False, help_text="When it was accepted.")
    counted = models.BooleanField(
        default=True,
        help_text="Whether it counts against the team's budget (a coordinator's does not, "
        "nor one made without a user by a command or script).",
    )

    class Meta:
        indexes = [
            models.Index(fields=["team", "submitted_at"], name="submission_team_at"),
        ]

    def __str__(self) -> str:
        """Return ``team: tag at time``."""
        return f"{self.team_id}: {self.tag} at {self.submitted_at:%Y-%m-%d %H:%M}"
