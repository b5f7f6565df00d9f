"""Database triggers: a judgment's and a pool entry's query and document share its collection.

A CHECK constraint cannot look at other tables, so the rule is enforced by a trigger on
PostgreSQL and SQLite (the services check it too, with a friendlier message).
"""

from django.db import migrations

TABLES = ("judging_judgment", "judging_poolentry", "judging_judgmentevent")

PG_FUNCTION = """
CREATE OR REPLACE FUNCTION judging_same_collection() RETURNS trigger AS $$
BEGIN
    IF (SELECT collection_id FROM judging_query WHERE id = NEW.query_id) <> NEW.collection_id
       OR (SELECT collection_id FROM judging_document WHERE id = NEW.document_id)
          <> NEW.collection_id THEN
        RAISE EXCEPTION 'query and document must belong to the judgment''s collection'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def _sqlite_trigger(table: str, event: str) -> str:
    return f"""
CREATE TRIGGER {table}_same_collection_{event.lower()}
BEFORE {event} ON {table}
WHEN (SELECT collection_id FROM judging_query WHERE id = NEW.query_id) <> NEW.collection_id
  OR (SELECT collection_id FROM judging_document WHERE id = NEW.document_id) <> NEW.collection_id
BEGIN
    SELECT RAISE(ABORT, 'query and document must belong to the judgment''s collection');
END;
"""


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_FUNCTION)
        for table in TABLES:
            schema_editor.execute(
                f"CREATE TRIGGER {table}_same_collection BEFORE INSERT OR UPDATE ON {table} "
                "FOR EACH ROW EXECUTE FUNCTION judging_same_collection();"
            )
    elif vendor == "sqlite":
        for table in TABLES:
            for event in ("INSERT", "UPDATE"):
                schema_editor.execute(_sqlite_trigger(table, event))


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        for table in TABLES:
            schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_same_collection ON {table};")
        schema_editor.execute("DROP FUNCTION IF EXISTS judging_same_collection();")
    elif vendor == "sqlite":
        for table in TABLES:
            for event in ("insert", "update"):
                schema_editor.execute(f"DROP TRIGGER IF EXISTS {table}_same_collection_{event};")


class Migration(migrations.Migration):
    dependencies = [("judging", "0001_initial")]
    operations = [migrations.RunPython(forwards, backwards)]
