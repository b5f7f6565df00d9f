"""Vectorised handling of identifier columns (qids, docnos) without Python objects.

An identifier column (as the CSV reader returns it, a pyarrow binary array) is
turned into a matrix of 64-bit words holding its bytes, NUL-padded to a multiple
of 8 (identifiers cannot contain NUL).  From the words we get

* an exact byte-order comparison (big-endian words compare like ``strcmp``), used
  to break score ties by docno the way trec_eval does;
* a 64-bit hash that does not depend on the padding width, used to find
  duplicates and to join a run with its qrels.  Every hash match is verified on
  the words, so collisions can never produce a wrong answer.

pyarrow's ``pa.array()`` and ``.to_numpy()`` import pandas (slow, 40 MB), so arrays
are built from and read through their buffers instead.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from metrics.engine import _cext
from metrics.engine._lazy import LazyModule

pa: Any = LazyModule("pyarrow")
pc: Any = LazyModule("pyarrow.compute")

_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_GOLD = np.uint64(0x9E3779B97F4A7C15)
_S30, _S27, _S31 = np.uint64(30), np.uint64(27), np.uint64(31)


def mix64(x: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Return the splitmix64 finaliser of ``x`` (a bijection with ``mix64(0) == 0``)."""
    z = x >> _S30
    z ^= x
    z *= _M1
    z ^= z >> _S27
    z *= _M2
    z ^= z >> _S31
    return z


def _word_multiplier(j: int) -> np.uint64:
    """Return an odd per-position multiplier (so word order matters)."""
    return np.uint64((0x9E3779B97F4A7C15 * (2 * j + 1) + 0x632BE59BD9B4E019) % (1 << 64) | 1)


def binary_from_list(values: Sequence[bytes]) -> pa.BinaryArray:
    """Build a binary array from Python bytes (from buffers: ``pa.array`` imports pandas)."""
    lens = np.fromiter((len(v) for v in values), np.int64, len(values))
    offsets = np.zeros(len(values) + 1, np.int64)
    np.cumsum(lens, out=offsets[1:])
    if offsets[-1] >= 2**31:
        raise ValueError("identifiers too large in total (over 2 GiB)")
    return pa.Array.from_buffers(
        pa.binary(),
        len(values),
        [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(values))],
    )


def words_from_list(values: Sequence[bytes]) -> NDArray[np.uint64]:
    """Return Python bytes as a NUL-padded ``(n, w)`` word matrix (like :func:`words`)."""
    n = len(values)
    lens = np.fromiter((len(v) for v in values), np.int64, n)
    width = max(8, -(-int(lens.max(initial=1)) // 8) * 8)
    out = np.zeros((n, width), np.uint8)
    if n:
        flat = np.frombuffer(b"".join(values), np.uint8)
        dest = np.arange(len(flat), dtype=np.int64)
        dest += np.repeat(np.arange(n, dtype=np.int64) * width - (np.cumsum(lens) - lens), lens)
        out.reshape(-1)[dest] = flat
    return out.view(np.uint64)


def as_binary(values: object) -> pa.BinaryArray:
    """Return ``values`` (a pyarrow array, numpy array or sequence of str/bytes) as binary."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if isinstance(values, pa.Array):
        arr = values
    else:
        seq = values.tolist() if isinstance(values, np.ndarray) else list(values)  # type: ignore[attr-defined]
        return binary_from_list(
            [v if isinstance(v, bytes) else str(v).encode("utf-8", "surrogateescape") for v in seq]
        )
    if pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.large_binary()).cast(pa.binary())
    if pa.types.is_string(arr.type):
        arr = pa.Array.from_buffers(
            pa.binary(), len(arr), arr.buffers(), arr.null_count, arr.offset
        )
    if not pa.types.is_binary(arr.type):
        arr = arr.cast(pa.string()).cast(pa.binary())
    return arr


def bytes_list(arr: pa.BinaryArray | pa.ChunkedArray) -> list[bytes]:
    """Return every value as Python bytes (read from the buffers, no pandas)."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    out: list[bytes] = []
    for c in chunks:
        if len(c) == 0:
            continue
        off = _offsets(c).tolist()
        data = c.buffers()[2]
        raw = data.to_pybytes() if data is not None else b""
        out.extend(raw[a:b] for a, b in itertools.pairwise(off))
    return out


def bool_values(arr: pa.Array | pa.ChunkedArray) -> NDArray[np.bool_]:
    """Return a boolean array without nulls as numpy (``to_numpy`` would import pandas)."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = []
    for c in chunks:
        if len(c) == 0:
            continue
        bits = np.frombuffer(c.buffers()[1], np.uint8)
        parts.append(np.unpackbits(bits, bitorder="little")[c.offset : c.offset + len(c)])
    return np.concatenate(parts).astype(bool) if parts else np.zeros(0, bool)


def float_values(arr: pa.Array | pa.ChunkedArray) -> NDArray[np.float64]:
    """Return a float64 array without nulls as numpy (no pandas)."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = [
        np.frombuffer(c.buffers()[1], np.float64, count=len(c), offset=c.offset * 8)
        for c in chunks
        if len(c)
    ]
    if not parts:
        return np.zeros(0)
    return parts[0].copy() if len(parts) == 1 else np.concatenate(parts)


def int_values(arr: pa.Array | pa.ChunkedArray) -> NDArray[np.integer]:
    """Return an integer array without nulls as numpy, zero-copy for one chunk (no pandas)."""
    dtype = np.dtype(arr.type.to_pandas_dtype())
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = [
        np.frombuffer(c.buffers()[1], dtype, count=len(c), offset=c.offset * dtype.itemsize)
        for c in chunks
        if len(c)
    ]
    if not parts:
        return np.zeros(0, dtype)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def arrow_ints(values: NDArray[np.integer]) -> pa.Array:
    """Return a numpy integer array as an Arrow array sharing its memory (no pandas import)."""
    values = np.ascontiguousarray(values)
    if values.dtype.kind not in "iu":
        raise TypeError(f"arrow_ints needs integers, not {values.dtype}")
    kind = {"i": "int", "u": "uint"}[values.dtype.kind]
    arrow_type = getattr(pa, f"{kind}{values.dtype.itemsize * 8}")()
    return pa.Array.from_buffers(arrow_type, len(values), [None, pa.py_buffer(values)])


def one_chunk(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Return ``arr`` as one array, without copying when it already is one chunk."""
    if not isinstance(arr, pa.ChunkedArray):
        return arr
    return arr.chunk(0) if arr.num_chunks == 1 else arr.combine_chunks()


def _offsets(arr: pa.BinaryArray) -> NDArray[np.int32]:
    return np.frombuffer(arr.buffers()[1], np.int32, count=len(arr) + 1, offset=arr.offset * 4)


def _chunk_width(arr: pa.BinaryArray) -> int:
    if len(arr) == 0:
        return 8
    off = _offsets(arr)
    return max(8, -(-int((off[1:] - off[:-1]).max()) // 8) * 8)


def _fill(arr: pa.BinaryArray, out: NDArray[np.uint8]) -> None:
    """Copy the values of ``arr`` into the zeroed byte matrix ``out`` (one row each)."""
    n, width = out.shape
    if n == 0:
        return
    off = _offsets(arr)
    lens = np.diff(off)
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    lo, hi = int(off[0]), int(off[-1])
    short, long_ = int(lens.min()), int(lens.max())
    if short == long_:  # fixed length: one strided copy
        if short:
            out[:, :short] = data[lo:hi].reshape(n, short)
        return
    # Variable length: let Arrow pad (fast C++), check it really produced fixed width.
    if pa.types.is_binary(arr.type):
        arr = pa.Array.from_buffers(
            pa.string(), n, [None, arr.buffers()[1], data_buf], 0, arr.offset
        )
    padded = pc.ascii_rpad(arr, width=width, padding="\x00")
    poff = np.frombuffer(padded.buffers()[1], np.int32, count=n + 1, offset=padded.offset * 4)
    if int(poff[-1]) - int(poff[0]) == n * width:
        pdata = np.frombuffer(padded.buffers()[2], np.uint8)
        out[:] = pdata[int(poff[0]) : int(poff[-1])].reshape(n, width)
        return
    flat = out.reshape(-1)  # general fallback: scatter every byte
    dest = np.arange(hi - lo, dtype=np.int64)
    dest += np.repeat(np.arange(n, dtype=np.int64) * width - (off[:-1] - lo), lens)
    flat[dest] = data[lo:hi]


def words(arr: pa.BinaryArray | pa.ChunkedArray) -> NDArray[np.uint64]:
    """Return the values' bytes as a ``(n, w)`` uint64 matrix, NUL-padded to ``8 * w`` bytes.

    ``arr`` is a binary array or a chunked one (as the CSV reader returns it).
    """
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    n = sum(len(c) for c in chunks)
    width = max((_chunk_width(c) for c in chunks), default=8)
    if len(chunks) == 1 and n:
        c = chunks[0]
        off = _offsets(c)
        if int(off[0]) == 0 and int((off[1:] - off[:-1]).min()) == width:  # zero-copy view
            data = np.frombuffer(c.buffers()[2], np.uint8)[: n * width]
            return data.reshape(n, width).view(np.uint64)
    out = np.zeros((n, width), np.uint8)
    row = 0
    for c in chunks:
        _fill(c, out[row : row + len(c)])
        row += len(c)
    return out.view(np.uint64)


class RaggedWords:
    """Docnos as packed words: each row only its own ``ceil(len / 8)`` NUL-padded words.

    What the C reader returns for docnos of different lengths (URLs, MS MARCO's): the
    padded matrix would give every row the longest row's width.  Row ``i`` is
    ``flat[starts[i]:starts[i + 1]]``.  Indexing with a slice or an integer array gives
    the padded matrix of just those rows (as wide as the widest of them), so the code
    written for matrices (hashes, comparisons, tie order) works on the rows it needs;
    an integer gives the row's own words.
    """

    __slots__ = ("flat", "starts", "width")
    ndim = 2
    dtype = np.dtype(np.uint64)

    def __init__(self, flat: NDArray[np.uint64], starts: NDArray[np.uint32], width: int) -> None:
        """Wrap packed words ``flat`` and the ``n + 1`` row ``starts`` (``width``: widest row)."""
        self.flat = flat
        self.starts = starts
        self.width = int(width)

    def __len__(self) -> int:
        """Return the number of rows."""
        return len(self.starts) - 1

    @property
    def shape(self) -> tuple[int, int]:
        """Return (rows, words of the widest row): the shape of the padded matrix."""
        return len(self), self.width

    @property
    def nbytes(self) -> int:
        """Return the bytes held (words and row starts)."""
        return int(self.flat.nbytes + self.starts.nbytes)

    def __getitem__(self, key: Any) -> NDArray[np.uint64]:
        """Return one row's words (an integer) or the padded matrix of some rows."""
        if isinstance(key, (int, np.integer)):
            i = int(key) + len(self) if key < 0 else int(key)
            if not 0 <= i < len(self):
                raise IndexError(f"row {key} out of range")
            return self.flat[int(self.starts[i]) : int(self.starts[i + 1])]
        if isinstance(key, slice):
            a, b, step = key.indices(len(self))
            if step == 1:
                st = self.starts[a : max(a, b) + 1].astype(np.intp)
                return self._gather(st[:-1], np.diff(st))
            key = np.arange(a, b, step)
        rows = np.asarray(key, dtype=np.intp)
        if rows.dtype == np.bool_:
            rows = np.flatnonzero(rows)
        st = self.starts[rows].astype(np.intp)
        return self._gather(st, self.starts[rows + 1].astype(np.intp) - st)

    def _gather(self, st: NDArray[np.intp], nw: NDArray[np.intp]) -> NDArray[np.uint64]:
        """Return the padded matrix of the rows starting at ``st`` with ``nw`` words."""
        width = max(1, int(nw.max(initial=1)))
        out = np.zeros((len(st), width), np.uint64)
        if not len(st):
            return out
        out[:, 0] = self.flat[st]
        for j in range(1, width):
            live = np.flatnonzero(nw > j)
            out[live, j] = self.flat[st[live] + j]
        return out

    def hashes(self) -> NDArray[np.uint64]:
        """Return :func:`hash_words` of every row (in C when the extension is built)."""
        out = np.empty(len(self), np.uint64)
        ctrec = _ctrec_module()
        if ctrec is not None:
            mult = _multipliers(self.width)
            ctrec.hash_packed(self.flat, self.starts, mult, out)
            return out
        for a in range(0, len(self), _HASH_SLICE):
            out[a : a + _HASH_SLICE] = hash_words(self[a : a + _HASH_SLICE])
        return out

    def row_bytes(self) -> list[bytes]:
        """Return every row's bytes (without padding)."""
        flat, starts = self.flat, self.starts.tolist()
        return [flat[starts[i] : starts[i + 1]].tobytes().rstrip(b"\x00") for i in range(len(self))]


def _ctrec_module() -> Any:
    """Return the C extension (for :meth:`RaggedWords.hashes`), or None where unavailable."""
    return _cext.MODULE


def _multipliers(width: int) -> NDArray[np.uint64]:
    """Return the per-position multipliers of :func:`hash_words` for ``width`` words."""
    return np.array([_word_multiplier(j) for j in range(max(1, width))], dtype=np.uint64)


Words = NDArray[np.uint64] | RaggedWords
"""Docnos as words: the padded ``(n, w)`` matrix or :class:`RaggedWords`."""

_HASH_SLICE = 1 << 16  # rows of a ragged column hashed at once


def hash_words(w: Words) -> NDArray[np.uint64]:
    """Return a 64-bit hash per row that ignores trailing zero (padding) words.

    It is a plain multiply-add of the words (cheap); keys built from it are
    always verified on the words.  Ragged words are hashed a slice of rows at a time.
    """
    if isinstance(w, RaggedWords):
        return w.hashes()
    h = w[:, 0] * _word_multiplier(0)
    for j in range(1, w.shape[1]):
        h += w[:, j] * _word_multiplier(j)
    return h


def hash_range(w: Words, a: int, b: int) -> NDArray[np.uint64]:
    """Return :func:`hash_words` of rows ``a:b`` (packed rows without their padded matrix)."""
    if isinstance(w, RaggedWords):
        return RaggedWords(w.flat, w.starts[a : b + 1], w.width).hashes()
    return hash_words(w[a:b])


def pair_key(hashes: NDArray[np.uint64], codes: NDArray[np.integer]) -> NDArray[np.uint64]:
    """Return an (unmixed) key per row for the pair (integer code, identifier hash)."""
    x = codes.astype(np.uint64)
    x += np.uint64(1)
    x *= _GOLD
    x += hashes
    return x


def row_key(doc_hashes: NDArray[np.uint64], qid_hashes: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Return a (qid, docno) key: the docno hash xor the (well-mixed) qid hash.

    The docno hash is a multiply-add of the words, so its high bits depend on every
    byte; lookups bucket keys by their high bits and verify every match on the words.
    """
    return doc_hashes ^ qid_hashes


def name_hashes(names: Sequence[str]) -> NDArray[np.uint64]:
    """Return a well-mixed 64-bit hash of each identifier (the same for equal strings)."""
    if not names:
        return np.zeros(0, np.uint64)
    h = hash_words(words_from_list([encode(n) for n in names]))
    return mix64(h ^ np.uint64(0x5851F42D4C957F2D))


def same_words(a: Words, ia: NDArray[np.intp], b: Words, ib: NDArray[np.intp]) -> NDArray[np.bool_]:
    """Return whether rows ``a[ia]`` and ``b[ib]`` hold the same bytes (any padding widths)."""
    ra, rb = a[ia], b[ib]
    wa, wb = ra.shape[1], rb.shape[1]
    w = min(wa, wb)
    eq = (ra[:, :w] == rb[:, :w]).all(axis=1)
    if wa > w:
        eq &= (ra[:, w:] == 0).all(axis=1)
    if wb > w:
        eq &= (rb[:, w:] == 0).all(axis=1)
    return eq


def big_endian(w: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Return words whose unsigned integer order is the byte order of the strings."""
    return w.byteswap() if np.little_endian else w


def decode(value: bytes) -> str:
    """Decode identifier bytes losslessly (invalid UTF-8 survives as surrogates)."""
    return value.decode("utf-8", "surrogateescape")


def encode(value: str) -> bytes:
    """Encode an identifier decoded by :func:`decode` back to its bytes."""
    return value.encode("utf-8", "surrogateescape")


def _values_at(arr: pa.BinaryArray | pa.ChunkedArray, rows: NDArray[np.intp]) -> list[bytes]:
    """Return the values at sorted global ``rows`` of a (possibly chunked) binary array."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    out: list[bytes] = []
    base = 0
    for c in chunks:
        n = len(c)
        lo_i, hi_i = np.searchsorted(rows, [base, base + n])
        if hi_i > lo_i and n:
            local = rows[lo_i:hi_i] - base
            off = _offsets(c)
            data = c.buffers()[2]
            raw = memoryview(data) if data is not None else memoryview(b"")
            for a, b in zip(off[local].tolist(), off[local + 1].tolist(), strict=True):
                out.append(bytes(raw[a:b]))
        base += n
    return out


def codes_for(arr: pa.BinaryArray | pa.ChunkedArray) -> tuple[list[str], NDArray[np.int32]]:
    """Return (distinct values in first-appearance order, a code per row).

    Runs and qrels list each query in one contiguous block, so the work is done
    per block; with many blocks Arrow's hash table is used instead.
    """
    n = len(arr)
    if n == 0:
        return [], np.zeros(0, np.int32)
    change = np.ones(n, bool)
    if n > 1:
        change[1:] = ~bool_values(pc.equal(arr[1:], arr[:-1]))
    starts = np.flatnonzero(change)
    if len(starts) <= 50_000:
        names = [decode(v) for v in _values_at(arr, starts)]
        index: dict[str, int] = {}
        block_codes = np.fromiter(
            (index.setdefault(name, len(index)) for name in names), np.int32, len(names)
        )
        counts = np.diff(np.append(starts, n))
        return list(index), np.repeat(block_codes, counts)
    arr = as_binary(arr)
    uniq = pc.unique(arr)
    found = pc.index_in(arr, value_set=uniq)
    idx = np.frombuffer(found.buffers()[1], np.int32, count=n, offset=found.offset * 4).copy()
    names = [decode(v) for v in bytes_list(uniq)]
    return names, idx
