"""Whole-number query parameters: one parser for every page, offset, id and count.

Every integer a client writes in a query string (``limit``, ``offset``, ``page``, an id
filter, a version) is read here, so one rule holds across the API: ASCII digits only (an
optional leading ``-`` where negatives make sense), within the bounds the caller gives and
never beyond a signed 64-bit integer. Anything else (``1e3``, ``1.5``, ``abc``, a number of
twenty digits, a negative offset) is a ``ValidationError`` naming the parameter, which the
API renders as a 400: no value reaches the database as a number it cannot hold.
"""

from __future__ import annotations

from collections.abc import Mapping

from django.core.exceptions import ValidationError

#: The largest value a database integer column (and LIMIT/OFFSET) can hold: signed 64 bits.
MAX_BIGINT = 2**63 - 1
#: The largest id a database row can have.
MAX_ROW_ID = MAX_BIGINT
#: Longest digit string read (a signed 64-bit integer has at most 19 digits).
_MAX_DIGITS = 19


def parse_whole(value: str, name: str, *, minimum: int = 0, maximum: int = MAX_BIGINT) -> int:
    """Return ``value`` as an int from ``minimum`` to ``maximum``; else raise naming ``name``."""
    text = value.strip()
    digits = text[1:] if text.startswith("-") else text
    if not (digits and digits.isascii() and digits.isdigit() and len(digits) <= _MAX_DIGITS):
        raise ValidationError({name: f"A whole number from {minimum} to {maximum} is required."})
    number = int(text)
    if not minimum <= number <= maximum:
        raise ValidationError({name: f"Give a whole number from {minimum} to {maximum}."})
    return number


def whole_param(
    params: Mapping[str, str],
    name: str,
    *,
    minimum: int = 0,
    maximum: int = MAX_BIGINT,
    default: int | None = None,
) -> int | None:
    """Read query parameter ``name`` as a whole number in bounds; ``default`` when absent or empty.

    Raise ``django.core.exceptions.ValidationError`` naming the parameter otherwise (the
    API's exception handler turns it into a 400 with ``field`` set to ``name``).
    """
    value = params.get(name)
    if value is None or not value.strip():
        return default
    return parse_whole(value, name, minimum=minimum, maximum=maximum)
