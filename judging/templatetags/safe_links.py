"""Template filter that renders only http(s) addresses as links (the one place for it)."""

from __future__ import annotations

from typing import Any

from django import template

from graded.textpolicy import safe_link

register = template.Library()


@register.filter(name="safe_link")
def safe_link_filter(url: Any) -> str:
    """Return ``url`` if it is an http(s) address, else ``""`` (so templates drop the link)."""
    return safe_link(url) or ""
