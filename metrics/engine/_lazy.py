"""Import heavy optional modules (pyarrow) on first use.

Reading clean TREC files and evaluating needs only numpy; pyarrow's import alone
adds ~47 MiB of resident memory and a tenth of a second to ``manage.py evaluate``,
so it is imported only when an input needs it (JSON, unusual TREC text, Arrow
arrays given by the caller).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any


class LazyModule:
    """Stand in for module ``name``; import it when an attribute is first read."""

    def __init__(self, name: str) -> None:
        """Remember the module's name (nothing is imported yet)."""
        self._lazy_name = name
        self._lazy_module: ModuleType | None = None

    def __getattr__(self, attr: str) -> Any:
        """Return ``attr`` of the imported module."""
        if attr.startswith("_lazy_"):
            raise AttributeError(attr)
        module = self._lazy_module
        if module is None:
            module = self._lazy_module = importlib.import_module(self._lazy_name)
        return getattr(module, attr)
