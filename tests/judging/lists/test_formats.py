"""The pure readers and writers of judging.lists.formats: no database, no Django."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import subprocess
import sys
import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from judging.lists.formats import MAX_REPORTED, FormatError, Problem, Problems, iter_lines, text
from judging.lists.formats import collections as cf
from judging.lists.formats import judgments as jf
from judging.lists.formats.common import (
    FORMULA_STARTS,
    csv_cell_text,
    is_formula,
    needs_formula_guard,
)

ROWS = [
    jf.LiveRow("301", "d1", 2.0, 1, 0, 'apples, "pears"\nand plums'),
    jf.LiveRow("301", "d2", 0.0, 2, 0, 'apples, "pears"\nand plums'),
    jf.LiveRow("302", "d1", 1.5, 1, 1, "plain"),
]


def _read(reader, source):
    return list(reader(iter_lines(source)))


def test_the_formats_package_imports_no_django():
    code = (
        "import sys, judging.lists.formats.judgments, judging.lists.formats.collections; "
        "print(any(m == 'django' or m.startswith('django.') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_qrels_and_ranklib_lines():
    assert "".join(jf.write_live("qrels", ROWS)) == "301 0 d1 2\n301 0 d2 0\n302 0 d1 1.5\n"
    numbers = jf.ranklib_numbers([("301", 7), ("302", 9)])
    assert numbers == {"301": 301, "302": 302}  # whole-number qids are their own numbers
    out = "".join(jf.write_live("ranklib", ROWS, qid_numbers=numbers))
    assert out == (
        "# qid:301 = 301\n# qid:302 = 302\n2 qid:301 # d1\n0 qid:301 # d2\n1.5 qid:302 # d1\n"
    )
    # Any non-numeric qid: the permanent ids, and the header gives the mapping back.
    assert jf.ranklib_numbers([("q1", 7), ("302", 9)]) == {"q1": 7, "302": 9}


def test_csv_quotes_commas_quotes_and_newlines_and_python_csv_reads_it_back():
    out = "".join(jf.write_live("csv", ROWS))
    assert out.startswith("query,docid,rating\n")
    assert '"apples, ""pears""\nand plums",d1,2\n' in out
    records = list(csv.reader(io.StringIO(out)))
    assert records[0] == ["query", "docid", "rating"]
    assert records[1] == ['apples, "pears"\nand plums', "d1", "2"]
    parsed = _read(jf.read_csv, out)
    assert [(r.line, r.query, r.document, r.grade) for r in parsed[:2]] == [
        (2, 'apples, "pears"\nand plums', "d1", 2),
        (4, 'apples, "pears"\nand plums', "d2", 0),  # the record starts on physical line 4
    ]
    assert parsed[2] == Problem(6, "must be a whole number, not '1.5'", "rating")


def test_json_and_jsonl_are_valid_json():
    lines = "".join(jf.write_live("jsonl", ROWS)).splitlines()
    assert json.loads(lines[2]) == {
        "query": "302",
        "document": "d1",
        "grade": 1.5,
        "humans": 1,
        "llms": 1,
    }
    array = json.loads("".join(jf.write_live("json", ROWS)))
    assert array[0] == {"query": "301", "document": "d1", "grade": 2, "humans": 1, "llms": 0}
    # json is the jsonl objects in one array: the same field names, the same values
    assert array == [
        json.loads(line) for line in "".join(jf.write_live("jsonl", ROWS)).splitlines()
    ]
    assert "".join(jf.write_live("json", [])) == "[]\n"


@pytest.mark.parametrize("fmt", jf.FORMATS)
def test_whole_grades_read_back_as_written(fmt):
    rows = [r for r in ROWS if float(r.grade).is_integer()]
    numbers = jf.ranklib_numbers([("301", 1), ("302", 2)])
    out = "".join(jf.write_live(fmt, rows, qid_numbers=numbers))
    read = _read(jf.READERS[fmt], out)
    got = [(r.query, r.document, r.grade) for r in read]
    query = (lambda r: r.query_text) if fmt == "csv" else (lambda r: r.qid)
    assert got == [(query(r), r.docno, int(r.grade)) for r in rows]


def test_raw_label_rows():
    row = jf.LabelRow("q1", "d1", 3, "Ann, B", "human", "graded", 2, 'a "note"', 12.5, "T", "x")
    row = dataclasses.replace(row, guidelines_version=2)
    out = "".join(jf.write_labels("csv", [row]))
    assert out.splitlines()[0] == ",".join(jf.RAW_CSV_HEADER)
    expected = ["q1", "x", "d1", "3", "Ann, B", "human", "graded", "2", 'a "note"', "12.5", "T"]
    assert list(csv.reader(io.StringIO(out)))[1] == [*expected, "2", ""]
    item = json.loads("".join(jf.write_labels("jsonl", [row])))
    assert item["judge_kind"] == "human" and item["seconds"] == 12.5 and item["grade"] == 2
    assert (item["guidelines_version"], item["judge_version"]) == (2, None)
    llm = dataclasses.replace(row, judge_kind="llm", judge_version="v-0123456789ab")
    assert list(csv.reader(io.StringIO("".join(jf.write_labels("csv", [llm])))))[1][-1] == (
        "v-0123456789ab"
    )
    with pytest.raises(ValueError):
        list(jf.write_labels("qrels", [row]))


def test_readers_name_the_line_of_every_problem():
    qrels = "q1 0 d1 2\n\n# comment\nq1 0 d2\nq1 0 d3 x\nq1 0 d4 -1\n"
    got = _read(jf.read_qrels, qrels)
    assert got[0] == jf.JudgmentIn(1, "q1", "d1", 2)
    assert got[1] == Problem(4, "expected 4 columns (qid iter docno grade), found 3")
    assert got[2].line == 5 and got[2].field == "grade"
    assert got[3] == jf.JudgmentIn(6, "q1", "d4", -1)  # the scale decides about -1
    jsonl = '{"qid": "q1", "docno": "d1", "grade": 2}\n{"query": "q1"}\n[1]\nnot json\n'
    got = _read(jf.read_jsonl, jsonl)
    assert got[0] == jf.JudgmentIn(1, "q1", "d1", 2)
    assert got[1] == Problem(2, "is required", "document")
    assert got[2].line == 3 and got[3].line == 4
    assert _read(jf.read_csv, "query,docid,score\n")[0].message.startswith("unknown column")
    assert _read(jf.read_json, '{"a": 1}')[0].message.startswith("expected a JSON array")


@pytest.mark.parametrize(
    "line",
    [
        "q1 0 d1 3",
        "q1 0 d1 -1",
        "q1 0 d1 99",
        "q1 0 d1 100",
        "q1 0 d1 04",
        "q1 0 d1 +2",
        "q1 0 d1 2.0",
        "q1 0 d1 1e3",
        "q1 0 d1 two",
        f"{'q' * 500} 0 {'d' * 500} 1",
        f"{'q' * 501} 0 d1 1",
        f"q1 0 {'d' * 501} 1",
        "q1 0 d\ud800 1",
        "q\x00 0 d1 1",
    ],
)
def test_the_qrels_fast_path_reads_a_line_as_the_general_checks_do(line):
    """read_qrels takes usual lines without calling _id and _grade; the outcome is theirs."""
    (got,) = jf.read_qrels([(1, line)])  # as text, so a lone surrogate can reach it
    qid, _, docno, grade = line.split()
    try:
        expected = jf.JudgmentIn(
            1, jf._id(qid, 1, "query"), jf._id(docno, 1, "document"), jf._grade(grade, 1)
        )
    except FormatError as exc:
        expected = exc.problem
    assert got == expected


def test_text_policy_refuses_nul_and_lone_surrogates_with_the_line():
    assert text("ok", 1, "f") == "ok"
    with pytest.raises(FormatError) as nul:
        text("a\x00b", 7, "note")
    assert nul.value.problem == Problem(7, "note contains a NUL character at position 2", "note")
    got = _read(jf.read_jsonl, '{"qid": "q1", "docno": "d\\ud800", "grade": 1}\n')
    assert got[0].line == 1 and "lone surrogate" in got[0].message and got[0].field == "docno"
    got = _read(jf.read_qrels, "q1 0 d\x001 1\n")
    assert got[0].line == 1 and "NUL" in got[0].message


def test_iter_lines_streams_chunks_and_names_the_non_utf8_line():
    data = b"\xef\xbb\xbfa\r\nb\n" + "é".encode() * 40000 + b"\nc"
    stream = io.BytesIO(data)
    got = list(iter_lines(stream))
    assert got[0] == (1, "a") and got[1] == (2, "b") and got[3] == (4, "c")
    assert got[2][1] == "é" * 40000  # split across read chunks
    with pytest.raises(FormatError) as bad:
        list(iter_lines(io.BytesIO(b"ok\nok\n\xff\n")))
    assert bad.value.problem.line == 3


def test_problems_are_capped_with_a_count():
    problems = Problems()
    for line in range(MAX_REPORTED + 5, 0, -1):
        problems.add(Problem(line, "bad"))
    items = problems.as_dicts()
    assert len(items) == MAX_REPORTED + 1
    assert items[0]["line"] == 6  # sorted by line among those kept
    assert items[-1] == {"message": "... and 5 more problems"}


@pytest.mark.parametrize(
    ("spec", "grades", "expected"),
    [
        (None, [0, 4], [0, 4]),
        ("0-3", [0, 1, 2, 3], [0, 1, 3, 4]),  # TREC DL: 2 highly relevant, 3 perfect
        ("1-5", [1, 2, 3, 4, 5], [0, 1, 2, 3, 4]),
        ("0-1", [0, 1], [0, 4]),
        ("0-2", [0, 1, 2], [0, 2, 4]),
        ("-2=0,0=0,1=2,2=4", [-2, 0, 1, 2], [0, 0, 2, 4]),
    ],
)
def test_scale_mapping(spec, grades, expected):
    mapping = jf.parse_scale(spec)
    assert [mapping(g) for g in grades] == expected


@pytest.mark.parametrize(("spec", "grade"), [(None, 5), ("0-3", 4), ("1-5", 0), ("0=0,1=4", 2)])
def test_scale_mapping_refuses_grades_off_the_scale(spec, grade):
    with pytest.raises(ValueError):
        jf.parse_scale(spec)(grade)


@pytest.mark.parametrize("spec", ["3-0", "a-b", "1=9", "0-3-4"])
def test_bad_scales_are_refused(spec):
    with pytest.raises(ValueError):
        jf.parse_scale(spec)


TREC_TOPICS = """<top>
<num> Number: 301
<title> International Organized Crime

<desc> Description:
Identify organizations that participate in international criminal
activity, the activity, and, if possible, collaborating organizations.

<narr> Narrative:
A relevant document must as a minimum identify the organization and the
type of illegal activity.
</top>

<top>

<num>   Number:   302
<title>    Poliomyelitis    and Post-Polio
<desc> Description:
Is the disease of Poliomyelitis (polio) under control in the world?

</top>
<top>
<num> Number: 303
<title> Topic: Hubble Telescope Achievements
</top>
"""


def test_trec_topics_with_the_quirks_of_real_files():
    got = _read(cf.read_trec_topics, TREC_TOPICS)
    assert got[0] == cf.TopicIn(
        1,
        "301",
        "International Organized Crime",
        "Identify organizations that participate in international criminal activity, the "
        "activity, and, if possible, collaborating organizations.",
        "A relevant document must as a minimum identify the organization and the type of "
        "illegal activity.",
    )
    # Extra white space, "Number:" with spaces, no <narr>.
    assert got[1] == cf.TopicIn(
        14,
        "302",
        "Poliomyelitis and Post-Polio",
        "Is the disease of Poliomyelitis (polio) under control in the world?",
        "",
    )
    # "Topic:" prefix of TREC 1–3 titles, no <desc> or <narr>.
    assert got[2] == cf.TopicIn(22, "303", "Hubble Telescope Achievements")


def test_trec_web_track_xml_topics_and_problems():
    xml = (
        '<topics>\n<topic number="51" type="faceted">\n  <query>horse hooves</query>\n'
        "  <description>Find information on horse hooves.</description>\n"
        '  <subtopic number="1" type="inf">not a description</subtopic>\n</topic>\n</topics>\n'
    )
    assert _read(cf.read_trec_topics, xml) == [
        cf.TopicIn(2, "51", "horse hooves", "Find information on horse hooves.", "")
    ]
    bad = _read(cf.read_trec_topics, "<top>\n<title> no number\n</top>\n<top><num>9</top>\n")
    assert bad == [
        Problem(1, "topic without a <num>", "num"),
        Problem(4, "topic 9: no <title>", "title"),
    ]
    assert _read(cf.read_trec_topics, "301\tnot trec\n")[0].message.startswith("no <top>")


def test_topics_jsonl_and_tsv():
    jsonl = '{"qid": 1, "text": "a"}\n{"id": "2", "query": "b", "narrative": "n"}\n{"x": 1}\n'
    got = _read(cf.read_topics_jsonl, jsonl)
    assert got[:2] == [cf.TopicIn(1, "1", "a"), cf.TopicIn(2, "2", "b", "", "n")]
    assert got[2].line == 3
    got = _read(cf.read_topics_tsv, "1\tlower back pain\n\n2\n3\ta\tdesc\n")
    assert got[0] == cf.TopicIn(1, "1", "lower back pain")
    assert got[1] == Problem(3, "expected 'qid<TAB>text'")
    assert got[2] == cf.TopicIn(4, "3", "a", "desc")


def test_documents_jsonl_and_tsv():
    jsonl = '{"docno": "a", "title": "A", "text": "Body", "lang": "en"}\n{"pid": 7}\n{"t": 1}\n'
    got = _read(cf.read_documents_jsonl, jsonl)
    assert got[0] == cf.DocumentIn(1, "a", "A", "Body", "", {"lang": "en"})
    assert got[1] == cf.DocumentIn(2, "7")
    assert got[2].line == 3
    tsv = "0\tThe presence of communication\nD1\thttp://x.test/\tTitle\tBody text\nbad\n"
    got = _read(cf.read_documents_tsv, tsv)
    assert got[0] == cf.DocumentIn(1, "0", body="The presence of communication")
    assert got[1] == cf.DocumentIn(2, "D1", "Title", "Body text", "http://x.test/")
    assert got[2].line == 3
    got = _read(cf.read_documents_jsonl, '{"docno": "a", "extra": "x\\u0000"}\n')
    assert got[0].line == 1 and "NUL" in got[0].message


@pytest.mark.parametrize(
    "value", ["plain", 'q"uote', "back\\slash", "é", "tab\there", "\u2028", ""]
)
def test_jsonl_fast_path_writes_what_json_dumps_writes(value):
    row = jf.LiveRow(value, value + "d", 0.1234567, 2, 1)
    (line,) = jf.write_live("jsonl", [row])
    item = json.loads(line)
    assert item == {
        "query": value,
        "document": value + "d",
        "grade": 0.123457,
        "humans": 2,
        "llms": 1,
    }
    assert line == json.dumps(item, ensure_ascii=False) + "\n"


# --- CSV injection (issue 17, item 5) -------------------------------------------------------

FORMULAS = ['=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\tx", "\rx", "  =1+1"]


@pytest.mark.parametrize("cell", FORMULAS)
def test_csv_cells_a_spreadsheet_would_run_get_a_quote_and_read_back(cell):
    rows = [jf.LiveRow("q1", cell, 2.0, 1, 0, cell)]
    out = "".join(jf.write_live("csv", rows))
    record = list(csv.reader(io.StringIO(out)))[1]
    assert record[0] == "'" + cell and record[1] == "'" + cell and record[2] == "2"
    assert not any(field.lstrip(" ").startswith(FORMULA_STARTS) for field in record)
    # The guard comes off on import (ids are read stripped of surrounding space).
    [parsed] = _read(jf.read_csv, out)
    assert (parsed.query, parsed.document) == (cell.strip(), cell.strip())


def test_raw_label_csv_guards_text_but_not_numbers():
    row = jf.LabelRow(
        qid="q1",
        query_text="=cmd|' /C calc'!A0",
        docno="d1",
        judge_id=7,
        judge_name="@admin",
        judge_kind="human",
        status="judged",
        grade=3,
        note="-1 looks wrong",
        seconds=12.5,
        updated_at="2026-11-24T10:00:00+00:00",
    )
    record = list(csv.reader(io.StringIO("".join(jf.write_labels("csv", [row])))))[1]
    assert record[1] == "'=cmd|' /C calc'!A0" and record[4] == "'@admin"
    assert record[8] == "'-1 looks wrong"
    assert (record[3], record[7], record[9]) == ("7", "3", "12.5")  # numbers as they are


@pytest.mark.parametrize("fmt", ["qrels", "jsonl", "json", "ranklib"])
def test_other_formats_stay_byte_exact(fmt):
    rows = [jf.LiveRow("=q1", "-d1", 2.0, 1, 0, "=SUM(A1)")]
    out = "".join(jf.write_live(fmt, rows, qid_numbers={"=q1": 1}))
    assert "'" not in out
    assert "=q1" in out or fmt == "ranklib"
    assert "-d1" in out


# --- issue 32 item 9: formulas behind invisible characters and in full width -----------

#: The leading characters the audit found unguarded, and others of their classes.
INVISIBLE = ["\n", "\v", "\f", "\u00a0", "\u200b", "\u3000", "\ufeff", "\u2028", " \u200b\n"]
#: ``=``, ``+``, ``-`` and ``@`` in ASCII, full width (U+FF1D ...) and small forms.
STARTS = ["=", "+", "-", "@", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\ufe66", "\ufe62"]


def _raw_csv_cells(value: str) -> list[str]:
    """Return the raw-label csv record of a label whose query, judge and note are ``value``."""
    row = jf.LabelRow(
        qid="q1",
        query_text=value,
        docno="d1",
        judge_id=7,
        judge_name=value,
        judge_kind="human",
        status="judged",
        grade=3,
        note=value,
        seconds=None,
        updated_at="2026-11-26T10:00:00+00:00",
    )
    out = "".join(jf.write_labels("csv", [row]))
    return list(csv.reader(io.StringIO(out, newline="")))[1]


@pytest.mark.parametrize("prefix", ["", *INVISIBLE])
@pytest.mark.parametrize("start", STARTS)
def test_a_formula_behind_invisible_characters_or_in_full_width_is_guarded(prefix, start):
    value = prefix + start + 'HYPERLINK("http://x","y")'
    assert is_formula(value)
    record = _raw_csv_cells(value)
    assert record[1] == record[4] == record[8] == "'" + value
    assert csv_cell_text(record[8]) == value


@pytest.mark.parametrize("value", ["plain", "a=b", "\u200bplain", "'quoted", "\u3000x-y", ""])
def test_text_that_is_no_formula_is_written_as_it_is(value):
    assert not needs_formula_guard(value)
    assert _raw_csv_cells(value)[8] == value


_INVISIBLE_CHARS = st.characters(categories=("Zs", "Zl", "Zp", "Cc", "Cf"))


@settings(max_examples=400, deadline=None)
@given(
    prefix=st.text(_INVISIBLE_CHARS, max_size=6),
    quotes=st.text("'", max_size=2),
    start=st.sampled_from(STARTS),
    rest=st.text(max_size=20),
)
def test_fuzz_every_formula_behind_invisible_characters_is_guarded(prefix, quotes, start, rest):
    value = quotes + prefix + start + rest
    cell = _raw_csv_cells(value)[8]
    assert cell == "'" + value
    assert csv_cell_text(cell) == value


@settings(max_examples=400, deadline=None)
@given(st.text(max_size=30))
def test_fuzz_no_csv_cell_reads_as_a_formula_and_every_cell_imports_back(value):
    cell = _raw_csv_cells(value)[8]
    # A spreadsheet skips spaces, controls and invisible characters, folds full width:
    visible = [c for c in cell if unicodedata.category(c)[0] not in "ZC"]
    assert not cell.startswith(("\t", "\r"))
    assert not (visible and unicodedata.normalize("NFKC", visible[0])[:1] in "=+-@")
    assert csv_cell_text(cell) == value
