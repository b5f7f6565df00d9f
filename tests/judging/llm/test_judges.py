"""The LLM judge configuration service: its checks, its atomicity, and one voice for the
REST API and the configuration page."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from judging.llm.judges import LLMJudgeConfig, llm_judge_create, llm_judge_update
from judging.llm.prompt import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_TEMPLATE,
    TemplateError,
    check_template,
)
from judging.models import Collection, Judge, LLMProvider, Membership
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db

PASTED = "sk-live-SECRET-abcdef0123"
GOOD = LLMJudgeConfig(
    name="umbrela",
    model=" gpt-x ",
    prompt_template="Q: {query}\nD: {document}",
    native_scale=["no", "yes"],
    scale_mapping={"no": 0, "yes": 3},
    decoding={"temperature": 0},
    max_attempts=3,
    timeout_seconds=20,
)


@pytest.fixture(autouse=True)
def example(db, coll) -> LLMProvider:
    """Register the operator's provider the configurations below pick."""
    return factories.llm_provider(
        "https://llm.example/v1", name="example", models=("gpt-x", "m"), private=()
    )


def good(**changes) -> LLMJudgeConfig:
    """Return the good configuration through the ``example`` provider, with ``changes``."""
    provider = LLMProvider.objects.get(name="example")
    return dataclasses.replace(GOOD, **{"llm_provider": provider, **changes})


def _problems(config: LLMJudgeConfig) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        llm_judge_create(config=config, collections=[])
    return caught.value.message_dict


def _template_message(template: str) -> str:
    with pytest.raises(TemplateError) as caught:
        check_template(template)
    return str(caught.value)


def _snapshot(judge: Judge) -> dict:
    return {f: getattr(judge, f) for f in (f.name for f in dataclasses.fields(LLMJudgeConfig))}


def test_create_normalises_and_assigns_collections(coll):
    other = factories.collection("other")
    judge = llm_judge_create(config=good(), collections=[coll, other])
    judge = Judge.objects.get(pk=judge.pk)
    assert (judge.kind, judge.user, judge.name, judge.model) == ("llm", None, "umbrela", "gpt-x")
    assert judge.llm_provider.name == "example"
    assert judge.prompt_template == GOOD.prompt_template and judge.system_prompt == ""
    assert (judge.native_scale, judge.scale_mapping) == (["no", "yes"], {"no": 0, "yes": 3})
    assert (judge.decoding, judge.max_attempts, judge.timeout_seconds) == (
        {"temperature": 0},
        3,
        20,
    )
    assert sorted(judge.collections.values_list("slug", flat=True)) == ["demo", "other"]


def test_a_runnable_judge_without_prompt_gets_the_default_prompt_and_scale(coll):
    config = LLMJudgeConfig(name="plain", model="m", llm_provider=good().llm_provider)
    judge = llm_judge_create(config=config, collections=[coll])
    assert (judge.prompt_template, judge.system_prompt) == (DEFAULT_TEMPLATE, DEFAULT_SYSTEM_PROMPT)
    assert judge.native_scale == ["0", "1", "2", "3"]
    assert judge.scale_mapping == {"0": 0, "1": 1, "2": 3, "3": 4}
    # A judge without a provider (it posts its grades over the API) keeps what it was given.
    quiet = llm_judge_create(config=LLMJudgeConfig(name="poster", model="m"), collections=[])
    assert (quiet.prompt_template, quiet.native_scale, quiet.scale_mapping) == ("", [], {})


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"model": PASTED}, "model", "The provider example does not allow this model."),
        (
            {"prompt_template": "{query} {passage}"},
            "prompt_template",
            _template_message("{query} {passage}"),
        ),
        ({"answer_pattern": "(a)(b)"}, "answer_pattern", "Use at most one capturing group"),
        ({"answer_pattern": "(unclosed"}, "answer_pattern", "Not a valid regular expression"),
        ({"max_attempts": 0}, "max_attempts", "greater than or equal to 1"),
        ({"max_attempts": 21}, "max_attempts", "less than or equal to 20"),
        ({"timeout_seconds": 0}, "timeout_seconds", "greater than or equal to 0.1"),
        ({"model": "  "}, "model", "Give the LLM's model name."),
        ({"name": ""}, "name", "This field cannot be blank."),
        ({"name": "n" * 201}, "name", "at most 200 characters"),
        ({"scale_mapping": {"no": 0, "yes": 5}}, "scale_mapping", "grade 0–4: yes."),
        ({"scale_mapping": {"no": 0, "yes": True}}, "scale_mapping", "grade 0–4: yes."),
        ({"scale_mapping": {"no": 0}}, "scale_mapping", "No grade for native labels: yes."),
        (
            {"scale_mapping": {"no": 0, "yes": 1, "maybe": 2}},
            "scale_mapping",
            "Labels not in native_scale: maybe.",
        ),
        ({"decoding": [1]}, "decoding", "Give a JSON object."),
    ],
)
def test_create_refuses_a_bad_field_by_name_and_writes_nothing(changes, field, message):
    problems = _problems(good(**changes))
    assert list(problems) == [field]
    assert any(message in m for m in problems[field]), problems
    assert PASTED not in str(problems)
    assert not Judge.objects.exists()


def test_every_problem_is_named_at_once():
    bad = good(model=PASTED, prompt_template="{body}", scale_mapping={"no": 0})
    assert set(_problems(bad)) == {"model", "prompt_template", "scale_mapping"}


def test_a_failing_write_leaves_nothing_behind(coll):
    # The judge row is written before its collections; an unsaved collection fails the
    # second write, and the first must be rolled back with it.
    unsaved = Collection(slug="ghost", name="Ghost")
    with pytest.raises(ValueError):
        llm_judge_create(config=good(), collections=[coll, unsaved])
    assert not Judge.objects.exists()
    assert not Judge.collections.through.objects.exists()


def test_update_changes_every_field_and_keeps_the_collections(coll):
    judge = llm_judge_create(config=good(), collections=[coll])
    local = factories.llm_provider("http://127.0.0.1:9/v1/", name="local", models=("gpt-x",))
    new = good(name="umbrela-2", llm_provider=local, json_mode=True, decoding={})
    assert llm_judge_update(judge=judge, config=new) is judge
    stored = Judge.objects.get(pk=judge.pk)
    assert (stored.name, stored.llm_provider, stored.json_mode, stored.decoding) == (
        "umbrela-2",
        local,
        True,
        {},
    )
    assert _snapshot(stored) == _snapshot(judge)
    assert list(stored.collections.all()) == [coll]


def test_a_refused_update_leaves_the_judge_as_it_was(coll):
    judge = llm_judge_create(config=good(), collections=[coll])
    before = _snapshot(judge)
    bad = good(name="changed", model=PASTED)
    with pytest.raises(ValidationError) as caught:
        llm_judge_update(judge=judge, config=bad)
    assert list(caught.value.message_dict) == ["model"]
    assert _snapshot(judge) == before  # in memory
    assert _snapshot(Judge.objects.get(pk=judge.pk)) == before  # and stored


def test_a_model_rule_refusal_on_update_restores_the_judge_in_memory(coll):
    judge = llm_judge_create(config=good(), collections=[coll])
    before = _snapshot(judge)
    with pytest.raises(ValidationError) as caught:
        llm_judge_update(judge=judge, config=good(provider="p" * 101))
    assert list(caught.value.message_dict) == ["provider"]
    assert _snapshot(judge) == before
    assert _snapshot(Judge.objects.get(pk=judge.pk)) == before


def test_only_an_llm_judge_is_configured(coll):
    human = Judge.objects.create(kind="human", name="judy", user=factories.user("judy"))
    with pytest.raises(ValidationError) as caught:
        llm_judge_update(judge=human, config=good())
    assert list(caught.value.message_dict) == ["judge"]
    assert Judge.objects.get(pk=human.pk).model == ""


# --- one voice: the REST API and the page say the same thing --------------------------------


PAGE_FORM = {
    "name": "umbrela",
    "model": "gpt-x",
    "prompt_template": "{query} {document}",
    "native_scale": '["no", "yes"]',
    "scale_mapping": '{"no": 0, "yes": 3}',
    "decoding": "{}",
    "max_attempts": 3,
    "timeout_seconds": 20,
}
API_BODY = {
    "name": "umbrela",
    "model": "gpt-x",
    "llm_provider": "example",
    "prompt_template": "{query} {document}",
    "native_scale": ["no", "yes"],
    "scale_mapping": {"no": 0, "yes": 3},
}


@pytest.mark.parametrize(
    ("field", "page_value", "api_value"),
    [
        ("model", "gpt-unlisted", "gpt-unlisted"),
        ("prompt_template", "{query} {passage}", "{query} {passage}"),
        ("answer_pattern", "(a)(b)", "(a)(b)"),
        ("scale_mapping", '{"no": 0}', {"no": 0}),
        ("max_attempts", "0", 0),
    ],
)
def test_page_and_api_refuse_with_the_services_message(coll, example, field, page_value, api_value):
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    judge = llm_judge_create(config=good(), collections=[coll])
    before = _snapshot(judge)
    expected = _problems(good(**{field: api_value}))[field]

    response = client_for(cora).post(
        "/api/v1/judges/", {**API_BODY, field: api_value}, format="json"
    )
    assert response.status_code == 400
    assert [(e.get("field"), e["message"]) for e in errors_of(response)] == [
        (field, m) for m in expected
    ]

    page = Client()
    page.force_login(cora)
    answer = page.post(
        f"/c/{coll.slug}/llm-judges/{judge.pk}/edit/",
        {**PAGE_FORM, "llm_provider": example.pk, field: page_value},
    )
    assert answer.status_code == 400
    html = answer.content.decode()
    for message in expected:
        assert message.replace("'", "&#x27;") in html
    assert Judge.objects.count() == 1
    assert _snapshot(Judge.objects.get(pk=judge.pk)) == before


def test_page_saves_through_the_service(coll, example):
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    judge = Judge.objects.create(kind="llm", name="bare", model="m")
    judge.collections.add(coll)
    page = Client()
    page.force_login(cora)
    form = {
        **PAGE_FORM,
        "llm_provider": example.pk,
        "prompt_template": "",
        "native_scale": "",
        "scale_mapping": "",
    }
    answer = page.post(f"/c/{coll.slug}/llm-judges/{judge.pk}/edit/", form)
    assert answer.status_code == 303
    judge.refresh_from_db()
    # The same defaults as a judge registered over the API with a provider and no prompt.
    assert (judge.prompt_template, judge.native_scale) == (DEFAULT_TEMPLATE, ["0", "1", "2", "3"])
    assert judge.scale_mapping == {"0": 0, "1": 1, "2": 3, "3": 4}
