"""An LLM judge set up in the browser (issue 20 item 1): register, try on 3 pairs, run.

Against the local fake OpenAI-compatible server: nothing leaves the machine.
"""

from __future__ import annotations

import pytest
from django.test import Client

from judging.llm.forms import JudgeAdminForm
from judging.llm.prompt import DEFAULT_TEMPLATE
from judging.models import Judge, Judgment, Membership
from tests import factories
from tests.judging.llm.fake_server import Reply

pytestmark = pytest.mark.django_db


@pytest.fixture
def cora(coll):
    user = factories.user("cora")
    factories.member(coll, user, Membership.Role.COORDINATOR)
    client = Client()
    client.force_login(user)
    return client


def test_register_then_try_then_run(coll, pooled, cora, provider, api_key, fake):
    page = cora.get(f"/c/{coll.slug}/llm-judges/new/").content.decode()
    assert "{document}" in page and "New LLM judge" in page  # the default prompt is there
    form = {
        "name": "gpt-judge",
        "model": "fake-model",
        "llm_provider": str(provider.pk),
        "system_prompt": "You are a relevance judge.",
        "prompt_template": DEFAULT_TEMPLATE,
        "prompt_version": "",
        "answer_pattern": "",
        "native_scale": '["0", "1", "2", "3"]',
        "scale_mapping": '{"0": 0, "1": 1, "2": 3, "3": 4}',
        "decoding": '{"temperature": 0}',
        "max_attempts": "2",
        "timeout_seconds": "5",
    }
    response = cora.post(f"/c/{coll.slug}/llm-judges/new/", form)
    judge = Judge.objects.get(name="gpt-judge")
    assert response.status_code == 303
    assert response["Location"] == f"/c/{coll.slug}/llm-judges/{judge.pk}/try/"
    assert list(judge.collections.all()) == [coll]
    fake.script = lambda body, n: Reply(content=f"Thinking. ##final score: {n % 4}")
    html = cora.post(f"/c/{coll.slug}/llm-judges/{judge.pk}/try/").content.decode()
    assert html.count("data-trial=") == 3
    first = pooled[0]
    assert f'data-trial="{first.query.external_id}/{first.document.external_id}"' in html
    assert first.query.text in html  # the prompt as sent
    assert "Thinking. ##final score: 0" in html and "grade 0" in html
    assert not Judgment.objects.filter(judge=judge).exists()  # a try records nothing
    assert len(fake.requests) == 3
    run = cora.get(f"/c/{coll.slug}/llm-jobs/?judge={judge.pk}").content.decode()
    assert f'<option value="{judge.pk}" selected>' in run


def test_a_try_shows_failures_and_a_judge_that_cannot_run(coll, pooled, cora, llm, fake):
    fake.script = lambda body, n: Reply(status=500, body="upstream broke")
    html = cora.post(f"/c/{coll.slug}/llm-judges/{llm.pk}/try/").content.decode()
    assert html.count("data-trial-problem") == 3 and "HTTP 500" in html
    llm.llm_provider = None
    llm.save()
    html = cora.post(f"/c/{coll.slug}/llm-judges/{llm.pk}/try/").content.decode()
    assert "It cannot run yet." in html and "data-trial=" not in html


def test_registering_refuses_a_bad_configuration_naming_the_field(coll, cora, provider):
    response = cora.post(
        f"/c/{coll.slug}/llm-judges/new/",
        {"name": "x", "model": "m", "llm_provider": str(provider.pk), "prompt_template": "{nope}"},
    )
    assert response.status_code == 400
    assert "prompt_template" in response.context["form"].errors
    assert not Judge.objects.filter(name="x").exists()


@pytest.mark.parametrize("field", ["native_scale", "scale_mapping", "decoding"])
def test_json_fields_nested_past_the_limit_are_refused_naming_the_field(
    coll, cora, provider, field
):
    response = cora.post(
        f"/c/{coll.slug}/llm-judges/new/",
        {"name": "x", "model": "m", "llm_provider": str(provider.pk), field: "[" * 5000},
    )
    assert response.status_code == 400
    assert "nested too deeply" in str(response.context["form"].errors[field])
    assert not Judge.objects.filter(name="x").exists()


def test_the_admin_form_names_collections_and_starts_from_the_defaults():
    form = JudgeAdminForm()
    assert "collections" in form.fields
    assert form.initial["prompt_template"] == DEFAULT_TEMPLATE
    assert form.initial["scale_mapping"] == {"0": 0, "1": 1, "2": 3, "3": 4}


def test_registering_without_a_provider_is_refused_naming_the_field(coll, cora, provider):
    response = cora.post(
        f"/c/{coll.slug}/llm-judges/new/",
        {"name": "no-provider", "model": "m", "prompt_template": DEFAULT_TEMPLATE},
    )
    assert response.status_code == 400
    errors = response.context["form"].errors
    assert errors["llm_provider"] == ["Choose a provider: an LLM judge cannot run without one."]
    assert "Choose a provider" in response.content.decode()
    assert not Judge.objects.filter(name="no-provider").exists()


def test_run_it_on_the_pool_says_why_a_judge_without_a_provider_cannot_start(coll, cora, llm):
    llm.llm_provider = None
    llm.save()
    response = cora.get(f"/c/{coll.slug}/llm-jobs/?judge={llm.pk}")
    assert response.status_code == 200
    html = response.content.decode()
    assert f"No job started: the LLM judge {llm.name} has no provider." in html
    assert f'href="/c/{coll.slug}/llm-judges/{llm.pk}/edit/"' in html


def test_run_it_on_the_pool_adds_no_message_for_a_runnable_judge(coll, cora, llm):
    html = cora.get(f"/c/{coll.slug}/llm-jobs/?judge={llm.pk}").content.decode()
    assert "No job started" not in html
    assert f'<option value="{llm.pk}" selected>' in html
