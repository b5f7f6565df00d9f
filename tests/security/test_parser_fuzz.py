"""Property-based fuzzing of every file parser: any bytes give a result or line errors.

Parsers: runs and qrels of the engine (TREC, JSON, JSON Lines), the API's judgment files
(qrels, JSON Lines) and batches, and the collection importers (queries, documents,
pairs). No other exception may escape; errors name a line (or the input as a whole).
"""

from __future__ import annotations

import io
import json

import pytest
from django.core.exceptions import ValidationError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from graded import textpolicy
from graded.textpolicy import MAX_NOTE_LENGTH
from judging.lists import importers
from judging.lists import judgment_rows as imports
from judging.lists.formats import FormatError, Problem, iter_lines
from judging.lists.formats import collections as collection_formats
from judging.lists.formats import judgments as judgment_formats
from metrics.engine import EngineInputError, read_qrels, read_run
from metrics.live import scoring

FUZZ = settings(
    max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), database=None
)
# Bytes that look like the formats, with hostile pieces mixed in.
PIECES = st.sampled_from(
    [
        b"q1 Q0 d1 1 2.5 run\n",
        b"q1 0 d1 2\n",
        b'{"qid": "q1", "docno": "d1", "score": 1, "grade": 2}\n',
        b'{"docno": "d1", "title": "t", "url": "javascript:alert(1)"}\n',
        b'[{"qid": "q1", "docno": "d1", "score": 1}]',
        b"q1\tText\n",
        b"\x00",
        b"\xff\xfe",
        b'"\\ud800"',
        b"1" * 5000,
        b"1e400",
        b"[" * 3000,
        b"#comment\n",
        b"\t \r\n",
        b"{",
        b"NaN",
        b" ",
    ]
)
HOSTILE = st.one_of(st.binary(max_size=400), st.lists(PIECES, max_size=12).map(b"".join)) | st.text(
    max_size=200
).map(lambda t: t.encode("utf-8", "surrogatepass"))


def _engine_errors_have_lines(exc: EngineInputError) -> None:
    assert exc.errors and len(exc.errors) <= textpolicy.MAX_ERRORS
    for error in exc.errors:
        assert error.line is None or error.line >= 1
        assert len(error.message) < 1000


@FUZZ
@given(data=HOSTILE)
def test_engine_run_reader(data):
    try:
        run = read_run(data, name="fuzz")
    except EngineInputError as exc:
        _engine_errors_have_lines(exc)
    else:
        assert len(run) > 0


@FUZZ
@given(data=HOSTILE)
def test_engine_qrels_reader(data):
    try:
        read_qrels(data, name="fuzz")
    except EngineInputError as exc:
        _engine_errors_have_lines(exc)


@FUZZ
@given(data=HOSTILE)
def test_run_submission_parser_and_id_policy(data):
    try:
        parsed = scoring.read_run(data, name="fuzz")
    except EngineInputError as exc:
        _engine_errors_have_lines(exc)
        return
    for item in scoring.id_problems(parsed, data):
        assert (item["message"] and item.get("line", 1) is None) or item.get("line", 1) >= 1


def _line_errors(errors: list[dict]) -> None:
    for error in errors:
        assert error["message"]
        assert len(error["message"]) < 1000
        if "line" in error:
            assert isinstance(error["line"], int) and error["line"] >= 1


@FUZZ
@given(data=HOSTILE)
def test_judgment_qrels_and_jsonl_files(data):
    for parse in (imports.rows_from_qrels, imports.rows_from_jsonl):
        rows, errors = parse(data)
        rows = list(rows)  # lazy: the errors fill as the rows are read
        _line_errors(errors)
        for row in rows:
            assert textpolicy.id_problem(row.query_external_id) is None
            assert textpolicy.id_problem(row.document_external_id) is None
            assert textpolicy.text_problem(row.note) is None


@FUZZ
@given(data=HOSTILE)
def test_judgment_batch_bodies(data):
    try:
        body = textpolicy.loads_json(data)
    except textpolicy.TextRefused:
        return
    items = body if isinstance(body, list) else [body]
    _rows, errors = imports.rows_from_items(items)
    _line_errors(errors)


@FUZZ
@given(data=HOSTILE)
def test_collection_importers(data):
    for parse in (importers.parse_queries, importers.parse_documents, importers.parse_pairs):
        try:
            rows = parse(data)
        except ValidationError as exc:
            assert exc.messages
            assert len(exc.messages) <= textpolicy.MAX_ERRORS + 1
            for message in exc.messages:
                assert message.startswith(("line ", "... and")), message
            continue
        for row in rows:
            assert (
                textpolicy.id_problem(
                    row.external_id if hasattr(row, "external_id") else row.query_external_id
                )
                is None
            )
            if hasattr(row, "url"):
                assert textpolicy.url_problem(row.url) is None


@pytest.mark.parametrize(
    "line",
    [
        '{"qid": "q1", "docno": "d1", "grade": 1, "seconds": 1' + "0" * 400 + "}",
        '{"qid": "q1\\u0000", "docno": "d1", "grade": 1}',
        '{"qid": "q1", "docno": "d1", "grade": 1, "note": "\\ud800"}',
        '{"qid": "q1", "docno": "d1", "grade": 1' + "0" * 5000 + "}",
        "[" * 100_000,
        '{"qid": "' + "q" * 600 + '", "docno": "d1", "grade": 1}',
    ],
)
def test_hostile_jsonl_judgment_lines_are_line_errors(line):
    rows, errors = imports.rows_from_jsonl(
        f'{{"qid": "q1", "docno": "d1", "grade": 1}}\n{line}\n'.encode()
    )
    rows = list(rows)
    assert len(rows) == 1 and errors and {e["line"] for e in errors} == {2}
    assert all(len(e["message"]) < 300 for e in errors)


@pytest.mark.parametrize(
    "content",
    [
        b'[{"qid": "1", "docno": "a", "score": ' + b"1" * 5000 + b"}]",
        b'[{"qid": "1", "docno": "a", "score": 1' + b"0" * 400 + b"}]",
        b'[{"qid": "1", "docno": "a", "score": 1e400}]',
        b'[{"qid": "1", "docno": "\\ud800", "score": 1}]',
        b"[" * 100_000,
        b'{"qid": "1", "docno": "a", "score": 1}\n' + b"[" * 100_000 + b"\n",
    ],
)
def test_hostile_json_runs_are_line_errors(content):
    with pytest.raises(EngineInputError) as exc:
        read_run(content, name="r")
    assert all(e.line is not None and len(e.message) < 300 for e in exc.value.errors)


def test_bad_lines_stop_reading_and_echo_little():
    run = b"".join(b"q%d Q0 %s 1 x t\n" % (i, b"d" * 10_000) for i in range(5000))
    with pytest.raises(EngineInputError) as exc:
        read_run(run, name="r")
    assert len(exc.value.errors) == textpolicy.MAX_ERRORS
    assert sum(len(e.message) for e in exc.value.errors) < 20_000
    rows, errors = imports.rows_from_qrels(b"".join(b"q 0 d x%d\n" % i for i in range(10_000)))
    assert list(rows) == []
    assert len(errors) == textpolicy.MAX_ERRORS + 1 and "stopped" in errors[-1]["message"]
    assert json.dumps(errors).__len__() < 30_000


def test_qrels_with_a_5000_digit_grade_is_a_line_error():
    rows, errors = imports.rows_from_qrels(b"q1 0 d1 1\nq1 0 d2 " + b"9" * 5000 + b"\n")
    rows = list(rows)
    assert len(rows) == 1 and [e["line"] for e in errors] == [2]
    assert len(errors[0]["message"]) < 200


# --- the readers of judging.lists.formats (judgment lists, topics, documents) -------------------

FORMAT_PIECES = st.sampled_from(
    [
        b"q1 0 d1 2\n",
        b"query,docid,rating,note\n",
        b"q1,d1,2,ok\n",
        b'"q,1",d1,3\n',
        b'{"query": "q1", "document": "d1", "grade": 2, "note": "n"}\n',
        b'[{"qid": "q1", "docno": "d1", "grade": 1}]',
        b"# qid:1 = q1\n",
        b"2 qid:1 1:0.5 # d1\n",
        b"<top>\n<num> Number: 301\n<title> t\n<desc> Description: d\n</top>\n",
        b'<topic number="7"><query>x</query></topic>\n',
        b'{"qid": "q1", "text": "t"}\n',
        b'{"docno": "d1", "title": "t", "body": "b", "url": "javascript:alert(1)"}\n',
        b'{"docno": "d1", "extra": {"k": ["\\u0000"]}}\n',
        b"d1\thttps://x.org/\tTitle\tBody\n",
        b"d1\tdata:text/html,x\tT\tB\n",
        b"q1\tText\n",
        b"\x00",
        b"\xff\xfe",
        b"\xef\xbb\xbf",
        b'"\\ud800"',
        b"1" * 5000,
        b"1e400",
        b"[" * 3000,
        b"q" * 600,
        b"\t \r\n",
        b"{",
        b",",
        b'"',
    ]
)
FORMAT_INPUT = HOSTILE | st.lists(FORMAT_PIECES, max_size=12).map(b"".join)


def _format_problems_have_lines(problems: list[Problem]) -> None:
    assert len(problems) <= textpolicy.MAX_ERRORS + 1
    for problem in problems:
        assert problem.message and len(str(problem)) < 1000
        assert problem.line is None or problem.line >= 1


def _read_all(reader, data: bytes) -> tuple[list, list[Problem]]:
    """Run a reader over ``data`` as the import services do: records and problems."""
    records, problems = [], []
    try:
        for item in reader(iter_lines(io.BytesIO(data))):
            (problems if isinstance(item, Problem) else records).append(item)
            if len(problems) > textpolicy.MAX_ERRORS:
                break
    except FormatError as exc:  # decoding: not UTF-8, a NUL
        problems.append(exc.problem)
        assert exc.problem.line is not None and exc.problem.line >= 1
    return records, problems


@FUZZ
@given(data=FORMAT_INPUT)
def test_judgment_list_readers(data):
    for reader in judgment_formats.READERS.values():
        records, problems = _read_all(reader, data)
        _format_problems_have_lines(problems)
        for record in records:
            assert record.line >= 1
            assert textpolicy.id_problem(record.query) is None
            assert textpolicy.id_problem(record.document) is None
            assert textpolicy.text_problem(record.note, max_length=MAX_NOTE_LENGTH) is None
            assert isinstance(record.grade, int | None)


@FUZZ
@given(data=FORMAT_INPUT)
def test_topic_readers(data):
    for fmt in collection_formats.TOPIC_FORMATS:
        records, problems = _read_all(
            lambda lines, f=fmt: collection_formats.read_topics(f, lines), data
        )
        _format_problems_have_lines(problems)
        for topic in records:
            assert textpolicy.id_problem(topic.qid) is None
            for value in (topic.text, topic.description, topic.narrative):
                assert textpolicy.text_problem(value) is None


@FUZZ
@given(data=FORMAT_INPUT)
def test_document_readers(data):
    for fmt in collection_formats.DOCUMENT_FORMATS:
        records, problems = _read_all(
            lambda lines, f=fmt: collection_formats.read_documents(f, lines), data
        )
        _format_problems_have_lines(problems)
        for doc in records:
            assert textpolicy.id_problem(doc.docno) is None
            assert textpolicy.url_problem(doc.url) is None
            for value in (doc.title, doc.body):
                assert textpolicy.text_problem(value) is None


@pytest.mark.parametrize(
    ("reader", "content", "field"),
    [
        (judgment_formats.read_jsonl, '{"query": "q1", "document": "d1", "grade": 1e400}', None),
        (
            judgment_formats.read_jsonl,
            '{"query": "q1", "document": "d1", "grade": 1' + "0" * 5000 + "}",
            None,
        ),
        (judgment_formats.read_jsonl, "[" * 100_000, None),
        (
            judgment_formats.read_jsonl,
            '{"query": "q1", "document": "d\\ud800", "grade": 1}',
            "document",
        ),
        (
            judgment_formats.read_jsonl,
            '{"query": "q\\u0000", "document": "d1", "grade": 1}',
            "query",
        ),
        (
            judgment_formats.read_jsonl,
            '{"query": "q1", "document": "d1", "note": "' + "n" * 5001 + '"}',
            "note",
        ),
        (judgment_formats.read_qrels, "q1 0 " + "d" * 501 + " 1", "document"),
        (judgment_formats.read_qrels, "q1 0 d1 1" + "0" * 5000, "grade"),
        (judgment_formats.read_csv, "query,docid,rating\n" + "q" * 501 + ",d1,1", "query"),
        (collection_formats.read_topics_jsonl, '{"qid": "' + "q" * 501 + '", "text": "t"}', "qid"),
        (collection_formats.read_topics_jsonl, '{"qid": "q\\u0000", "text": "t"}', "qid"),
        (
            collection_formats.read_documents_jsonl,
            '{"docno": "d1", "url": "javascript:alert(1)"}',
            "url",
        ),
        (collection_formats.read_documents_tsv, "d1\tdata:text/html,x\tT\tB", "url"),
        (collection_formats.read_documents_tsv, "d1\tvbscript:x\tT\tB", "url"),
    ],
)
def test_hostile_format_lines_are_line_errors(reader, content, field):
    good = {
        judgment_formats.read_jsonl: '{"query": "q1", "document": "d0", "grade": 1}',
        judgment_formats.read_qrels: "q1 0 d0 1",
        collection_formats.read_topics_jsonl: '{"qid": "q0", "text": "t"}',
        collection_formats.read_topics_tsv: "q0\tText",
        collection_formats.read_documents_jsonl: '{"docno": "d0"}',
        collection_formats.read_documents_tsv: "d0\thttps://x.org/\tT\tB",
    }
    if reader is judgment_formats.read_csv:
        head, _, rest = content.partition("\n")
        data = f"{head}\nq1,d0,1\n{rest}\n"
    else:
        data = f"{good[reader]}\n{content}\n"
    records, problems = _read_all(reader, data.encode("utf-8", "surrogatepass"))
    assert len(records) == 1
    assert len(problems) == 1 and problems[0].line == (
        3 if reader is judgment_formats.read_csv else 2
    )
    assert field is None or problems[0].field == field, problems[0]
    assert len(problems[0].message) < 300


def test_format_decoding_names_the_line_across_chunks():
    data = b"q1 0 d1 1\n" * 20_000 + b"q1 0 \xff 1\n"  # past the 64 KiB chunk
    _, problems = _read_all(judgment_formats.read_qrels, data)
    assert problems[-1].line == 20_001 and "UTF-8" in problems[-1].message
    _, problems = _read_all(judgment_formats.read_qrels, b"q1 0 d1 1\n" * 9_000 + b"q\x001 0 d 1\n")
    assert problems[-1].line == 9_001 and "NUL" in problems[-1].message
