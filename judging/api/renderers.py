"""TREC qrels as a response format."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rest_framework.renderers import BaseRenderer
from rest_framework.response import Response


def format_grade(grade: float) -> str:
    """Return a grade as an integer when whole, else with up to six decimals."""
    value = float(grade)
    if value.is_integer():
        return str(int(value))
    return f"{value:.6f}".rstrip("0").rstrip(".")


class QrelsRenderer(BaseRenderer):
    """Render ``[{"qid", "docno", "grade", ...}]`` as ``qid 0 docno grade`` lines."""

    media_type = "text/plain"
    format = "qrels"
    charset = "utf-8"

    def render(
        self,
        data: Sequence[Mapping[str, Any]] | None,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        """Return the rows as qrels text, one line per row."""
        if not data:
            return b""
        lines = (f"{row['qid']} 0 {row['docno']} {format_grade(row['grade'])}\n" for row in data)
        return "".join(lines).encode(self.charset)


class TextResponse(Response):
    """A response that keeps its Content-Type when the rendered body is empty.

    DRF drops the header of an empty body; an empty qrels file is still ``text/plain``.
    """

    @property
    def rendered_content(self) -> bytes:
        """Render, then restore the renderer's Content-Type if DRF removed it."""
        content = super().rendered_content
        renderer = getattr(self, "accepted_renderer", None)
        if not content and renderer is not None and not self.has_header("Content-Type"):
            charset = f"; charset={renderer.charset}" if renderer.charset else ""
            self["Content-Type"] = f"{renderer.media_type}{charset}"
        return content
