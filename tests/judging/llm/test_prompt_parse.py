"""Prompt rendering and answer parsing of LLM judges (pure, no database)."""

from __future__ import annotations

import pytest

from judging.llm import parse, prompt

VALUES = {
    "qid": "q1",
    "docno": "d7",
    "query": "why is the sky blue",
    "description": "Explain the colour.",
    "narrative": "Physics answers are relevant.",
    "title": "Rayleigh",
    "document": "Scattering {query} of light.",
}


def test_render_replaces_every_placeholder_once():
    template = "{qid}|{docno}|{query}|{description}|{narrative}|{title}|{document}"
    assert prompt.render(template, VALUES) == (
        "q1|d7|why is the sky blue|Explain the colour.|Physics answers are relevant.|"
        "Rayleigh|Scattering {query} of light."
    )


def test_braces_escape_and_json_examples_stay_literal():
    template = 'Answer {{like this}} or as {"grade": 2} for {qid}'
    assert prompt.render(template, VALUES) == 'Answer {like this} or as {"grade": 2} for q1'


def test_unknown_placeholder_is_named():
    with pytest.raises(prompt.TemplateError) as exc:
        prompt.check_template("Query {query} doc {body} and {passage} and {body}")
    assert exc.value.unknown == ["body", "passage"]
    assert "{body}" in str(exc.value) and "{passage}" in str(exc.value)


def test_default_template_is_valid_and_asks_for_the_score_line():
    prompt.check_template(prompt.DEFAULT_TEMPLATE)
    assert set(prompt.placeholders_in(prompt.DEFAULT_TEMPLATE)) <= set(prompt.PLACEHOLDERS)
    assert "##final score: N" in prompt.DEFAULT_TEMPLATE
    assert prompt.DEFAULT_SCALE_MAPPING == {"0": 0, "1": 1, "2": 3, "3": 4}


def test_template_version_prefers_declared_and_hash_is_stable():
    assert prompt.template_version("x", "v3") == "v3"
    assert prompt.template_version("x") == prompt.template_version("x")
    assert prompt.template_version("x") != prompt.template_version("y")
    assert prompt.prompt_hash("a", "bc") != prompt.prompt_hash("ab", "c")


SCALE = ["0", "1", "2", "3"]
MAPPING = {"0": 0, "1": 1, "2": 3, "3": 4}


@pytest.mark.parametrize(
    ("content", "label", "grade"),
    [
        ("Intent ... ##final score: 2", "2", 3),
        ("final score: 1 at first, then ##Final Score: 3", "3", 4),
        ("##final score: **0**", "0", 0),
        ('{"grade": 2, "reason": "ok"}', "2", 3),
        ('```json\n{"grade": 3}\n```', "3", 4),
        ('{"grade": 1.0}', "1", 1),
        ('{"grade": "2"}', "2", 3),
    ],
)
def test_parse_answer(content, label, grade):
    assert parse.parse_answer(content, native_scale=SCALE, mapping=MAPPING) == (label, grade)


@pytest.mark.parametrize(
    "content",
    [
        "",
        "I think it is relevant.",
        "##final score: 4",  # off the native 0-3 scale: never clamped
        "##final score: 2.5",  # never rounded
        "##final score: -1",
        '{"grade": 7}',
        '{"grade": true}',
        '{"score": 2}',
        '{"grade": 2.5}',
        '{"grade": 2, "why": ' + "[" * 5000 + "]" * 5000 + "}",  # past json's recursion limit
    ],
)
def test_parse_answer_refuses(content):
    with pytest.raises(parse.AnswerError):
        parse.parse_answer(content, native_scale=SCALE, mapping=MAPPING)


def test_without_scale_labels_are_grades_0_to_4():
    assert parse.parse_answer("final score: 4", native_scale=[], mapping={}) == ("4", 4)
    with pytest.raises(parse.AnswerError):
        parse.parse_answer("final score: 5", native_scale=[], mapping={})


def test_custom_pattern_with_text_labels():
    scale = ["bad", "ok", "great"]
    mapping = {"bad": 0, "ok": 2, "great": 4}
    pattern = r"verdict:\s*(\w+)"
    assert parse.parse_answer(
        "verdict: ok ... verdict: great", native_scale=scale, mapping=mapping, pattern=pattern
    ) == ("great", 4)
    with pytest.raises(parse.AnswerError):
        parse.parse_answer("verdict: meh", native_scale=scale, mapping=mapping, pattern=pattern)


def test_pattern_checks():
    with pytest.raises(ValueError, match="regular expression"):
        parse.compile_pattern("(")
    with pytest.raises(ValueError, match="one capturing group"):
        parse.compile_pattern(r"(a)(b)")
