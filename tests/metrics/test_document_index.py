"""The bulk docno → document pk lookup of large runs is exact (hash matches are confirmed)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from judging.models import Document
from metrics import scoring, services
from tests import factories

pytestmark = pytest.mark.django_db


def test_docno_hashes_agree_for_fixed_and_variable_widths():
    fixed = pa.array([b"D001", b"D002", b"D003"], pa.binary())
    mixed = pa.array([b"D001", b"x", b"D002", b"", b"D003", b"a\tlonger id"], pa.binary())
    h_fixed, h_mixed = scoring.docno_hashes(fixed), scoring.docno_hashes(mixed)
    assert h_fixed.dtype == np.uint64
    assert h_fixed.tolist() == h_mixed[[0, 2, 4]].tolist()
    assert len(set(h_mixed.tolist())) == len(mixed)
    assert scoring.docno_hashes(pa.array(["D001", "D002"])).tolist() == h_fixed[:2].tolist()


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
    services._docno_indexes.clear()
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
    services._docno_indexes.clear()

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
