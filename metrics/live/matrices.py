"""Bytes of the score store as arrays, and means from sums (pure; no Django).

The score columns and the scoreboard (:mod:`metrics.live.store`) keep their matrices as
little-endian bytes: run ids as int64, values and sums as float64, counts as int64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

F8 = np.dtype("<f8")
I8 = np.dtype("<i8")


def ids(raw: Any) -> np.ndarray:
    """Return stored run ids (bytes or a memoryview; empty for None) as int64."""
    return np.frombuffer(bytes(raw or b""), dtype=I8).astype(np.int64)


def matrix(raw: Any, rows: int, cols: int, dtype: np.dtype) -> np.ndarray:
    """Return a stored ``rows`` × ``cols`` matrix in native byte order.

    Bytes of another size (written for other measures) give zeros: nothing usable.
    """
    data = np.frombuffer(bytes(raw or b""), dtype=dtype)
    native = dtype.newbyteorder("=")
    if data.size != rows * cols:
        return np.zeros((rows, cols), dtype=native)
    return data.reshape(rows, cols).astype(native)


def means(
    names: list[str], run_ids: np.ndarray, sums: np.ndarray, counts: np.ndarray
) -> dict[int, dict[str, float | None]]:
    """Return each run's mean per measure: sum / count, None where the count is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        quotient = sums / counts
    out: dict[int, dict[str, float | None]] = {}
    for i, run_id in enumerate(run_ids.tolist()):
        row, counted = quotient[i].tolist(), counts[i].tolist()
        out[run_id] = {name: (row[j] if counted[j] else None) for j, name in enumerate(names)}
    return out
