"""A collection's docno → document pk index, persisted on disk and shared by processes.

Submitting a run maps up to a million distinct docnos to document pks. Asking the
database (``external_id IN (...)`` or a temporary table joined in PostgreSQL) takes
seconds at W1 scale, so large runs use an index instead: every document's docno hashed
to 64 bits (:func:`metrics.live.scoring.docno_hashes`), sorted, with the pks and the docnos
themselves (every hash match is confirmed by comparing docnos, so a collision can never
map a docno to the wrong document).

**Persisted, not rebuilt per process.** The index is an Arrow IPC file in
``GRADED_DOCNO_INDEX_DIR`` (default ``MEDIA_ROOT/docno-index``), memory-mapped by every
process that uses it: a fresh web process opens it in milliseconds instead of reading
2.5M documents (≈5 s). Processes on other hosts share it when they share the directory;
otherwise each host builds its own copy once.

**Validity.** A file is named after its collection, the collection's current
:class:`~metrics.models.DocnoIndexToken` and the largest pk it covers:

* a document **edited** (its docno may have changed) or **deleted** gets its collection a
  new random token (``post_save``/``post_delete`` receivers below, in the same
  transaction), so every process ignores the old files from the commit on;
* documents **added** later are simply absent from the index: the lookup leaves them
  unresolved and the caller looks them up by id (exact); after the submission commits,
  the documents it resolved that way are merged into a new file (when there are at least
  :data:`MERGE_MIN`), so the next submission finds them in the index.

Because the token is read before the documents, an index built concurrently with an
edit is either labelled with the new token and holds the new docnos, or holds the old
ones under the old token, which nobody uses any more.
"""

from __future__ import annotations

import os
import secrets
import tempfile
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv
from django.conf import settings
from django.db import connection, transaction
from django.db.models.signals import post_delete, post_save

from judging.models import Document
from metrics.engine import _strings
from metrics.live import scoring
from metrics.models import DocnoIndexToken

CACHE_SIZE = 4  # collections whose index a process keeps open
MERGE_MIN = 1000  # merge documents resolved outside the index when at least this many

_cache: OrderedDict[int, DocnoIndex] = OrderedDict()
_lock = threading.Lock()


@dataclass(frozen=True)
class DocnoIndex:
    """Sorted docno hashes of a collection with their pks and docnos (aligned)."""

    collection_id: int
    token: int
    max_pk: int
    hashes: np.ndarray
    pks: np.ndarray
    docnos: pa.Array

    def lookup(self, values: pa.Array) -> np.ndarray:
        """Return the pk of every docno in ``values`` (binary or string), -1 where absent."""
        pks = np.full(len(values), -1, dtype=np.int64)
        if not len(self.hashes) or not len(values):
            return pks
        hashes = scoring.docno_hashes(values)
        at = np.minimum(scoring.sorted_search(self.hashes, hashes), len(self.hashes) - 1)
        candidates = np.flatnonzero(self.hashes[at] == hashes)
        if len(candidates):
            same = pc.equal(
                self.docnos.take(_strings.arrow_ints(at[candidates])),
                values.cast(pa.large_binary()).take(_strings.arrow_ints(candidates)),
            )
            confirmed = candidates[_strings.bool_values(same)]
            pks[confirmed] = self.pks[at[confirmed]]
        return pks


def index_dir() -> Path:
    """Return the directory of the persisted indexes (created on demand)."""
    configured = getattr(settings, "GRADED_DOCNO_INDEX_DIR", "")
    path = Path(configured) if configured else Path(settings.MEDIA_ROOT) / "docno-index"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _prefix(collection_id: int, token: int) -> str:
    return f"c{collection_id}-t{token & (2**64 - 1):016x}-m"


def current_token(collection_id: int) -> int:
    """Return the collection's index token, creating one on first use (one indexed query)."""
    token = (
        DocnoIndexToken.objects.filter(collection_id=collection_id)
        .values_list("token", flat=True)
        .first()
    )
    if token is None:
        DocnoIndexToken.objects.bulk_create(
            [DocnoIndexToken(collection_id=collection_id, token=_new_token())],
            ignore_conflicts=True,
        )
        token = DocnoIndexToken.objects.values_list("token", flat=True).get(
            collection_id=collection_id
        )
    return token


def _new_token() -> int:
    return secrets.randbits(63)


def invalidate(collection_id: int) -> None:
    """Give the collection a new token: every process stops using its index files."""
    DocnoIndexToken.objects.filter(collection_id=collection_id).update(token=_new_token())
    with _lock:
        _cache.pop(collection_id, None)


_done = threading.local()


def _invalidate_once(collection_id: int) -> None:
    """Invalidate once per transaction, not once per document.

    Deleting a collection's documents sends ``post_delete`` for every one of them (a
    million UPDATEs otherwise). A no-op on-commit callback marks the transaction that
    already invalidated: Django drops it on commit, on rollback and with a rolled-back
    savepoint, and the next change then invalidates again; so does :func:`_remember`
    when this thread reads an index in between (it holds the documents as they were).
    """
    if not connection.in_atomic_block:
        invalidate(collection_id)
        return
    marks: dict[int, Any] = getattr(_done, "marks", None) or {}
    _done.marks = marks
    previous = marks.get(collection_id)
    if previous is not None and any(entry[1] is previous for entry in connection.run_on_commit):
        return
    invalidate(collection_id)

    def sentinel() -> None:  # a fresh object per transaction; does nothing on commit
        return None

    marks[collection_id] = sentinel
    transaction.on_commit(sentinel)


def _on_document_saved(sender: type[Document], instance: Document, created: bool, **_: Any) -> None:
    """Invalidate the index of a saved existing document's collection (its docno may differ)."""
    if not created:
        _invalidate_once(instance.collection_id)


def _on_document_deleted(sender: type[Document], instance: Document, **_: Any) -> None:
    """Invalidate the index of a deleted document's collection."""
    _invalidate_once(instance.collection_id)


post_save.connect(_on_document_saved, sender=Document, dispatch_uid="metrics.live.docno_index.save")
post_delete.connect(
    _on_document_deleted, sender=Document, dispatch_uid="metrics.live.docno_index.delete"
)


def _newest_file(collection_id: int, token: int) -> tuple[Path, int] | None:
    """Return the file of this token covering the largest pk, and that pk, if any."""
    prefix = _prefix(collection_id, token)
    best: tuple[Path, int] | None = None
    with os.scandir(index_dir()) as entries:
        for entry in entries:
            if entry.name.startswith(prefix) and entry.name.endswith(".arrow"):
                try:
                    max_pk = int(entry.name[len(prefix) : -len(".arrow")])
                except ValueError:
                    continue
                if best is None or max_pk > best[1]:
                    best = (Path(entry.path), max_pk)
    return best


def _open(collection_id: int, token: int, path: Path, max_pk: int) -> DocnoIndex:
    """Memory-map an index file (zero-copy)."""
    with pa.memory_map(str(path)) as source:
        table = pa.ipc.open_file(source).read_all()
    return DocnoIndex(
        collection_id=collection_id,
        token=token,
        max_pk=max_pk,
        hashes=_strings.int_values(table.column("hash")),
        pks=_strings.int_values(table.column("pk")),
        docnos=_strings.one_chunk(table.column("docno")),
    )


def _write(index: DocnoIndex) -> None:
    """Write ``index`` atomically (temporary file + rename); remove superseded files."""
    directory = index_dir()
    name = f"{_prefix(index.collection_id, index.token)}{index.max_pk}.arrow"
    table = pa.table(
        {
            "hash": pa.array(index.hashes, pa.uint64()),
            "pk": pa.array(index.pks, pa.int64()),
            "docno": index.docnos,
        }
    )
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".arrow", dir=directory)
    try:
        with os.fdopen(fd, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        os.replace(tmp, directory / name)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    keep = directory / name
    for path in directory.glob(f"c{index.collection_id}-t*-m*.arrow"):
        if path != keep:  # older coverage or a stale token; open maps stay valid (POSIX)
            try:
                max_pk = int(path.name.rsplit("-m", 1)[1][: -len(".arrow")])
            except ValueError:
                continue
            stale = not path.name.startswith(_prefix(index.collection_id, index.token))
            if stale or max_pk < index.max_pk:
                path.unlink(missing_ok=True)


def _read_from_database(collection_id: int, token: int) -> DocnoIndex:
    """Read every (pk, docno) of a collection in one pass (COPY on PostgreSQL) and sort."""
    table = connection.ops.quote_name(Document._meta.db_table)
    sql = f"SELECT id, external_id FROM {table} WHERE collection_id = {int(collection_id)}"
    if connection.vendor == "postgresql":
        buffer = bytearray()
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY ({sql}) TO STDOUT (FORMAT csv)") as copy,
        ):
            for chunk in copy:
                buffer += chunk
        if buffer:
            read = pa_csv.read_csv(
                pa.BufferReader(bytes(buffer)),
                read_options=pa_csv.ReadOptions(column_names=["id", "docno"]),
                convert_options=pa_csv.ConvertOptions(
                    column_types={"id": pa.int64(), "docno": pa.large_binary()},
                    strings_can_be_null=False,
                ),
            )
            pks = read.column("id").to_numpy()
            docnos = read.column("docno").combine_chunks()
        else:
            pks, docnos = np.empty(0, dtype=np.int64), pa.array([], pa.large_binary())
    else:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            rows = cursor.fetchall()
        pks = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        docnos = pa.array([r[1].encode() for r in rows], pa.large_binary())
    hashes = scoring.docno_hashes(docnos)
    order = np.argsort(hashes, kind="stable")
    return DocnoIndex(
        collection_id=collection_id,
        token=token,
        max_pk=int(pks.max()) if len(pks) else 0,
        hashes=hashes[order],
        pks=pks[order],
        docnos=docnos.take(pa.array(order)),
    )


def _remember(index: DocnoIndex) -> DocnoIndex:
    """Keep ``index`` open; the next change to its collection must invalidate it again.

    An index read inside a transaction that already invalidated its collection holds that
    transaction's documents under the new token, so the transaction's mark is dropped:
    an edit after this point gets the collection another token.
    """
    marks = getattr(_done, "marks", None)
    if marks:
        marks.pop(index.collection_id, None)
    with _lock:
        _cache[index.collection_id] = index
        _cache.move_to_end(index.collection_id)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return index


def get(collection_id: int) -> DocnoIndex:
    """Return the collection's current index: kept open, else the newest file, else built.

    Costs one indexed query (the token) and one directory listing when the index is
    already open or on disk; reading the collection (seconds at millions of documents)
    only when no process has built the index since the last edit or deletion.
    """
    token = current_token(collection_id)
    with _lock:
        cached = _cache.get(collection_id)
    newest = _newest_file(collection_id, token)
    fresh = cached is not None and cached.token == token
    if fresh and (newest is None or newest[1] <= cached.max_pk):
        return cached
    if newest is not None:
        return _remember(_open(collection_id, token, *newest))
    index = _read_from_database(collection_id, token)
    _write(index)
    return _remember(index)


def prebuild(collection_id: int) -> DocnoIndex:
    """Make sure an index file covers every document of the collection now; return it.

    Called after a large import: a file that covers the collection's largest document pk
    is kept (nothing is read); otherwise the index is read from the database and written,
    so the next submission opens it instead of building it.
    """
    token = current_token(collection_id)
    newest = _newest_file(collection_id, token)
    largest = (
        Document.objects.filter(collection_id=collection_id)
        .order_by("-pk")
        .values_list("pk", flat=True)
        .first()
    ) or 0
    if newest is not None and newest[1] >= largest:
        return _remember(_open(collection_id, token, *newest))
    index = _read_from_database(collection_id, token)
    _write(index)
    return _remember(index)


def merge_later(collection_id: int, docnos: pa.Array, pks: np.ndarray) -> None:
    """After the current transaction commits, add these documents to the index file.

    They are documents the index did not cover (found or created by id). Nothing happens
    when there are fewer than :data:`MERGE_MIN`, when the transaction rolls back, or when
    the token changed meanwhile.
    """
    if len(pks) < MERGE_MIN:
        return
    docnos = docnos.cast(pa.large_binary())
    pks = np.asarray(pks, dtype=np.int64)
    transaction.on_commit(lambda: _merge(collection_id, docnos, pks))


def _merge(collection_id: int, docnos: pa.Array, pks: np.ndarray) -> None:
    """Insert committed documents into the sorted index and persist it as a new file."""
    index = get(collection_id)
    known = index.lookup(docnos) >= 0  # another process may have merged them already
    docnos, pks = docnos.filter(pa.array(~known)), pks[~known]
    if not len(pks):
        return
    hashes = scoring.docno_hashes(docnos)
    order = np.argsort(hashes, kind="stable")
    at = np.searchsorted(index.hashes, hashes[order])
    n_old = len(index.hashes)
    permutation = np.insert(np.arange(n_old), at, n_old + np.arange(len(pks)))
    merged = DocnoIndex(
        collection_id=collection_id,
        token=index.token,
        max_pk=max(index.max_pk, int(pks.max())),
        hashes=np.insert(index.hashes, at, hashes[order]),
        pks=np.insert(index.pks, at, pks[order]),
        docnos=pa.concat_arrays([index.docnos, docnos.take(pa.array(order))]).take(
            pa.array(permutation)
        ),
    )
    if current_token(collection_id) != index.token:
        return
    _write(merged)
    _remember(merged)


def clear_cache() -> None:
    """Forget the indexes this process keeps open (tests)."""
    with _lock:
        _cache.clear()
