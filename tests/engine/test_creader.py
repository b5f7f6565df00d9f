"""The C reader of clean TREC text against the numpy reader, Python's parsing and the slow path.

Whatever it accepts must be bit-identical to the numpy reader's result and to Python's
own ``split``/``float``; whatever it refuses (``None``) is left to the other readers.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import importlib
import mmap
import os
import string
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.engine import _creader, _textread, read_qrels, read_run
from metrics.engine import _strings as S
from metrics.engine.errors import EngineInputError

needs_c = pytest.mark.skipif(not _creader.AVAILABLE, reason=f"C reader {_creader.WHY_NOT}")


def test_c_extension_is_built():
    """A broken build must not pass unnoticed: only GRADED_NO_CEXT=1 excuses a missing module."""
    if os.environ.get("GRADED_NO_CEXT", "") not in ("", "0"):
        assert not _creader.AVAILABLE
        pytest.skip("GRADED_NO_CEXT is set: the C reader is deliberately off")
    module = importlib.import_module("metrics.engine._ctrec")  # ImportError = build broken
    assert _creader.AVAILABLE, _creader.WHY_NOT
    assert callable(module.parse)


# --------------------------------------------------------------------------- oracles
def _python_parse(data: bytes, ncols: int, vcol: int):
    """Parse text known to be clean with Python's split and float."""
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    rows = [line.split(b" ") for line in lines]
    assert all(len(r) == ncols for r in rows)
    qids = [r[0] for r in rows]
    return (
        list(dict.fromkeys(qids)),
        qids,
        [r[2] for r in rows],
        np.array([float(r[vcol]) for r in rows]),
        rows[-1][-1],
    )


def _assert_same_arrays(c, ref) -> None:
    """The C reader's result is bit-identical to another reader's (widths included)."""
    names, codes, words, values, last = c
    rnames, rcodes, rwords, rvalues, rlast = ref
    assert names == rnames
    assert codes.dtype == np.int32 and np.array_equal(codes, rcodes)
    assert words.dtype == np.uint64 and words.shape == rwords.shape
    assert np.array_equal(words, rwords)
    assert values.dtype == np.float64
    assert np.array_equal(values.view(np.uint64), rvalues.view(np.uint64))
    assert last == rlast


def _assert_same_packed(packed, dense) -> None:
    """``ragged=True`` gives the padded answer, its rows packed where that saves a quarter.

    Each packed row holds exactly its own ``ceil(len / 8)`` words; rows are packed when
    their words plus 4-byte starts take at most 3/4 of the padded matrix, else (one
    width, or nearly) the plain matrix comes back.
    """
    names, codes, words, values, last = packed
    _names, _codes, dwords, _values, _last = dense
    _assert_same_arrays((names, codes, dwords, values, last), dense)
    own = (dwords != 0).sum(axis=1)  # docnos hold no NUL: their words, then padding
    own = np.maximum(own, 1)
    n, width = dwords.shape
    assert isinstance(words, S.RaggedWords) == (
        4 * (8 * own.sum() + 4 * (n + 1)) <= 3 * 8 * n * width
    )
    if isinstance(words, S.RaggedWords):
        assert words.shape == dwords.shape and len(words) == len(dwords)
        assert words.starts.dtype == np.uint32 and int(words.starts[0]) == 0
        assert int(words.starts[-1]) == len(words.flat) == int(own.sum())
        assert np.array_equal(np.diff(words.starts.astype(np.int64)), own)
        assert np.array_equal(words[:], dwords)  # the padded matrix, rebuilt
        assert np.array_equal(words.hashes(), S.hash_words(dwords))  # in C
        assert np.array_equal(S.hash_range(words, 1, n - 1), S.hash_words(dwords[1 : n - 1]))
        rows = np.arange(len(dwords))[::-3]
        assert np.array_equal(words[rows], dwords[rows][:, : words[rows].shape[1]])
        assert all(words[int(i)].tobytes() == dwords[i, : own[i]].tobytes() for i in rows)
    else:
        assert np.array_equal(words, dwords)


def _assert_matches_python(c, data: bytes, ncols: int, vcol: int) -> None:
    names, codes, words, values, last = c
    pnames, qids, docs, pvalues, plast = _python_parse(data, ncols, vcol)
    assert names == pnames
    assert [names[i] for i in codes.tolist()] == qids
    assert [w.tobytes().rstrip(b"\0") for w in words] == docs
    assert words.shape[1] == max(1, -(-max(len(d) for d in docs) // 8))
    assert np.array_equal(values.view(np.uint64), pvalues.view(np.uint64))  # -0.0 too
    assert last == plast


@contextlib.contextmanager
def _guarded(data: bytes):
    """A memoryview of ``data`` ending where an unreadable page begins (Linux), else a slice.

    A read past the end of the buffer then crashes the test instead of passing unseen.
    """
    page = mmap.PAGESIZE
    size = -(-max(len(data), 1) // page) * page
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    if not sys.platform.startswith("linux"):
        yield memoryview(b"\x00junk\n" + data + b" 9 Q0 x 1 1 t\n")[6 : 6 + len(data)]
        return
    mm = mmap.mmap(-1, size + page)
    first = ctypes.c_char.from_buffer(mm)
    guard = ctypes.c_void_p(ctypes.addressof(first) + size)
    assert libc.mprotect(guard, page, 0) == 0  # PROT_NONE
    try:
        mm[size - len(data) : size] = data
        with memoryview(mm) as whole, whole[size - len(data) : size] as view:
            yield view
    finally:
        assert libc.mprotect(guard, page, mmap.PROT_READ | mmap.PROT_WRITE) == 0
        del first
        mm.close()


def _buffers(data: bytes):
    """The same bytes as ``bytes``, ``bytearray`` and a ``memoryview`` slice inside junk."""
    yield "bytes", data
    yield "bytearray", bytearray(data)
    yield "slice", memoryview(b"# x\t\x00\n" + data + b"\n9 Q0 x 1 1 t\n")[6 : 6 + len(data)]


def _check_buffers(path, data: bytes, ncols: int, vcol: int, threads, block, simd) -> None:
    """The buffer reader gives the path reader's answer (arrays or None) for every buffer."""
    opts = {"threads": threads, "block": block, "simd": simd}
    want = _creader.read_clean_c(path, ncols, vcol, **opts)
    with _guarded(data) as guarded:
        for kind, buf in [*_buffers(data), ("guarded", guarded)]:
            got = _creader.read_clean_c_buffer(buf, ncols, vcol, **opts)
            where = f"{kind} threads={threads} block={block} simd={simd}"
            assert (got is None) == (want is None), where
            if got is not None:
                _assert_same_arrays(got, want)
                packed = _creader.read_clean_c_buffer(buf, ncols, vcol, ragged=True, **opts)
                _assert_same_packed(packed, want)


def _check_file(path, data: bytes, ncols: int, vcol: int, *, clean: bool, configs) -> None:
    """Run every C configuration on ``path`` and ``data`` in memory: hold each to the oracles."""
    ref = _textread.read_clean(path, ncols, vcol)
    longest = max((len(x) for x in data.split(b"\n")), default=0)
    for threads, block, simd in configs:
        _check_buffers(path, data, ncols, vcol, threads, block, simd)
        got = _creader.read_clean_c(path, ncols, vcol, threads=threads, block=block, simd=simd)
        where = f"threads={threads} block={block} simd={simd}"
        if got is None:
            # refusing is allowed only for text the numpy reader refuses, or lines
            # longer than the block
            assert ref is None or longest + 1 >= block, where
            assert not (clean and longest + 1 < block), where
            continue
        assert ref is not None, f"C accepted text the numpy reader refuses ({where})"
        _assert_same_arrays(got, ref)
        _assert_matches_python(got, data, ncols, vcol)
        packed = _creader.read_clean_c(
            path, ncols, vcol, threads=threads, block=block, simd=simd, ragged=True
        )
        _assert_same_packed(packed, got)


CONFIGS = [(1, 1 << 18, True), (2, 1 << 18, True), (3, 97, True), (2, 64, False), (5, 251, True)]


# --------------------------------------------------------------------------- generators
def _number_tokens() -> st.SearchStrategy[str]:
    finite = st.floats(allow_nan=False, allow_infinity=False, width=64)
    return st.one_of(
        finite.map(repr),  # up to 17 significant digits, exponents
        finite.map(lambda x: f"{x:.4f}"),
        finite.map(lambda x: f"{x:e}"),
        finite.map(lambda x: f"{x:.17g}"),
        st.integers(-(10**18), 10**18).map(str),
        st.integers(0, 10**15).map(lambda i: f"0.{i:015d}"),  # 15 digits: the exact rule
        st.integers(0, 10**16).map(lambda i: f"0.{i:016d}"),  # 16: the general one
        st.integers(0, 10**17).map(lambda i: f"{i}"[:17] + ".5"),
        st.floats(0, 1).map(lambda x: repr(x + 1e-12)),  # near ties
        st.sampled_from(
            [
                "-0",
                "+0.5",
                ".5",
                "5.",
                "-.25",
                "1E5",
                "1e-400",
                "0.000000000000000000001",
                "00000000000000000000012.5",
                "9413.8125",
                "-9413.8125",
                "123456789012345.5",
                "1.0e+308",
                "4.9e-324",
            ]
        ),
    )


_ALPHABET = string.ascii_letters + string.digits + "-_.:/"


def _identifiers(max_size: int) -> st.SearchStrategy[str]:
    return st.text(st.sampled_from([*_ALPHABET, "é", "\u4e2d"]), min_size=1, max_size=max_size)


@st.composite
def _runs(draw) -> tuple[bytes, bool]:
    """A run file: mostly clean; sometimes one adversarial edit (then maybe not clean)."""
    qids = draw(st.lists(_identifiers(12), min_size=1, max_size=8, unique=True))
    lines = []
    for _ in range(draw(st.integers(1, 60))):
        qid = draw(st.sampled_from(qids))
        doc = draw(st.one_of(_identifiers(10), _identifiers(90)))
        score = draw(_number_tokens())
        tag = draw(_identifiers(6))
        lines.append(f"{qid} Q0 {doc} {draw(st.integers(0, 999))} {score} {tag}")
    text = "\n".join(lines) + draw(st.sampled_from(["\n", ""]))
    data = text.encode("utf-8")
    edit = draw(
        st.sampled_from(
            [
                "none",
                "none",
                "none",
                "tab",
                "double",
                "cr",
                "nul",
                "comment",
                "blank",
                "lead",
                "short",
                "long",
                "nan",
                "under",
                "exp999",
            ]
        )
    )
    if edit == "none":
        return data, True
    at = draw(st.integers(0, len(lines) - 1))
    line = lines[at]
    edited = {
        "tab": line.replace(" ", "\t", 1),
        "double": line.replace(" ", "  ", 1),
        "cr": line + "\r",
        "nul": line.replace("Q0", "Q\x000"),
        "comment": "#" + line,
        "blank": "\n" + line,
        "lead": " " + line,
        "short": line.rsplit(" ", 1)[0],
        "long": line + " extra",
        "nan": " ".join([*line.split(" ")[:4], "nan", line.split(" ")[5]]),
        "under": " ".join([*line.split(" ")[:4], "1_0", line.split(" ")[5]]),
        "exp999": " ".join([*line.split(" ")[:4], "1e999", line.split(" ")[5]]),
    }[edit]
    lines[at] = edited
    return ("\n".join(lines) + "\n").encode("utf-8"), False


# --------------------------------------------------------------------------- tests
@needs_c
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs())
def test_c_reader_matches_numpy_and_python(tmp_path_factory, case):
    """Generated runs (every number shape, long and UTF-8 docnos, one adversarial edit)."""
    data, clean = case
    path = tmp_path_factory.mktemp("c") / "run.txt"
    path.write_bytes(data)
    _check_file(path, data, 6, 4, clean=clean, configs=CONFIGS)


@needs_c
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_runs())
def test_read_run_is_the_same_with_every_reader(tmp_path_factory, case):
    """``read_run``: same run (or the same error message) whichever reader is asked for."""
    data, _clean = case
    path = tmp_path_factory.mktemp("r") / "run.txt"
    path.write_bytes(data)
    outcomes = []
    sources = [(path, "c"), (path, "numpy"), (path, "arrow"), (data, "arrow")]
    sources += [(buf, "c") for _kind, buf in _buffers(data)]
    for source, reader in sources:
        try:
            run = read_run(source, reader=reader, name="run.txt")
        except EngineInputError as exc:
            outcomes.append(("error", str(exc)))
            continue
        outcomes.append(
            (
                run.qids,
                run.qcode.tolist(),
                run.docno_bytes(),
                run.values.view(np.uint64).tolist(),
                run.tag,
            )
        )
    assert all(outcome == outcomes[0] for outcome in outcomes[1:])


@needs_c
@pytest.mark.parametrize(
    "scores",
    [
        ["0.5", repr(0.5 + 1e-12), repr(0.5 - 1e-12), "0.5000000000001"],  # near ties
        ["1e-5", "1E+5", "-2.5e-3", "6.02214076e23", "1e-400", "4.9e-324"],  # exponents
        ["-1", "-0", "-0.0", "-9413.8125", "+3", "-.5"],  # signs
        ["123456789012345", "1234567890123456", "12345678901234567"],  # 15/16/17 digits
        ["0.123456789012345", "0.1234567890123456", "0.12345678901234567"],
        ["0.000000000000000000001", "0.0000000000000000000001", "1.0000000000000000000000"],
        ["00000000000000000001.5", "5.", ".5", "0.30000000000000004"],
    ],
)
def test_adversarial_numbers(tmp_path, scores):
    """Every value is the double Python's ``float`` gives (sign of zero included)."""
    data = "".join(f"q1 Q0 d{i} {i} {s} t\n" for i, s in enumerate(scores)).encode()
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    _check_file(path, data, 6, 4, clean=True, configs=CONFIGS)


@needs_c
@pytest.mark.parametrize(
    "docnos",
    [
        ["a", "ABCDEFGH", "abcdefghi", "0123456789", "MiXeD-CaSe_09"],  # 1, 8, 9, 10 bytes
        ["x" * 64, "y" * 65, "z" * 200, "w"],  # beyond 64 bytes; widening mid-file
        ["clueweb09-en0000-00-00000", "msmarco_passage_00_123456", "\u00e9t\u00e9"],
        ["d" * 4096],  # the longest accepted
    ],
)
def test_docnos_of_every_width(tmp_path, docnos):
    data = "".join(f"7 Q0 {d} {i} {1.0 / (i + 1)!r} tag\n" for i, d in enumerate(docnos))
    path = tmp_path / "run.txt"
    path.write_bytes(data.encode())
    _check_file(
        path, data.encode(), 6, 4, clean=True, configs=[(1, 1 << 18, True), (3, 8192, False)]
    )


@needs_c
def test_widths_differ_between_slices(tmp_path):
    """One slice has only short docnos, another a long one: the merge widens the first."""
    lines = [f"{q} Q0 d{q}x{i} {i} {i * 0.25} t" for q in range(200) for i in range(20)]
    lines[-1] = lines[-1].replace(" Q0 ", " Q0 " + "L" * 70, 1)
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    _check_file(path, data, 6, 4, clean=True, configs=[(t, 1024, True) for t in (1, 2, 4, 7)])


@needs_c
def test_many_qids_and_qids_split_across_slices(tmp_path):
    """5,000 qids, each in two separate blocks of lines: codes follow first appearance."""
    rng = np.random.default_rng(3)
    order = [q for _ in range(2) for q in rng.permutation(5000).tolist()]
    lines = [f"q{q:05d}{'x' * (q % 11)} Q0 d{j} 1 {q % 7}.25 t" for j, q in enumerate(order)]
    data = ("\n".join(lines) + "\n").encode()
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    _check_file(
        path, data, 6, 4, clean=True, configs=[(1, 1 << 18, True), (2, 4096, True), (7, 333, False)]
    )


UNCLEAN = [
    "1 Q0 a 1 0.5 t\r\n",  # CRLF
    "1 Q0 a 1 0.5 t\n\n1 Q0 b 2 0.4 t\n",  # blank line
    "1  Q0 a 1 0.5 t\n",  # double space
    " 1 Q0 a 1 0.5 t\n",  # leading space
    "1 Q0 a 1 0.5 t \n",  # trailing space
    "1\tQ0\ta\t1\t0.5\tt\n",  # tabs
    "# comment\n1 Q0 a 1 0.5 t\n",
    "1 Q0 a 1 0.5 t\n#2 Q0 a 1 0.5 t\n",
    "1 Q0 a 1 0.5\n",  # five columns
    "1 Q0 a 1 0.5 t x\n",  # seven
    "1 Q0 a 1 0.5 t\n1 Q0 b 2\n0.4 t\n",  # a newline inside a line
    "1 Q0 a 1 1_0 t\n",
    "1 Q0 a 1 nan t\n",
    "1 Q0 a 1 inf t\n",
    "1 Q0 a 1 1e999 t\n",
    "1 Q0 a 1 -1e999 t\n",
    "1 Q0 a 1 - t\n",
    "1 Q0 a 1 . t\n",
    "1 Q0 a 1 1e t\n",
    "1 Q0 a 1 0x10 t\n",
    "1 Q0 a 1 1.5.2 t\n",
    "1 Q0 a\x00b 1 0.5 t\n",
    "1 Q0 a 1 0.5 t\x00\n",
    "1 Q0 " + "d" * 4097 + " 1 0.5 t\n",  # docno over 4096 bytes
    "\n",
    "",
]


@needs_c
@pytest.mark.parametrize("text", UNCLEAN)
def test_unclean_text_is_refused(tmp_path, text):
    """Anything unusual gives None (the general reader then names the line)."""
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    for threads, simd in ((1, True), (2, False), (3, True)):
        assert _creader.read_clean_c(path, 6, 4, threads=threads, simd=simd) is None
        with _guarded(text.encode()) as guarded:
            for _kind, buf in [*_buffers(text.encode()), ("guarded", guarded)]:
                assert _creader.read_clean_c_buffer(buf, 6, 4, threads=threads, simd=simd) is None


@needs_c
@pytest.mark.parametrize("text", [*UNCLEAN, "1 Q0 a 1 0.5 t", "1 Q0 a 1 0.5 t\n", "2 0 d 1\n"])
def test_read_bytes_c_is_read_bytes_arrow(text):
    """``read_run``/``read_qrels`` of bytes: the C reader's answer (or error) is Arrow's."""
    data = text.encode()
    for read in (read_run, read_qrels):
        outcomes = []
        for source, reader in [(data, "arrow"), *((buf, "c") for _k, buf in _buffers(data))]:
            try:
                got = read(source, reader=reader)
            except EngineInputError as exc:
                outcomes.append(("error", str(exc)))
                continue
            tag = got.tag if read is read_run else None
            outcomes.append((got.name, got.qids, got.docno_bytes(), got.values.tolist(), tag))
        assert all(outcome == outcomes[0] for outcome in outcomes[1:]), read.__name__


@needs_c
@pytest.mark.parametrize("text", ["1 Q0 a 1 0.5 t", "1 Q0 a 1 0.5 t\n", "9 Q0 b 3 -2 last"])
def test_one_line_files(tmp_path, text):
    path = tmp_path / "run.txt"
    path.write_bytes(text.encode())
    _check_file(path, text.encode(), 6, 4, clean=True, configs=CONFIGS)


@needs_c
def test_line_longer_than_block_is_refused(tmp_path):
    path = tmp_path / "run.txt"
    data = b"1 Q0 a 1 0.5 t\n1 Q0 " + b"b" * 300 + b" 2 0.25 t\n"
    path.write_bytes(data)
    assert _creader.read_clean_c(path, 6, 4, block=128) is None
    assert _creader.read_clean_c(path, 6, 4, block=512) is not None
    assert _creader.read_clean_c_buffer(data, 6, 4, block=128) is None
    _check_buffers(path, data, 6, 4, 2, 512, True)


@needs_c
def test_missing_file_and_directory_give_none(tmp_path):
    assert _creader.read_clean_c(tmp_path / "absent", 6, 4) is None
    assert _creader.read_clean_c(tmp_path, 6, 4) is None


@needs_c
def test_qrels(tmp_path):
    """Qrels (four columns, the label last): integers, decimals, negatives."""
    rng = np.random.default_rng(11)
    rows = [
        f"{q} 0 D{d} {rng.choice(['0', '1', '2', '-1', '0.5', '3.25', '4', '1e0'])}"
        for q in range(300)
        for d in rng.permutation(400)[: int(rng.integers(1, 40))]
    ]
    data = ("\n".join(rows) + "\n").encode()
    path = tmp_path / "qrels.txt"
    path.write_bytes(data)
    _check_file(path, data, 4, 3, clean=True, configs=CONFIGS)
    a, b = read_qrels(path, reader="c"), read_qrels(path, reader="numpy")
    assert a.qids == b.qids and a.docno_bytes() == b.docno_bytes()
    assert np.array_equal(a.values.view(np.uint64), b.values.view(np.uint64))


@needs_c
def test_arrays_are_writable_and_owned(tmp_path):
    """The arrays own memory that outlives the call (and can be written, like numpy's)."""
    path = tmp_path / "run.txt"
    path.write_bytes(b"1 Q0 a 1 0.5 t\n2 Q0 b 1 0.25 t\n")
    names, codes, words, values, last = _creader.read_clean_c(path, 6, 4)
    path.unlink()
    values[0] = 2.0
    assert values.tolist() == [2.0, 0.25] and codes.tolist() == [0, 1] and names == [b"1", b"2"]
    assert words.flags.writeable and last == b"t"


def test_reader_c_is_a_clear_error_when_unavailable(tmp_path, monkeypatch):
    """Asking for the C reader where it is not built names the reason, not a fallback."""
    path = tmp_path / "run.txt"
    path.write_bytes(b"1 Q0 a 1 0.5 t\n")
    monkeypatch.setattr(_creader, "AVAILABLE", False)
    monkeypatch.setattr(_creader, "WHY_NOT", "not built (test)")
    with pytest.raises(ValueError, match="reader 'c' is unavailable"):
        read_run(path, reader="c")
    assert read_run(path).docno_bytes() == [b"a"]  # "auto" still works


@needs_c
def test_bytes_reach_the_c_reader_only_with_reader_c(monkeypatch):
    """Clean TREC bytes are parsed by the C reader (in place) with ``c``/``auto`` only."""
    calls: list[tuple[type, bool]] = []
    real = _creader.read_clean_c_buffer

    def spy(data, *args, **kwargs):
        got = real(data, *args, **kwargs)
        calls.append((type(data.obj), got is not None))
        return got

    monkeypatch.setattr(_creader, "read_clean_c_buffer", spy)
    data = b"1 Q0 a 1 0.5 t\n1 Q0 b 2 0.25 t\n"
    for source in (data, bytearray(data), memoryview(data)):
        assert read_run(source, reader="c").docno_bytes() == [b"a", b"b"]
    assert read_run(data).tag == "t"  # "auto"
    assert read_qrels(b"1 0 a 1\n", reader="c").docno_bytes() == [b"a"]
    assert calls == [(bytes, True), (bytearray, True), (bytes, True), (bytes, True), (bytes, True)]
    for reader in ("numpy", "arrow"):
        read_run(data, reader=reader)
    read_run(b'[{"qid": "1", "docno": "a", "score": 1}]', reader="c")  # JSON: not TREC
    assert len(calls) == 5


# --------------------------------------------------------------------------- label
def _label_by_searchsorted(docs, keys, values):
    """Look ``docs`` up in sorted ``keys`` with numpy (the fallback's method)."""
    if not len(keys):
        return np.full(docs.shape, np.nan)
    at = np.minimum(np.searchsorted(keys, docs), len(keys) - 1)
    return np.where(keys[at] == docs, values[at], np.nan)


_ids = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@needs_c
@settings(max_examples=150, deadline=None)
@given(
    keys=st.lists(_ids, unique=True, max_size=300),
    extra=st.lists(_ids, max_size=200),
    rows=st.integers(1, 4),
    data=st.data(),
)
def test_label_matches_searchsorted(keys, extra, rows, data):
    """Every id, present or not (negatives, padding -1, extremes, collisions): same answer."""
    keys_arr = np.array(sorted(keys), dtype=np.int64)
    values = np.array(
        data.draw(st.lists(st.floats(allow_nan=False), min_size=len(keys), max_size=len(keys))),
        dtype=np.float64,
    )
    pool = [*keys, *extra, -1] if keys else [*extra, -1]
    n = data.draw(st.integers(0, 60))
    cells = data.draw(st.lists(st.sampled_from(pool), min_size=rows * n, max_size=rows * n))
    docs = np.array(cells, dtype=np.int64).reshape(rows, n)
    got = _creader.label(docs, keys_arr, values)
    assert got.shape == docs.shape
    np.testing.assert_array_equal(got, _label_by_searchsorted(docs, keys_arr, values))


@needs_c
def test_label_at_scale_and_on_strided_input():
    """100 runs x 1,000 ranks against a few hundred live grades; a column slice is copied."""
    rng = np.random.default_rng(12)
    docs = np.stack([rng.permutation(2500)[:1000] + 7_000_000 for _ in range(100)])
    keys = np.sort(rng.choice(2500, 230, replace=False) + 7_000_000).astype(np.int64)
    values = rng.integers(0, 5, len(keys)).astype(np.float64)
    expected = _label_by_searchsorted(docs, keys, values)
    np.testing.assert_array_equal(_creader.label(docs, keys, values), expected)
    np.testing.assert_array_equal(_creader.label(docs[:, :10], keys, values), expected[:, :10])
    assert np.isnan(expected).sum() > 0 and (~np.isnan(expected)).sum() > 0


@needs_c
def test_label_refuses_mismatched_buffers():
    from metrics.engine import _ctrec

    docs = np.arange(4, dtype=np.int64)
    keys = np.arange(3, dtype=np.int64)
    with pytest.raises(ValueError, match="one float64 per key"):
        _ctrec.label(docs, keys, np.zeros(2), np.empty(4))
    with pytest.raises(ValueError, match="one float64 per doc"):
        _ctrec.label(docs, keys, np.zeros(3), np.empty(3))
    with pytest.raises(TypeError):
        _ctrec.label(docs, keys, np.zeros(3), b"\0" * 32)  # not writable


@needs_c
def test_hash_packed_refuses_rows_outside_its_buffers():
    """The C hash of packed rows checks every row against the words and multipliers."""
    flat = np.arange(1, 7, dtype=np.uint64)
    mult = np.array([3, 5], dtype=np.uint64)
    out = np.empty(2, np.uint64)
    _creader._ctrec.hash_packed(flat, np.array([0, 2, 3], np.uint32), mult, out)
    assert out.tolist() == [1 * 3 + 2 * 5, 3 * 3]
    for starts in ([0, 2, 9], [0, 3, 4], [2, 1, 3], [0, 2]):
        with pytest.raises(ValueError):
            _creader._ctrec.hash_packed(flat, np.array(starts, np.uint32), mult, out)


@needs_c
def test_first_block_is_a_poor_guess_of_the_rest(tmp_path):
    """Arrays sized from the first block still grow when later lines are denser or wider.

    The first 256 KiB hold long lines with short docnos (few rows per byte, one word a
    row); the rest short lines (many rows per byte) and then 300-byte docnos (many
    words a row): both guesses the reader makes after its first block fall short.
    """
    head = [f"1 Q0 d{i} {i} {i * 0.5} {'t' * 60}" for i in range(4000)]
    dense = [f"2 Q0 e{i} {i} 1 t" for i in range(40000)]
    wide = [f"3 Q0 {'w' * 300}{i} {i} 2 t" for i in range(3000)]
    data = ("\n".join(head + dense + wide) + "\n").encode()
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    _check_file(path, data, 6, 4, clean=True, configs=[(1, 1 << 18, True), (2, 1 << 18, True)])
