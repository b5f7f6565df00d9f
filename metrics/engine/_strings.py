"""Vectorised handling of identifier columns (qids, docnos) without Python objects.

An identifier column is kept as a pyarrow binary array plus a matrix of 64-bit
words holding its bytes, NUL-padded to a multiple of 8.  From the words we get

* an exact byte-order comparison (big-endian words compare like ``strcmp``), used
  to break score ties by docno the way trec_eval does;
* a 64-bit hash that does not depend on the padding width, used to find
  duplicates and to join a run with its qrels.  Every hash match is verified on
  the words, so collisions can never produce a wrong answer.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import NDArray

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


def as_binary(values: object) -> pa.BinaryArray:
    """Return ``values`` (a pyarrow array, numpy array or sequence of str/bytes) as binary."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks() if values.num_chunks != 1 else values.chunk(0)
    if isinstance(values, pa.Array):
        arr = values
    else:
        seq = values.tolist() if isinstance(values, np.ndarray) else list(values)  # type: ignore[attr-defined]
        conv = [
            v if isinstance(v, bytes) else str(v).encode("utf-8", "surrogateescape") for v in seq
        ]
        arr = pa.array(conv, pa.binary())
    if pa.types.is_large_binary(arr.type) or pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.large_binary()).cast(pa.binary())
    if pa.types.is_string(arr.type):
        arr = pa.Array.from_buffers(
            pa.binary(), len(arr), arr.buffers(), arr.null_count, arr.offset
        )
    if not pa.types.is_binary(arr.type):
        arr = arr.cast(pa.string()).cast(pa.binary())
    return arr


def _offsets(arr: pa.BinaryArray) -> NDArray[np.int32]:
    return np.frombuffer(arr.buffers()[1], np.int32, count=len(arr) + 1, offset=arr.offset * 4)


def lengths(arr: pa.BinaryArray) -> NDArray[np.int32]:
    """Return the byte length of every value."""
    return np.diff(_offsets(arr))


def words(arr: pa.BinaryArray) -> NDArray[np.uint64]:
    """Return the values' bytes as a ``(n, w)`` uint64 matrix, NUL-padded to ``8 * w`` bytes."""
    n = len(arr)
    if n == 0:
        return np.zeros((0, 1), np.uint64)
    off = _offsets(arr)
    lens = np.diff(off)
    width = max(8, -(-int(lens.max()) // 8) * 8)
    data_buf = arr.buffers()[2]
    data = np.frombuffer(data_buf, np.uint8) if data_buf is not None else np.zeros(0, np.uint8)
    lo, hi = int(off[0]), int(off[-1])
    if int(lens.min()) == width:  # every value already exactly ``width`` bytes long
        mat = np.ascontiguousarray(data[lo:hi]).reshape(n, width)
        return mat.view(np.uint64)
    if int(lens.min()) == int(lens.max()):  # fixed length, pad with a single copy
        length = int(lens[0])
        mat = np.zeros((n, width), np.uint8)
        if length:
            mat[:, :length] = data[lo:hi].reshape(n, length)
        return mat.view(np.uint64)
    # Variable length: let Arrow pad (fast C++), check it really produced fixed width.
    as_str = pa.Array.from_buffers(
        pa.string(), n, [None, arr.buffers()[1], data_buf], 0, arr.offset
    )
    padded = pc.ascii_rpad(as_str, width=width, padding="\x00")
    poff = np.frombuffer(padded.buffers()[1], np.int32, count=n + 1, offset=padded.offset * 4)
    if int(poff[-1]) - int(poff[0]) == n * width:
        pdata = np.frombuffer(padded.buffers()[2], np.uint8)
        mat = np.ascontiguousarray(pdata[int(poff[0]) : int(poff[-1])]).reshape(n, width)
        return mat.view(np.uint64)
    out = np.zeros(n * width, np.uint8)  # general fallback: scatter every byte
    dest = np.arange(hi - lo, dtype=np.int64)
    dest += np.repeat(np.arange(n, dtype=np.int64) * width - (off[:-1] - lo), lens)
    out[dest] = data[lo:hi]
    return out.reshape(n, width).view(np.uint64)


def hash_words(w: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Return a 64-bit hash per row that ignores trailing zero (padding) words.

    It is a plain multiply-add of the words (cheap); :func:`combine` mixes it with
    a query code.  Equal hashes are always verified on the words.
    """
    h = w[:, 0] * _word_multiplier(0)
    for j in range(1, w.shape[1]):
        h += w[:, j] * _word_multiplier(j)
    return h


def pair_key(hashes: NDArray[np.uint64], codes: NDArray[np.integer]) -> NDArray[np.uint64]:
    """Return an (unmixed) key per row for the pair (integer code, identifier hash)."""
    x = codes.astype(np.uint64)
    x += np.uint64(1)
    x *= _GOLD
    x += hashes
    return x


def combine(hashes: NDArray[np.uint64], codes: NDArray[np.integer]) -> NDArray[np.uint64]:
    """Return a well-mixed 64-bit key per row for the pair (integer code, identifier hash)."""
    return mix64(pair_key(hashes, codes))


def same_words(
    a: NDArray[np.uint64], ia: NDArray[np.intp], b: NDArray[np.uint64], ib: NDArray[np.intp]
) -> NDArray[np.bool_]:
    """Return whether rows ``a[ia]`` and ``b[ib]`` hold the same bytes (any padding widths)."""
    wa, wb = a.shape[1], b.shape[1]
    w = min(wa, wb)
    eq = (a[ia, :w] == b[ib, :w]).all(axis=1)
    if wa > w:
        eq &= (a[ia, w:] == 0).all(axis=1)
    if wb > w:
        eq &= (b[ib, w:] == 0).all(axis=1)
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


def codes_for(arr: pa.BinaryArray) -> tuple[list[str], NDArray[np.int32]]:
    """Return (distinct values in first-appearance order, a code per row).

    Runs and qrels list each query in one contiguous block, so the work is done
    per block; with many blocks Arrow's hash table is used instead.
    """
    n = len(arr)
    if n == 0:
        return [], np.zeros(0, np.int32)
    change = np.ones(n, bool)
    if n > 1:
        eq = pc.equal(arr[1:], arr[:-1])
        change[1:] = ~np.asarray(eq.to_numpy(zero_copy_only=False), dtype=bool)
    starts = np.flatnonzero(change)
    if len(starts) <= 50_000:
        names = [decode(v) for v in arr.take(pa.array(starts)).to_pylist()]
        index: dict[str, int] = {}
        block_codes = np.fromiter(
            (index.setdefault(name, len(index)) for name in names), np.int32, len(names)
        )
        counts = np.diff(np.append(starts, n))
        return list(index), np.repeat(block_codes, counts)
    uniq = pc.unique(arr)
    idx = pc.index_in(arr, value_set=uniq).to_numpy(zero_copy_only=False).astype(np.int32)
    names = [decode(v) for v in uniq.to_pylist()]
    return names, idx


def strings_to_binary(values: Sequence[str] | NDArray) -> pa.BinaryArray:
    """Return a Python or numpy sequence of identifiers as a binary array."""
    return as_binary(values)
