"""Store rankings as int32 document ids (were int64): half the bytes to read.

The first judgment of a query in a process reads every run's ranking of the query; with
300 W1 runs that is 2.4 MB as int64, and reading it was most of that judgment's cost
(docs/benchmarks.md, 2026-11-26). Existing rankings are rewritten in batches; the
migration stops, changing nothing, if a stored document id does not fit in int32.
"""

import numpy as np
from django.db import migrations, models

BATCH = 2000
INT32_MAX = int(np.iinfo(np.int32).max)


def _convert(apps, source: str, target: str) -> None:
    RunQuery = apps.get_model("metrics", "RunQuery")
    rows = RunQuery.objects.exclude(ranking=b"").only("id", "ranking").order_by("id")
    batch = []
    for row in rows.iterator(chunk_size=BATCH):
        ids = np.frombuffer(bytes(row.ranking), dtype=source)
        if target == "<i4" and len(ids) and (int(ids.max()) > INT32_MAX or int(ids.min()) < 0):
            raise RuntimeError(
                f"ranking {row.id} holds a document id above {INT32_MAX}: rankings cannot "
                "be stored as int32 in this database"
            )
        row.ranking = ids.astype(target).tobytes()
        batch.append(row)
        if len(batch) == BATCH:
            RunQuery.objects.bulk_update(batch, ["ranking"])
            batch = []
    if batch:
        RunQuery.objects.bulk_update(batch, ["ranking"])


def to_int32(apps, schema_editor):
    _convert(apps, "<i8", "<i4")


def to_int64(apps, schema_editor):
    _convert(apps, "<i4", "<i8")


class Migration(migrations.Migration):
    dependencies = [("metrics", "0011_live_score_store")]

    operations = [
        migrations.AlterField(
            model_name="runquery",
            name="ranking",
            field=models.BinaryField(
                help_text="Document primary keys in rank order, little-endian int32 bytes."
            ),
        ),
        migrations.RunPython(to_int32, to_int64, elidable=False),
    ]
