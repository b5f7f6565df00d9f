"""Signals judging sends; other apps (metrics) subscribe without judging importing them."""

from django.dispatch import Signal

#: Sent after commit whenever judgments of a collection changed (see also
#: ``judgments_changing`` below, sent before commit for changes that are not bulk).
#: Keyword arguments: ``collection_id`` (int), ``query_ids`` (frozenset[int]),
#: ``version`` (int, the collection's new ``judgments_version``), ``bulk`` (bool).
judgments_changed = Signal()

#: Sent inside the transaction that changed the judgments of a few queries (one judgment
#: recorded or deleted, one adjudication), once the live grades are refreshed. Receivers'
#: writes commit or roll back with the change, so a request that records one judgment
#: returns with everything derived from it current; bulk changes are announced only after
#: commit (``judgments_changed`` with ``bulk=True``). Keyword arguments: ``collection_id``
#: (int), ``query_ids`` (frozenset[int]), ``version`` (int).
judgments_changing = Signal()

#: Sent after commit when an import added documents to a collection. Keyword arguments:
#: ``collection_id`` (int), ``count`` (int, the documents created).
documents_added = Signal()
