"""The ``reader=`` choice for clean TREC files: C, numpy or Arrow, same result either way."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from metrics.engine import _creader, evaluate, io, read_qrels, read_run
from metrics.engine.errors import EngineInputError
from tests.engine.test_textread import _docno, _score_texts


def _write_run(path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    lines = []
    for q in range(25):
        qid = f"q{q}" if q % 3 else f"{q * 7919}"
        scores = _score_texts(rng, int(rng.integers(1, 60)))
        docs = list(dict.fromkeys(_docno(rng) for _ in scores))
        for rank, (doc, sc) in enumerate(zip(docs, scores, strict=False), 1):
            lines.append(f"{qid} Q0 {doc} {rank} {sc} tag{seed}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _same(a, b) -> None:
    assert a.qids == b.qids
    np.testing.assert_array_equal(a.qcode, b.qcode)
    assert a.docno_bytes() == b.docno_bytes()
    np.testing.assert_array_equal(a.values.view(np.uint64), b.values.view(np.uint64))


@pytest.mark.parametrize("seed", range(4))
def test_numpy_and_arrow_readers_agree(tmp_path, seed):
    """Qids, codes, docnos, bit-identical scores, tag, ranking and measures agree."""
    path = tmp_path / "run.txt"
    _write_run(path, seed)
    a = read_run(path, reader="numpy")
    b = read_run(path, reader="arrow")
    _same(a, b)
    if _creader.AVAILABLE:
        _same(a, read_run(path, reader="c"))
    assert a.tag == b.tag == f"tag{seed}"
    for x, y in zip(a.ranking(), b.ranking(), strict=True):
        np.testing.assert_array_equal(x, y)
    qrels = tmp_path / "qrels.txt"
    codes, docs = a.qcode[::3].tolist(), a.docno_bytes()[::3]
    picked = [(a.qids[c], d) for c, d in zip(codes, docs, strict=True)]
    qrels.write_text(
        "".join(f"{q} 0 {d.decode()} {i % 4}\n" for i, (q, d) in enumerate(picked)),
        encoding="utf-8",
    )
    qa, qb = read_qrels(qrels, reader="numpy"), read_qrels(qrels, reader="arrow")
    _same(qa, qb)
    if _creader.AVAILABLE:
        _same(qa, read_qrels(qrels, reader="c"))
    measures = ["ndcg_cut.10", "map", "P.5"]
    assert evaluate(qa, a, measures).means == evaluate(qb, b, measures).means


def test_reader_choice_routes_files(tmp_path, monkeypatch):
    """``c``/``numpy`` use their own reader, ``arrow`` neither; ``auto``: C if built.

    (The Arrow reader is the fallback of the other two, so it needs no spy.)
    """
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.25 t\n")
    calls: list[str] = []
    real = io._read_clean

    def spy(path, label, kind, reader="numpy", **kwargs):
        calls.append(reader)
        return real(path, label, kind, reader, **kwargs)

    monkeypatch.setattr(io, "_read_clean", spy)
    read_run(path, reader="numpy")
    assert calls == ["numpy"]
    read_run(path, reader="arrow")
    assert calls == ["numpy"]
    import pyarrow  # noqa: F401  (what the web app has done before any upload)

    if _creader.AVAILABLE:
        read_run(path, reader="c")
        read_run(path)  # auto: the C reader, even with pyarrow imported
        assert calls == ["numpy", "c", "c"]
        calls.clear()
        monkeypatch.setattr(_creader, "AVAILABLE", False)  # as if not compiled
    else:
        calls.clear()
    read_run(path)  # auto, pyarrow imported: Arrow's reader
    assert calls == []
    monkeypatch.delitem(sys.modules, "pyarrow")
    read_run(path)  # auto, pyarrow not imported: the numpy reader
    assert calls == ["numpy"]


def test_unknown_reader_is_rejected(tmp_path):
    """A misspelt reader is a ValueError naming the choices, not a silent default."""
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 0.5 t\n")
    with pytest.raises(ValueError, match="'auto', 'c', 'numpy' or 'arrow'"):
        read_run(path, reader="polars")  # type: ignore[arg-type]


def test_arrow_reader_reports_errors_by_line(tmp_path):
    """Errors are the same whichever reader is asked for (both fall back alike)."""
    path = tmp_path / "run.txt"
    path.write_text("1 Q0 a 1 0.5 t\n1 Q0 a 2 0.25 t\n")
    messages = []
    readers = ("c", "numpy", "arrow") if _creader.AVAILABLE else ("numpy", "arrow")
    for reader in readers:
        with pytest.raises(EngineInputError) as info:
            read_run(path, reader=reader)
        messages.append(str(info.value))
    assert len(set(messages)) == 1
    assert "run.txt:2: docno a repeated for query 1 (first on line 1)" in messages[0]
