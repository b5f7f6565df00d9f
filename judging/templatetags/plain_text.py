"""``plain_text``: a document body as plain text, block elements kept apart by a space."""

from __future__ import annotations

import re
from typing import Any

from django import template
from django.utils.html import strip_tags

register = template.Library()

#: Tags whose start or end separates words: paragraphs, list items, table cells, breaks.
_BLOCK = re.compile(
    r"</?(?:p|li|ul|ol|dl|dt|dd|div|h[1-6]|tr|td|th|table|blockquote|pre|section|article|"
    r"header|footer|br|hr)\b[^>]*>",
    re.IGNORECASE,
)


def plain_text(html: str) -> str:
    """Return ``html`` without tags, each block boundary a space, whitespace collapsed.

    ``<li>$599.</li><li>Orbit</li>`` gives ``$599. Orbit`` where ``striptags`` gave
    ``$599.Orbit`` (issue 34, item 6). Entities stay escaped as in the input.
    """
    return " ".join(strip_tags(_BLOCK.sub(" ", html)).split())


@register.filter(name="plain_text")
def plain_text_filter(value: Any) -> str:
    """Template filter form of :func:`plain_text`."""
    return plain_text(str(value or ""))
