r"""A numpy-only reader for clean TREC text (runs and qrels), block by block.

It reads only what the engine needs -- the qid, docno and score (or label) columns
-- straight into the engine's representation: int32 query codes, docnos as
NUL-padded uint64 word matrices (see :mod:`metrics.engine._strings`) and float64
values.  The file is read in blocks of a few MiB into one reused buffer, so
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

import numpy as np
from numpy.typing import NDArray

BLOCK = 4 << 20  # bytes read per block
_SLACK = 4096  # bytes after a block that fixed-width windows may read (masked)
_MAX_FAST = 24  # longest number token parsed vectorised
_POW10 = np.array([10.0**k for k in range(23)])
_POW10_INT = np.array([10**k for k in range(9)], dtype=np.uint64)
_NUMBER_RE = re.compile(rb"^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$")


class _Unclean(Exception):
    """The text needs the general reader."""


_FRONT = 8  # bytes before the data in the buffer, so 8-byte windows may end anywhere
_U64_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)
# LOW[k]: the k first bytes of a little-endian word; HIGH[k]: its k last bytes
_LOW = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
_HIGH = np.array([((1 << 64) - 1) ^ ((1 << (64 - 8 * k)) - 1) for k in range(9)], dtype=np.uint64)
_ZEROS = np.uint64(0x3030303030303030)  # eight ASCII "0"
_F0 = np.uint64(0xF0F0F0F0F0F0F0F0)
_SIX = np.uint64(0x0606060606060606)
_C_LO = np.uint64(0x000000FF000000FF)
_C_M1 = np.uint64(100 + (1000000 << 32))
_C_M2 = np.uint64(1 + (10000 << 32))


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


def _right_digits(u64: NDArray[np.uint64], end: NDArray[np.int64], k: NDArray[np.int64]):
    """Return (value, all digits) of the ``k <= 8`` bytes ending at data offset ``end``."""
    keep = _HIGH[k]
    w = (u64[end + _FRONT - 8] & keep) | (_ZEROS & ~keep)
    return _eight_digits(w), _all_digits(w)


def _numbers(
    buf: NDArray[np.uint8],
    u64: NDArray[np.uint64],
    dots: NDArray[np.int64],
    start: NDArray[np.int64],
    length: NDArray[np.int64],
) -> NDArray[np.float64]:
    """Parse the number tokens at data offsets ``start`` exactly (see the module doc)."""
    end = start + length
    first = buf[start + _FRONT]
    neg = first == 45
    body = start + (neg | (first == 43))
    if len(dots):
        d = dots[np.minimum(np.searchsorted(dots, body), len(dots) - 1)]
        has_dot = (d >= body) & (d < end)
    else:
        d = end
        has_dot = np.zeros(len(start), bool)
    int_end = np.where(has_dot, d, end)
    a = int_end - body
    b = np.where(has_dot, end - d - 1, 0)
    fast = (a <= 8) & (b <= 8) & (a + b >= 1) & (a + b <= 15)
    a8, b8 = np.minimum(a, 8), np.minimum(b, 8)
    ival, iok = _right_digits(u64, int_end, a8)
    fval, fok = _right_digits(u64, end, b8)
    fast &= iok & fok
    mant = ival * _POW10_INT[b8] + fval
    out = mant.astype(np.float64) / _POW10[b8]
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


class _Codes:
    """Query names in first-appearance order and their codes, across blocks."""

    def __init__(self) -> None:
        self.index: dict[bytes, int] = {}

    def codes(
        self, u64: NDArray[np.uint64], start: NDArray[np.int64], length: NDArray[np.int64]
    ) -> NDArray[np.int32]:
        w = _words(u64, start, length)
        n = len(w)
        change = np.ones(n, bool)
        if n > 1:
            change[1:] = (w[1:] != w[:-1]).any(axis=1)
        firsts = np.flatnonzero(change)  # one per block of equal qids (usually per query)
        index = self.index
        raw = w.view(np.uint8)
        block_codes = np.fromiter(
            (
                index.setdefault(raw[i, : int(length[i])].tobytes(), len(index))
                for i in firsts.tolist()
            ),
            np.int32,
            len(firsts),
        )
        return np.repeat(block_codes, np.diff(np.append(firsts, n)))


def _parse_block(
    buf: NDArray[np.uint8], end: int, ncols: int, fields: tuple[int, int, int], codes: _Codes
) -> tuple[NDArray[np.int32], NDArray[np.uint64], NDArray[np.float64], bytes]:
    """Parse the complete lines in data ``[0, end)`` (``end`` is just past a newline)."""
    view = buf[_FRONT : _FRONT + end]
    sep = np.flatnonzero(view < 33)
    if len(sep) % ncols:
        raise _Unclean
    pos = sep.reshape(-1, ncols)
    kinds = view[pos]
    if not ((kinds[:, :-1] == 32).all() and (kinds[:, -1] == 10).all()):
        raise _Unclean  # tabs, CR, blank lines, other control bytes, wrong column count
    n = len(pos)
    starts = np.empty((n, ncols), np.int64)
    starts[0, 0] = 0
    starts[1:, 0] = pos[:-1, -1] + 1
    starts[:, 1:] = pos[:, :-1] + 1
    lens = pos - starts
    if n and int(lens.min()) <= 0:
        raise _Unclean  # an empty field: repeated or leading blanks
    qf, df, vf = fields
    if (view[starts[:, 0]] == 35).any():
        raise _Unclean  # comment lines
    u64 = _unaligned(buf)
    qcode = codes.codes(u64, starts[:, qf], lens[:, qf])
    words = _words(u64, starts[:, df], lens[:, df])
    dots = np.flatnonzero(view == 46)
    values = _numbers(buf, u64, dots, starts[:, vf], lens[:, vf])
    a = int(starts[-1, -1]) if n else 0
    last = view[a : a + int(lens[-1, -1])].tobytes() if n else b""
    return qcode, words, values, last


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


def _pad_words(parts: list[NDArray[np.uint64]]) -> NDArray[np.uint64]:
    width = max((p.shape[1] for p in parts), default=1)
    total = sum(len(p) for p in parts)
    out = np.zeros((total, width), np.uint64)
    row = 0
    for p in parts:
        out[row : row + len(p), : p.shape[1]] = p
        row += len(p)
    return out


def read_clean(
    path: str | os.PathLike, ncols: int, value_col: int
) -> tuple[list[bytes], NDArray[np.int32], NDArray[np.uint64], NDArray[np.float64], bytes] | None:
    """Read a clean TREC file; return (qid names, qid codes, docno words, values, last field).

    ``None`` when the file is not clean (see the module doc), empty or unreadable.
    """
    fields = (0, 2, value_col)
    codes = _Codes()
    buf = np.zeros(_FRONT + BLOCK + _SLACK, np.uint8)
    data = buf[_FRONT:]
    q_parts: list[NDArray[np.int32]] = []
    w_parts: list[NDArray[np.uint64]] = []
    v_parts: list[NDArray[np.float64]] = []
    last = b""
    carry = 0
    try:
        with open(path, "rb", buffering=0) as fh:
            while True:
                if carry >= BLOCK:  # a line longer than a block
                    return None
                got = fh.readinto(memoryview(data)[carry:BLOCK])
                fill = carry + (got or 0)
                if fill == 0:
                    break
                if not got:  # end of file: the last line may lack its newline
                    if data[fill - 1] != 10:
                        data[fill] = 10
                        fill += 1
                    end = fill
                else:
                    nl = _last_newline(data, fill)
                    if nl < 0:
                        carry = fill
                        continue
                    end = nl + 1
                q, w, v, tail = _parse_block(buf, end, ncols, fields, codes)
                q_parts.append(q)
                w_parts.append(w)
                v_parts.append(v)
                last = tail or last
                rest = fill - end
                data[:rest] = data[end:fill]
                carry = rest
                if not got:
                    break
    except (_Unclean, OSError):
        return None
    if not q_parts or not sum(len(q) for q in q_parts):
        return None
    names = list(codes.index)
    qcode = np.concatenate(q_parts) if len(q_parts) > 1 else q_parts[0]
    words = _pad_words(w_parts) if len(w_parts) > 1 else w_parts[0]
    values = np.concatenate(v_parts) if len(v_parts) > 1 else v_parts[0]
    return names, qcode, words, values, last
