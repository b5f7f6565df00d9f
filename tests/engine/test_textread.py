"""The numpy reader of clean TREC text against Python's own parsing, byte for byte."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from metrics.engine import _strings as S
from metrics.engine import _textread, read_qrels, read_run


def _score_texts(rng: np.random.Generator, n: int) -> list[str]:
    """Return number tokens of every shape the reader meets (and floats parse)."""
    out = []
    for _ in range(n):
        kind = int(rng.integers(9))
        x = float(rng.normal() * 10.0 ** int(rng.integers(-6, 9)))
        if kind == 0:
            out.append(f"{x:.4f}")
        elif kind == 1:
            out.append(repr(x))  # up to 17 significant digits: the slow path
        elif kind == 2:
            out.append(f"{x:.17e}" if rng.random() < 0.5 else f"{x:E}")
        elif kind == 3:
            out.append(str(int(rng.integers(-(10**15), 10**15))))
        elif kind == 4:
            out.append(f"{abs(x):.{int(rng.integers(0, 9))}f}".lstrip("0") or "0")  # ".5"
        elif kind == 5:
            out.append("+" + f"{abs(x):.3f}")
        elif kind == 6:
            out.append(f"{int(rng.integers(0, 10**8))}.")  # "5."
        elif kind == 7:
            out.append("-0" if rng.random() < 0.5 else "0.000000000000000000001")
        else:
            out.append(f"0.{int(rng.integers(0, 10**8)):08d}{int(rng.integers(0, 10**7)):07d}")
    return out


def _docno(rng: np.random.Generator) -> str:
    n = int(rng.integers(1, 40))
    alphabet = np.frombuffer(b"abcXYZ0123456789-_.:/", np.uint8)
    return rng.choice(alphabet, n).tobytes().decode() + ("\u00e9" if rng.random() < 0.05 else "")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("block", [160, 997, 1 << 22])
def test_clean_run_matches_python_parsing(tmp_path, monkeypatch, seed, block):
    """Qids, docnos (1-40 bytes, UTF-8), every number shape, across block boundaries."""
    monkeypatch.setattr(_textread, "BLOCK", block)
    rng = np.random.default_rng(seed)
    lines, expect = [], []
    for q in range(int(rng.integers(1, 30))):
        qid = f"q{q}" if q % 3 else f"{q * 7919}"
        scores = _score_texts(rng, int(rng.integers(1, 40)))
        docs = list(dict.fromkeys(_docno(rng) for _ in scores))
        for rank, (doc, sc) in enumerate(zip(docs, scores, strict=False), 1):
            lines.append(f"{qid} Q0 {doc} {rank} {sc} tag-{seed}")
            expect.append((qid, doc, float(sc)))
    text = "\n".join(lines) + ("\n" if seed % 2 else "")  # the last newline is optional
    path = tmp_path / "run.txt"
    path.write_text(text, encoding="utf-8")
    parsed = _textread.read_clean(path, 6, 4)
    assert parsed is not None, "clean text must take the fast path"
    names, codes, words, values, last = parsed
    assert last == f"tag-{seed}".encode()
    assert np.array_equal(values, [e[2] for e in expect])  # the fast path's own values
    assert [names[c] for c in codes.tolist()] == [e[0].encode() for e in expect]
    assert [w.tobytes().rstrip(b"\0") for w in words] == [e[1].encode() for e in expect]
    run = read_run(path)
    assert run.tag == f"tag-{seed}"
    qids, docs, vals = run.to_arrays()
    assert qids == [e[0] for e in expect]
    assert docs == [e[1] for e in expect]
    got = np.asarray(vals)
    want = np.array([e[2] for e in expect])
    assert np.array_equal(got, want)  # exactly the doubles Python's float gives
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert [S.decode(n) for n in names] == list(dict.fromkeys(e[0] for e in expect))


def test_clean_qrels_match_python_parsing(tmp_path, monkeypatch):
    """Qrels: labels (integers, decimals, negatives) in the last column."""
    monkeypatch.setattr(_textread, "BLOCK", 4096)
    rng = np.random.default_rng(7)
    rows = [
        (f"{q}", f"D{d}", str(rng.choice(["0", "1", "2", "-1", "0.5", "3.25", "4"])))
        for q in range(50)
        for d in rng.permutation(200)[: int(rng.integers(1, 60))]
    ]
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{q} 0 {d} {lab}\n" for q, d, lab in rows))
    assert _textread.read_clean(path, 4, 3) is not None
    qrels = read_qrels(path)
    qids, docs, labels = qrels.to_arrays()
    assert sorted(zip(qids, docs, labels.tolist(), strict=True)) == sorted(
        (q, d, float(lab)) for q, d, lab in rows
    )


@pytest.mark.parametrize(
    "text",
    [
        "1 Q0 a 1 0.5 t\r\n",  # CR
        "1 Q0 a 1 0.5 t\n\n1 Q0 b 2 0.4 t\n",  # blank line
        "1  Q0 a 1 0.5 t\n",  # repeated blank
        " 1 Q0 a 1 0.5 t\n",  # leading blank
        "1\tQ0\ta\t1\t0.5\tt\n",  # tabs
        "# comment\n1 Q0 a 1 0.5 t\n",
        "1 Q0 a 1 0.5\n",  # five columns
        "1 Q0 a 1 1_0 t\n",  # Python's float accepts it, trec_eval does not
        "1 Q0 a 1 nan t\n",
        "1 Q0 a 1 1e999 t\n",
        "1 Q0 a 1 - t\n",
        "1 Q0 a\x00b 1 0.5 t\n",
        "",
    ],
)
def test_unclean_text_goes_to_the_general_reader(tmp_path, text):
    """Anything unusual is left to the general reader (which names the line)."""
    path = tmp_path / "run.txt"
    path.write_text(text)
    assert _textread.read_clean(path, 6, 4) is None


def test_evaluate_command_does_not_import_pyarrow(tmp_path):
    """Clean TREC files are read and evaluated without importing pyarrow (~47 MiB)."""
    qrels = tmp_path / "qrels"
    qrels.write_text("1 0 a 1\n1 0 b 0\n")
    run = tmp_path / "run"
    run.write_text("1 Q0 a 1 0.5 t\n1 Q0 b 2 0.7 t\n")
    code = (
        "import sys; from metrics.engine import cli; "
        f"cli.main(['-m', 'P.1', {str(qrels)!r}, {str(run)!r}]); "
        "print('pyarrow' in sys.modules)"
    )
    repo = Path(__file__).resolve().parents[2]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo
    )
    assert out.stdout.split() == ["P_1", "all", "0.0000", "False"]


def test_uneven_lines_keep_no_slack(tmp_path, monkeypatch):
    """Short lines first, long ones after: the row estimate is too high and is trimmed."""
    monkeypatch.setattr(_textread, "BLOCK", 4096)
    short = [f"1 Q0 d{i} {i} 1 t" for i in range(400)]
    long_ = [f"2 Q0 {'x' * 30}{i} {i} 0.{i:015d} {'t' * 40}" for i in range(400)]
    path = tmp_path / "run.txt"
    path.write_text("\n".join(short + long_) + "\n")
    parsed = _textread.read_clean(path, 6, 4, threads=False)
    assert parsed is not None
    _names, codes, words, values, _last = parsed
    assert len(codes) == len(values) == len(words) == 800
    assert codes.base is None or len(codes.base) <= 800 * 1.1 + 1024
    assert values[-1] == float(f"0.{399:015d}")
