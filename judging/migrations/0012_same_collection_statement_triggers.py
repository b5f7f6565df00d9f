"""PostgreSQL: check "query and document share the row's collection" once per statement.

0002's row-level trigger ran two index lookups in PL/pgSQL for every written row, which a
bulk import of millions of judgments (and as many history events) pays millions of times.
Statement-level triggers with transition tables check all the rows a statement wrote with
one join, so the rule holds exactly as before for every writer, at a fraction of the cost
for bulk writes. SQLite has no statement-level triggers and keeps 0002's.
"""

import importlib

from django.db import migrations

TABLES = ("judging_judgment", "judging_poolentry", "judging_judgmentevent")

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION judging_same_collection_rows() RETURNS trigger AS $$
BEGIN
    IF EXISTS (
        SELECT 1 FROM written n
        LEFT JOIN judging_query q ON q.id = n.query_id
        LEFT JOIN judging_document d ON d.id = n.document_id
        WHERE q.collection_id <> n.collection_id OR d.collection_id <> n.collection_id
    ) THEN
        RAISE EXCEPTION 'query and document must belong to the judgment''s collection'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

# Going back re-creates 0002's row-level triggers with 0002's own code.
row_triggers = importlib.import_module("judging.migrations.0002_same_collection_triggers")


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    schema_editor.execute(PG_FUNCTION)
    for table in TABLES:
        schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_same_collection ON {table};")
        for event in ("INSERT", "UPDATE"):
            schema_editor.execute(
                f"CREATE TRIGGER {table}_same_collection_{event.lower()} AFTER {event} ON {table}"
                " REFERENCING NEW TABLE AS written FOR EACH STATEMENT"
                " EXECUTE FUNCTION judging_same_collection_rows();"
            )
    schema_editor.execute("DROP FUNCTION IF EXISTS judging_same_collection();")


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    for table in TABLES:
        for event in ("insert", "update"):
            schema_editor.execute(
                f"DROP TRIGGER IF EXISTS {table}_same_collection_{event} ON {table};"
            )
    schema_editor.execute("DROP FUNCTION IF EXISTS judging_same_collection_rows();")
    row_triggers.forwards(apps, schema_editor)


class Migration(migrations.Migration):
    dependencies = [("judging", "0011_adjudication_events")]
    operations = [migrations.RunPython(forwards, backwards)]
