r"""The optional C reader of clean TREC text (``metrics/engine/_ctrec.c``).

Contract: :func:`read_clean_c` returns exactly what
:func:`metrics.engine._textread.read_clean` returns for the same file -- (raw qid
names in order of first appearance, int32 query codes, docnos as a NUL-padded
``(n, w)`` uint64 word matrix, float64 values, the last field of the last line) --
bit for bit, or ``None``.  With ``ragged=True`` (what :mod:`metrics.engine.io` asks
for) docnos whose word counts differ enough -- packing every row's own words, plus a
4-byte start per row, takes at most three quarters of the padded matrix: URLs -- come
back as :class:`~metrics.engine._strings.RaggedWords` instead, the same bytes without
the padding to the longest docno.  ``None`` means "use another reader"; it is returned for
every text the numpy reader calls unclean (fields not separated by single spaces,
tabs, CR, NUL or other bytes below 33, blank or comment lines, another number of
fields, values that are not plain or exponent decimals or not finite, an empty or
unreadable file) and also for a docno longer than 4096 bytes or a line longer than
the read block (256 KiB).  The last line may lack its newline.

How: the file is split into ``threads`` slices at line starts; each slice is read
with ``pread`` in blocks by its own POSIX thread with the GIL released.  A block's
separators (bytes below 33) are found 64 bytes at a time (SSE2, or a portable
word-at-a-time version), then each line's fields are taken from their offsets.
The slices' results are merged in file order.

:func:`read_clean_c_buffer` does the same for text already in memory (``bytes``,
``bytearray``, a contiguous ``memoryview``: an upload): the buffer is held for the
call and its blocks are parsed in place, with the same slices, blocks, answers and
refusals as a file of the same bytes (only the blocks within 64 bytes of its end
are copied, as the loads may read past a block).

Numbers: a plain decimal of at most 15 significant and 22 fraction digits is
``mantissa / 10**k``, one IEEE division of two exact doubles and so the correctly
rounded value; every other valid token (exponents, longer mantissas) is converted
after the threads finish by ``PyOS_string_to_double``, the routine behind Python's
``float()``.  Either way the double is the one ``float(token)`` gives.

The extension is optional: when it is not built (no compiler at install time) or
``GRADED_NO_CEXT=1`` is set, :data:`AVAILABLE` is false and the engine uses the
numpy or Arrow reader.
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from metrics.engine import _cext
from metrics.engine._strings import RaggedWords, Words

BLOCK = 1 << 18  # bytes per pread (fits in L2 with the separator index)


_ctrec, WHY_NOT = _cext.MODULE, _cext.WHY_NOT
AVAILABLE = _ctrec is not None
"""Whether the C reader can be used in this process."""


def read_clean_c(
    path: str | os.PathLike,
    ncols: int,
    value_col: int,
    *,
    threads: bool | int = True,
    block: int = BLOCK,
    simd: bool = True,
    ragged: bool = False,
) -> tuple[list[bytes], NDArray[np.int32], Words, NDArray[np.float64], bytes] | None:
    """Read a clean TREC file with the C reader (see the module doc); ``None`` if not clean.

    ``threads``: ``True`` parses two slices at once, ``False`` one, an int that many
    (at most 16).  ``block`` and ``simd`` exist for tests (tiny blocks cross many
    block boundaries; ``simd=False`` runs the portable code).  ``ragged``: docnos of
    different word counts come back as a :class:`~metrics.engine._strings.RaggedWords`
    (each row only its own words) instead of the padded matrix.

    Raises:
        RuntimeError: the extension is not available (check :data:`AVAILABLE`).
        MemoryError: the output does not fit in memory.
    """
    parsed = _module().parse(
        os.fspath(path),
        ncols,
        value_col,
        threads=_threads(threads),
        block=block,
        simd=simd,
        ragged=ragged,
    )
    return _arrays(parsed)


def read_clean_c_buffer(
    data: bytes | bytearray | memoryview,
    ncols: int,
    value_col: int,
    *,
    threads: bool | int = True,
    block: int = BLOCK,
    simd: bool = True,
    ragged: bool = False,
) -> tuple[list[bytes], NDArray[np.int32], Words, NDArray[np.float64], bytes] | None:
    """:func:`read_clean_c` for the bytes of ``data`` (any C-contiguous bytes-like object).

    The result is the one :func:`read_clean_c` gives for a file holding those bytes.
    ``data`` is held (a ``bytearray`` cannot be resized) while the GIL is released;
    writing into it meanwhile from another thread is the caller's race.

    Raises:
        RuntimeError: the extension is not available (check :data:`AVAILABLE`).
        TypeError: ``data`` is not bytes-like.
        BufferError: ``data`` is not contiguous (a strided ``memoryview``).
        MemoryError: the output does not fit in memory.
    """
    parsed = _module().parse_buffer(
        data,
        ncols,
        value_col,
        threads=_threads(threads),
        block=block,
        simd=simd,
        ragged=ragged,
    )
    return _arrays(parsed)


def _module() -> ModuleType:
    """Return the extension module, or raise if it is unavailable."""
    if _ctrec is None:
        raise RuntimeError(f"the C reader is unavailable: {WHY_NOT}")
    return _ctrec


def _threads(threads: bool | int) -> int:
    return (2 if threads else 1) if isinstance(threads, bool) else int(threads)


def _arrays(
    parsed: tuple | None,
) -> tuple[list[bytes], NDArray[np.int32], Words, NDArray[np.float64], bytes] | None:
    if parsed is None:
        return None
    names, codes_buf, words_buf, width, values_buf, last, *rest = parsed
    codes = np.frombuffer(codes_buf, np.int32)
    flat = np.frombuffer(words_buf, np.uint64)
    words: Words
    if rest and rest[0] is not None:
        words = RaggedWords(flat, np.frombuffer(rest[0], np.uint32), width)
    else:
        words = flat.reshape(len(codes), width)
    values = np.frombuffer(values_buf, np.float64)
    return names, codes, words, values, last


MMAP_THRESHOLD = 1 << 20
"""glibc's mmap threshold in ``evaluate``'s processes (the command line, ``evaluate_many``'s
workers): larger blocks -- a run's arrays -- are mapped, and unmapped when freed; smaller
ones -- the labelling's 512 KiB blocks, a slice's temporaries -- come from the heap and
are reused."""


def mmap_threshold(nbytes: int) -> bool:
    """Fix glibc's mmap threshold at ``nbytes`` (its trim threshold at twice); whether done.

    For short-lived command-line processes: glibc otherwise raises the threshold each
    time a large block is freed (up to 32 MiB), after which big arrays come from the
    heap, grow by copying and are kept after being freed.  False without the extension
    or off glibc.
    """
    return bool(_ctrec is not None and _ctrec.mmap_threshold(int(nbytes)))


def label(docs: NDArray[np.int64], keys: NDArray[np.int64], values: NDArray[np.float64]) -> Any:
    """Return ``values`` looked up by document: ``out[i] = values[j]`` where ``keys[j] == docs[i]``.

    ``docs`` may have any shape; ``keys`` are distinct int64 ids, ``values`` one float per
    key. Cells whose document is not a key (padding, unjudged documents) are NaN. The
    same answer as a ``searchsorted`` lookup, from a hash table in C.

    Raises:
        RuntimeError: the extension is not available (check :data:`AVAILABLE`).
    """
    docs = np.ascontiguousarray(docs, dtype=np.int64)
    out = np.empty(docs.shape, dtype=np.float64)
    _module().label(
        docs,
        np.ascontiguousarray(keys, dtype=np.int64),
        np.ascontiguousarray(values, dtype=np.float64),
        out,
    )
    return out
