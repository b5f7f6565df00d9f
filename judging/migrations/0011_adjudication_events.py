"""Adjudication events belong to the pair, not to the adjudicator's own judge.

They were stored under the adjudicator's judge, so they appeared in that coordinator's own
label history. ``JudgmentEvent.judge`` is now empty for them (and only for them: a check
constraint), existing rows are moved, and the pair's history still lists them.

On SQLite, making the column nullable rebuilds the table, which drops the same-collection
triggers of 0002: they are created again at the end.
"""

import importlib

import django.db.models.deletion
from django.db import migrations, models

TABLE = "judging_judgmentevent"


def detach(apps, schema_editor):
    JudgmentEvent = apps.get_model("judging", "JudgmentEvent")
    JudgmentEvent.objects.filter(channel="adjudication").update(judge=None)


def attach(apps, schema_editor):
    JudgmentEvent = apps.get_model("judging", "JudgmentEvent")
    Judge = apps.get_model("judging", "Judge")
    for event in JudgmentEvent.objects.filter(judge__isnull=True).select_related("actor"):
        judge, _ = Judge.objects.get_or_create(
            user=event.actor, defaults={"kind": "human", "name": event.actor.username}
        )
        event.judge = judge
        event.save(update_fields=["judge"])


def sqlite_triggers(apps, schema_editor):
    if schema_editor.connection.vendor != "sqlite":
        return
    same = importlib.import_module("judging.migrations.0002_same_collection_triggers")
    for event in ("INSERT", "UPDATE"):
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {TABLE}_same_collection_{event.lower()}")
        schema_editor.execute(same._sqlite_trigger(TABLE, event))


class Migration(migrations.Migration):
    dependencies = [("judging", "0010_llm_providers")]

    operations = [
        migrations.AlterField(
            model_name="judgmentevent",
            name="judge",
            field=models.ForeignKey(
                blank=True,
                help_text="Whose label changed; empty for an adjudication (the pair's, not a "
                "judge's).",
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="events",
                to="judging.judge",
            ),
        ),
        migrations.RunPython(detach, attach),
        migrations.AddConstraint(
            model_name="judgmentevent",
            constraint=models.CheckConstraint(
                condition=models.Q(("channel", "adjudication"), ("judge__isnull", True))
                | models.Q(
                    models.Q(("channel", "adjudication"), _negated=True),
                    ("judge__isnull", False),
                ),
                name="event_judge_unless_adjudication",
                violation_error_message="Only adjudication events have no judge.",
            ),
        ),
        migrations.RunPython(sqlite_triggers, migrations.RunPython.noop),
    ]
