"""Importing queries and documents: upserts by external id, atomic, errors by line."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from judging import services
from judging.models import Collection, Document, Query
from tests import factories

pytestmark = pytest.mark.django_db
Q, D = services.QueryRow, services.DocumentRow


def test_queries_are_created_then_updated(coll):
    first = services.queries_import(
        collection=coll, rows=[Q(1, "101", "mulch depth", "How deep?", "Relevant: depth.")]
    )
    assert (first.created, first.updated) == (1, 0)
    again = services.queries_import(
        collection=coll,
        rows=[Q(1, "101", "mulch depth", "How deep?", "Relevant: depth."), Q(2, "102", "x")],
    )
    assert (again.created, again.updated) == (1, 0)
    changed = services.queries_import(collection=coll, rows=[Q(1, "101", "mulch depth cm")])
    assert (changed.created, changed.updated) == (0, 1)
    assert Query.objects.get(external_id="101").text == "mulch depth cm"


def test_bad_query_rows_are_all_reported_in_line_order_and_nothing_is_written(coll):
    rows = [
        Q(1, "101", "ok"),
        Q(2, "", "no id"),
        Q(3, "103", "  "),
        Q(4, "101", "dup"),
        Q(5, "a b", "spaced"),
    ]
    with pytest.raises(ValidationError) as exc:
        services.queries_import(collection=coll, rows=rows)
    assert [m.split(":")[0] for m in exc.value.messages] == ["line 2", "line 3", "line 4", "line 5"]
    assert "first on line 1" in exc.value.messages[2]
    assert not Query.objects.exists()


def test_documents_fill_in_id_only_documents(coll):
    factories.query(coll, "q1")
    services.pool_add(
        collection=coll,
        pairs=[services.PairRow(1, "q1", "web-1")],
        create_missing_documents=True,
    )
    assert Document.objects.get(external_id="web-1").has_content is False
    summary = services.documents_import(
        collection=coll,
        rows=[
            D(1, "web-1", "Title", "<p>Body</p>", "https://a.test/1", {"lang": "en"}),
            D(2, "web-2", "Other"),
        ],
    )
    assert (summary.created, summary.updated) == (1, 1)
    doc = Document.objects.get(external_id="web-1")
    assert (doc.has_content, doc.title, doc.extra) == (True, "Title", {"lang": "en"})


def test_repeated_document_ids_are_refused(coll):
    with pytest.raises(ValidationError) as exc:
        services.documents_import(collection=coll, rows=[D(1, "d"), D(2, "d")])
    assert exc.value.messages == ["line 2: document id 'd' repeated (first on line 1)"]
    assert not Document.objects.exists()


def test_import_collection_command_round_trip(tmp_path, db):
    from django.core.management import call_command

    queries = tmp_path / "q.jsonl"
    queries.write_text(
        '{"qid": "1", "text": "compost smell", "narrative": "Relevant: causes."}\n'
        "# a comment\n"
        '{"id": "2", "query": "mulch"}\n'
    )
    docs = tmp_path / "d.jsonl"
    docs.write_text('{"docno": "a", "title": "A", "text": "Body", "lang": "en"}\n{"id": "b"}\n')
    pairs = tmp_path / "p.txt"
    pairs.write_text("1 a\n2 b\n")
    call_command(
        "import_collection",
        "garden",
        "--name",
        "Garden",
        "--queries",
        str(queries),
        "--documents",
        str(docs),
        "--pairs",
        str(pairs),
    )
    coll = Collection.objects.get(slug="garden")
    assert coll.queries.count() == 2 and coll.pool_entries.count() == 2
    assert coll.documents.get(external_id="a").extra == {"lang": "en"}
    assert coll.queries.get(external_id="1").narrative == "Relevant: causes."


def test_import_collection_command_is_atomic_and_names_lines(tmp_path, db):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    queries = tmp_path / "q.tsv"
    queries.write_text("1\tcompost smell\n2 no tab\n")
    with pytest.raises(CommandError) as exc:
        call_command("import_collection", "garden", "--queries", str(queries))
    assert "line 2: expected 'qid<TAB>text'" in str(exc.value)
    assert not Collection.objects.filter(slug="garden").exists()
    bad_docs = tmp_path / "d.jsonl"
    bad_docs.write_text('{"docno": "a"}\nnot json\n{"title": "no id"}\n')
    with pytest.raises(CommandError) as exc:
        call_command("import_collection", "garden", "--documents", str(bad_docs))
    assert "line 2: not valid JSON" in str(exc.value)
    assert "line 3: needs a document id" in str(exc.value)


def test_pooled_documents_without_content_are_listed_and_counted_once(coll):
    from judging import selectors

    for qid in ("q1", "q2"):
        factories.query(coll, qid)
    factories.document(coll, "known")
    services.pool_add(
        collection=coll,
        pairs=[
            services.PairRow(1, "q1", "web-1"),
            services.PairRow(2, "q2", "web-1"),
            services.PairRow(3, "q1", "web-2"),
            services.PairRow(4, "q1", "known"),
        ],
        create_missing_documents=True,
    )
    Document.objects.create(collection=coll, external_id="never-pooled", has_content=False)
    missing = selectors.pooled_documents_without_content(collection=coll)
    assert [(d.external_id, d.pooled) for d in missing] == [("web-1", 2), ("web-2", 1)]
    assert selectors.collection_counts(collection=coll)["missing_documents"] == 2


def test_coordinator_page_lists_missing_documents_and_imports_content(client, coll):
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    boss = factories.user("boss")
    factories.member(coll, boss, role="coordinator")
    judge = factories.user("judy2")
    factories.member(coll, judge)
    factories.query(coll, "q1")
    services.pool_add(
        collection=coll,
        pairs=[services.PairRow(1, "q1", "web-1")],
        create_missing_documents=True,
    )
    url = reverse("judging:document_import", args=[coll.slug])
    client.force_login(judge)
    assert client.get(url).status_code == 403
    client.force_login(boss)
    detail = client.get(reverse("judging:collection_detail", args=[coll.slug])).content.decode()
    assert "1 pooled document without content" in detail
    page = client.get(url)
    assert "web-1" in page.content.decode()
    assert client.get(url + "?format=txt").content == b"web-1\n"
    bad = SimpleUploadedFile("d.jsonl", b'{"docno": "web-1"}\n{"nope": 1}\n')
    refused = client.post(url, {"file": bad})
    assert refused.status_code == 400
    assert "line 2: needs a document id" in refused.content.decode()
    assert Document.objects.get(external_id="web-1").has_content is False
    good = SimpleUploadedFile("d.jsonl", b'{"docno": "web-1", "title": "T", "body": "B"}\n')
    assert client.post(url, {"file": good}).status_code == 303
    assert Document.objects.get(external_id="web-1").has_content is True
    assert "Every pooled document has content" in client.get(url).content.decode()


def test_import_collection_command_checks_a_new_collection(db):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError) as exc:
        call_command("import_collection", "not a slug!", "--name", "N" * 201)
    assert "import refused, nothing written" in str(exc.value)
    assert "slug" in str(exc.value).lower() and "at most 200 characters" in str(exc.value)
    assert not Collection.objects.exists()
    call_command("import_collection", "garden", "--name", "Garden")
    call_command("import_collection", "garden", "--name", "Ignored for an existing one")
    assert list(Collection.objects.values_list("slug", "name")) == [("garden", "Garden")]


def test_topic_files_are_imported_in_batches_with_repeats_found_across_them(coll):
    from judging.lists import services as services_lists

    factories.query(coll, "t2", text="old text")
    tsv = b"t1\tfirst\nt2\tsecond\nt3\tthird\nt4\tfourth\nt5\tfifth\n"
    summary = services_lists.topics_import(collection=coll, source=tsv, format="tsv", batch_size=2)
    assert (summary.created, summary.updated) == (4, 1)
    assert coll.queries.get(external_id="t2").text == "second"
    # A repeat in a later batch, and one inside a batch: both named, nothing written.
    again = b"n1\tone\nn2\ttwo\nn3\tthree\nn1\tagain\nn4\tfour\nn4\tand again\n"
    with pytest.raises(services_lists.ImportRefused) as refused:
        services_lists.topics_import(collection=coll, source=again, format="tsv", batch_size=2)
    messages = refused.value.problems.messages()
    assert messages == [
        "line 4: query id repeated (first on line 1)",
        "line 6: query id 'n4' repeated (first on line 5)",
    ]
    assert not coll.queries.filter(external_id__startswith="n").exists()
