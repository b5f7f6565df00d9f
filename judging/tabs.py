"""Tabs: show one section of a page at a time (page grammar, docs/ui.md).

A page with several sections names them once, as ``(key, label)`` pairs; the chosen one
comes from ``?tab=``. An unknown or missing key falls back to the first section, so an
old bookmark or a hand-typed address still opens the page. ``templates/_tabs.html`` draws
the links.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def tab_context(
    params: Mapping[str, str], sections: Sequence[tuple[str, str]]
) -> dict[str, object]:
    """Return ``{"tabs": sections, "tab": the chosen key}`` for a template.

    ``params`` is the request's query (``request.GET``); ``sections`` must not be empty.
    """
    if not sections:
        raise ValueError("a page with tabs needs at least one section")
    keys = [key for key, _ in sections]
    chosen = params.get("tab", "")
    return {"tabs": list(sections), "tab": chosen if chosen in keys else keys[0]}
