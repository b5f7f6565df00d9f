"""The bulk docno → document pk lookup of large runs is exact (hash matches are confirmed)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from judging.models import Document
from metrics import services
from metrics.live import docno_index, scoring
from tests import factories

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _index_dir(settings, tmp_path):
    """Keep each test's persisted indexes apart."""
    settings.GRADED_DOCNO_INDEX_DIR = str(tmp_path / "docno-index")
    docno_index.clear_cache()
    yield
    docno_index.clear_cache()


def test_docno_hashes_agree_for_fixed_and_variable_widths():
    fixed = pa.array([b"D001", b"D002", b"D003"], pa.binary())
    mixed = pa.array([b"D001", b"x", b"D002", b"", b"D003", b"a\tlonger id"], pa.binary())
    h_fixed, h_mixed = scoring.docno_hashes(fixed), scoring.docno_hashes(mixed)
    assert h_fixed.dtype == np.uint64
    assert h_fixed.tolist() == h_mixed[[0, 2, 4]].tolist()
    assert len(set(h_mixed.tolist())) == len(mixed)
    assert scoring.docno_hashes(pa.array(["D001", "D002"])).tolist() == h_fixed[:2].tolist()


def _reference_hash(value: bytes) -> int:
    """The documented hash, one value at a time in Python integers."""
    mask = (1 << 64) - 1
    h, power = 0, 1
    for byte in value:
        power = power * int(scoring._HASH_MULTIPLIER) & mask
        h = (h + (byte + 1) * power) & mask
    h ^= len(value) * 0x9E3779B97F4A7C15 & mask
    for shift, multiplier in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB), (31, None)):
        h ^= h >> shift
        if multiplier:
            h = h * multiplier & mask
    return h


@pytest.mark.parametrize("block", [1, 2, 3, 1 << 16])
def test_docno_hashes_are_the_same_in_any_block_size(monkeypatch, block):
    """Blocks of fixed and of mixed widths, a sliced array, an empty value, a null."""
    monkeypatch.setattr(scoring, "_HASH_BLOCK", block)
    values = [b"D001", b"D002", b"x", b"", b"D003", b"a\tlonger id", b"D004", b"D005"]
    whole = pa.array(values, pa.binary())
    got = scoring.docno_hashes(whole).tolist()
    assert got == [_reference_hash(v) for v in values]
    assert scoring.docno_hashes(whole.slice(3, 4)).tolist() == got[3:7]
    with_null = pa.array([b"D001", None, b"D002"], pa.binary())
    assert scoring.docno_hashes(with_null).tolist() == [got[0], _reference_hash(b""), got[1]]


def test_sorted_search_equals_searchsorted():
    rng = np.random.default_rng(3)
    haystack = np.sort(rng.integers(0, 10**9, 50_000))
    needles = rng.integers(0, 10**9, 20_000)
    assert (scoring.sorted_search(haystack, needles) == np.searchsorted(haystack, needles)).all()


@pytest.mark.parametrize("collide", [False, True])
def test_large_run_lookup_is_exact_and_creates_unknown_documents(monkeypatch, collide):
    coll = factories.collection("big")
    other = factories.collection("other")
    docs = {f"doc-{i}": factories.document(coll, f"doc-{i}").pk for i in range(30)}
    factories.document(other, "new-1")  # same docno in another collection: not a match
    monkeypatch.setattr(services, "SMALL_RUN_DOCNOS", 0)
    docno_index.clear_cache()
    if collide:  # every docno hashes alike: matches must be confirmed by the docno itself
        monkeypatch.setattr(
            scoring, "docno_hashes", lambda values: np.zeros(len(values), dtype=np.uint64)
        )
    wanted = ["doc-3", "new-1", "doc-0", "doc-29", "new-2"]
    parsed = scoring.ParsedRun(
        qids=[],
        docno_values=pa.array(wanted, pa.binary()),
        rankings=[],
        line_count=0,
        format="trec",
    )
    pks, created = services._document_pks(coll, parsed)
    assert created == 2
    made = dict(
        Document.objects.filter(collection=coll, has_content=False).values_list("external_id", "pk")
    )
    expected = {**docs, **made}
    assert pks.tolist() == [expected[d] for d in wanted]
    # The index notices the new documents (count and largest pk changed) and finds them.
    pks_again, created_again = services._document_pks(coll, parsed)
    assert (created_again, pks_again.tolist()) == (0, pks.tolist())


def test_a_docno_edited_in_place_is_not_served_from_the_index(monkeypatch):
    coll = factories.collection("renamed")
    doc = factories.document(coll, "old-id")
    monkeypatch.setattr(services, "SMALL_RUN_DOCNOS", 0)
    docno_index.clear_cache()

    def lookup(docno: str) -> tuple[list[int], int]:
        parsed = scoring.ParsedRun(
            qids=[], docno_values=pa.array([docno]), rankings=[], line_count=0, format="trec"
        )
        pks, created = services._document_pks(coll, parsed)
        return pks.tolist(), created

    assert lookup("old-id") == ([doc.pk], 0)
    doc.external_id = "new-id"
    doc.save()  # same count and largest pk: only the signal can tell
    assert lookup("new-id") == ([doc.pk], 0)
    pks, created = lookup("old-id")
    assert created == 1 and pks != [doc.pk]


def _parsed(docnos: list[str]) -> scoring.ParsedRun:
    return scoring.ParsedRun(
        qids=[], docno_values=pa.array(docnos), rankings=[], line_count=0, format="trec"
    )


def _document_queries(captured) -> list[str]:
    return [q["sql"] for q in captured.captured_queries if "judging_document" in q["sql"]]


def test_a_fresh_process_opens_the_persisted_index_without_reading_documents(monkeypatch):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    coll = factories.collection("persisted")
    docs = {f"p-{i}": factories.document(coll, f"p-{i}").pk for i in range(20)}
    monkeypatch.setattr(services, "SMALL_RUN_DOCNOS", 0)
    wanted = ["p-7", "p-0", "p-19"]
    builds = []
    read = docno_index._read_from_database
    monkeypatch.setattr(docno_index, "_read_from_database", lambda *a: builds.append(a) or read(*a))
    pks, _ = services._document_pks(coll, _parsed(wanted))
    assert pks.tolist() == [docs[d] for d in wanted]
    assert len(builds) == 1  # built once, from the documents table
    assert list(docno_index.index_dir().glob(f"c{coll.pk}-*.arrow"))
    docno_index.clear_cache()  # what a new web process starts with
    with CaptureQueriesContext(connection) as second:
        pks, created = services._document_pks(coll, _parsed(wanted))
    assert (created, pks.tolist()) == (0, [docs[d] for d in wanted])
    assert _document_queries(second) == [] and len(builds) == 1
    assert len(second.captured_queries) == 1  # the index token: one indexed query


def test_a_deleted_document_is_not_served_from_the_index(monkeypatch):
    coll = factories.collection("deleted")
    doc = factories.document(coll, "gone")
    keep = factories.document(coll, "kept")
    monkeypatch.setattr(services, "SMALL_RUN_DOCNOS", 0)
    assert services._document_pks(coll, _parsed(["gone", "kept"]))[0].tolist() == [
        doc.pk,
        keep.pk,
    ]
    old_pk = doc.pk
    doc.delete()
    docno_index.clear_cache()  # another process: only the token can tell it
    pks, created = services._document_pks(coll, _parsed(["gone", "kept"]))
    assert created == 1 and pks[0] != old_pk and pks[1] == keep.pk


def test_deleting_many_documents_invalidates_once_per_transaction(monkeypatch):
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext

    from judging.models import Document as Doc

    coll = factories.collection("bulk-delete")
    for i in range(6):
        factories.document(coll, f"b-{i}")
    docno_index.current_token(coll.pk)
    with CaptureQueriesContext(connection) as captured, transaction.atomic():
        Doc.objects.filter(collection=coll).delete()
    updates = [q for q in captured.captured_queries if "metrics_docnoindextoken" in q["sql"]]
    assert len(updates) == 1


def test_documents_resolved_by_id_are_merged_into_the_index_after_commit(
    monkeypatch, django_capture_on_commit_callbacks
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    coll = factories.collection("merged")
    first = {f"m-{i}": factories.document(coll, f"m-{i}").pk for i in range(5)}
    monkeypatch.setattr(services, "SMALL_RUN_DOCNOS", 0)
    monkeypatch.setattr(docno_index, "MERGE_MIN", 1)
    services._document_pks(coll, _parsed(["m-0"]))  # builds the index of 5 documents
    later = {f"n-{i}": factories.document(coll, f"n-{i}").pk for i in range(3)}
    wanted = ["n-2", "m-4", "new-doc", "n-0"]
    with django_capture_on_commit_callbacks(execute=True):
        pks, created = services._document_pks(coll, _parsed(wanted))
    made = Document.objects.get(collection=coll, external_id="new-doc").pk
    expected = [later["n-2"], first["m-4"], made, later["n-0"]]
    assert (created, pks.tolist()) == (1, expected)
    docno_index.clear_cache()
    with CaptureQueriesContext(connection) as captured:
        again, created_again = services._document_pks(coll, _parsed(wanted))
    assert (created_again, again.tolist()) == (0, expected)
    assert _document_queries(captured) == []  # all four now come from the merged file


def _import_documents(coll, docnos: list[str]):
    """Import documents from a JSON Lines file, as the import page and the API do."""
    from judging.lists import services as list_services

    body = "".join(f'{{"docno": "{d}", "title": "T", "body": "B"}}\n' for d in docnos)
    return list_services.documents_import(collection=coll, source=body.encode(), format="jsonl")


def test_a_large_import_builds_the_index_so_the_first_submission_reads_no_documents(
    monkeypatch, settings, django_capture_on_commit_callbacks
):
    settings.GRADED_DOCNO_INDEX_PREBUILD_MIN = 30
    coll = factories.collection("prebuilt")
    with django_capture_on_commit_callbacks(execute=True):
        _import_documents(coll, [f"x-{i}" for i in range(40)])
    files = list(docno_index.index_dir().glob(f"c{coll.pk}-*.arrow"))
    largest = Document.objects.filter(collection=coll).order_by("-pk").first().pk
    assert [f.name.endswith(f"-m{largest}.arrow") for f in files] == [True]
    docno_index.clear_cache()  # the first submission comes from another process
    monkeypatch.setattr(services, "SMALL_RUN_DOCNOS", 0)
    monkeypatch.setattr(
        docno_index, "_read_from_database", lambda *a: pytest.fail("read the documents again")
    )
    pks, created = services._document_pks(coll, _parsed(["x-3", "x-39"]))
    expected = Document.objects.filter(collection=coll, external_id__in=["x-3", "x-39"])
    assert created == 0 and sorted(pks.tolist()) == sorted(expected.values_list("pk", flat=True))


def test_prebuilding_reads_the_documents_only_when_no_file_covers_them(
    monkeypatch, settings, django_capture_on_commit_callbacks
):
    settings.GRADED_DOCNO_INDEX_PREBUILD_MIN = 5
    coll = factories.collection("small-then-large")
    reads = []
    read = docno_index._read_from_database
    monkeypatch.setattr(docno_index, "_read_from_database", lambda *a: reads.append(a) or read(*a))
    with django_capture_on_commit_callbacks(execute=True):
        _import_documents(coll, ["a", "b"])  # below the threshold: left to the submission
    assert reads == [] and not list(docno_index.index_dir().glob(f"c{coll.pk}-*.arrow"))
    with django_capture_on_commit_callbacks(execute=True):
        _import_documents(coll, [f"n-{i}" for i in range(6)])
    assert len(reads) == 1  # one file now covers all eight
    assert len(docno_index.prebuild(coll.pk).pks) == 8
    assert len(reads) == 1  # covered: opened, not read again
    with django_capture_on_commit_callbacks(execute=True):
        _import_documents(coll, [f"m-{i}" for i in range(6)])  # newer documents: rebuilt
    assert len(reads) == 2 and len(docno_index.get(coll.pk).pks) == 14


def test_an_edit_after_the_index_was_rebuilt_in_the_same_transaction_invalidates_it(
    monkeypatch,
):
    """Invalidating once per transaction must not outlive an index built in between.

    The test runs inside one transaction: the first edit invalidates, the lookup builds an
    index of the new token, and the second edit must invalidate that one too.
    """
    coll = factories.collection("twice")
    first = factories.document(coll, "first-old")
    second = factories.document(coll, "second-old")
    monkeypatch.setattr(services, "SMALL_RUN_DOCNOS", 0)
    first.external_id = "first-new"
    first.save()
    pks, _ = services._document_pks(coll, _parsed(["first-new", "second-old"]))
    assert pks.tolist() == [first.pk, second.pk]
    second.external_id = "second-new"
    second.save()
    docno_index.clear_cache()  # another process: only the token can tell it
    pks, created = services._document_pks(coll, _parsed(["second-new", "second-old"]))
    assert pks[0] == second.pk
    assert created == 1 and pks[1] not in (first.pk, second.pk)
