"""Issue 45 item 6: a byte-order mark is skipped by every reader of the engine.

A run that started with a UTF-8 BOM was read as TREC when it was JSON ("expected 6
columns ... found 1") and its first qid was ``'\\ufeff101'`` with the C and numpy readers
(Arrow skipped it: the readers disagreed). Every reader (C, numpy, Arrow; a path, bytes,
a file object), every format and format detection now go through
:mod:`graded.textpolicy`'s one rule: a UTF-8 mark is skipped, a UTF-16 or UTF-32 mark
means the text is decoded from that encoding. A U+FEFF further on stays (it is a
character).
"""

from __future__ import annotations

import codecs
import io as stdio
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from metrics.engine import _creader, io, read_qrels, read_run
from metrics.engine.errors import EngineInputError

TREC_RUN = "101 Q0 d1 1 2.5 bm25\n101 Q0 d2 2 1.5 bm25\n102 Q0 d3 1 0.5 bm25\n"
JSON_RUN = json.dumps(
    [
        {"qid": "101", "docno": "d1", "score": 2.5},
        {"qid": "101", "docno": "d2", "score": 1.5},
        {"qid": "102", "docno": "d3", "score": 0.5},
    ]
)
JSONL_RUN = "\n".join(json.dumps(item) for item in json.loads(JSON_RUN)) + "\n"
QRELS = "101 0 d1 2\n101 0 d2 0\n102 0 d3 1\n"

#: How a text may reach the reader: UTF-8 as it is, or behind each byte-order mark.
ENCODINGS = {
    "utf-8 with BOM": lambda text: codecs.BOM_UTF8 + text.encode("utf-8"),
    "utf-16-le with BOM": lambda text: codecs.BOM_UTF16_LE + text.encode("utf-16-le"),
    "utf-16-be with BOM": lambda text: codecs.BOM_UTF16_BE + text.encode("utf-16-be"),
    "utf-32-le with BOM": lambda text: codecs.BOM_UTF32_LE + text.encode("utf-32-le"),
    "utf-32-be with BOM": lambda text: codecs.BOM_UTF32_BE + text.encode("utf-32-be"),
}
READERS = ["c", "numpy", "arrow"] if _creader.AVAILABLE else ["numpy", "arrow"]
SOURCES = ["path", "bytes", "file object"]


def _source(data: bytes, how: str, tmp_path):
    if how == "path":
        path = tmp_path / "input.txt"
        path.write_bytes(data)
        return path
    if how == "bytes":
        return data
    return stdio.BytesIO(data)


def _same(a, b) -> None:
    assert a.qids == b.qids
    np.testing.assert_array_equal(a.qcode, b.qcode)
    assert a.docno_bytes() == b.docno_bytes()
    np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("how", SOURCES)
@pytest.mark.parametrize("text", [TREC_RUN, JSON_RUN, JSONL_RUN], ids=["trec", "json", "jsonl"])
def test_a_run_behind_a_byte_order_mark_reads_as_without(tmp_path, encoding, reader, how, text):
    plain = read_run(text.encode(), reader="numpy")
    marked = read_run(_source(ENCODINGS[encoding](text), how, tmp_path), reader=reader)
    _same(plain, marked)
    assert marked.qids == ["101", "102"]
    if text is TREC_RUN:
        assert marked.tag == "bm25"


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("how", SOURCES)
def test_qrels_behind_a_byte_order_mark_read_as_without(tmp_path, encoding, reader, how):
    marked = read_qrels(_source(ENCODINGS[encoding](QRELS), how, tmp_path), reader=reader)
    _same(read_qrels(QRELS.encode()), marked)


def test_the_fast_readers_themselves_skip_a_utf8_mark(tmp_path):
    """Not a fallback: the numpy and C readers of a path read past the mark themselves."""
    path = tmp_path / "run.txt"
    path.write_bytes(codecs.BOM_UTF8 + TREC_RUN.encode())
    numpy_read = io._read_clean(str(path), "run", "run", "numpy", skip=3)
    assert numpy_read is not None and numpy_read.qids == ["101", "102"]
    if _creader.AVAILABLE:
        mapped = io._read_clean_mapped(str(path), 3, "run", "run")
        assert mapped is not None and mapped.qids == ["101", "102"]
        buffer = memoryview(codecs.BOM_UTF8 + TREC_RUN.encode())[3:]
        assert io._read_clean(buffer, "run", "run", "c").qids == ["101", "102"]


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_format_detection_looks_past_the_mark(encoding):
    assert io.detect_format(ENCODINGS[encoding](JSON_RUN)) == "json"
    assert io.detect_format(ENCODINGS[encoding](JSONL_RUN)) == "jsonl"
    assert io.detect_format(ENCODINGS[encoding](TREC_RUN)) == "trec"


@pytest.mark.parametrize("encoding", list(ENCODINGS))
@pytest.mark.parametrize("text", [TREC_RUN, JSON_RUN, JSONL_RUN], ids=["trec", "json", "jsonl"])
def test_the_submission_rules_look_past_the_mark(encoding, text):
    assert io.run_rule_problems(ENCODINGS[encoding](text)) is None


def test_a_mark_in_the_middle_is_a_character_and_the_line_is_named():
    """Only the input's first bytes may be a mark: a later U+FEFF (a second file pasted
    on) stays, so that qid is ``'\\ufeff102'`` (a query no collection has), and JSON
    says which line holds it."""
    second = TREC_RUN.replace("102 Q0", "\ufeff102 Q0")
    run = read_run(second.encode())
    assert run.qids == ["101", "\ufeff102"]
    jsonl = JSONL_RUN.replace('\n{"qid": "102"', '\n\ufeff{"qid": "102"')
    with pytest.raises(EngineInputError) as refused:
        read_run(jsonl.encode())
    (error,) = refused.value.errors
    assert error.line == 3
    assert "byte-order mark (U+FEFF)" in error.message and "utf-8-sig" not in error.message


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize("how", SOURCES)
def test_two_marks_at_the_start_drop_only_the_first(tmp_path, reader, how):
    """Every reader agrees (Arrow alone would skip the second too)."""
    run = read_run(_source(codecs.BOM_UTF8 * 2 + TREC_RUN.encode(), how, tmp_path), reader=reader)
    assert run.qids == ["\ufeff101", "101", "102"]


def test_invalid_utf16_after_its_mark_is_refused_naming_encoding_and_line():
    data = codecs.BOM_UTF16_LE + "101 Q0 d1 1 2 t\n102 Q0 ".encode("utf-16-le") + b"\x00\xd8"
    data += " d2 1 1 t\n".encode("utf-16-le")
    with pytest.raises(EngineInputError) as refused:
        read_run(data)
    (error,) = refused.value.errors
    assert error.line == 2
    assert "not valid UTF-16 (little-endian)" in error.message


def test_utf16_without_a_mark_is_refused_saying_what_it_looks_like():
    with pytest.raises(EngineInputError) as refused:
        read_run(TREC_RUN.encode("utf-16-le"))
    assert any("NUL" in e.message for e in refused.value.errors)


# --- a mark never changes what a valid file reads as -------------------------------------

IDS = st.text(
    alphabet=st.characters(
        # Zl and Zp (U+2028, U+2029) are whitespace too: ids refuse them by design
        min_codepoint=33,
        max_codepoint=0x2FFF,
        exclude_categories=("Cs", "Zs", "Zl", "Zp", "Cc"),
    ),
    min_size=1,
    max_size=8,
).filter(
    lambda s: (
        not s.startswith(("#", "\ufeff"))
        and "\ufeff" not in s
        and not any(c.isspace() for c in s)
        # a first id such as ``[{`` or ``{"`` begins JSON (io.detect_format); ``[`` alone
        # does not, and is tested below
        and not (len(s) > 1 and s[0] in "[{" and s[1] in '{}[]"')
    )
)
SCORES = st.floats(allow_nan=False, allow_infinity=False, width=64)


@pytest.mark.parametrize("qid", ["[", "{", "[x", "{x"])
@pytest.mark.parametrize("reader", READERS)
def test_a_first_query_id_that_is_a_bracket_reads_as_trec(qid, reader):
    # Found by the property below: ``{ Q0 d1 0 0.0 t`` was sniffed as JSON Lines and
    # refused ("Expecting property name"), ``[ Q0 ...`` as a JSON array.
    text = f"{qid} Q0 d1 1 2.5 t\n{qid} Q0 d2 2 1.5 t\n"
    assert io.detect_format(text.encode()) == "trec"
    assert read_run(text.encode(), reader=reader).qids == [qid]
    assert read_run(ENCODINGS["utf-8 with BOM"](text), reader=reader).qids == [qid]


@pytest.mark.parametrize(
    ("text", "expected"),
    [("[]", "json"), ("  [\n  {", "json"), ("[", "json"), ('{"qid"', "jsonl"), ("{", "jsonl")],
)
def test_json_is_still_told_by_its_first_brackets(text, expected):
    assert io.detect_format(text.encode()) == expected


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    lines=st.lists(st.tuples(IDS, IDS, SCORES), min_size=1, max_size=30, unique_by=lambda t: t[:2]),
    fmt=st.sampled_from(["trec", "json", "jsonl"]),
    encoding=st.sampled_from(list(ENCODINGS)),
    reader=st.sampled_from(READERS),
)
def test_a_mark_never_changes_the_parse_of_a_valid_run(lines, fmt, encoding, reader):
    if fmt == "trec":
        text = "".join(f"{q} Q0 {d} {i} {s!r} t\n" for i, (q, d, s) in enumerate(lines))
    else:
        items = [{"qid": q, "docno": d, "score": s} for q, d, s in lines]
        text = json.dumps(items) if fmt == "json" else "\n".join(map(json.dumps, items))
    plain = read_run(text.encode(), reader=reader)
    marked = read_run(ENCODINGS[encoding](text), reader=reader)
    _same(plain, marked)
    for a, b in zip(plain.ranking(), marked.ranking(), strict=True):
        np.testing.assert_array_equal(a, b)
