"""Raw reads of the scoring services (no model instances).

Rescoring reads a query's stored rankings and the live list; building model instances
and compiling querysets cost more than the database's own work. The raw ``fetch`` and
``execute`` they use live in :mod:`judging.db`, beside the bulk helpers of judging.
"""

from __future__ import annotations

import numpy as np

from judging.db import fetch_columns


def live_grade_columns(
    table: str, collection_id: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """Return a collection's whole live list as columns (query, document, grade, abstain).

    PostgreSQL only (``None`` elsewhere; :func:`judging.db.fetch_columns`): 200,000 live
    grades arrive without a Python tuple per row. Sorted by query, then document; NaN
    where no abstention probability is recorded.
    """
    columns = fetch_columns(
        fields=[
            ("query_id", "i"),
            ("document_id", "i"),
            ("grade", "f"),
            ("COALESCE(abstain_probability, 'NaN')", "f"),
        ],
        source=f"FROM {table} WHERE collection_id = %s",
        params=[collection_id],
        order_by=["query_id", "document_id"],
    )
    return None if columns is None else tuple(columns)  # type: ignore[return-value]
