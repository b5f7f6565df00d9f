"""Readers: formats, sources, whitespace, ranking order and every kind of input error."""

from __future__ import annotations

import io
import json

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from metrics.engine import (
    EngineInputError,
    InputError,
    Qrels,
    Run,
    evaluate,
    read_qrels,
    read_run,
)
from metrics.engine import _strings as S
from metrics.engine.errors import MAX_ERRORS

RUN = b"q1 Q0 D1 1 2.5 tagA\nq1 Q0 D2 2 1.5 tagA\nq2 Q0 D1 1 0.5 tagA\n"
QRELS = b"q1 0 D1 1\nq1 0 D2 0.5\nq2 0 D3 -1\n"


def rows(obj: Run | Qrels) -> list[tuple[str, str, float]]:
    qids, docs, vals = obj.to_arrays()
    return list(zip(qids, docs, vals.tolist(), strict=True))


def errors_of(exc_info: pytest.ExceptionInfo[EngineInputError]) -> list[tuple[int | None, str]]:
    return [(e.line, e.message) for e in exc_info.value.errors]


# ----------------------------------------------------------------------------- formats
def test_trec_run_from_path_bytes_and_file_objects(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN)
    expected = [("q1", "D1", 2.5), ("q1", "D2", 1.5), ("q2", "D1", 0.5)]
    for source in (path, str(path), RUN, io.BytesIO(RUN), io.StringIO(RUN.decode())):
        run = read_run(source)
        assert rows(run) == expected
        assert run.tag == "tagA"
    assert read_run(path).name == str(path)
    assert read_run(RUN).name == "<bytes>"
    assert read_run(RUN, name="x.run").name == "x.run"


def test_trec_qrels_decimal_and_negative_labels():
    qrels = read_qrels(QRELS)
    assert rows(qrels) == [("q1", "D1", 1.0), ("q1", "D2", 0.5), ("q2", "D3", -1.0)]
    assert qrels.qids == ["q1", "q2"]


def test_whitespace_variants_are_equivalent():
    messy = (
        b"# a comment line\n"
        b"q1\tQ0\tD1\t1\t2.5\ttagA\r\n"
        b"  q1 Q0   D2 2 1.5 tagA   \n"
        b"\n"
        b"q2 Q0 D1 1 0.5 tagA"
    )
    assert rows(read_run(messy)) == rows(read_run(RUN))
    assert read_run(messy).tag == "tagA"
    assert rows(read_qrels(b"q1 0 D1 1\r\nq1  0 D2 0.5\n#x\nq2 0 D3 -1")) == rows(read_qrels(QRELS))


def test_json_array_and_jsonl():
    array = json.dumps(
        [
            {"qid": "q1", "docno": "D1", "score": 2.5, "tag": "j"},
            {"qid": "q1", "docno": "D2", "score": 1.5},
            {"query_id": "q2", "doc_id": "D1", "score": 0.5},
        ],
        indent=1,
    ).encode()
    run = read_run(array)
    assert rows(run) == rows(read_run(RUN)) and run.tag == "j"
    lines = b"\n".join(
        json.dumps({"qid": q, "docno": d, "grade": g}).encode()
        for q, d, g in [("q1", "D1", 1), ("q1", "D2", 0.5), (2, "D3", -1)]
    )
    assert rows(read_qrels(lines)) == [("q1", "D1", 1.0), ("q1", "D2", 0.5), ("2", "D3", -1.0)]
    assert rows(read_qrels(lines, format="jsonl")) == rows(read_qrels(lines))


def test_explicit_format_overrides_detection():
    with pytest.raises(EngineInputError) as exc:
        read_run(RUN, format="json")
    assert errors_of(exc)[0][0] == 1


def test_from_arrays_and_equivalence_with_text():
    run = Run.from_arrays(["q1", "q1", "q2"], ["D1", "D2", "D1"], [2.5, 1.5, 0.5], tag="t")
    assert rows(run) == rows(read_run(RUN)) and run.tag == "t"
    qrels = Qrels.from_arrays(np.array(["q1", "q1", "q2"]), ["D1", "D2", "D3"], [1, 0.5, -1])
    a = evaluate(qrels, run, ["map", "ndcg"])
    b = evaluate(QRELS, RUN, ["map", "ndcg"])
    assert a.aggregates == b.aggregates


def test_unicode_and_long_identifiers():
    long_doc = "clueweb12-0000tw-00-00000-" + "x" * 60
    run = Run.from_arrays(["é", "é", "é"], ["dé", long_doc, "d"], [1.0, 2.0, 3.0])
    qrels = Qrels.from_arrays(["é", "é"], [long_doc, "dé"], [2, 1])
    res = evaluate(qrels, run, ["recip_rank", "num_rel_ret"])
    assert res.value("recip_rank") == 0.5
    assert res.value("num_rel_ret") == 2


# ----------------------------------------------------------------------------- ranking
def test_rank_column_is_ignored_and_ties_break_by_docno_descending():
    text = (
        b"1 Q0 A 1 1.0 t\n"
        b"1 Q0 B 2 3.0 t\n"
        b"1 Q0 D10 3 2.0 t\n"
        b"1 Q0 D9 4 2.0 t\n"
        b"1 Q0 D1 5 2.0 t\n"
        b"1 Q0 D 6 2.0 t\n"
    )
    run = read_run(text)
    order, starts, counts = run.ranking()
    ranked = [run.docno(i) for i in order[starts[0] : starts[0] + counts[0]]]
    # score descending; equal scores by docno descending in byte order ("D9" > "D10" > "D1" > "D")
    assert ranked == ["B", "D9", "D10", "D1", "D", "A"]


def test_ranking_is_independent_of_file_order():
    rng = np.random.default_rng(3)
    n = 500
    qids = rng.integers(0, 7, n).astype(str)
    docs = np.array([f"d{i}" for i in range(n)])
    scores = rng.integers(0, 5, n).astype(float)
    a = Run.from_arrays(qids, docs, scores)
    perm = rng.permutation(n)
    b = Run.from_arrays(qids[perm], docs[perm], scores[perm])
    for run in (a, b):
        order, starts, counts = run.ranking()
        for c, q in enumerate(run.qids):
            got = [run.docno(i) for i in order[starts[c] : starts[c] + counts[c]]]
            mine = [
                (float(s), str(d)) for qq, d, s in zip(qids, docs, scores, strict=True) if qq == q
            ]
            mine.sort(key=lambda x: x[1].encode(), reverse=True)  # docno descending...
            mine.sort(key=lambda x: -x[0])  # ...within score descending (stable)
            want = [d for _, d in mine]
            assert got == want


# ----------------------------------------------------------------------------- errors
def test_every_error_kind_names_file_and_line_and_all_are_reported():
    bad = (
        b"1 Q0 D1 1 1.0 t\n"  # 1 ok
        b"1 Q0 D2 2 abc t\n"  # 2 non-numeric score
        b"1 Q0 D3 3\n"  # 3 wrong column count
        b"1 Q0 D4 4 nan t\n"  # 4 NaN
        b"1 Q0 D5 5 -inf t\n"  # 5 infinite
        b"1 Q0 D1 6 0.5 t\n"  # 6 duplicate of line 1
        b"1 Q0 D6 7 1e999 t\n"  # 7 overflow
        b"1 Q0 D7 8 0.1 t extra\n"  # 8 too many columns
    )
    with pytest.raises(EngineInputError) as exc:
        read_run(bad, name="run.txt")
    assert errors_of(exc) == [
        (2, "score 'abc' is not a number"),
        (3, "expected 6 columns (qid Q0 docno rank score tag), found 4"),
        (4, "score 'nan' is not a finite number"),
        (5, "score '-inf' is not a finite number"),
        (6, "docno D1 repeated for query 1 (first on line 1)"),
        (7, "score '1e999' is out of range"),
        (8, "expected 6 columns (qid Q0 docno rank score tag), found 7"),
    ]
    assert all(e.file == "run.txt" for e in exc.value.errors)
    assert str(exc.value).splitlines()[0] == "run.txt:2: score 'abc' is not a number"
    assert exc.value.total == 7


def test_duplicate_message_format_from_a_file(tmp_path):
    lines = [f"5 Q0 D{i} {i} {10 - i} r\n" for i in range(1, 20)]
    lines[16] = "5 Q0 D3 17 0.5 r\n"  # line 17 repeats D3 of line 3
    path = tmp_path / "run.txt"
    path.write_text("".join(lines))
    with pytest.raises(EngineInputError) as exc:
        read_run(path)
    assert [str(e) for e in exc.value.errors] == [
        f"{path}:17: docno D3 repeated for query 5 (first on line 3)"
    ]


def test_qrels_errors():
    bad = b"1 0 D1 1\n1 0 D1 2\n1 0 D2\n1 0 D3 x\n1 0 D4 NaN\n"
    with pytest.raises(EngineInputError) as exc:
        read_qrels(bad, name="qrels.txt")
    assert errors_of(exc) == [
        (2, "docno D1 repeated for query 1 (first on line 1)"),
        (3, "expected 4 columns (qid iter docno label), found 3"),
        (4, "label 'x' is not a number"),
        (5, "label 'NaN' is not a finite number"),
    ]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"# only a comment\n"])
def test_empty_inputs(content):
    with pytest.raises(EngineInputError) as exc:
        read_run(content, name="run.txt")
    assert [str(e) for e in exc.value.errors] == ["run.txt:1: file is empty (no data lines)"]
    with pytest.raises(EngineInputError):
        read_qrels(content, name="q.txt")


def test_json_errors_have_lines():
    text = (
        b"[\n"
        b' {"qid": "1", "docno": "a", "score": 1},\n'
        b' {"qid": "1", "docno": "b"},\n'
        b' {"qid": "1", "docno": "c", "score": "x"},\n'
        b' {"qid": "1", "docno": "a", "score": 2},\n'
        b' {"qid": true, "docno": "d", "score": 2}\n'
        b"]\n"
    )
    with pytest.raises(EngineInputError) as exc:
        read_run(text, name="r.json")
    assert errors_of(exc) == [
        (3, "missing field 'score'"),
        (4, "score 'x' is not a number"),
        (5, "docno a repeated for query 1 (first as item 1)"),
        (6, "qid must be a string or an integer"),
    ]
    assert [e.item for e in exc.value.errors] == [2, 3, 4, 5]
    assert str(exc.value.errors[2]) == (
        "r.json: item 4 (line 5): docno a repeated for query 1 (first as item 1)"
    )
    with pytest.raises(EngineInputError) as exc:
        read_qrels(b'{"qid": 1, "docno": "a", "grade": 1}\n{"qid": 1, "docno": \n', name="q.jsonl")
    assert errors_of(exc)[0][0] == 2 and "invalid JSON" in errors_of(exc)[0][1]


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_pair_repeated_on_one_line_of_a_json_array_is_refused_naming_the_item(kind):
    """The audit's run: one array on one line, the same docno twice (it counted twice)."""
    value = "score" if kind == "run" else "grade"
    text = (
        f'[{{"qid":"101","docno":"hg-377192","{value}":1}},'
        f'{{"qid":"101","docno":"x","{value}":1}},'
        f'{{"qid":"101","docno":"hg-377192","{value}":2}}]'
    ).encode()
    reader = read_run if kind == "run" else read_qrels
    with pytest.raises(EngineInputError) as exc:
        reader(text, name="r.json")
    (error,) = exc.value.errors
    assert (error.line, error.item) == (1, 3)
    assert str(error) == (
        "r.json: item 3 (line 1): docno hg-377192 repeated for query 101 (first as item 1)"
    )
    lines = text.replace(b"},{", b"}\n{")[1:-1]  # the same records as JSON Lines
    with pytest.raises(EngineInputError) as exc:
        reader(lines, name="r.jsonl")
    (error,) = exc.value.errors
    assert (error.line, error.item, error.message) == (
        3,
        None,
        "docno hg-377192 repeated for query 101 (first on line 1)",
    )


def test_error_list_is_capped_with_a_count():
    bad = b"".join(b"1 Q0 D%d 1 x t\n" % i for i in range(250))
    with pytest.raises(EngineInputError) as exc:
        read_run(bad, name="r")
    # Reading stops at the cap: 99 problems, then where reading stopped (nothing omitted).
    assert len(exc.value.errors) == MAX_ERRORS
    assert exc.value.total == MAX_ERRORS and exc.value.omitted == 0
    assert exc.value.errors[-1].line == MAX_ERRORS
    assert exc.value.errors[-1].message == "reading stopped here after 99 problems"


def test_nothing_is_evaluated_from_a_bad_file(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN + b"q3 Q0 D1 1 oops t\n")
    with pytest.raises(EngineInputError):
        evaluate(QRELS, path, ["map"])


def test_from_arrays_errors():
    with pytest.raises(EngineInputError) as exc:
        Run.from_arrays(["1", "1", "1"], ["a", "b", "a"], [1.0, 2.0, 3.0])
    assert [str(e) for e in exc.value.errors] == [
        "<arrays>:3: docno a repeated for query 1 (first on line 1)"
    ]
    with pytest.raises(EngineInputError) as exc:
        Run.from_arrays(["1", "1"], ["a", "b"], [1.0, np.nan])
    assert exc.value.errors == [InputError("<arrays>", 2, "score nan is not a finite number")]
    with pytest.raises(EngineInputError):
        Qrels.from_arrays(["1"], ["a", "b"], [1])
    with pytest.raises(EngineInputError):
        Qrels.from_arrays(["1", "1"], ["a", "a"], [1, 2])


def test_unreadable_path(tmp_path):
    with pytest.raises(EngineInputError) as exc:
        read_run(tmp_path / "missing.txt")
    assert "cannot read" in str(exc.value)


def test_input_errors_survive_pickling():
    import pickle

    err = EngineInputError([InputError("f", 1, "m")], total=5)
    back = pickle.loads(pickle.dumps(err))
    assert back.errors == err.errors and back.total == 5


def test_docnos_column_round_trips():
    run = read_run(b"1 Q0 a 1 1 t\n1 Q0 bbbbbbbbbbbbbbbbbbbbb 2 0.5 t\n2 Q0 c\xc3\xa9 1 1 t\n")
    assert S.bytes_list(run.docnos) == [b"a", b"bbbbbbbbbbbbbbbbbbbbb", "cé".encode()]
    assert run.docnos.type == pa.binary()


@pytest.mark.parametrize(
    "content",
    [
        RUN.replace(b"\n", b"\r\n"),
        RUN.replace(b" ", b"\t"),
        b"# comment\n" + RUN,
        RUN.replace(b"q1 Q0 D2", b"q1  Q0 D2"),
        b"  " + RUN,
        RUN.replace(b"\n", b" \n"),
    ],
)
def test_files_read_from_disk_in_every_layout(tmp_path, content):
    path = tmp_path / "run.txt"
    path.write_bytes(content)
    run = read_run(path)
    assert rows(run) == rows(read_run(RUN)) and run.tag == "tagA"


def test_bad_file_on_disk_reports_lines(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN + b"q2 Q0 D1 2 0.1 tagA\n")
    with pytest.raises(EngineInputError) as exc:
        read_run(path)
    assert [str(e) for e in exc.value.errors] == [
        f"{path}:4: docno D1 repeated for query q2 (first on line 3)"
    ]


_pairs = st.lists(
    st.tuples(st.sampled_from(["1", "2", "q3"]), st.sampled_from(["a", "b", "c", "d-4"])),
    min_size=1,
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(pairs=_pairs, layout=st.sampled_from(["trec", "array-one-line", "array", "jsonl"]))
def test_a_repeated_pair_is_refused_in_every_layout(pairs, layout):
    """Whatever the layout, the run is refused iff a (qid, docno) repeats, naming each repeat."""
    records = [{"qid": q, "docno": d, "score": i} for i, (q, d) in enumerate(pairs)]
    if layout == "trec":
        text = "".join(f"{q} Q0 {d} 1 {i} t\n" for i, (q, d) in enumerate(pairs))
    elif layout == "jsonl":
        text = "".join(json.dumps(r) + "\n" for r in records)
    else:
        text = json.dumps(records, indent=None if layout == "array-one-line" else 1)
    repeats = len(pairs) - len(set(pairs))
    if not repeats:
        assert len(read_run(text.encode(), name="r")) == len(pairs)
        return
    with pytest.raises(EngineInputError) as exc:
        read_run(text.encode(), name="r")
    errors = exc.value.errors
    assert len(errors) == repeats
    assert all("repeated for query" in e.message for e in errors)
    seen: set[tuple[str, str]] = set()
    repeated_at = []
    for position, pair in enumerate(pairs, start=1):
        if pair in seen:
            repeated_at.append(position)
        seen.add(pair)
    if layout.startswith("array"):
        assert [e.item for e in errors] == repeated_at
    else:
        assert [e.line for e in errors] == repeated_at
