"""One name for a query id and a document id, in and out: ``qid`` and ``docno``.

Responses used to name them ``external_id`` (the model field) while requests said ``qid``
and ``docno``. Responses now carry ``qid``/``docno`` and keep ``external_id`` as a
deprecated alias for one API version (docs/api.md, "Deprecations"); requests accept both
spellings, read here before the readers see the item.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from judging.lists.formats import FormatError

#: Old spellings a request item may use, by the name the readers expect.
ALIASES: dict[str, tuple[str, ...]] = {
    "qid": ("external_id",),
    "docno": ("external_id",),
    "query": ("qid",),
    "document": ("docno",),
}


def canonical_item(item: Any, line: int, names: tuple[str, ...]) -> Any:
    """Return ``item`` with each alias of ``names`` renamed to its canonical name.

    An item giving both spellings with different values is refused (``FormatError`` naming
    the 1-based ``line``); the same value twice is accepted. An item without aliases, or
    that is not a mapping, is returned as it is (the reader refuses what it must).
    """
    if not isinstance(item, Mapping):
        return item
    if not any(alias in item for name in names for alias in ALIASES.get(name, ())):
        return item
    renamed = item.dict() if hasattr(item, "dict") else dict(item)  # a form's QueryDict
    for name in names:
        for alias in ALIASES.get(name, ()):
            if alias not in renamed:
                continue
            value = renamed.pop(alias)
            if name in renamed and renamed[name] != value:
                raise FormatError(
                    line, f"{alias} and {name} name different ids; give one of them", name
                )
            renamed[name] = value
    return renamed
