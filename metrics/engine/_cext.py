"""Load the optional C extension (``metrics/engine/_ctrec.c``) once, for every engine module.

Its own module so that the modules using it (:mod:`metrics.engine._creader`, the C
reader; :mod:`metrics.engine._strings`, which hashes packed docnos with it) import it
without importing each other. :data:`MODULE` is None, and :data:`WHY_NOT` says why, when
the extension is not built, is older than this source, or ``GRADED_NO_CEXT=1`` is set.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType


def _load() -> tuple[ModuleType | None, str]:
    if os.environ.get("GRADED_NO_CEXT", "") not in ("", "0"):
        return None, "disabled by GRADED_NO_CEXT"
    try:
        module = importlib.import_module(f"{__package__}._ctrec")
    except ImportError as exc:
        return None, f"not built ({exc})"
    if not hasattr(module, "hash_packed"):  # built from an older _ctrec.c (no ragged=)
        return None, "out of date (rebuild it: python setup.py build_ext --inplace)"
    return module, ""


MODULE, WHY_NOT = _load()
