"""Score visibility per collection and a record of submissions (issue 32, grade inference).

``ScoreVisibility`` holds what teams see of scores before the judgments are published
and their runs per day; no row means the defaults (hidden, 5 a day). ``Submission``
records every accepted run and survives its deletion, so deleted runs stay counted.
"""

import django.db.models.deletion
import metrics.visibility.models
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0020_llm_job_chunks"),
        ("metrics", "0013_scores_lz4"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="ScoreVisibility",
            fields=[
                (
                    "collection",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="score_visibility",
                        serialize=False,
                        to="judging.collection",
                    ),
                ),
                (
                    "mode",
                    models.CharField(
                        choices=[
                            ("hidden", "Hidden: teams see no score until the grades are published"),
                            (
                                "aggregate",
                                "Aggregate: rounded means over enough queries, nothing per query",
                            ),
                            (
                                "split",
                                "Public/private split: means on a public share of the queries",
                            ),
                        ],
                        default="hidden",
                        help_text="What teams see of scores until the judgment list is published (coordinators always see every score).",
                        max_length=10,
                    ),
                ),
                (
                    "min_queries",
                    models.PositiveIntegerField(
                        default=25,
                        help_text="Aggregate mode: a run shows a mean only when it ranks documents for at least this many queries of the live judgment list.",
                    ),
                ),
                (
                    "public_share",
                    models.FloatField(
                        default=0.5,
                        help_text="Split mode: the share of queries (0 to 1) whose scores teams see before publication; the final board uses the other queries.",
                    ),
                ),
                (
                    "split_seed",
                    models.BigIntegerField(
                        default=metrics.visibility.models.new_split_seed,
                        help_text="Split mode: seed of the public/private split (random, never shown to teams).",
                    ),
                ),
                (
                    "runs_per_day",
                    models.PositiveIntegerField(
                        default=5,
                        help_text="Runs a team may submit in any 24 hours; deleted runs still count. 0 stops team submissions.",
                    ),
                ),
                ("updated_at", models.DateTimeField(auto_now=True)),
            ],
            options={
                "verbose_name_plural": "score visibilities",
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(("public_share__gte", 0.0), ("public_share__lte", 1.0)),
                        name="score_visibility_share_0_1",
                    ),
                    models.CheckConstraint(
                        condition=models.Q(("min_queries__gte", 1)),
                        name="score_visibility_min_queries_1",
                    ),
                ],
            },
        ),
        migrations.CreateModel(
            name="Submission",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "tag",
                    models.CharField(help_text="The run's tag when submitted.", max_length=100),
                ),
                ("submitted_at", models.DateTimeField(help_text="When it was accepted.")),
                (
                    "counted",
                    models.BooleanField(
                        default=True,
                        help_text="Whether it counts against the team's budget (a coordinator's does not, nor one made without a user by a command or script).",
                    ),
                ),
                (
                    "collection",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to="judging.collection",
                    ),
                ),
                (
                    "run",
                    models.ForeignKey(
                        blank=True,
                        help_text="The run while it exists; null once deleted.",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="metrics.run",
                    ),
                ),
                (
                    "submitted_by",
                    models.ForeignKey(
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "team",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="submissions",
                        to="metrics.team",
                    ),
                ),
            ],
            options={
                "indexes": [
                    models.Index(fields=["team", "submitted_at"], name="submission_team_at")
                ],
            },
        ),
    ]
