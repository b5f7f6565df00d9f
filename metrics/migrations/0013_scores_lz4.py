"""Compress the live score columns and the scoreboard with lz4 instead of pglz.

A submission appends its run to every query's row of scores: PostgreSQL decompresses,
concatenates and compresses each again, so the submission's cost grew with the stored
runs. With 600 runs' worth of scores in 1,000 rows (40 KB each), that append took
350 ms with pglz and 18-32 ms with lz4 (2-core EPYC, PostgreSQL 15); every judgment's
rescoring reads and writes its query's row too. Rows keep their old compression until
next written (the next submission writes them all). A server without lz4 keeps pglz.
"""

from django.db import migrations

from metrics.migrations._compression import compression_operation

COLUMNS = {
    "metrics_queryscores": ["run_ids", "values"],
    "metrics_scoreboard": ["run_ids", "sums", "counts"],
}


class Migration(migrations.Migration):
    dependencies = [("metrics", "0012_rankings_int32")]

    operations = [compression_operation(COLUMNS)]
