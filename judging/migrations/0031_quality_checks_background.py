"""Canary and version checks run in the background: status, error, times and tokens.

Both models now share an abstract base (``judging.quality.models.QualityCheck``). The
checks made before ran inside the request and always ended with their results, so they
become *done* (``status`` is added with that default for existing rows only; new checks
start *queued*), finished when created; a version check's tokens are the sum of its
results'; a canary check's ``queries`` is the number of queries its canaries name.
These tables carry no trigger, so SQLite's table rebuild for a NOT NULL column keeps
everything (the migration test checks the rows, their results and the foreign keys).
"""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import Count, F, Sum

STATUS_CHOICES = [
    ("queued", "Queued"),
    ("running", "Running"),
    ("done", "Done"),
    ("failed", "Failed"),
]


def fill_existing(apps, schema_editor):
    """Date the checks made before, sum version checks' tokens, count canary queries."""
    CanaryCheck = apps.get_model("judging", "CanaryCheck")
    VersionCheck = apps.get_model("judging", "VersionCheck")
    CanaryCheck.objects.update(started_at=F("created_at"), finished_at=F("created_at"))
    VersionCheck.objects.update(started_at=F("created_at"), finished_at=F("created_at"))
    for check in CanaryCheck.objects.annotate(n=Count("results__qid", distinct=True)):
        if check.n:
            CanaryCheck.objects.filter(pk=check.pk).update(queries=check.n)
    for check in VersionCheck.objects.annotate(
        p=Sum("results__prompt_tokens"), c=Sum("results__completion_tokens")
    ):
        VersionCheck.objects.filter(pk=check.pk).update(
            prompt_tokens=check.p or 0, completion_tokens=check.c or 0
        )


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0030_evidence_spans"),
    ]

    operations = [
        *(
            operation
            for model in ("canarycheck", "versioncheck")
            for operation in (
                migrations.AddField(
                    model_name=model,
                    name="status",
                    field=models.CharField(
                        choices=STATUS_CHOICES,
                        default="done",
                        help_text="Where it is.",
                        max_length=10,
                    ),
                    preserve_default=False,
                ),
                migrations.AlterField(
                    model_name=model,
                    name="status",
                    field=models.CharField(
                        choices=STATUS_CHOICES,
                        default="queued",
                        help_text="Where it is.",
                        max_length=10,
                    ),
                ),
                migrations.AddField(
                    model_name=model,
                    name="error",
                    field=models.TextField(blank=True, help_text="Why the check failed, if it did."),
                ),
                migrations.AddField(
                    model_name=model,
                    name="prompt_tokens",
                    field=models.PositiveBigIntegerField(
                        default=0, help_text="Prompt tokens the judge's answers reported."
                    ),
                ),
                migrations.AddField(
                    model_name=model,
                    name="completion_tokens",
                    field=models.PositiveBigIntegerField(
                        default=0, help_text="Completion tokens the judge's answers reported."
                    ),
                ),
                migrations.AddField(
                    model_name=model,
                    name="started_at",
                    field=models.DateTimeField(
                        blank=True, help_text="When a worker took it.", null=True
                    ),
                ),
                migrations.AddField(
                    model_name=model,
                    name="finished_at",
                    field=models.DateTimeField(blank=True, help_text="When it ended.", null=True),
                ),
                migrations.AlterField(
                    model_name=model,
                    name="collection",
                    field=models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="%(class)ss",
                        to="judging.collection",
                    ),
                ),
            )
        ),
        migrations.AddField(
            model_name="canarycheck",
            name="queries",
            field=models.PositiveSmallIntegerField(
                default=5,
                help_text="Queries (the collection's first, by id) canaries were made for.",
            ),
        ),
        migrations.RunPython(fill_existing, migrations.RunPython.noop),
    ]
