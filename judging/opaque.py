"""Opaque ids: a keyed, reversible scramble of primary keys (pure Python, no Django).

Judges must not see the pool's primary keys: they are handed out in insertion order, so
a pair's id says when it entered the pool and which pairs entered with it (a gold pair
marked between two submissions stood out by its id alone). An opaque id is the primary
key put through a keyed permutation of the integers ``0 … 2**52 − 1``: a balanced
Feistel network of :data:`ROUNDS` rounds over two 26-bit halves, each round's function
a keyed BLAKE2b of the round number and the half. Without the key the ids look like
independent random numbers: sorting them gives no order, and neighbours in the pool get
unrelated ids. With it, :func:`decode` inverts :func:`encode` exactly, so nothing needs
storing. 52 bits keep every id a safe integer in JavaScript (below 2**53).

Edge cases: a key of fewer than 16 bytes, a primary key outside ``0 … 2**52 − 1`` and a
non-integer are refused with ValueError by :func:`encode`; :func:`decode` answers None
for anything that is not an id of that range (a bool, a negative number, a number of
2**52 or more), so a hostile id in a URL is a plain "not found".
"""

from __future__ import annotations

import hashlib

__all__ = ["BITS", "ROUNDS", "decode", "encode"]

#: Width of an opaque id in bits (two halves of half that width).
BITS = 52
#: Feistel rounds (four make a keyed pseudo-random permutation; the rest is margin).
ROUNDS = 8
_HALF = BITS // 2
_MASK = (1 << _HALF) - 1
_LIMIT = 1 << BITS


def _check_key(key: bytes) -> None:
    if not isinstance(key, bytes | bytearray) or not 16 <= len(key) <= 64:
        raise ValueError("key: give 16 to 64 bytes")


def _round(key: bytes, number: int, half: int) -> int:
    digest = hashlib.blake2b(
        number.to_bytes(1, "big") + half.to_bytes(4, "big"), key=bytes(key), digest_size=4
    ).digest()
    return int.from_bytes(digest, "big") & _MASK


def encode(pk: int, key: bytes) -> int:
    """Return the opaque id of primary key ``pk`` under ``key`` (16–64 bytes)."""
    _check_key(key)
    if isinstance(pk, bool) or not isinstance(pk, int) or not 0 <= pk < _LIMIT:
        raise ValueError(f"pk: a whole number from 0 to 2**{BITS} - 1")
    left, right = pk >> _HALF, pk & _MASK
    for number in range(ROUNDS):
        left, right = right, left ^ _round(key, number, right)
    return (left << _HALF) | right


def decode(token: object, key: bytes) -> int | None:
    """Return the primary key whose opaque id under ``key`` is ``token``, or None."""
    _check_key(key)
    if isinstance(token, bool) or not isinstance(token, int) or not 0 <= token < _LIMIT:
        return None
    left, right = token >> _HALF, token & _MASK
    for number in reversed(range(ROUNDS)):
        left, right = right ^ _round(key, number, left), left
    return (left << _HALF) | right
