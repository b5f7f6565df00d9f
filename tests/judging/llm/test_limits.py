"""Issue 17 item 7 (LLM part): answer patterns cannot backtrack, prompts keep their limit."""

from __future__ import annotations

import threading

import pytest

from graded import textpolicy
from judging.llm import parse, prompt, runner
from judging.llm import services as services_llm
from judging.llm.judges import llm_config_errors
from judging.llm.models import LLMFailure
from judging.models import Document

pytestmark = pytest.mark.django_db


def _finishes(fn, seconds: float = 30.0):
    """Run ``fn`` in a thread; return (finished, result or exception)."""
    box: list = []

    def target():
        try:
            box.append(fn())
        except Exception as exc:
            box.append(exc)

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    return not thread.is_alive(), (box[0] if box else None)


@pytest.mark.parametrize(
    ("pattern", "answer"),
    [
        (r"(a+)+$", "a" * 5000 + "!"),  # 2^5000 paths for a backtracking engine
        (r"(a|aa)+$", "a" * 5000 + "!"),
        (r"(x+x+)+y", "x" * 5000),
        (r"([0-4]|[0-4]+)*z", "1" * 5000),
    ],
)
def test_a_catastrophic_pattern_cannot_backtrack(pattern, answer):
    assert llm_config_errors({"answer_pattern": pattern}) == {}
    finished, outcome = _finishes(lambda: parse.extract_label(answer, pattern=pattern))
    assert finished, f"{pattern} is still matching"
    assert isinstance(outcome, parse.AnswerError)


def test_patterns_a_linear_engine_cannot_run_are_refused_with_the_reason():
    errors = llm_config_errors({"answer_pattern": r"(a)\1"})
    assert list(errors) == ["answer_pattern"]
    assert "RE2" in errors["answer_pattern"][0]
    lookbehind = llm_config_errors({"answer_pattern": r"(?<=x)y"})
    assert list(lookbehind) == ["answer_pattern"] and "(?<=" in lookbehind["answer_pattern"][0]


def test_the_default_pattern_still_reads_the_last_score():
    assert parse.extract_label("final score: 1 ... Final  Score = **3**") == "3"


@pytest.mark.parametrize(
    ("field", "length"),
    [
        ("prompt_template", 2_100_000),
        ("prompt_template", textpolicy.MAX_TEXT_LENGTH + 1),
        ("system_prompt", textpolicy.MAX_TEXT_LENGTH + 1),
    ],
)
def test_text_settings_keep_their_limit(field, length):
    errors = llm_config_errors({field: "x" * length})
    assert list(errors) == [field]
    assert f"{length} characters long" in errors[field][0]


def test_text_settings_refuse_nul():
    errors = llm_config_errors({"system_prompt": "be fair\x00", "prompt_template": "{query}\x00"})
    assert set(errors) == {"system_prompt", "prompt_template"}


def test_a_prompt_that_renders_too_long_is_a_failure_and_is_not_sent(coll, pooled, llm, fake):
    llm.prompt_template = "{document}\n" * 4
    llm.save(update_fields=["prompt_template"])
    pair = pooled[0]
    Document.objects.filter(pk=pair.document_id).update(body="w " * 150_000)  # 300k chars
    job = runner.run_job(
        services_llm.llm_job_create(
            collection=coll, judge=llm, queries=[pair.query.external_id], concurrency=1
        )
    )
    failure = LLMFailure.objects.get(job=job, document_id=pair.document_id)
    assert "as rendered" in failure.reason and f"{prompt.MAX_PROMPT_CHARS:,}" in failure.reason
    assert failure.attempts == 0
    sent = [r["body"]["messages"][-1]["content"] for r in fake.requests]
    assert all(len(text) < prompt.MAX_PROMPT_CHARS for text in sent)
    assert job.done == len(fake.requests)
