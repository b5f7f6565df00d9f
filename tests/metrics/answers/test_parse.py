"""Reading TREC RAG answer files (metrics/answers/parse.py): records, and every problem."""

from __future__ import annotations

import json

from metrics.answers import parse


def line(topic="t1", run="r1", refs=("d1", "d2"), answer=None, **extra):
    record = {"run_id": run, "topic_id": topic, "references": list(refs)}
    record["answer"] = (
        answer if answer is not None else [{"text": "The sun is a star.", "citations": [0, 1]}]
    )
    record.update(extra)
    return json.dumps(record)


def test_a_jsonl_file_is_read_in_order():
    content = "\n".join([line("t1"), "", line("t2", refs=["d3"], answer=[])]).encode()
    parsed = parse.read_answers(content)
    assert parsed.errors == [] and parsed.format == "jsonl" and parsed.run_id == "r1"
    first, second = parsed.answers
    assert (first.topic_id, first.line, first.references) == ("t1", 1, ("d1", "d2"))
    assert first.sentences == (parse.Sentence("The sun is a star.", (0, 1)),)
    assert first.length == 5
    assert (second.topic_id, second.line, second.sentences) == ("t2", 3, ())


def test_one_json_array_and_the_2025_metadata_layout():
    records = [
        json.loads(line("t1")),
        {
            "metadata": {"run_id": "r1", "narrative_id": "t2", "team_id": "x"},
            "references": ["d1"],
            "answer": [{"text": "Hi.", "citations": [0]}],
        },
    ]
    parsed = parse.read_answers(json.dumps(records, indent=1).encode())
    assert parsed.errors == [] and parsed.format == "json"
    assert [(a.topic_id, a.item) for a in parsed.answers] == [("t1", 1), ("t2", 2)]


def test_every_problem_is_named_by_line_and_field_in_one_round():
    content = "\n".join(
        [
            line("t1"),
            line("t1"),  # repeated topic
            line("t3", answer=[{"text": "x", "citations": [2, -1, "0", True]}]),
            line("t4", run="other"),  # a second run id
            "{not json",
            json.dumps({"topic_id": 5, "answer": "text"}),
            line("t7", refs=["d\u00001"]),
            line("t8", answer=[{"text": "bell\u0007", "citations": []}, 3]),
        ]
    ).encode()
    errors = parse.read_answers(content).errors
    found = {(e.get("line"), e.get("field")) for e in errors}
    assert (3, "answer[0].citations[0]") in found
    assert (3, "answer[0].citations[1]") in found
    assert (3, "answer[0].citations[2]") in found
    assert (3, "answer[0].citations[3]") in found
    assert (5, None) in found  # invalid JSON
    assert {(6, "topic_id"), (6, "run_id"), (6, "references"), (6, "answer")} <= found
    assert any(e.get("line") == 7 and "NUL" in e["message"] for e in errors)
    assert {(8, "answer[0].text"), (8, "answer[1]")} <= found
    assert (2, "topic_id") in found and (4, "run_id") in found
    by_place = {(e.get("line"), e.get("field")): e["message"] for e in errors}
    assert "out of range" in by_place[(3, "answer[0].citations[0]")]
    assert "indices 0 to 1" in by_place[(3, "answer[0].citations[0]")]
    assert "answered twice (first at line 1)" in by_place[(2, "topic_id")]
    assert "control character" in by_place[(8, "answer[0].text")]


def test_hostile_files_are_refused_with_a_reason():
    assert parse.read_answers(b"").errors == [{"message": "the file holds no answers"}]
    (bad_utf8,) = parse.read_answers(line().encode() + b"\n\xff\xfe{}\n").errors
    assert bad_utf8["line"] == 2 and "UTF-8" in bad_utf8["message"]
    deep = ("[" * 100 + "]" * 100).encode()
    (too_deep,) = parse.read_answers(deep).errors
    assert "nested deeper" in too_deep["message"]
    nul = parse.read_answers(line().encode() + b"\n\x00\n").errors
    assert nul and nul[0]["line"] == 2


def test_errors_are_capped():
    content = "\n".join("oops" for _ in range(500)).encode()
    errors = parse.read_answers(content).errors
    assert len(errors) == parse.MAX_ERRORS


def test_id_problems_name_unknown_topics_and_documents():
    parsed = parse.read_answers("\n".join([line("t1"), line("zz", refs=["d1", "nope"])]).encode())
    asked: list[set[str]] = []

    def known(ids: set[str]) -> set[str]:
        asked.append(ids)
        return ids & {"d1", "d2"}

    problems = parse.id_problems(parsed.answers, topics={"t1"}, known_documents=known)
    assert asked == [{"d1", "d2", "nope"}]  # one look-up for the file
    assert [(p["line"], p["field"]) for p in problems] == [(2, "topic_id"), (2, "references[1]")]
    assert "'nope' is not in the collection" in problems[1]["message"]
