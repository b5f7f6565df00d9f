"""Tabs: show one section of a page at a time (page grammar, docs/ui.md).

A page with several sections names them once, as ``(key, label)`` pairs; the chosen one
comes from the query (``?tab=``, or another parameter for a choice inside a tab, such as
the agreement tab's ``?part=``). A form that was posted names its own tab instead, so it
comes back to it. An unknown or missing key opens the page's fallback section when it
names one (an older link's meaning), else the first, so an old bookmark or a hand-typed
address still opens the page. ``templates/_tabs.html`` draws the ``?tab=`` links.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def tab_context(
    params: Mapping[str, str],
    sections: Sequence[tuple[str, str]],
    *,
    name: str = "tab",
    chosen: str | None = None,
    fallback: str | None = None,
) -> dict[str, object]:
    """Return ``{"tabs": sections, "tab": the chosen key}`` for a template.

    ``params`` is the request's query (``request.GET``), read at ``name``; ``chosen`` (a
    posted form's own tab) is taken instead when given. ``fallback`` is the section for
    a key that is missing or unknown, when it is one of ``sections``; else the first.
    ``sections`` must not be empty.
    """
    if not sections:
        raise ValueError("a page with tabs needs at least one section")
    keys = [key for key, _ in sections]
    wanted = chosen if chosen is not None else params.get(name, "")
    if wanted not in keys:
        wanted = fallback if fallback in keys else keys[0]
    return {"tabs": list(sections), "tab": wanted}
