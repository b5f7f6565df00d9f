"""``{{ moment|when }}``: a date and time as one unbreakable ``<time>`` token.

Every page shows a moment the same way, ``2026-12-02 14:33`` (``|when:"s"`` adds the
seconds, ``|when:"day"`` is the date alone), in a ``<time datetime="…">`` that a phone's
narrow column never wraps mid-token (``time { white-space: nowrap }`` in graded.css).
"""

from __future__ import annotations

from datetime import date, datetime

from django import template
from django.utils.dateformat import format as date_format
from django.utils.html import format_html

register = template.Library()

#: The shown format of each precision.
FORMATS = {"": "Y-m-d H:i", "s": "Y-m-d H:i:s", "day": "Y-m-d"}


@register.filter(expects_localtime=True)
def when(value: datetime | date | None, precision: str = "") -> str:
    """Return ``value`` as ``<time datetime="ISO">shown</time>``; empty for ``None``."""
    if value is None or value == "":
        return ""
    shown = date_format(value, FORMATS.get(precision, FORMATS[""]))
    return format_html('<time datetime="{}">{}</time>', value.isoformat(), shown)
