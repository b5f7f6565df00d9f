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


def _columns(apps):
    """Yield the (table, column) of every field in :data:`DROPPED`."""
    for model_name, field_name in DROPPED:
        model = apps.get_model("judging", model_name)
        yield model._meta.db_table, model._meta.get_field(field_name).column


def forwards(apps, schema_editor):
    for table, column in _columns(apps):
        for name in _single_column_indexes(schema_editor, table, column):
            schema_editor.execute(f"DROP INDEX {schema_editor.quote_name(name)}")


def backwards(apps, schema_editor):
    quote = schema_editor.quote_name
    for table, column in _columns(apps):
        if not _single_column_indexes(schema_editor, table, column):
            name = quote(f"{table}_{column}_idx")
            schema_editor.execute(f"CREATE INDEX {name} ON {quote(table)} ({quote(column)})")


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
