"""Give every run row a page of its own (PostgreSQL), so per-judgment updates stay HOT.

Each judgment rewrites every run's means and version. At fillfactor 50 a page holds four
or five of these ~800-byte rows; a burst of judgments filled the pages faster than
PostgreSQL pruned them, about a quarter of the updates became non-HOT, and every index
of the table grew a new entry per update (measured: 21 index entries per run after 40
judgments, and a 100-row update reading 7,500 buffers). At fillfactor 10 a page keeps
room for about nine versions of its row and is pruned on every visit. The table holds one
row per submitted run, so the extra space is small (8 KiB per run).
"""

from django.db import migrations


def set_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE metrics_run SET (fillfactor = 10)")


def reset_fillfactor(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ALTER TABLE metrics_run SET (fillfactor = 50)")


class Migration(migrations.Migration):
    dependencies = [("metrics", "0003_live_speed")]

    operations = [migrations.RunPython(set_fillfactor, reset_fillfactor, elidable=False)]
