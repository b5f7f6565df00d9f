"""Issue 45 item 6: every judgment, topic and document reader looks past a byte-order mark.

All of them read through :func:`judging.lists.formats.iter_lines`, which decodes with
:func:`graded.textpolicy.utf8_chunks` (the one decoding point): a mark at the start is
dropped, UTF-16 and UTF-32 with a mark are decoded, a U+FEFF further on is kept. Before,
each block of a streamed file was decoded with ``utf-8-sig``, so a U+FEFF that happened
to start a block (a 64 KiB boundary) was silently dropped and one elsewhere was kept.
"""

from __future__ import annotations

import codecs
import io
import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graded import textpolicy
from judging.lists import importers
from judging.lists.formats import FormatError, common, iter_lines
from judging.lists.formats import collections as cf
from judging.lists.formats import judgments as jf

ENCODINGS = {
    "utf-8 with BOM": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16-le with BOM": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16-be with BOM": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "utf-32-le with BOM": lambda text: codecs.BOM_UTF32_LE + text.encode("utf-32-le"),
    "utf-32-be with BOM": lambda text: codecs.BOM_UTF32_BE + text.encode("utf-32-be"),
}

#: A valid file of every judgment format the import reads.
JUDGMENTS = {
    "qrels": "q1 0 d1 2\nq1 0 d2 0\nq2 0 d3 4\n",
    "csv": "query,docid,rating\nq1,d1,2\nq1,d2,0\nq2,d3,4\n",
    "tsv": "query\tdocid\trating\nq1\td1\t2\nq1\td2\t0\nq2\td3\t4\n",
    "jsonl": '{"qid": "q1", "docno": "d1", "grade": 2}\n{"qid": "q2", "docno": "d3", "grade": 4}\n',
    "json": '[{"qid": "q1", "docno": "d1", "grade": 2}, {"qid": "q2", "docno": "d3", "grade": 4}]',
    "ranklib": "# qid:1 = q1\n2 qid:1 1:0.5 # d1\n0 qid:1 1:0.1 # d2\n",
    "quepid": json.dumps(
        {
            "query_doc_pairs": [
                {"query_text": "q1", "doc_id": "d1", "judgements": [{"rating": 2}]},
                {"query_text": "q2", "doc_id": "d3", "judgements": [{"rating": 4}]},
            ]
        }
    ),
    "quepid_csv": "query,docid,ann\nq1,d1,2\nq2,d3,4\n",
}
TOPICS = {
    "trec": "<top>\n<num> Number: 7\n<title> clay soil\n</top>\n",
    "jsonl": '{"qid": "7", "text": "clay soil"}\n',
    "tsv": "7\tclay soil\n",
    "csv": "qid,text\n7,clay soil\n",
}
DOCUMENTS = {
    "jsonl": '{"docno": "a", "title": "Clay", "body": "is heavy"}\n',
    "tsv": "a\tis heavy\n",
    "csv": "docno,body\na,is heavy\n",
}


def _records(reader, source):
    return [repr(r) for r in reader(iter_lines(source))]


def test_every_judgment_format_is_listed():
    assert set(JUDGMENTS) == set(jf.READERS) == set(jf.IMPORT_FORMATS)
    assert set(TOPICS) == set(cf.TOPIC_FORMATS) and set(DOCUMENTS) == set(cf.DOCUMENT_FORMATS)


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("stream", [False, True], ids=["bytes", "stream"])
@pytest.mark.parametrize("fmt", list(JUDGMENTS))
def test_a_judgment_file_behind_a_mark_reads_as_without(fmt, stream, encoding):
    data = ENCODINGS[encoding](JUDGMENTS[fmt])
    plain = _records(jf.READERS[fmt], JUDGMENTS[fmt].encode())
    assert plain and not any("Problem" in r for r in plain)
    assert _records(jf.READERS[fmt], io.BytesIO(data) if stream else data) == plain


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("fmt", list(TOPICS))
def test_topics_behind_a_mark_read_and_guess_as_without(fmt, encoding):
    data = ENCODINGS[encoding](TOPICS[fmt])
    plain = list(cf.read_topics(fmt, iter_lines(TOPICS[fmt].encode())))
    assert plain and list(cf.read_topics(fmt, iter_lines(io.BytesIO(data)))) == plain
    name = {"trec": "t.trec", "csv": "t.csv"}.get(fmt, "topics")
    assert cf.guess_topic_format(name, data) == cf.guess_topic_format(name, TOPICS[fmt].encode())


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("fmt", list(DOCUMENTS))
def test_documents_behind_a_mark_read_and_guess_as_without(fmt, encoding):
    data = ENCODINGS[encoding](DOCUMENTS[fmt])
    plain = list(cf.read_documents(fmt, iter_lines(DOCUMENTS[fmt].encode())))
    assert plain and list(cf.read_documents(fmt, iter_lines(io.BytesIO(data)))) == plain
    name = "d.csv" if fmt == "csv" else "documents"
    assert cf.guess_document_format(name, data) == fmt


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_the_pages_own_importers_look_past_the_mark(encoding):
    """Pairs, queries and documents of the pool and document pages (importers.py)."""
    pairs = "q1 d1\nq2 d3\n"
    assert importers.parse_pairs(ENCODINGS[encoding](pairs)) == importers.parse_pairs(pairs)
    docs = DOCUMENTS["jsonl"]
    assert importers.parse_documents(ENCODINGS[encoding](docs)) == importers.parse_documents(
        docs.encode()
    )
    queries = TOPICS["jsonl"]
    assert importers.parse_queries(ENCODINGS[encoding](queries)) == importers.parse_queries(
        queries.encode()
    )


def test_pasted_text_loses_a_leading_mark_too():
    assert importers.parse_pairs("\ufeffq1 d1\n") == importers.parse_pairs("q1 d1\n")
    assert list(iter_lines("\ufeffq1 0 d1 2\n")) == [(1, "q1 0 d1 2")]


@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_mark_at_a_block_boundary_is_kept_like_any_other(at):
    """A U+FEFF that starts a line in the middle stays, wherever the 64 KiB blocks fall."""
    filler = "q1 0 d0 1\n" * 7000
    cut = common._CHUNK - at  # the line after the last line feed of the first block
    head = filler[: filler.rfind("\n", 0, cut) + 1]
    data = (head + "\ufeffq2 0 d9 3\n").encode()
    lines = dict(iter_lines(io.BytesIO(data)))
    number = head.count("\n") + 1
    assert lines[number] == "\ufeffq2 0 d9 3"
    problems = [r for r in jf.read_qrels(iter_lines(io.BytesIO(data))) if not hasattr(r, "grade")]
    assert problems == [] or all(p.line == number for p in problems)


def test_a_mark_in_the_middle_of_a_json_lines_file_names_its_line():
    data = b'{"qid": "q1", "docno": "d1", "grade": 2}\n\xef\xbb\xbf{"qid": "q2"}\n'
    (problem,) = [r for r in jf.read_jsonl(iter_lines(data)) if not hasattr(r, "grade")]
    assert problem.line == 2
    assert "byte-order mark (U+FEFF)" in problem.message and "utf-8-sig" not in problem.message


def test_a_mark_in_the_middle_of_a_qrels_file_stays_in_the_qid():
    (_, second) = list(jf.read_qrels(iter_lines(b"q1 0 d1 2\n\xef\xbb\xbfq2 0 d2 1\n")))
    assert (second.line, second.query) == (2, "\ufeffq2")


def test_utf16_errors_name_the_encoding_and_the_line():
    data = codecs.BOM_UTF16_LE + "q1 0 d1 2\nq2".encode("utf-16-le") + b"\x00\xdc\n\x00"
    with pytest.raises(FormatError) as refused:
        list(iter_lines(io.BytesIO(data)))
    assert refused.value.problem.line == 2
    assert "not valid UTF-16 (little-endian)" in refused.value.problem.message
    with pytest.raises(textpolicy.TextRefused) as whole:
        textpolicy.decode_utf8(data)
    assert whole.value.line == 2 and "UTF-16 (little-endian)" in whole.value.message


def test_utf16_cut_in_the_middle_of_a_character_is_refused():
    data = codecs.BOM_UTF16_BE + "q1 0 d1 2\n".encode("utf-16-be") + b"\x00"
    with pytest.raises(FormatError, match="not valid UTF-16"):
        list(iter_lines(io.BytesIO(data)))


def test_utf16_without_a_mark_says_what_it_looks_like():
    with pytest.raises(textpolicy.TextRefused) as refused:
        textpolicy.decode_utf8("q1 0 d1 2\n".encode("utf-16-le"))
    assert "looks like UTF-16 without a byte-order mark" in refused.value.message


@pytest.mark.parametrize("size", [1, 2, 3, 5, 4096])
def test_utf16_chunks_of_any_size_decode_alike(size):
    text = "q1 0 d1 2\nq\u00e9 0 \U0001f600 3\n" * 50
    data = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    chunks = [data[i : i + size] for i in range(0, len(data), size)]
    assert b"".join(textpolicy.utf8_chunks(chunks)) == text.encode()


# --- a mark never changes what a valid file reads as -------------------------------------

IDS = st.text(
    alphabet=st.characters(
        min_codepoint=48, max_codepoint=0x2FFF, exclude_categories=("Cs", "Z", "C")
    ),
    min_size=1,
    max_size=6,
).filter(lambda s: s.isprintable() and "#" not in s and "\ufeff" not in s)


@settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    rows=st.lists(st.tuples(IDS, IDS, st.integers(0, 4)), min_size=1, max_size=20),
    fmt=st.sampled_from(["qrels", "jsonl", "json"]),
    encoding=st.sampled_from(list(ENCODINGS)),
    chunked=st.booleans(),
)
def test_a_mark_never_changes_the_parse_of_a_valid_judgment_file(rows, fmt, encoding, chunked):
    if fmt == "qrels":
        text = "".join(f"{q} 0 {d} {g}\n" for q, d, g in rows)
    else:
        items = [{"qid": q, "docno": d, "grade": g} for q, d, g in rows]
        text = json.dumps(items) if fmt == "json" else "\n".join(map(json.dumps, items))
    data = ENCODINGS[encoding](text)
    source = io.BytesIO(data) if chunked else data
    assert _records(jf.READERS[fmt], source) == _records(jf.READERS[fmt], text.encode())
