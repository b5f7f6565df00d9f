"""Signals judging sends; other apps (metrics) subscribe without judging importing them."""

from django.dispatch import Signal

#: Sent after commit whenever judgments of a collection changed.
#: Keyword arguments: ``collection_id`` (int), ``query_ids`` (frozenset[int]),
#: ``version`` (int, the collection's new ``judgments_version``), ``bulk`` (bool).
judgments_changed = Signal()
