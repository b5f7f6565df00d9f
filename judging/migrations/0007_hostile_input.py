"""Widen query ids and docnos to 500 characters; assign LLM judges to collections.

Ids: 500 characters is the text policy's MAX_ID_LENGTH.

SQLite does not enforce a varchar length, and rebuilding the tables there would trip the
same-collection triggers of 0002, so only PostgreSQL's columns are altered (in place: a
wider varchar needs no table rewrite); the model state changes everywhere.
"""

from django.db import migrations, models

COLUMNS = (("judging_query", "external_id"), ("judging_document", "external_id"))


def widen(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for table, column in COLUMNS:
            schema_editor.execute(f"ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar(500)")


def narrow(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for (table, column), size in zip(COLUMNS, (100, 200)):
            schema_editor.execute(
                f"ALTER TABLE {table} ALTER COLUMN {column} TYPE varchar({size})"
            )


def assign_llm_judges(apps, schema_editor):
    """Assign every LLM judge to the collections it has judgments in."""
    Judge = apps.get_model("judging", "Judge")
    Judgment = apps.get_model("judging", "Judgment")
    for judge in Judge.objects.filter(kind="llm"):
        ids = set(
            Judgment.objects.filter(judge=judge).values_list("collection_id", flat=True).distinct()
        )
        judge.collections.add(*ids)


class Migration(migrations.Migration):
    dependencies = [("judging", "0006_adjudication")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(widen, narrow)],
            state_operations=[
                migrations.AlterField(
                    model_name="document",
                    name="external_id",
                    field=models.CharField(
                        help_text="Document id (docno) as in runs (at most 500 characters).",
                        max_length=500,
                    ),
                ),
                migrations.AlterField(
                    model_name="query",
                    name="external_id",
                    field=models.CharField(
                        help_text="Query id as in runs and qrels (at most 500 characters).",
                        max_length=500,
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="judge",
            name="collections",
            field=models.ManyToManyField(
                blank=True,
                help_text="Collections an LLM judge works for: only their coordinators see "
                "and use it.",
                related_name="llm_judges",
                to="judging.collection",
            ),
        ),
        migrations.RunPython(assign_llm_judges, migrations.RunPython.noop),
    ]
