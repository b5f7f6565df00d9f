"""Judgment lists, topics and documents in and out, as pure generators (no Django).

Every reader takes lines (or a binary stream) and yields records or :class:`Problem` s;
every writer takes rows and yields text lines, so that views can stream them and
importers can work through files too big for memory. Every text value a reader accepts
goes through :func:`text` (one place for the text policy: NUL and lone surrogates are
refused, naming the line).
"""

from __future__ import annotations

from .common import MAX_REPORTED, FormatError, Problem, Problems, iter_lines, text

__all__ = ["MAX_REPORTED", "FormatError", "Problem", "Problems", "iter_lines", "text"]
