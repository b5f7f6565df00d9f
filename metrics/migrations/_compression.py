"""Set PostgreSQL's TOAST compression of columns (14+ built with lz4), for migrations.

Rows already stored keep their compression until rewritten. A server that refuses the
method (compiled without lz4) keeps its default: each change is tried in a savepoint.
The module's name starts with an underscore, so Django's migration loader skips it.
"""

from django.db import DatabaseError, migrations, transaction


def set_compression(schema_editor, columns: dict[str, list[str]], method: str) -> None:
    """Set ``method`` (``lz4`` or ``pglz``) on ``columns`` (table -> column names)."""
    connection = schema_editor.connection
    if connection.vendor != "postgresql" or connection.pg_version < 140000:
        return
    quote = connection.ops.quote_name
    for table, names in columns.items():
        changes = ", ".join(f"ALTER COLUMN {quote(n)} SET COMPRESSION {method}" for n in names)
        try:
            with transaction.atomic(using=connection.alias):
                schema_editor.execute(f"ALTER TABLE {quote(table)} {changes}")
        except DatabaseError:  # compiled without lz4: keep the default
            pass


def compression_operation(columns: dict[str, list[str]]) -> migrations.RunPython:
    """Return the operation that moves ``columns`` to lz4 (and back to pglz when reversed)."""

    def to_lz4(apps, schema_editor):
        set_compression(schema_editor, columns, "lz4")

    def to_pglz(apps, schema_editor):
        set_compression(schema_editor, columns, "pglz")

    return migrations.RunPython(to_lz4, to_pglz, elidable=False)
