# PoolEntry.added_at: a default the services set once per batch, instead of auto_now_add
# (which stamps every row of a bulk insert with its own time). Only Django's state changes:
# the column is the same, so the database is left alone (on SQLite an AlterField would
# rebuild the table and drop the triggers of migration 0002).

import django.utils.timezone
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("judging", "0033_fileimport_heartbeat"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AlterField(
                    model_name="poolentry",
                    name="added_at",
                    field=models.DateTimeField(
                        default=django.utils.timezone.now,
                        editable=False,
                        help_text="When the pair entered the pool: one time for every pair "
                        "pooled together (a run's pairs, an import's, a coordinator's), gold "
                        "pairs that waited included.",
                    ),
                ),
            ],
            database_operations=[],
        ),
    ]
