"""Prepared rankings label the same with and without the C extension (no database)."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.engine import _creader
from metrics.live import rescore as live_rescore
from metrics.models import RANKING_DTYPE


def _rankings(rng, rows: int, universe: int) -> tuple[list[bytes], list[int]]:
    lengths = [int(rng.integers(0, 40)) for _ in range(rows)]
    rankings = [
        (rng.permutation(universe)[:n] + 1000).astype(RANKING_DTYPE).tobytes() for n in lengths
    ]
    return rankings, lengths


@pytest.mark.skipif(not _creader.AVAILABLE, reason=f"C extension {_creader.WHY_NOT}")
@pytest.mark.parametrize("seed", range(5))
def test_c_and_numpy_preparations_give_the_same_labels(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    rankings, lengths = _rankings(rng, rows=30, universe=60)
    key, run_ids = (1, 7), list(range(len(rankings)))
    with_c = live_rescore.prepare(key, run_ids, rankings, lengths)
    monkeypatch.setattr(_creader, "AVAILABLE", False)
    without = live_rescore.prepare(key, run_ids, rankings, lengths)
    assert with_c.inverse is None and without.inverse is not None
    np.testing.assert_array_equal(with_c.docs, without.docs)
    ids = np.sort(rng.choice(60, 25, replace=False) + 1000).astype(np.int64)
    grades = rng.integers(0, 5, len(ids)).astype(np.float64)
    for width in (1, 5, with_c.docs.shape[1]):
        got = with_c.labels(width, ids, grades)
        np.testing.assert_array_equal(got, without.labels(width, ids, grades))
        assert got.shape == (30, width)
    # Padding and unjudged documents are NaN; a judged document at rank r has its grade.
    full = with_c.labels(with_c.docs.shape[1], ids, grades)
    for i, ranking in enumerate(rankings):
        docs = np.frombuffer(ranking, dtype=RANKING_DTYPE)
        assert np.isnan(full[i, len(docs) :]).all()
        for r, d in enumerate(docs):
            j = np.searchsorted(ids, d)
            expected = grades[j] if j < len(ids) and ids[j] == d else np.nan
            np.testing.assert_equal(full[i, r], expected)
