"""Fill a collection from files in one transaction: topics, documents, pairs, judgments.

Shared by the coordinators' *Import files* page and ``manage.py import_collection``: each
file is read in its chosen format, or the one its name and first bytes suggest, and any
refused file aborts the whole import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

from . import importers, services, services_lists
from .formats import collections as collection_formats
from .formats import judgments as judgment_formats
from .models import Collection, Judge, JudgmentEvent, PoolEntry
from .services import ImportSummary
from .services_lists import ContentSummary

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


@transaction.atomic
def collection_files_import(
    *,
    collection: Collection,
    files: CollectionFiles,
    actor: AbstractBaseUser | None = None,
    dry_run: bool = False,
) -> FilesImported:
    """Import ``files`` into ``collection``, all or nothing.

    Raises :class:`judging.services_lists.ImportRefused` (every problem by line) or
    ``ValidationError`` (naming the field); nothing is written then. With ``dry_run``
    everything is checked and counted, and nothing is kept.
    """
    topics = documents = judgments = None
    pairs_added = judge = None
    if files.topics is not None:
        fmt = _format(files.topics, files.topics_format, collection_formats.guess_topic_format)
        topics = services_lists.topics_import(
            collection=collection, source=files.topics, format=fmt
        )
    if files.documents is not None:
        fmt = _format(
            files.documents, files.documents_format, collection_formats.guess_document_format
        )
        documents = services_lists.documents_import(
            collection=collection, source=files.documents, format=fmt
        )
    if files.pairs is not None:
        pairs_added = services.pool_add(
            collection=collection,
            pairs=importers.parse_pairs(files.pairs.read()),
            source=PoolEntry.Source.IMPORT,
        )
    if files.judgments is not None:
        judge = services_lists.judge_for_import(name=files.judge_name, kind=files.judge_kind)
        judgments = services_lists.judgment_list_import(
            collection=collection,
            judge=judge,
            source=files.judgments,
            format=files.judgments_format
            or judgment_formats.guess_format(str(getattr(files.judgments, "name", "") or "")),
            scale=files.scale,
            actor=actor,
            channel=JudgmentEvent.Channel.IMPORT,
        )
    if dry_run:
        transaction.set_rollback(True)
    return FilesImported(topics, documents, pairs_added, judge, judgments)
