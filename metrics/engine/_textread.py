r"""A numpy-only reader for clean TREC text (runs and qrels), block by block.

It reads only what the engine needs -- the qid, docno and score (or label) columns
-- straight into the engine's representation: int32 query codes, docnos as
NUL-padded uint64 word matrices (see :mod:`metrics.engine._strings`) and float64
values.  The file is read in blocks of 1 MiB (two parsed at once, in threads), so
neither the whole file nor a column of Python objects is ever in memory, and
pyarrow is not imported at all (its import alone costs ~47 MiB of resident memory).

"Clean" means: every line holds exactly ``ncols`` fields separated by single
spaces, ends with ``\n`` (the last line may lack it), no blank, comment (``#``) or
control characters, and values written as plain or exponent decimals.  Anything
else makes :func:`read_clean` return ``None`` and the caller falls back to the
general reader, which also produces the messages with line numbers.

Numbers: a decimal of at most 15 significant digits and 22 fraction digits (W1's
``9413.8125``; trec_eval-style ``0.123456``) is the exact quotient of two exactly
representable doubles, ``mantissa / 10**fraction_digits``, so one IEEE division
gives the correctly rounded value -- the same double ``strtod`` gives.  Any other
token (exponents, more digits) is converted by Python's ``float``, also correctly
rounded.
"""

from __future__ import annotations

import os
import re
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from numpy.typing import NDArray

BLOCK = 1 << 20  # bytes read per block (small blocks keep temporaries in cache)
_SLACK = 4096  # bytes after a block that fixed-width windows may read (masked)
_MAX_FAST = 24  # longest number token parsed vectorised
_POW10 = np.array([10.0**k for k in range(23)])
_POW10_INT = np.array([10**k for k in range(9)], dtype=np.uint64)
_NUMBER_RE = re.compile(rb"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


class _Unclean(Exception):
    """The text needs the general reader."""


_FRONT = 8  # bytes before the data in the buffer, so 8-byte windows may end anywhere
_U64_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
# _LOW[k]: the k first bytes of a little-endian word
_LOW = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
_ZEROS = np.uint64(0x3030303030303030)  # eight ASCII "0"
_F0 = np.uint64(0xF0F0F0F0F0F0F0F0)
_SIX = np.uint64(0x0606060606060606)
_C_LO = np.uint64(0x000000FF000000FF)
_C_M1 = np.uint64(100 + (1000000 << 32))
_C_M2 = np.uint64(1 + (10000 << 32))
_ONES = np.uint64(0x0101010101010101)
_HIGHS = np.uint64(0x8080808080808080)
_DOTS = np.uint64(0x2E2E2E2E2E2E2E2E)
# _SHIFT_UP[k] moves the k low bytes of a word to its top; _PAD[k] fills the rest with "0"
_SHIFT_UP = np.array([(1 << (8 * (8 - k))) % (1 << 64) for k in range(9)], dtype=np.uint64)
_PAD = np.array([0x3030303030303030 & ((1 << (8 * (8 - k))) - 1) for k in range(9)], np.uint64)


def _unaligned(buf: NDArray[np.uint8]) -> NDArray[np.uint64]:
    """Return ``u`` with ``u[i]`` = the little-endian word of ``buf[i : i + 8]``."""
    return np.ndarray((len(buf) - 7,), dtype="<u8", buffer=buf, strides=(1,))


def _words(
    u64: NDArray[np.uint64], start: NDArray[np.int64], length: NDArray[np.int64]
) -> NDArray[np.uint64]:
    """Return the identifiers at data offsets ``start`` as NUL-padded ``(n, w)`` words."""
    longest = int(length.max(initial=1))
    if longest > _SLACK:
        raise _Unclean  # longer than the buffer's slack
    nw = max(1, -(-longest // 8))
    out = np.empty((len(start), nw), np.uint64)
    at = start + _FRONT
    for j in range(nw):
        out[:, j] = u64[at + 8 * j] & _LOW[np.clip(length - 8 * j, 0, 8)]
    return out


def _eight_digits(word: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """Return the value of eight ASCII digits (first digit in the lowest byte)."""
    v = word - _ZEROS
    v = v * np.uint64(10) + (v >> np.uint64(8))
    a = (v & _C_LO) * _C_M1
    b = ((v >> np.uint64(16)) & _C_LO) * _C_M2
    return (a + b) >> np.uint64(32)


def _all_digits(word: NDArray[np.uint64]) -> NDArray[np.bool_]:
    """Return whether all eight bytes of each word are ASCII digits."""
    return ((word & _F0) | (((word + _SIX) & _F0) >> np.uint64(4))) == np.uint64(0x3333333333333333)


def _numbers(
    buf: NDArray[np.uint8],
    u64: NDArray[np.uint64],
    start: NDArray[np.int64],
    length: NDArray[np.int64],
) -> NDArray[np.float64]:
    """Parse the number tokens at data offsets ``start`` exactly (see the module doc).

    A token of at most 16 bytes after its sign is read as two words; the dot is
    found with a zero-byte test; the integer and fraction digits are each moved to
    the top of a word of ASCII zeros (a multiplication, since numpy's shifts by an
    array are slow) and converted eight at a time.
    """
    first = buf[start + _FRONT]
    neg = first == 45
    body_at = start + _FRONT + (neg | (first == 43))
    body = length - (body_at - start - _FRONT)
    w0 = u64[body_at] & _LOW[np.clip(body, 0, 8)]
    w1 = u64[body_at + 8] & _LOW[np.clip(body - 8, 0, 8)]
    d0 = _first_byte(w0, _DOTS)
    dot = np.where(d0 < 8, d0, _first_byte(w1, _DOTS) + 8)  # 16: no dot
    has_dot = dot < body
    a = np.where(has_dot, dot, body)
    b = np.where(has_dot, body - dot - 1, 0)
    fast = (body <= 16) & (a <= 8) & (b <= 8) & (a + b >= 1) & (a + b <= 15)
    np.minimum(a, 8, out=a)
    np.minimum(b, 8, out=b)
    # the a integer digits are the first bytes of w0; the b fraction digits follow the dot
    iw = (w0 & _LOW[a]) * _SHIFT_UP[a] | _PAD[a]
    fw = (u64[body_at + a + 1] & _LOW[b]) * _SHIFT_UP[b] | _PAD[b]
    fast &= _all_digits(iw) & _all_digits(fw)
    mant = _eight_digits(iw) * _POW10_INT[b] + _eight_digits(fw)
    out = mant.astype(np.float64) / _POW10[b]
    np.negative(out, out=out, where=neg)
    for i in np.flatnonzero(~fast).tolist():  # exponents, long tokens, bad tokens
        lo = int(start[i]) + _FRONT
        token = buf[lo : lo + int(length[i])].tobytes()
        if not _NUMBER_RE.match(token):
            raise _Unclean
        value = float(token)
        if not np.isfinite(value):
            raise _Unclean
        out[i] = value
    return out


def _first_byte(w: NDArray[np.uint64], pattern: np.uint64) -> NDArray[np.int64]:
    """Return the index (0-7) of the first byte of ``w`` equal to ``pattern``'s, or 8."""
    x = w ^ pattern
    z = (x - _ONES) & ~x & _HIGHS  # the lowest flagged byte is exact
    lowest = z & (~z + np.uint64(1))
    return (np.bitwise_count(lowest - np.uint64(1)) >> 3).astype(np.int64)


def _segments(
    u64: NDArray[np.uint64], start: NDArray[np.int64], length: NDArray[np.int64]
) -> tuple[NDArray[np.intp], list[bytes]]:
    """Return where the qid changes (first row of each run of equal qids) and those qids."""
    w = _words(u64, start, length)
    n = len(w)
    change = np.ones(n, bool)
    if n > 1:
        if w.shape[1] == 1:
            np.not_equal(w[1:, 0], w[:-1, 0], out=change[1:])
        else:
            change[1:] = (w[1:] != w[:-1]).any(axis=1)
    firsts = np.flatnonzero(change)
    raw = w.view(np.uint8)
    names = [
        raw[i, :k].tobytes() for i, k in zip(firsts.tolist(), length[firsts].tolist(), strict=True)
    ]
    return firsts, names


_Parsed = tuple[NDArray[np.intp], list[bytes], NDArray[np.uint64], NDArray[np.float64], bytes]


def _parse_block(buf: NDArray[np.uint8], end: int, ncols: int, value_col: int) -> _Parsed:
    """Parse the complete lines in data ``[0, end)`` (``end`` is just past a newline).

    Returns (first row of each run of equal qids, those qids, docno words, values,
    the last field of the last line).
    """
    view = buf[_FRONT : _FRONT + end]
    sep = np.flatnonzero(view < 33)
    if len(sep) % ncols or not len(sep):
        raise _Unclean
    pos = sep.reshape(-1, ncols)
    kinds = view[pos]
    if not ((kinds[:, :-1] == 32).all() and (kinds[:, -1] == 10).all()):
        raise _Unclean  # tabs, CR, blank lines, other control bytes, wrong column count
    if int(sep[0]) == 0 or (len(sep) > 1 and int(np.diff(sep).min()) <= 1):
        raise _Unclean  # an empty field: repeated or leading blanks, blank lines
    q_start = np.empty(len(pos), np.int64)
    q_start[0] = 0
    np.add(pos[:-1, -1], 1, out=q_start[1:])
    if (view[q_start] == 35).any():
        raise _Unclean  # comment lines
    u64 = _unaligned(buf)
    firsts, names = _segments(u64, q_start, pos[:, 0] - q_start)
    d_start = pos[:, 1] + 1
    words = _words(u64, d_start, pos[:, 2] - d_start)
    v_start = pos[:, value_col - 1] + 1
    values = _numbers(buf, u64, v_start, pos[:, value_col] - v_start)
    a = int(pos[-1, -2]) + 1
    last = view[a : int(pos[-1, -1])].tobytes()
    return firsts, names, words, values, last


def _last_newline(data: NDArray[np.uint8], fill: int) -> int:
    """Return the offset of the last newline in ``data[:fill]``, or -1."""
    step = 1 << 12
    hi = fill
    while hi > 0:
        lo = max(0, hi - step)
        hits = np.flatnonzero(data[lo:hi] == 10)
        if len(hits):
            return lo + int(hits[-1])
        hi = lo
    return -1


def _blocks(path: str | os.PathLike, skip: int = 0) -> Iterator[tuple[NDArray[np.uint8], int]]:
    """Yield (buffer, end) per block of complete lines; a fresh buffer each time.

    The first ``skip`` bytes of the file (a byte-order mark) are not read.

    Raises:
        _Unclean: a line is longer than a block.
    """
    carry = b""
    with open(path, "rb", buffering=0) as fh:
        fh.seek(skip)
        while True:
            buf = np.empty(_FRONT + BLOCK + _SLACK, np.uint8)
            data = buf[_FRONT:]
            data[: len(carry)] = np.frombuffer(carry, np.uint8)
            got = fh.readinto(memoryview(data)[len(carry) : BLOCK])
            fill = len(carry) + (got or 0)
            if fill == 0:
                return
            if not got:  # end of file: the last line may lack its newline
                if data[fill - 1] != 10:
                    data[fill] = 10
                    fill += 1
                yield buf, fill
                return
            nl = _last_newline(data, fill)
            if nl < 0:
                if fill >= BLOCK:
                    raise _Unclean
                carry = data[:fill].tobytes()
                continue
            carry = data[nl + 1 : fill].tobytes()
            yield buf, nl + 1


class _Columns:
    """The output columns, allocated once from an estimate of the row count, grown if needed.

    Appending block results to preallocated arrays avoids holding every block's
    arrays and their concatenation at the same time (twice the final size).
    """

    def __init__(self, file_size: int) -> None:
        self.file_size = file_size
        self.n = 0
        self.q = np.zeros(0, np.int32)
        self.v = np.zeros(0, np.float64)
        self.w = np.zeros((0, 1), np.uint64)

    def _reserve(self, rows: int, width: int, bytes_done: int) -> None:
        need = self.n + rows
        if need > len(self.q):
            # rows so far per byte so far, times the file, plus 2 % (first time: exact
            # for files of regular lines); later growth by a quarter at least
            per_byte = need / max(bytes_done, 1)
            estimate = int(per_byte * self.file_size * 1.02) + 64
            size = max(need, estimate if not len(self.q) else int(len(self.q) * 1.25) + 64)
            self.q = _resized(self.q, size, self.n)
            self.v = _resized(self.v, size, self.n)
            self.w = _resized(self.w, size, self.n)
        if width > self.w.shape[1]:
            wider = np.zeros((len(self.w), width), np.uint64)
            wider[: self.n, : self.w.shape[1]] = self.w[: self.n]
            self.w = wider

    def append(
        self, q: NDArray[np.int32], w: NDArray[np.uint64], v: NDArray[np.float64], done: int
    ) -> None:
        self._reserve(len(q), w.shape[1], done)
        end = self.n + len(q)
        self.q[self.n : end] = q
        self.v[self.n : end] = v
        self.w[self.n : end, : w.shape[1]] = w
        self.w[self.n : end, w.shape[1] :] = 0
        self.n = end


def _resized(a: NDArray, size: int, keep: int) -> NDArray:
    out = np.empty((size, *a.shape[1:]), a.dtype)
    out[:keep] = a[:keep]
    return out


def read_clean(
    path: str | os.PathLike, ncols: int, value_col: int, *, threads: bool = True, skip: int = 0
) -> tuple[list[bytes], NDArray[np.int32], NDArray[np.uint64], NDArray[np.float64], bytes] | None:
    """Read a clean TREC file; return (qid names, qid codes, docno words, values, last field).

    Names are in order of first appearance and codes index them.  With ``threads``
    two blocks are parsed at once (numpy releases the GIL in its loops).  ``skip``:
    bytes at the start that are not text (a byte-order mark).  ``None`` when the file
    is not clean (see the module doc), empty or unreadable.
    """
    index: dict[bytes, int] = {}
    last = b""
    done = 0
    try:
        cols = _Columns(max(0, os.stat(path).st_size - skip))

        def collect(parsed: _Parsed, size: int) -> None:
            nonlocal last, done
            firsts, names, words, values, tail = parsed
            codes = np.fromiter((index.setdefault(nm, len(index)) for nm in names), np.int32)
            done += size
            cols.append(
                np.repeat(codes, np.diff(np.append(firsts, len(words)))), words, values, done
            )
            last = tail

        if threads:
            with ThreadPoolExecutor(2) as pool:
                pending: deque[tuple[Future[_Parsed], int]] = deque()
                for buf, end in _blocks(path, skip):
                    pending.append((pool.submit(_parse_block, buf, end, ncols, value_col), end))
                    if len(pending) > 2:  # at most three blocks in memory
                        fut, size = pending.popleft()
                        collect(fut.result(), size)
                while pending:
                    fut, size = pending.popleft()
                    collect(fut.result(), size)
        else:
            for buf, end in _blocks(path, skip):
                collect(_parse_block(buf, end, ncols, value_col), end)
    except (_Unclean, OSError):
        return None
    if not cols.n:
        return None
    n = cols.n
    q, w, v = cols.q[:n], cols.w[:n], cols.v[:n]
    if len(cols.q) > n * 1.1 + 1024:  # a poor estimate (very uneven lines): do not keep the slack
        q, w, v = q.copy(), w.copy(), v.copy()
    return list(index), q, w, v, last
