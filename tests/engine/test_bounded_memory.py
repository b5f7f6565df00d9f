"""The engine evaluates long runs in bounded pieces; the pieces change no value.

``manage.py evaluate`` labels a run's cells block by block (``evaluation._CELL_BUDGET``
padded cells at a time) and looks each block's documents up in slices
(``io._LOOKUP_SLICE`` probes), with a binary search for few probes and a hash of
buckets for many. Real files need a million lines before more than one block or slice
is used; here the limits are made tiny so that small files cross every boundary, and the
values must equal those of the undivided path and of the C trec_eval.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metrics.engine import evaluation
from metrics.engine import io as engine_io
from tests.engine.test_trec_eval_diff import MEASURES, assert_same, run_engine


def write_campaign(tmp_path: Path, *, seed: int, unjudged_query: bool = True) -> tuple[Path, Path]:
    """Write qrels and a run with uneven ranking lengths, ties, unjudged documents and gaps."""
    rng = np.random.default_rng(seed)
    qrels, run = [], []
    for q in range(1, 31):
        judged = rng.choice(400, size=int(rng.integers(1, 60)), replace=False)
        for d in judged.tolist():
            qrels.append(f"{q} 0 doc{d:04d} {int(rng.integers(-1, 5))}")
        if q % 7 == 0:
            continue  # judged, not retrieved
        length = int(rng.integers(1, 250))
        docs = rng.choice(400, size=length, replace=False)
        scores = np.round(rng.normal(size=length), 1)  # rounded: many ties
        for d, s in zip(docs.tolist(), scores.tolist(), strict=True):
            run.append(f"{q} Q0 doc{d:04d} 0 {s} tagged")
    for d in range(5 if unjudged_query else 0):  # a query retrieved, never judged
        run.append(f"99 Q0 doc{d:04d} 0 {d} tagged")
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("\n".join(qrels) + "\n")
    run_path.write_text("\n".join(run) + "\n")
    return qrels_path, run_path


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("flags", [[], ["-c"], ["-c", "-J", "-M", "40"]])
def test_tiny_blocks_and_slices_change_no_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, flags: list[str]
) -> None:
    """Evaluate in blocks of 64 cells and slices of 7 probes; every value stays the same."""
    qrels, run = write_campaign(tmp_path, seed=seed)
    whole = run_engine(flags, MEASURES, qrels, run)
    assert len(whole) > 500  # per-query values of every measure, not an empty result
    monkeypatch.setattr(evaluation, "_CELL_BUDGET", 64)
    monkeypatch.setattr(engine_io, "_LOOKUP_SLICE", 7)
    pieces = run_engine(flags, MEASURES, qrels, run)
    assert pieces.keys() == whole.keys()
    for key, value in whole.items():
        assert pieces[key] == pytest.approx(value, abs=1e-12, nan_ok=True), key


def test_lookup_slices_agree_for_search_and_buckets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Look every cell up in slices, by binary search and by buckets: the same labels."""
    qrels_path, run_path = write_campaign(tmp_path, seed=3)
    qrels = engine_io.read_qrels(qrels_path)
    run = engine_io.read_run(run_path)
    order, _starts, _counts = run.ranking()
    rows = np.asarray(order, dtype=np.intp)
    probe_q = np.array([qrels.index.get(run.qids[c], -1) for c in run.qcode[rows].tolist()])
    expected = np.full(len(rows), np.nan)
    pairs = dict(zip(zip(*qrels.to_arrays()[:2], strict=True), qrels.values.tolist(), strict=True))
    for i, r in enumerate(rows.tolist()):
        key = (run.qids[run.qcode[r]], run.docno(r))
        expected[i] = pairs.get(key, np.nan)
    assert np.isfinite(expected).sum() > 100  # many judged cells, many unjudged
    assert np.isnan(expected).sum() > 100
    for slice_size in (5, 1 << 16):
        monkeypatch.setattr(engine_io, "_LOOKUP_SLICE", slice_size)
        many = qrels.lookup(probe_q, run, rows)  # more probes than keys: buckets
        few = np.concatenate(  # a handful each: binary search
            [qrels.lookup(probe_q[a : a + 3], run, rows[a : a + 3]) for a in range(0, len(rows), 3)]
        )
        np.testing.assert_array_equal(many, expected)
        np.testing.assert_array_equal(few, expected)


# -c: trec_eval 10.0 without it exits on a judged query the run lacks (this file has some)
@pytest.mark.parametrize("flags", [["-c"], ["-c", "-l", "2"], ["-c", "-J", "-M", "40"]])
def test_tiny_blocks_and_slices_agree_with_trec_eval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, trec_eval_bin: Path, flags: list[str]
) -> None:
    """With blocks and slices far smaller than the file, values still equal trec_eval's."""
    qrels, run = write_campaign(tmp_path, seed=4, unjudged_query=False)  # trec_eval refuses it
    monkeypatch.setattr(evaluation, "_CELL_BUDGET", 100)
    monkeypatch.setattr(engine_io, "_LOOKUP_SLICE", 11)
    ours = assert_same(trec_eval_bin, flags, MEASURES, qrels, run)
    assert ours[("num_q", "all")] >= 25
