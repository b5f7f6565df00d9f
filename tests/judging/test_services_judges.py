"""The LLM judge configuration service: its checks, its atomicity, and one voice for the
REST API and the configuration page."""

from __future__ import annotations

import dataclasses

import pytest
from django.core.exceptions import ValidationError
from django.test import Client

from judging.llm.prompt import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_TEMPLATE,
    TemplateError,
    check_template,
)
from judging.models import Collection, Judge, Membership
from judging.services_judges import (
    API_KEY_ENV_MESSAGE,
    LLMJudgeConfig,
    llm_judge_create,
    llm_judge_update,
)
from tests import factories
from tests.api_client import client_for, errors_of

pytestmark = pytest.mark.django_db

PASTED = "sk-live-SECRET-abcdef0123"
GOOD = LLMJudgeConfig(
    name="umbrela",
    model="gpt-x",
    endpoint=" https://llm.example/v1/ ",
    api_key_env=" OPENAI_KEY ",
    prompt_template="Q: {query}\nD: {document}",
    native_scale=["no", "yes"],
    scale_mapping={"no": 0, "yes": 3},
    decoding={"temperature": 0},
    max_attempts=3,
    timeout_seconds=20,
)


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
    judge = llm_judge_create(config=GOOD, collections=[coll, other])
    judge = Judge.objects.get(pk=judge.pk)
    assert (judge.kind, judge.user, judge.name, judge.model) == ("llm", None, "umbrela", "gpt-x")
    assert (judge.endpoint, judge.api_key_env) == ("https://llm.example/v1", "OPENAI_KEY")
    assert judge.prompt_template == GOOD.prompt_template and judge.system_prompt == ""
    assert (judge.native_scale, judge.scale_mapping) == (["no", "yes"], {"no": 0, "yes": 3})
    assert (judge.decoding, judge.max_attempts, judge.timeout_seconds) == (
        {"temperature": 0},
        3,
        20,
    )
    assert sorted(judge.collections.values_list("slug", flat=True)) == ["demo", "other"]


def test_a_runnable_judge_without_prompt_gets_the_default_prompt_and_scale(coll):
    config = LLMJudgeConfig(name="plain", model="m", endpoint="http://127.0.0.1:9/v1")
    judge = llm_judge_create(config=config, collections=[coll])
    assert (judge.prompt_template, judge.system_prompt) == (DEFAULT_TEMPLATE, DEFAULT_SYSTEM_PROMPT)
    assert judge.native_scale == ["0", "1", "2", "3"]
    assert judge.scale_mapping == {"0": 0, "1": 1, "2": 3, "3": 4}
    # A judge without an endpoint (it posts its grades over the API) keeps what it was given.
    quiet = llm_judge_create(config=LLMJudgeConfig(name="poster", model="m"), collections=[])
    assert (quiet.prompt_template, quiet.native_scale, quiet.scale_mapping) == ("", [], {})


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"api_key_env": PASTED}, "api_key_env", API_KEY_ENV_MESSAGE),
        (
            {"prompt_template": "{query} {passage}"},
            "prompt_template",
            _template_message("{query} {passage}"),
        ),
        ({"answer_pattern": "(a)(b)"}, "answer_pattern", "Use at most one capturing group"),
        ({"answer_pattern": "(unclosed"}, "answer_pattern", "Not a valid regular expression"),
        ({"endpoint": "ftp://llm.example"}, "endpoint", "Give an http:// or https:// base URL."),
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
    problems = _problems(dataclasses.replace(GOOD, **changes))
    assert list(problems) == [field]
    assert any(message in m for m in problems[field]), problems
    assert PASTED not in str(problems)
    assert not Judge.objects.exists()


def test_every_problem_is_named_at_once():
    bad = dataclasses.replace(
        GOOD,
        api_key_env=PASTED,
        prompt_template="{body}",
        endpoint="file:///etc/passwd",
        scale_mapping={"no": 0},
    )
    assert set(_problems(bad)) == {"api_key_env", "prompt_template", "endpoint", "scale_mapping"}


def test_a_failing_write_leaves_nothing_behind(coll):
    # The judge row is written before its collections; an unsaved collection fails the
    # second write, and the first must be rolled back with it.
    unsaved = Collection(slug="ghost", name="Ghost")
    with pytest.raises(ValueError):
        llm_judge_create(config=GOOD, collections=[coll, unsaved])
    assert not Judge.objects.exists()
    assert not Judge.collections.through.objects.exists()


def test_update_changes_every_field_and_keeps_the_collections(coll):
    judge = llm_judge_create(config=GOOD, collections=[coll])
    new = dataclasses.replace(
        GOOD, name="umbrela-2", endpoint="http://127.0.0.1:9/v1/", json_mode=True, decoding={}
    )
    assert llm_judge_update(judge=judge, config=new) is judge
    stored = Judge.objects.get(pk=judge.pk)
    assert (stored.name, stored.endpoint, stored.json_mode, stored.decoding) == (
        "umbrela-2",
        "http://127.0.0.1:9/v1",
        True,
        {},
    )
    assert _snapshot(stored) == _snapshot(judge)
    assert list(stored.collections.all()) == [coll]


def test_a_refused_update_leaves_the_judge_as_it_was(coll):
    judge = llm_judge_create(config=GOOD, collections=[coll])
    before = _snapshot(judge)
    bad = dataclasses.replace(GOOD, name="changed", api_key_env=PASTED)
    with pytest.raises(ValidationError) as caught:
        llm_judge_update(judge=judge, config=bad)
    assert list(caught.value.message_dict) == ["api_key_env"]
    assert _snapshot(judge) == before  # in memory
    assert _snapshot(Judge.objects.get(pk=judge.pk)) == before  # and stored


def test_a_model_rule_refusal_on_update_restores_the_judge_in_memory(coll):
    judge = llm_judge_create(config=GOOD, collections=[coll])
    before = _snapshot(judge)
    with pytest.raises(ValidationError) as caught:
        llm_judge_update(judge=judge, config=dataclasses.replace(GOOD, provider="p" * 101))
    assert list(caught.value.message_dict) == ["provider"]
    assert _snapshot(judge) == before
    assert _snapshot(Judge.objects.get(pk=judge.pk)) == before


def test_only_an_llm_judge_is_configured(coll):
    human = Judge.objects.create(kind="human", name="judy", user=factories.user("judy"))
    with pytest.raises(ValidationError) as caught:
        llm_judge_update(judge=human, config=GOOD)
    assert list(caught.value.message_dict) == ["judge"]
    assert Judge.objects.get(pk=human.pk).model == ""


# --- one voice: the REST API and the page say the same thing --------------------------------


PAGE_FORM = {
    "name": "umbrela",
    "model": "gpt-x",
    "endpoint": "http://127.0.0.1:9/v1",
    "api_key_env": "OPENAI_KEY",
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
    "endpoint": "http://127.0.0.1:9/v1",
    "api_key_env": "OPENAI_KEY",
    "prompt_template": "{query} {document}",
    "native_scale": ["no", "yes"],
    "scale_mapping": {"no": 0, "yes": 3},
}


@pytest.mark.parametrize(
    ("field", "page_value", "api_value"),
    [
        ("api_key_env", PASTED, PASTED),
        ("prompt_template", "{query} {passage}", "{query} {passage}"),
        ("answer_pattern", "(a)(b)", "(a)(b)"),
        ("endpoint", "ftp://llm.example", "ftp://llm.example"),
        ("scale_mapping", '{"no": 0}', {"no": 0}),
        ("max_attempts", "0", 0),
    ],
)
def test_page_and_api_refuse_with_the_services_message(coll, field, page_value, api_value):
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    judge = llm_judge_create(config=GOOD, collections=[coll])
    before = _snapshot(judge)
    expected = _problems(dataclasses.replace(GOOD, **{field: api_value}))[field]

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
        f"/c/{coll.slug}/llm-judges/{judge.pk}/edit/", {**PAGE_FORM, field: page_value}
    )
    assert answer.status_code == 400
    html = answer.content.decode()
    for message in expected:
        assert message.replace("'", "&#x27;") in html
    assert PASTED not in html and PASTED not in response.content.decode()
    assert Judge.objects.count() == 1
    assert _snapshot(Judge.objects.get(pk=judge.pk)) == before


def test_page_saves_through_the_service(coll):
    cora = factories.user("cora")
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    judge = Judge.objects.create(kind="llm", name="bare", model="m")
    judge.collections.add(coll)
    page = Client()
    page.force_login(cora)
    form = {**PAGE_FORM, "prompt_template": "", "native_scale": "", "scale_mapping": ""}
    answer = page.post(f"/c/{coll.slug}/llm-judges/{judge.pk}/edit/", form)
    assert answer.status_code == 303
    judge.refresh_from_db()
    # The same defaults as a judge registered over the API with an endpoint and no prompt.
    assert (judge.prompt_template, judge.native_scale) == (DEFAULT_TEMPLATE, ["0", "1", "2", "3"])
    assert judge.scale_mapping == {"0": 0, "1": 1, "2": 3, "3": 4}
