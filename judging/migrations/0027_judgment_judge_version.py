"""Judgment.judge_version: the LLM judge version that gave a label.

On SQLite, adding a column with a default rebuilds the table, which drops its triggers;
the same-collection triggers of migration 0002 are put back (as 0011 does).
"""

import importlib

from django.db import migrations, models

TABLE = "judging_judgment"


def sqlite_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    same = importlib.import_module("judging.migrations.0002_same_collection_triggers")
    for event in ("INSERT", "UPDATE"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_same_collection_{event.lower()}")
        schema_editor.execute(same._sqlite_trigger(TABLE, event))


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
                default="",
                help_text="LLM labels: the version of the judge's configuration that gave the "
                "label (judging.llm.judges.judge_version); empty for human labels.",
                max_length=80,
            ),
        ),
        migrations.RunPython(sqlite_triggers, migrations.RunPython.noop),
    ]
