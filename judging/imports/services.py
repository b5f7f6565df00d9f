"""Fill a collection from files in one transaction: topics, documents, pairs, judgments.

Shared by the coordinators' *Import files* page and ``manage.py import_collection``: each
file is read in its chosen format, or the one its name and first bytes suggest, and any
refused file aborts the whole import. Large uploads, of the page and of the REST judgment
endpoints (``.../judgments/``, ``.../qrels/``), are imported the same way by a worker
(:func:`file_import_start`, :func:`file_import_run`), with their progress.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import logging
import re
import secrets
import shutil
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.uploadedfile import UploadedFile
from django.db import DatabaseError, connections, transaction
from django.db.models import F
from django.utils import timezone

from graded import textpolicy
from judging import background, services
from judging.lists import importers, judgment_rows
from judging.lists import services as services_lists
from judging.lists.formats import Problems
from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats
from judging.lists.formats.common import describe
from judging.lists.services import ContentSummary
from judging.llm import native_labels as llm_labels
from judging.llm.services import maps_labels as llm_labels_maps
from judging.models import Collection, FileImport, Judge, JudgmentEvent, PoolEntry
from judging.services import ImportSummary, JudgmentRow

#: Bytes read from the start of a file to guess its format.
HEAD_BYTES = 4096


@dataclass(frozen=True)
class CollectionFiles:
    """The files to import (any may be missing); an empty format means "guess it"."""

    topics: IO[bytes] | None = None
    topics_format: str = ""
    documents: IO[bytes] | None = None
    documents_format: str = ""
    pairs: IO[bytes] | None = None
    judgments: IO[bytes] | None = None
    judgments_format: str = ""
    judge_name: str = "imported"
    judge_kind: str = Judge.Kind.HUMAN
    scale: str | None = None


@dataclass(frozen=True)
class FilesImported:
    """What each file did (None: no such file was given)."""

    topics: ContentSummary | None = None
    documents: ContentSummary | None = None
    pairs_added: int | None = None
    judge: Judge | None = None
    judgments: ImportSummary | None = None


def _format(source: IO[bytes], chosen: str, guess: Callable[[str, bytes], str]) -> str:
    """Return the chosen format, or the one the file's name and first bytes suggest."""
    if chosen:
        return chosen
    head = source.read(HEAD_BYTES)
    source.seek(0)
    return guess(str(getattr(source, "name", "") or ""), head)


def _name(source: IO[bytes], part: str) -> str:
    """Return the file's own name (without folders), or its part when it has none."""
    return Path(str(getattr(source, "name", "") or part)).name or part


@transaction.atomic
def collection_files_import(
    *,
    collection: Collection,
    files: CollectionFiles,
    actor: AbstractBaseUser | None = None,
    dry_run: bool = False,
) -> FilesImported:
    """Import ``files`` into ``collection``, all or nothing, checking every file in one round.

    Every file is read to its end, even after a problem: its good rows are written (and
    found by the files after it: judgments name the topics of the same import) and the
    whole transaction is rolled back at the end. Raises
    :class:`judging.lists.services.ImportRefused` with every problem of every file,
    each naming its file and line, or ``ValidationError`` naming a form field (a format or
    scale that does not exist); nothing is written then. With ``dry_run`` everything is
    checked and counted, and nothing is kept.
    """
    refused = Problems()
    topics = documents = judgments = None
    pairs_added = judge = None
    if files.topics is not None:
        found = Problems()
        fmt = _format(files.topics, files.topics_format, collection_formats.guess_topic_format)
        topics = services_lists.topics_import(
            collection=collection, source=files.topics, format=fmt, problems=found
        )
        refused.merge(found, part="topics", file=_name(files.topics, "topics"))
    if files.documents is not None:
        found = Problems()
        fmt = _format(
            files.documents, files.documents_format, collection_formats.guess_document_format
        )
        documents = services_lists.documents_import(
            collection=collection, source=files.documents, format=fmt, problems=found
        )
        refused.merge(found, part="documents", file=_name(files.documents, "documents"))
    if files.pairs is not None:
        found = Problems()
        rows, line_errors = importers.parse_pairs_collecting(files.pairs.read())
        try:
            with transaction.atomic():
                pairs_added = services.pool_add(
                    collection=collection,
                    pairs=rows,
                    source=PoolEntry.Source.IMPORT,
                    line_errors=line_errors,
                )
        except ValidationError as error:
            services_lists.add_service_problems(error, found)
        refused.merge(found, part="pairs", file=_name(files.pairs, "pairs"))
    if files.judgments is not None:
        try:
            judgments, judge = services_lists.judgment_list_import_named(
                collection=collection,
                judge_name=files.judge_name,
                judge_kind=files.judge_kind,
                source=files.judgments,
                format=files.judgments_format
                or judgment_formats.guess_format(str(getattr(files.judgments, "name", "") or "")),
                scale=files.scale,
                actor=actor,
                channel=JudgmentEvent.Channel.IMPORT,
            )
        except services_lists.ImportRefused as error:
            refused.merge(
                error.problems, part="judgments", file=_name(files.judgments, "judgments")
            )
    if refused:
        raise services_lists.ImportRefused(refused)
    if dry_run:
        transaction.set_rollback(True)
    return FilesImported(topics, documents, pairs_added, judge, judgments)


# --- large imports, in the background ----------------------------------------------------

log = logging.getLogger(__name__)
#: Roles of the files an import may carry, in the order they are imported.
ROLES = ("topics", "documents", "pairs", "judgments")
#: How often (bytes read) a running import publishes its progress.
PROGRESS_STEP = 1 << 20


def files_report(done: FilesImported) -> list[str]:
    """Return one line per imported file, e.g. ``topics: 3 new, 1 updated``."""
    report = []
    for name, content in (("topics", done.topics), ("documents", done.documents)):
        if content is not None:
            report.append(f"{name}: {content.created} new, {content.updated} updated")
    if done.pairs_added is not None:
        report.append(f"pairs: {done.pairs_added} added to the pool")
    if done.judgments is not None:
        report.append(
            f"judgments: {done.judgments.created} new, {done.judgments.changed} changed, "
            f"{done.judgments.unchanged} unchanged"
            + (f"; {done.judgments.gold} marked as gold" if done.judgments.gold else "")
        )
    return report


def imports_dir() -> Path:
    """Return where uploaded files wait for their import (shared with the workers)."""
    return Path(settings.MEDIA_ROOT) / "imports"


def runs_in_background(uploads: dict[str, UploadedFile | None]) -> bool:
    """Return whether files of this size are imported in the background.

    The threshold is ``GRADED_BACKGROUND_IMPORT_BYTES``, all files together; it applies to
    the *Import files* page and to judgment files posted over REST.
    """
    total = sum(upload.size or 0 for upload in uploads.values() if upload is not None)
    return total >= settings.GRADED_BACKGROUND_IMPORT_BYTES


@transaction.atomic
def file_import_start(
    *,
    collection: Collection,
    uploads: dict[str, UploadedFile | None],
    options: dict[str, Any],
    actor: AbstractBaseUser | None,
    kind: str = FileImport.Kind.FILES,
) -> FileImport:
    """Keep the uploaded files and queue their import (run after commit by a worker).

    ``uploads`` maps roles (:data:`ROLES`) to files; ``options`` holds the form's formats,
    judge name and kind, scale and dry run. A REST judgment upload (``kind`` ``judgments``
    or ``qrels``) gives one ``judgments`` file, and options naming the judge (``judge``,
    an id the request checked, or ``judge_name`` and ``judge_kind``), ``format``,
    ``scale`` and ``dry_run``. Return the queued :class:`FileImport`.
    """
    given = {role: upload for role, upload in uploads.items() if upload is not None}
    if not given or set(given) - set(ROLES):
        raise ValidationError({"files": f"Give files for some of: {', '.join(ROLES)}."})
    if kind != FileImport.Kind.FILES and set(given) != {"judgments"}:
        raise ValidationError({"file": "Give one judgment file."})
    if problems := textpolicy.field_problems(names={"judge_name": options.get("judge_name")}):
        raise ValidationError(problems)  # now, not when the worker creates the judge
    job = FileImport.objects.create(
        collection=collection,
        created_by=actor,
        kind=kind,
        options=options,
        bytes_total=sum(upload.size or 0 for upload in given.values()),
    )
    folder = imports_dir() / str(job.pk)
    folder.mkdir(parents=True, exist_ok=True)
    try:
        stored = {}
        for role, upload in given.items():
            with (folder / role).open("wb") as out:
                for chunk in upload.chunks():
                    out.write(chunk)
            stored[role] = str(upload.name or role)[:200]
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    job.files = stored
    job.save(update_fields=["files"])
    transaction.on_commit(lambda: background.task("judging.run_file_import").delay(job.pk))
    return job


class _Counting(io.RawIOBase):
    """A stored file read by the import; publishes the bytes read to the cache."""

    def __init__(self, path: Path, name: str, progress: _Progress) -> None:
        self._file = path.open("rb")
        self.name = name
        self._progress = progress
        self._seen = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        data = self._file.read(size)
        position = self._file.tell()
        if position > self._seen:
            self._progress.add(position - self._seen)
            self._seen = position
        return data

    def readinto(self, buffer: Any) -> int:
        data = self.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        return self._file.seek(offset, whence)

    def tell(self) -> int:
        return self._file.tell()

    def close(self) -> None:
        self._file.close()
        super().close()


class _Progress:
    """Bytes read by one import, published every :data:`PROGRESS_STEP` bytes."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.total = 0
        self._published = 0

    def add(self, count: int) -> None:
        self.total += count
        if self.total - self._published >= PROGRESS_STEP:
            cache.set(self.key, self.total, timeout=86400)
            self._published = self.total


class _Heartbeat:
    """While the import runs, say every ``GRADED_IMPORT_HEARTBEAT_SECONDS`` that it is alive.

    A daemon thread writes ``heartbeat_at`` on the row (in its own connection: the import's
    transaction is open in the worker's) and in the cache; a killed worker's thread dies
    with it, so its import falls silent and shows as interrupted. Where the database takes
    no second writer during the import's transaction (SQLite), the cache alone carries it.
    Leave this block only after the import's transaction has ended: its last write waits
    for the row lock that transaction holds.
    """

    def __init__(self, job: FileImport) -> None:
        self.job = job
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, name=f"file-import-{job.pk}-heartbeat", daemon=True
        )

    def _cached(self) -> None:
        timeout = max(60.0, 10 * settings.GRADED_IMPORT_STALE_SECONDS)
        cache.set(self.job.heartbeat_key, timezone.now(), timeout=timeout)

    def _beat(self) -> None:
        """Say the import is alive now: cache first, then the row (this thread's connection)."""
        self._cached()
        with contextlib.suppress(DatabaseError):  # SQLite's one writer is the import
            FileImport.objects.filter(
                pk=self.job.pk, status=FileImport.Status.RUNNING, attempts=self.job.attempts
            ).update(heartbeat_at=timezone.now())

    def _run(self) -> None:
        try:
            while not self._stop.wait(settings.GRADED_IMPORT_HEARTBEAT_SECONDS):
                self._beat()
        finally:
            connections.close_all()  # this thread's own connection

    def __enter__(self) -> _Heartbeat:
        """Start beating.

        The worker's own connection never writes the row: it is in the import's
        transaction, where a write would hold the row until the end.
        """
        self._cached()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        """Stop beating (after the import's transaction has ended)."""
        self._stop.set()
        self._thread.join()


class _Superseded(Exception):
    """A retry started the import again while this worker still ran it: this one yields."""


def file_import_run(*, import_id: int) -> FileImport | None:
    """Run a queued import to its end (a worker's task); return it, or None if gone.

    The import is all or nothing: :func:`collection_files_import` for the page's files,
    :func:`judgment_upload_import` for a REST judgment upload. It and its outcome (report
    and counts, or every refused line, or the failure) are written in **one transaction**,
    and only while this worker's attempt is the latest: so a worker killed at any moment
    leaves nothing written (the import stays *running*, falls silent and shows as
    interrupted: :func:`file_import_retry`), and one that a retry superseded writes
    nothing either. The files are deleted once the outcome is stored.
    """
    claimed = FileImport.objects.filter(pk=import_id, status=FileImport.Status.QUEUED).update(
        status=FileImport.Status.RUNNING,
        started_at=timezone.now(),
        heartbeat_at=timezone.now(),
        attempts=F("attempts") + 1,
    )
    job = FileImport.objects.select_related("collection", "created_by").filter(pk=import_id).first()
    if job is None or not claimed:  # gone, or another worker has it
        return job
    folder = imports_dir() / str(job.pk)
    progress = _Progress(job.progress_key)
    opened = {role: _Counting(folder / role, name, progress) for role, name in job.files.items()}
    try:
        with _Heartbeat(job), transaction.atomic():
            _import_and_record(job, opened, progress)
    except _Superseded:
        log.warning("file import %s: attempt %s superseded by a retry", job.pk, job.attempts)
        return FileImport.objects.filter(pk=job.pk).first()
    finally:
        for source in opened.values():
            source.close()
    shutil.rmtree(folder, ignore_errors=True)
    cache.delete(progress.key)
    cache.delete(job.heartbeat_key)
    return job


def _import_and_record(job: FileImport, opened: dict[str, _Counting], progress: _Progress) -> None:
    """Run the import (a savepoint) and store its outcome, in the caller's transaction.

    Raises :class:`_Superseded` (rolling back the caller's transaction) when the row no
    longer names this attempt as running.
    """
    options = job.options
    try:
        with transaction.atomic():
            if job.kind == FileImport.Kind.FILES:
                job.report = _files_run(job, opened)
            else:
                job.result = judgment_upload_import(
                    collection=job.collection,
                    kind=job.kind,
                    source=opened["judgments"],
                    options=options,
                    actor=job.created_by,
                )
                job.report = [_result_line(job.result)]
    except services_lists.ImportRefused as refused:
        job.status, job.errors = FileImport.Status.REFUSED, refused.problems.as_dicts()
        job.problems = refused.problems.messages()
    except judgment_rows.LineErrors as refused:
        job.status, job.errors = FileImport.Status.REFUSED, refused.errors
        job.problems = [describe(item) for item in refused.errors]
    except services.QuotaReached as refused:  # the judge's quota: said, with its numbers
        job.status, job.errors = FileImport.Status.REFUSED, refused.errors
        job.problems = [str(refused)]
    except ValidationError as error:
        job.status = FileImport.Status.REFUSED
        job.problems = textpolicy.cap_messages(error.messages)
        job.errors = _field_errors(error)
    except Exception:  # recorded on the job (and logged); the worker goes on
        log.exception("file import %s failed", job.pk)
        job.status = FileImport.Status.FAILED
        job.problems = ["The import failed unexpectedly; nothing was written. See the server log."]
        job.errors = [{"message": job.problems[0]}]
    else:
        job.status = FileImport.Status.DONE
        if options.get("dry_run"):
            job.report = ["Dry run, nothing written — would import:", *job.report]
    current = FileImport.objects.select_for_update().filter(pk=job.pk).first()
    if current is None or (current.status, current.attempts) != (
        FileImport.Status.RUNNING,
        job.attempts,
    ):
        raise _Superseded
    job.bytes_read = min(progress.total, job.bytes_total)
    job.finished_at = timezone.now()
    job.save(
        update_fields=[
            "status",
            "problems",
            "errors",
            "report",
            "result",
            "bytes_read",
            "finished_at",
        ]
    )


@transaction.atomic
def file_import_retry(*, job: FileImport) -> FileImport:
    """Queue an interrupted import again (its worker was killed); return it, as it is now.

    Only an import shown as *interrupted* (running, silent for
    ``GRADED_IMPORT_STALE_SECONDS``) may be retried, else ``ValidationError``. Nothing of
    the interrupted attempt was written (one transaction), so the retry imports the kept
    files from the start, exactly once: should the silent worker still be alive, its
    attempt is no longer the latest and writes nothing (:func:`file_import_run`). An
    import whose files are gone cannot run again: it is marked *failed*, saying so.
    """
    locked = FileImport.objects.select_for_update().get(pk=job.pk)
    if not locked.interrupted:
        raise ValidationError(
            {"status": f"Only an interrupted import can be retried; this one is {locked.state}."}
        )
    folder = imports_dir() / str(locked.pk)
    missing = [role for role in locked.files if not (folder / role).is_file()]
    if missing:
        locked.status = FileImport.Status.FAILED
        locked.problems = [
            f"The import was interrupted and its uploaded files are gone ({', '.join(missing)}); "
            "nothing was written: upload them again."
        ]
        locked.errors = [{"message": locked.problems[0]}]
        locked.finished_at = timezone.now()
        locked.save(update_fields=["status", "problems", "errors", "finished_at"])
        return locked
    locked.status = FileImport.Status.QUEUED
    locked.started_at = locked.heartbeat_at = None
    locked.save(update_fields=["status", "started_at", "heartbeat_at"])
    cache.delete(locked.heartbeat_key)
    cache.delete(locked.progress_key)
    transaction.on_commit(lambda: background.task("judging.run_file_import").delay(locked.pk))
    return locked


def _files_run(job: FileImport, opened: dict[str, _Counting]) -> list[str]:
    """Run the page's import of ``opened`` files; return its report."""
    options = job.options
    done = collection_files_import(
        collection=job.collection,
        files=CollectionFiles(
            **opened,
            topics_format=options.get("topics_format", ""),
            documents_format=options.get("documents_format", ""),
            judgments_format=options.get("judgments_format", ""),
            judge_name=options.get("judge_name") or "imported",
            judge_kind=options.get("judge_kind") or Judge.Kind.HUMAN,
            scale=options.get("scale") or None,
        ),
        actor=job.created_by,
        dry_run=bool(options.get("dry_run")),
    )
    return files_report(done)


def _result_line(result: dict[str, Any]) -> str:
    """Return the one report line of a judgment upload's counts."""
    return (
        f"judgments: {result['created']} new, {result['changed']} changed, "
        f"{result['unchanged']} unchanged"
        + (f"; {result['gold']} marked as gold" if result.get("gold") else "")
    )


def _field_errors(error: ValidationError) -> list[dict[str, Any]]:
    """Return a ``ValidationError`` as API error items (naming the field when it has one)."""
    if hasattr(error, "error_dict"):
        return [
            {"message": message, "field": field}
            for field, messages in error.message_dict.items()
            for message in messages
        ][: textpolicy.MAX_ERRORS]
    return [{"message": message} for message in textpolicy.cap_messages(error.messages)]


# --- judgment files posted over REST ----------------------------------------------------


@transaction.atomic
def judgment_rows_record(
    *,
    collection: Collection,
    judge: Judge,
    rows: Iterable[JudgmentRow],
    errors: list[judgment_rows.LineError],
    actor: AbstractBaseUser | None,
    natives: dict[int, str] | None = None,
    raw_outputs: dict[int, str] | None = None,
) -> ImportSummary:
    """Record rows posted to ``.../judgments/`` (a batch or a file), all or nothing.

    An LLM judge's native labels are mapped onto 0–4 (unless ``natives`` says they were)
    and kept with any raw outputs. Raises :class:`judging.lists.judgment_rows.LineErrors`
    listing every bad line (or item); nothing is written then.
    """
    if natives is None and llm_labels_maps(judge):
        rows, natives, more = llm_labels.mapped_rows(judge, list(rows))
        errors = [*errors, *more]
    summary = judgment_rows.import_rows(
        collection=collection, judge=judge, rows=rows, errors=errors, actor=actor
    )
    llm_labels.store_outputs(
        judge=judge,
        collection=collection,
        rows=rows,
        natives=natives or {},
        raw_outputs=raw_outputs or {},
    )
    return summary


def judgment_file_record(
    *,
    collection: Collection,
    judge: Judge,
    source: IO[bytes],
    name: str,
    actor: AbstractBaseUser | None,
) -> ImportSummary:
    """Record a qrels file (JSON Lines for a name ending in ``.jsonl``) as ``judge``'s labels.

    Read as a stream (an LLM judge's rows are kept, for their native labels); all or
    nothing, as :func:`judgment_rows_record`.
    """
    parse = (
        judgment_rows.rows_from_jsonl
        if name.lower().endswith(".jsonl")
        else judgment_rows.rows_from_qrels
    )
    rows, errors = parse(source)
    if judge.kind == Judge.Kind.LLM:  # their native labels and outputs are kept too
        rows = list(rows)
    return judgment_rows_record(
        collection=collection, judge=judge, rows=rows, errors=errors, actor=actor
    )


@transaction.atomic
def judgment_upload_import(
    *,
    collection: Collection,
    kind: str,
    source: IO[bytes],
    options: dict[str, Any],
    actor: AbstractBaseUser | None,
) -> dict[str, Any]:
    """Import a REST judgment upload in the background; return the counts the request would.

    ``kind`` ``judgments`` is a file posted to ``.../judgments/``
    (:func:`judgment_file_record`), ``qrels`` one posted to ``.../qrels/``
    (:func:`judging.lists.services.judgment_list_import`); ``options`` are
    :func:`file_import_start`'s. All or nothing, the judge created on the fly included:
    raises what the request would have answered with a 400 (line-numbered problems).
    """
    name = str(getattr(source, "name", "") or "")
    dry_run = bool(options.get("dry_run"))
    fmt = options.get("format") or judgment_formats.guess_format(name)
    if options.get("judge") is not None:
        judge = Judge.objects.filter(pk=options["judge"]).first()
        if judge is None:
            raise ValidationError({"judge": "The judge no longer exists."})
    elif kind == FileImport.Kind.QRELS:  # the judge is found or made inside the import
        summary, named = services_lists.judgment_list_import_named(
            collection=collection,
            judge_name=options.get("judge_name") or "",
            judge_kind=options.get("judge_kind") or "human",
            source=source,
            format=fmt,
            scale=options.get("scale") or None,
            dry_run=dry_run,
            actor=actor,
            channel=JudgmentEvent.Channel.API,
        )
        return services_lists.import_counts(summary, judge_id=named and named.pk, dry_run=dry_run)
    else:
        judge = services_lists.judge_for_import(
            name=options.get("judge_name") or "",
            kind=options.get("judge_kind") or "human",
            collection=collection,
        )
    if kind == FileImport.Kind.JUDGMENTS:
        summary = judgment_file_record(
            collection=collection, judge=judge, source=source, name=name, actor=actor
        )
        return {
            "created": summary.created,
            "changed": summary.changed,
            "unchanged": summary.unchanged,
            "version": summary.version,
            "judge": judge.pk,
        }
    if kind != FileImport.Kind.QRELS:
        raise ValueError(f"not a judgment upload: {kind!r}")
    summary = services_lists.judgment_list_import(
        collection=collection,
        judge=judge,
        source=source,
        format=fmt,
        scale=options.get("scale") or None,
        dry_run=dry_run,
        actor=actor,
        channel=JudgmentEvent.Channel.API,
    )
    if dry_run:  # the judge created on the fly goes too
        transaction.set_rollback(True)
    return services_lists.import_counts(summary, judge_id=judge.pk, dry_run=dry_run)


# --- files kept between tries of the Import files page -----------------------------------

#: The options of an import the Import files page passes on (besides ``dry_run``).
OPTIONS = (
    "topics_format",
    "documents_format",
    "judgments_format",
    "judge_name",
    "judge_kind",
    "scale",
)
#: Roles of the files the Import files page takes.
PAGE_ROLES = ("topics", "documents", "judgments")
#: Kept files older than this (seconds) are deleted when files are next kept.
KEPT_MAX_AGE = 86400
_TOKEN = re.compile(r"[0-9a-f]{32}")


@dataclass(frozen=True)
class KeptFiles:
    """Uploads kept on the server after a refused try, so the next try need not repeat them.

    ``token`` names their folder; ``names`` maps roles to the names they were uploaded
    under. Stored in the coordinator's session as :meth:`as_dict` (never a path).
    """

    token: str = ""
    names: dict[str, str] = dataclasses.field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> KeptFiles:
        """Return the kept files a session recorded (none when it is not well formed)."""
        if not isinstance(data, dict) or not _TOKEN.fullmatch(str(data.get("token", ""))):
            return cls()
        names = data.get("names")
        if not isinstance(names, dict):
            return cls()
        return cls(data["token"], {r: str(n) for r, n in names.items() if r in PAGE_ROLES})

    def as_dict(self) -> dict[str, Any]:
        """Return what the session stores."""
        return {"token": self.token, "names": dict(self.names)}

    def path(self, role: str) -> Path:
        """Return where the file of ``role`` is kept."""
        return imports_dir() / "kept" / self.token / role

    def open(self, role: str) -> File | None:
        """Return the kept file of ``role`` opened for reading, or None (gone or never kept)."""
        if role not in self.names or not self.token:
            return None
        try:
            return File(self.path(role).open("rb"), name=self.names[role])
        except OSError:
            return None


def kept_files_store(
    *, kept: KeptFiles, uploads: dict[str, UploadedFile | None], drop: Iterable[str] = ()
) -> KeptFiles:
    """Keep new ``uploads`` (roles to files) beside the files kept before; return all of them.

    A new upload replaces the kept file of its role; roles in ``drop`` are forgotten.
    Folders of kept files older than :data:`KEPT_MAX_AGE` are deleted on the way.
    """
    _delete_stale_kept()
    token = kept.token or secrets.token_hex(16)
    names = {role: name for role, name in kept.names.items() if role not in set(drop)}
    result = KeptFiles(token, names)
    folder = result.path("x").parent
    folder.mkdir(parents=True, exist_ok=True)
    for role in set(drop):
        result.path(role).unlink(missing_ok=True)
    for role, upload in uploads.items():
        if upload is None or role not in PAGE_ROLES:
            continue
        target = result.path(role)
        with target.open("wb") as out:
            for chunk in upload.chunks():
                out.write(chunk)
        names[role] = Path(str(upload.name or role)).name[:200]
    return KeptFiles(token, names)


def kept_files_delete(*, kept: KeptFiles) -> None:
    """Delete the kept files (after an import that went through)."""
    if kept.token:
        shutil.rmtree(imports_dir() / "kept" / kept.token, ignore_errors=True)


def _delete_stale_kept() -> None:
    """Delete folders of kept files older than :data:`KEPT_MAX_AGE`."""
    root = imports_dir() / "kept"
    if not root.is_dir():
        return
    limit = time.time() - KEPT_MAX_AGE
    for folder in root.iterdir():
        try:
            if folder.stat().st_mtime < limit:
                shutil.rmtree(folder, ignore_errors=True)
        except OSError:
            continue
