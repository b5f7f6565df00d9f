"""Drop six foreign-key indexes that another index of the same table starts with.

Every index costs each written row an insertion, and a bulk import writes millions of
judgments, history events and live grades. A single-column index on a foreign key is
redundant where a composite index begins with that column: lookups and cascades by that
column use the composite one. Dropped (covered by):

- judgment.collection_id (``judgment_pair``), judgment.judge_id (``judgment_unique_current``);
- judgmentevent.collection_id (``event_pair``), judgmentevent.judge_id (``event_judge_time``);
- livegrade.collection_id (``live_grade_query``), livegrade.query_id
  (``live_grade_unique_pair``).

The state gets ``db_index=False``; the database drops the index by introspection rather
than through ``AlterField``, because SQLite would rebuild each table for it and lose the
same-collection triggers of migration 0002.
"""

import django.db.models.deletion
from django.db import migrations, models

DROPPED = (
    ("judgment", "collection"),
    ("judgment", "judge"),
    ("judgmentevent", "collection"),
    ("judgmentevent", "judge"),
    ("livegrade", "collection"),
    ("livegrade", "query"),
)


def _single_column_indexes(schema_editor, table: str, column: str) -> list[str]:
    """Return the names of the plain (not unique, not primary) indexes on ``column`` alone."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, info in constraints.items()
        if info["index"]
        and not info["unique"]
        and not info["primary_key"]
        and info["columns"] == [column]
    ]


def forwards(apps, schema_editor):
    for model_name, field_name in DROPPED:
        model = apps.get_model("judging", model_name)
        field = model._meta.get_field(field_name)
        table = model._meta.db_table
        for name in _single_column_indexes(schema_editor, table, field.column):
            schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def backwards(apps, schema_editor):
    for model_name, field_name in DROPPED:
        model = apps.get_model("judging", model_name)
        field = model._meta.get_field(field_name)
        table = model._meta.db_table
        if _single_column_indexes(schema_editor, table, field.column):
            continue
        name = schema_editor.quote_name(f"{table}_{field.column}_idx")
        column = schema_editor.quote_name(field.column)
        schema_editor.execute(
            f"CREATE INDEX {name} ON {schema_editor.quote_name(table)} ({column})"
        )


class Migration(migrations.Migration):
    dependencies = [("judging", "0013_file_imports")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.AlterField(
                    model_name="judgment",
                    name="collection",
                    field=models.ForeignKey(
                        db_index=False,
                        help_text="Denormalised from the query; the database checks it matches both sides.",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="judgments",
                        to="judging.collection",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgment",
                    name="judge",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="judgments",
                        to="judging.judge",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="collection",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="judging.collection",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="judge",
                    field=models.ForeignKey(
                        blank=True,
                        db_index=False,
                        help_text="Whose label changed; empty for an adjudication (the pair's, not a judge's).",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="judging.judge",
                    ),
                ),
                migrations.AlterField(
                    model_name="livegrade",
                    name="collection",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="live_grades",
                        to="judging.collection",
                    ),
                ),
                migrations.AlterField(
                    model_name="livegrade",
                    name="query",
                    field=models.ForeignKey(
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="live_grades",
                        to="judging.query",
                    ),
                ),
            ],
        ),
    ]
