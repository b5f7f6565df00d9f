"""Document ids as real collections write them (issue 36): exact, and memory bounded.

Every id style of the benchmark (``benchmarks/ids.py``: numbers, TREC, MS MARCO v2,
ClueWeb, URLs up to 200 characters) and URLs with the odd bytes they carry are
evaluated exactly as the C trec_eval 10.0 does, with every reader; long ids of
different lengths are held packed (``RaggedWords``), fixed-width ones as the plain
matrix.  And evaluating the same run many times in one call keeps the process at one
run's working set (its peak RSS measured in a subprocess, no timing).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from benchmarks.ids import STYLES
from metrics.engine import _creader, evaluate, read_qrels, read_run
from metrics.engine import _strings as S
from metrics.engine.errors import EngineInputError
from tests.engine.test_trec_eval_diff import MEASURES, assert_same

REPO = Path(__file__).resolve().parents[2]
needs_c = pytest.mark.skipif(not _creader.AVAILABLE, reason="C reader not built")

# URLs with what URLs hold: percent escapes, quotes, brackets, '#', raw UTF-8 (é, an
# ideograph, a no-break space as bytes), long paths; prefixes of one another, and ids
# that differ only in their last byte or only past the first 8, 64 or 128 bytes.
_ODD = [
    "https://example.org/a?b=c&d=e#frag",
    "https://example.org/a?b=c&d=e#frag2",
    "https://example.org/a?b=c&d=e",
    "http://xn--caf-dma.example/caf\u00e9/%C3%A9t%C3%A9",
    "https://example.org/(x)/[y]/{z}/'q'/\"r\"/<s>/|t|/^u^/`v`/~w~/!x!/*y*/@z@/$/;/,",
    "https://example.org/\u6f22\u5b57/\u00a0/\u2028",
    "ftp://a.b/" + "p" * 190,
    "ftp://a.b/" + "p" * 189 + "q",
    "https://e.org/" + "x" * 50 + "A",
    "https://e.org/" + "x" * 50 + "B",
    "https://e.org/" + "y" * 114 + "/1",
    "https://e.org/" + "y" * 114 + "/2",
    "#not-a-comment-inside-a-line",
    "a",
    "ab",
    "abcdefgh",
    "abcdefghi",
]


def _collection(names: list[str], seed: int) -> tuple[str, str]:
    """Return (qrels, run) over ``names`` with graded judgments, ties and unjudged docs."""
    rng = np.random.default_rng(seed)
    q_lines, r_lines = [], []
    for q in range(12):
        pick = rng.permutation(len(names))[: max(3, len(names) * 3 // 4)]
        for i in pick[: len(pick) * 2 // 3]:
            q_lines.append(f"q{q} 0 {names[i]} {int(rng.choice([-1, 0, 0, 1, 2, 3, 4]))}")
        for rank, i in enumerate(rng.permutation(pick), 1):
            score = float(rng.integers(0, 4)) / 4 if q % 2 else float(rng.normal())
            r_lines.append(f"q{q} Q0 {names[i]} {rank} {score!r} tag")
    return "\n".join(q_lines) + "\n", "\n".join(r_lines) + "\n"


def _style_names(style: str) -> list[str]:
    """Return 40 ids of a benchmark style, from documents spread over W1's range."""
    fn = STYLES[style]
    return [fn(n) for n in np.linspace(0, 2_499_999, 40).astype(int).tolist()]


@pytest.mark.parametrize("style", [*STYLES, "odd-urls"])
def test_id_styles_match_trec_eval(trec_eval_bin, tmp_path, style):
    """Every id style gives trec_eval's values, per query and all, on every measure."""
    names = _ODD if style == "odd-urls" else _style_names(style)
    assert len(set(names)) == len(names)
    qrels_text, run_text = _collection(names, seed=len(style))
    qrels, run = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels.write_bytes(qrels_text.encode())
    run.write_bytes(run_text.encode())
    for flags in ([], ["-c"], ["-c", "-J", "-l", "2"]):
        assert_same(trec_eval_bin, flags, MEASURES, qrels, run)


@needs_c
@pytest.mark.parametrize("style", [*STYLES, "odd-urls"])
def test_every_reader_gives_the_same_run_and_scores(tmp_path, style):
    """C (packed or not), numpy and Arrow readers: same docnos, same scores, same ties."""
    names = _ODD if style == "odd-urls" else _style_names(style)
    qrels_text, run_text = _collection(names, seed=7)
    path = tmp_path / "run.txt"
    path.write_bytes(run_text.encode())
    qrels = read_qrels(qrels_text.encode(), reader="arrow")
    runs = {
        "c": read_run(path, reader="c"),
        "numpy": read_run(path, reader="numpy"),
        "arrow": read_run(path, reader="arrow"),
        "bytes": read_run(run_text.encode(), reader="c"),
    }
    want = runs["numpy"]
    # packed where the rows' own words (and 4-byte starts) take <= 3/4 of the padding
    n, width = want.words.shape
    own = sum(-(-len(d) // 8) for d in want.docno_bytes())
    packed = isinstance(runs["c"].words, S.RaggedWords)
    assert packed == (4 * (8 * own + 4 * (n + 1)) <= 3 * 8 * n * width)
    if style in ("url", "odd-urls"):
        assert packed
    if style in ("numeric", "clueweb09", "clueweb22", "msmarco-passage", "trec"):
        assert not packed
    want = runs["numpy"]
    for reader, run in runs.items():
        assert run.docno_bytes() == want.docno_bytes(), reader
        assert run.docnos.to_pylist() == want.docnos.to_pylist(), reader
        assert [run.docno(i) for i in range(len(run))] == [want.docno(i) for i in range(len(run))]
        assert np.array_equal(run.ranking()[0], want.ranking()[0]), reader
        got = evaluate(qrels, run, ["ndcg_cut.10", "map", "bpref", "P.5"])
        ref = evaluate(qrels, want, ["ndcg_cut.10", "map", "bpref", "P.5"])
        assert got.to_dict(per_query=True) == ref.to_dict(per_query=True), reader


@needs_c
def test_packed_docnos_find_duplicates_and_labels(tmp_path):
    """A repeated long URL is refused; URLs equal in their first 64 bytes stay apart."""
    base = "https://e.org/" + "z" * 60
    short = "".join(f"1 Q0 s{i} {i + 3} {0.1 / (i + 1)!r} t\n" for i in range(8))
    text = f"1 Q0 {base}/a 1 2 t\n1 Q0 {base}/b 2 1 t\n{short}1 Q0 {base}/a 4 0 t\n"
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    with pytest.raises(EngineInputError, match=r"repeated for query 1 \(first on line 1\)"):
        read_run(path)
    path.write_bytes(text.encode().rsplit(b"\n", 2)[0] + b"\n")
    run = read_run(path)
    assert isinstance(run.words, S.RaggedWords)
    qrels = read_qrels(f"1 0 {base}/b 3\n1 0 {base}/a 0\n1 0 s0 1\n".encode())
    result = evaluate(qrels, run, ["ndcg_cut.3", "recip_rank"])
    assert result.to_dict(per_query=True)["recip_rank"]["1"] == 0.5


_PEAK_SCRIPT = """
import sys
from metrics.engine import cli
code = cli.main(sys.argv[1:])
for line in open("/proc/self/status"):
    if line.startswith("VmHWM:"):
        print(int(line.split()[1]), file=sys.stderr)
sys.exit(code)
"""


def _peak_kib(qrels: Path, runs: list[Path], processes: int) -> int:
    """Return the peak RSS (VmHWM, KiB) of a fresh ``evaluate`` process over ``runs``."""
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            _PEAK_SCRIPT,
            "-j",
            str(processes),
            "-m",
            "map",
            str(qrels),
            *map(str, runs),
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    return int(proc.stderr.strip().splitlines()[-1])


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_memory_does_not_grow_with_the_number_of_runs(tmp_path):
    """Twelve runs in one call peak within a fraction of one run's working set.

    The run has 200,000 lines with 30-80 byte URL-like docnos (about 14 MiB of arrays
    once read, and twice that while it is read); were each run's arrays kept, twelve
    would add well over 100 MiB.  Runs are read and evaluated one after another
    (``-j 1``), the same file each time (a fresh read each time).
    """
    rng = np.random.default_rng(36)
    n_q, depth = 200, 1000
    docs = [f"https://example.org/{i}/" + "p" * int(rng.integers(10, 60)) for i in range(5000)]
    lines, q_lines = [], []
    for q in range(n_q):
        pick = rng.choice(len(docs), depth, replace=False)
        lines += [f"{q} Q0 {docs[d]} {r} {depth - r} t" for r, d in enumerate(pick, 1)]
        q_lines += [f"{q} 0 {docs[d]} {int(rng.integers(0, 3))}" for d in pick[:100]]
    run, qrels = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run.write_text("\n".join(lines) + "\n")
    qrels.write_text("\n".join(q_lines) + "\n")
    one = _peak_kib(qrels, [run], 1)
    two = _peak_kib(qrels, [run] * 2, 1)
    twelve = _peak_kib(qrels, [run] * 12, 1)
    working_set = 14 * 1024  # KiB: the run's arrays, a lower bound of its working set
    # measured: +0.2 MiB from one to twelve runs (without the fixed mmap threshold, glibc
    # kept freed arrays in its heap: +11 MiB, +6 MiB from two to twelve)
    assert twelve - one < working_set // 2, (one, two, twelve)
    assert twelve - two < working_set // 4, (one, two, twelve)


def test_packed_rows_without_the_extension(monkeypatch):
    """Packed rows hash, compare and gather the same in numpy alone (no C extension)."""
    docs = [b"a", b"https://e.org/" + b"q" * 70, b"abcdefgh", b"abcdefghi", b"x" * 200]
    dense = S.words_from_list(docs)
    own = np.maximum((dense != 0).sum(axis=1), 1)
    starts = np.zeros(len(docs) + 1, np.uint32)
    np.cumsum(own, out=starts[1:])
    flat = np.concatenate([dense[i, : own[i]] for i in range(len(docs))])
    packed = S.RaggedWords(flat, starts, dense.shape[1])
    with_c = packed.hashes()
    monkeypatch.setattr(S, "_ctrec_module", lambda: None)
    assert np.array_equal(packed.hashes(), S.hash_words(dense))
    assert np.array_equal(with_c, S.hash_words(dense)) or not _creader.AVAILABLE
    assert np.array_equal(packed[:], dense) and packed.row_bytes() == docs
    rows = np.array([4, 0, 2])
    assert S.same_words(packed, rows, dense, rows).all()
    assert not S.same_words(packed, rows, dense, np.roll(rows, 1)).any()
