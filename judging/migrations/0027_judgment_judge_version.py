"""Judgment.judge_version: the LLM judge version that gave a label.

Nullable, so that SQLite adds the column in place: a column with a default would rebuild
the judgments table, dropping its same-collection triggers and its foreign keys.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0026_canary_checks"),
    ]

    operations = [
        migrations.AddField(
            model_name="judgment",
            name="judge_version",
            field=models.CharField(
                blank=True,
                null=True,
                help_text="LLM labels: the version of the judge's configuration that gave the "
                "label (judging.llm.judges.judge_version); empty for human labels.",
                max_length=80,
            ),
        ),
    ]
