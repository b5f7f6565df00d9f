"""Filling a collection from files (the import page and ``import_collection`` share it)."""

from __future__ import annotations

import io

import pytest

from judging.imports.services import CollectionFiles, collection_files_import
from judging.lists.services import ImportRefused
from judging.models import Document, Judgment, PoolEntry, Query

pytestmark = pytest.mark.django_db

TOPICS = b"<top>\n<num> Number: 7\n<title> clay soil\n</top>\n"
DOCS = b"a\tclay is heavy\nb\tsand drains\n"


def _file(name: str, data: bytes) -> io.BytesIO:
    handle = io.BytesIO(data)
    handle.name = name
    return handle


def test_every_file_in_one_go_with_guessed_formats(coll):
    files = CollectionFiles(
        topics=_file("topics.trec", TOPICS),
        documents=_file("docs.tsv", DOCS),
        pairs=_file("pairs.txt", b"7 a\n7 b\n"),
        judgments=_file("list.qrels", b"7 0 a 2\n7 0 b 0\n"),
        judge_name="panel",
    )
    done = collection_files_import(collection=coll, files=files)
    assert (done.topics.created, done.documents.created, done.pairs_added) == (1, 2, 2)
    assert (done.judge.name, done.judgments.created) == ("panel", 2)
    assert coll.queries.get().text == "clay soil"
    assert PoolEntry.objects.filter(collection=coll).count() == 2
    assert sorted(Judgment.objects.values_list("grade", flat=True)) == [0, 2]


def test_a_refused_file_rolls_back_the_files_before_it(coll):
    files = CollectionFiles(
        topics=_file("topics.trec", TOPICS),
        documents=_file("docs.tsv", DOCS),
        judgments=_file("list.qrels", b"7 0 a 2\n7 0 zz 1\n"),
    )
    with pytest.raises(ImportRefused) as refused:
        collection_files_import(collection=coll, files=files)
    assert "line 2: unknown document id" in str(refused.value)
    assert not Query.objects.exists() and not Document.objects.exists()
    assert not Judgment.objects.exists()


def test_dry_run_counts_and_keeps_nothing(coll):
    files = CollectionFiles(topics=_file("t.tsv", b"1\tclay\n2\tsand\n"), topics_format="tsv")
    done = collection_files_import(collection=coll, files=files, dry_run=True)
    assert done.topics.created == 2 and done.documents is None and done.judgments is None
    assert not Query.objects.exists()
