"""Judgment lists, topics and documents in and out, as pure generators (no Django).

Every reader takes lines (or a binary stream) and yields records or :class:`Problem` s;
every writer takes rows and yields text lines, so that views can stream them and
importers can work through files too big for memory. Every text value a reader accepts
goes through :func:`text`, :func:`ident` or :func:`url`, JSON through :func:`json_value`
and bytes through :func:`iter_lines`: thin wrappers of :mod:`graded.textpolicy` (the one
text policy of the project) that name the line of every refusal.
"""

from __future__ import annotations

from judging.lists.formats.common import (
    MAX_REPORTED,
    FormatError,
    Problem,
    Problems,
    ident,
    iter_lines,
    json_value,
    text,
    url,
)

__all__ = [
    "MAX_REPORTED",
    "FormatError",
    "Problem",
    "Problems",
    "ident",
    "iter_lines",
    "json_value",
    "text",
    "url",
]
