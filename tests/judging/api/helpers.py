"""Helpers of the judging API tests."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from judging.models import Collection, Document, Query


@dataclass
class World:
    """A collection ``demo`` with queries, documents, a pool and users of every role."""

    coll: Collection
    queries: dict[str, Query]
    docs: dict[str, Document]
    users: dict[str, Any]
