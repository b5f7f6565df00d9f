"""Compress stored rankings with lz4 instead of pglz (PostgreSQL 14+ built with lz4).

A W1 submission writes 1,000 rankings of 8 KB. pglz spent about 180 ms of server time
compressing them (216 ms for the COPY against 36 ms with lz4), and every first judgment
of a query decompresses 100 of them. lz4 stores them about 28 % larger (4.0 KB against
3.1 KB for W1's document ids). Rows already stored keep their compression until
rewritten. A server without lz4 support keeps pglz: the change is tried in a savepoint
and skipped when refused.
"""

from django.db import migrations

from metrics.migrations._compression import compression_operation

COLUMNS = {"metrics_runquery": ["ranking"]}


class Migration(migrations.Migration):
    dependencies = [("metrics", "0005_runquery_version_help")]

    operations = [compression_operation(COLUMNS)]
