"""PostgreSQL: check the references of judgments, events and live grades once per statement.

A foreign key checks each written row with its own trigger call, deferred to COMMIT:
a bulk import paid twelve lookups per imported label (judgment, history event, live
grade), and those calls were the largest single cost of importing millions of labels.
Here the references of those three tables (collection, query, document, judge; an
event's judgment and actor) are checked instead by statement-level triggers with
transition tables, a few joins over every row a statement wrote, together with the "same
collection" rule of 0002/0012:

- a written row must name existing rows, its query and document in its own collection
  (``judging_references_rows``). It first takes ``FOR KEY SHARE`` on the collections,
  judges and users it names, as a foreign key would on its referenced row;
- deleting a row that such a row still names is refused (``judging_referenced_rows``);
  deleting queries, documents or judgments first takes ``FOR UPDATE`` on their
  collections, which waits for (and then sees) any writer holding ``FOR KEY SHARE``, so
  no concurrent insert can slip past the check;
- the ids of the referenced tables cannot change (``judging_key_fixed``).

An event's judgment and actor (SET NULL on delete: Django empties them before deleting the
row) are checked the same way. The model state gets ``db_constraint=False``. SQLite keeps
its foreign keys (checked in process, cheaply) and 0002's row triggers; nothing changes
there. Going back restores the foreign keys and 0012's triggers.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

#: Stands for the user model's table (``settings.AUTH_USER_MODEL``), found when migrating.
USERS = "<users>"
#: (table, referenced table, column) of every reference this migration checks per statement.
REFERENCES = (
    ("judging_judgment", "judging_collection", "collection_id"),
    ("judging_judgment", "judging_judge", "judge_id"),
    ("judging_judgment", "judging_query", "query_id"),
    ("judging_judgment", "judging_document", "document_id"),
    ("judging_judgmentevent", "judging_collection", "collection_id"),
    ("judging_judgmentevent", "judging_judge", "judge_id"),
    ("judging_judgmentevent", USERS, "actor_id"),
    ("judging_judgmentevent", "judging_query", "query_id"),
    ("judging_judgmentevent", "judging_document", "document_id"),
    ("judging_judgmentevent", "judging_judgment", "judgment_id"),
    ("judging_livegrade", "judging_collection", "collection_id"),
    ("judging_livegrade", "judging_query", "query_id"),
    ("judging_livegrade", "judging_document", "document_id"),
)
#: Referenced tables whose rows a statement names few of: the trigger locks and counts
#: them. Queries and documents (many) are checked by anti-joins, an event's judgment by
#: its own anti-join (judging_references_rows).
FEW = ("judging_collection", "judging_judge", USERS)
CHILDREN = ("judging_judgment", "judging_judgmentevent", "judging_livegrade")
#: 0012's same-collection triggers, which the new check includes (pool entries keep theirs).
SAME_COLLECTION = ("judging_judgment", "judging_judgmentevent")

CHILD_FUNCTION = """
CREATE OR REPLACE FUNCTION judging_references_rows() RETURNS trigger AS $$
DECLARE
    wanted bigint[];
    found bigint;
    i integer;
BEGIN
    -- The few rows a statement names in its arguments' (column, table) pairs (collections,
    -- judges, users): lock them as a foreign key would, so a deleter waits for this writer.
    FOR i IN 0 .. TG_NARGS / 2 - 1 LOOP
        EXECUTE format(
            'SELECT array_agg(v) FROM (SELECT DISTINCT %1$I AS v FROM written'
            ' WHERE %1$I IS NOT NULL) w', TG_ARGV[2 * i]
        ) INTO wanted;
        EXECUTE format(
            'SELECT count(*) FROM (SELECT 1 FROM %I WHERE id = ANY($1) FOR KEY SHARE) x',
            TG_ARGV[2 * i + 1]
        ) INTO found USING wanted;
        IF found <> coalesce(cardinality(wanted), 0) THEN
            RAISE EXCEPTION '%: a row''s % names no row of %',
                TG_TABLE_NAME, TG_ARGV[2 * i], TG_ARGV[2 * i + 1]
                USING ERRCODE = 'foreign_key_violation';
        END IF;
    END LOOP;
    -- After the locks, in a new snapshot: every query and document exists, in its collection.
    -- (Written as anti-joins: half the time of outer joins over a large statement.)
    IF EXISTS (
        SELECT 1 FROM written n
        WHERE NOT EXISTS (
            SELECT 1 FROM judging_query q
            WHERE q.id = n.query_id AND q.collection_id = n.collection_id
        ) OR NOT EXISTS (
            SELECT 1 FROM judging_document d
            WHERE d.id = n.document_id AND d.collection_id = n.collection_id
        )
    ) THEN
        RAISE EXCEPTION 'query and document must exist and belong to the row''s collection'
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    -- An event's judgment (empty once deleted) exists: judgments are written and deleted
    -- under their collection's lock, which the loop above took.
    -- (A separate IF: only the events' transition table has that column.)
    IF TG_TABLE_NAME = 'judging_judgmentevent' THEN
        IF EXISTS (
            SELECT 1 FROM written n
            WHERE n.judgment_id IS NOT NULL
              AND NOT EXISTS (SELECT 1 FROM judging_judgment j WHERE j.id = n.judgment_id)
        ) THEN
            RAISE EXCEPTION 'judging_judgmentevent: a row names a judgment that does not exist'
                USING ERRCODE = 'foreign_key_violation';
        END IF;
    END IF;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

PARENT_FUNCTION = """
CREATE OR REPLACE FUNCTION judging_referenced_rows() RETURNS trigger AS $$
DECLARE
    column_name text := TG_ARGV[0];
    child text;
    named boolean;
BEGIN
    IF TG_TABLE_NAME IN ('judging_query', 'judging_document', 'judging_judgment') THEN
        -- Wait for writers of these collections (they hold FOR KEY SHARE), then look.
        PERFORM 1 FROM judging_collection
            WHERE id IN (SELECT DISTINCT collection_id FROM gone) FOR UPDATE;
    END IF;
    FOREACH child IN ARRAY TG_ARGV[1:] LOOP
        EXECUTE format(
            'SELECT EXISTS (SELECT 1 FROM %I c WHERE c.%I IN (SELECT id FROM gone))',
            child, column_name
        ) INTO named;
        IF named THEN
            RAISE EXCEPTION '%: a deleted row is still named by %', TG_TABLE_NAME, child
                USING ERRCODE = 'foreign_key_violation';
        END IF;
    END LOOP;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
"""

KEY_FUNCTION = """
CREATE OR REPLACE FUNCTION judging_key_fixed() RETURNS trigger AS $$
BEGIN
    IF NEW.id <> OLD.id THEN
        RAISE EXCEPTION '%: ids cannot change', TG_TABLE_NAME
            USING ERRCODE = 'foreign_key_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""


def _table(apps, name: str) -> str:
    """Return ``name``, or the user model's table for :data:`USERS`."""
    return apps.get_model(settings.AUTH_USER_MODEL)._meta.db_table if name == USERS else name


def _references(apps) -> list[tuple[str, str, str]]:
    """Return :data:`REFERENCES` with the user model's table in place of :data:`USERS`."""
    return [(table, _table(apps, referenced), column) for table, referenced, column in REFERENCES]


def _arguments(values) -> str:
    return ", ".join(f"'{value}'" for value in values)


def _foreign_keys(schema_editor, table: str, column: str) -> list[str]:
    """Return the names of the foreign-key constraints on ``column`` of ``table``."""
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        constraints = connection.introspection.get_constraints(cursor, table)
    return [
        name
        for name, info in constraints.items()
        if info["foreign_key"] and info["columns"] == [column]
    ]


def _runner(schema_editor):
    """Return a function running SQL as written (no parameters, so ``%`` stays ``%``)."""
    return lambda sql: schema_editor.execute(sql, None)


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    run = _runner(schema_editor)
    references = _references(apps)
    few = {_table(apps, name) for name in FEW}
    for table, _referenced, column in references:
        for name in _foreign_keys(schema_editor, table, column):
            run(f"ALTER TABLE {table} DROP CONSTRAINT {schema_editor.quote_name(name)}")
    for table in SAME_COLLECTION:
        for event in ("insert", "update"):
            run(f"DROP TRIGGER IF EXISTS {table}_same_collection_{event} ON {table}")
    run(CHILD_FUNCTION)
    run(PARENT_FUNCTION)
    run(KEY_FUNCTION)
    for table in CHILDREN:
        pairs = [(c, r) for t, r, c in references if t == table and r in few]
        arguments = _arguments(value for pair in pairs for value in pair)
        for event in ("INSERT", "UPDATE"):
            run(
                f"CREATE TRIGGER {table}_references_{event.lower()} AFTER {event} ON {table}"
                " REFERENCING NEW TABLE AS written FOR EACH STATEMENT"
                f" EXECUTE FUNCTION judging_references_rows({arguments})"
            )
    for parent in dict.fromkeys(r for _t, r, _c in references):
        children = [(t, c) for t, r, c in references if r == parent]
        arguments = _arguments([children[0][1], *(t for t, _c in children)])
        assert all(c == children[0][1] for _t, c in children)
        run(
            f"CREATE TRIGGER judging_{parent}_referenced AFTER DELETE ON {parent}"
            " REFERENCING OLD TABLE AS gone FOR EACH STATEMENT"
            f" EXECUTE FUNCTION judging_referenced_rows({arguments})"
        )
        run(
            f"CREATE TRIGGER judging_{parent}_key_fixed BEFORE UPDATE OF id ON {parent}"
            " FOR EACH ROW EXECUTE FUNCTION judging_key_fixed()"
        )


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor != "postgresql":
        return
    run = _runner(schema_editor)
    references = _references(apps)
    for parent in dict.fromkeys(r for _t, r, _c in references):
        run(f"DROP TRIGGER IF EXISTS judging_{parent}_referenced ON {parent}")
        run(f"DROP TRIGGER IF EXISTS judging_{parent}_key_fixed ON {parent}")
    for table in CHILDREN:
        for event in ("insert", "update"):
            run(f"DROP TRIGGER IF EXISTS {table}_references_{event} ON {table}")
    for name in ("judging_references_rows", "judging_referenced_rows", "judging_key_fixed"):
        run(f"DROP FUNCTION IF EXISTS {name}()")
    for table in SAME_COLLECTION:  # 0012's function is still there (pool entries use it)
        for event in ("INSERT", "UPDATE"):
            run(
                f"CREATE TRIGGER {table}_same_collection_{event.lower()} AFTER {event} ON {table}"
                " REFERENCING NEW TABLE AS written FOR EACH STATEMENT"
                " EXECUTE FUNCTION judging_same_collection_rows()"
            )
    for table, referenced, column in references:
        run(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_{column}_fk FOREIGN KEY ({column})"
            f" REFERENCES {referenced} (id) DEFERRABLE INITIALLY DEFERRED"
        )


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0014_drop_prefix_indexes"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forwards, backwards)],
            state_operations=[
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="actor",
                    field=models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        help_text="The user who made the change (empty for system changes).",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="judgment_events",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="judgment",
                    field=models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        help_text="Empty once the judgment itself is deleted; the event stays.",
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="events",
                        to="judging.judgment",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgment",
                    name="collection",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        help_text="Denormalised from the query; the database checks it matches both sides.",
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="judgments",
                        to="judging.collection",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgment",
                    name="document",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="judgments",
                        to="judging.document",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgment",
                    name="judge",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="judgments",
                        to="judging.judge",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgment",
                    name="query",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="judgments",
                        to="judging.query",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="collection",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="judging.collection",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="document",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="judging.document",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="judge",
                    field=models.ForeignKey(
                        blank=True,
                        db_constraint=False,
                        db_index=False,
                        help_text="Whose label changed; empty for an adjudication (the pair's, not a judge's).",
                        null=True,
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="events",
                        to="judging.judge",
                    ),
                ),
                migrations.AlterField(
                    model_name="judgmentevent",
                    name="query",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="events",
                        to="judging.query",
                    ),
                ),
                migrations.AlterField(
                    model_name="livegrade",
                    name="collection",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="live_grades",
                        to="judging.collection",
                    ),
                ),
                migrations.AlterField(
                    model_name="livegrade",
                    name="document",
                    field=models.ForeignKey(
                        db_constraint=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="live_grades",
                        to="judging.document",
                    ),
                ),
                migrations.AlterField(
                    model_name="livegrade",
                    name="query",
                    field=models.ForeignKey(
                        db_constraint=False,
                        db_index=False,
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="live_grades",
                        to="judging.query",
                    ),
                ),
            ],
        ),
    ]
