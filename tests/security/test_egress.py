"""Issue 17 item 1: where the server may send a request, and which secret it may carry.

A coordinator once made Graded post ``Bearer <SECRET_KEY>`` to a listener on 127.0.0.1.
These tests hold the whole class shut: destinations are the operator's providers, every
non-public address form is refused after resolution (and the checked address is the one
connected to), redirects are not followed, key variables carry the documented prefix, and
what a failed call shows a coordinator is the status and a short excerpt.

Every request here goes to a fake server on 127.0.0.1 (or to a refused address, which is
never connected to); nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import socket

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.test import Client

from judging.llm import client as llm_client
from judging.llm import services as services_llm
from judging.llm.client import CallFailed, ClientConfig, complete
from judging.llm.egress import (
    EgressPolicy,
    EgressRefused,
    address_kind,
    check_base_url,
    guarded_client,
)
from judging.llm.models import LLMJob
from judging.models import Judge, LLMProvider, Membership
from tests import factories
from tests.api_client import client_for
from tests.judging.llm.fake_server import FakeLLM, Reply
from tests.security.hostile_urls import BAD_BASE_URLS, LOOPBACK_FORMS, REFUSED

SECRET = "s3cr3t-VALUE-that-must-never-leave-0123456789"
MESSAGES = [{"role": "user", "content": "grade this"}]


@pytest.fixture
def fake():
    server = FakeLLM()
    yield server
    server.close()


def _call(url: str, policy: EgressPolicy, *, resolver=None, key: str | None = None):
    """Send one chat request through the guarded client; return the outcome."""
    config = ClientConfig(endpoint=url, model="m", api_key=key, max_attempts=2, timeout=5)

    async def main():
        kwargs = {"resolver": resolver} if resolver else {}
        async with guarded_client(policy, **kwargs) as http:
            try:
                return await complete(http, config, MESSAGES, sleep=lambda s: asyncio.sleep(0))
            except CallFailed as exc:
                return exc

    # In a thread of its own, as the runner does: a browser test's Playwright may keep an
    # event loop running in this worker's main thread.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, main()).result()


def _port(fake: FakeLLM) -> int:
    return fake.server.server_address[1]


# --- address forms ---------------------------------------------------------------------------


@pytest.mark.parametrize(("address", "kind"), REFUSED)
def test_every_non_public_address_is_refused(address, kind):
    import ipaddress

    ip = ipaddress.ip_address(address)
    assert address_kind(ip) == kind
    reason = EgressPolicy().refusal("llm.example", address)
    assert reason is not None and "Refused" in reason and "llm.example" in reason


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111"])
def test_public_addresses_pass(address):
    assert EgressPolicy().refusal("llm.example", address) is None


def test_the_operator_can_allow_a_private_host_a_network_or_an_address():
    policy = EgressPolicy.from_entries(["vllm.internal", "10.0.0.0/8", "127.0.0.1"])
    assert policy.refusal("vllm.internal", "192.168.5.5") is None
    assert policy.refusal("gpu-box", "10.20.30.40") is None
    assert policy.refusal("anything", "127.0.0.1") is None
    # Only what was allowed: the rest of loopback and other private ranges stay refused.
    assert policy.refusal("anything", "127.0.0.2") is not None
    assert policy.refusal("anything", "169.254.169.254") is not None
    with pytest.raises(ValueError, match="Not a host name"):
        EgressPolicy.from_entries(["http://x/"])


@pytest.mark.parametrize(("url", "message"), BAD_BASE_URLS)
def test_base_urls_with_user_info_or_another_scheme_are_refused(url, message):
    with pytest.raises(EgressRefused, match=message):
        check_base_url(url)


# --- real connections through the guard ------------------------------------------------------


@pytest.mark.parametrize("host", LOOPBACK_FORMS)
def test_no_loopback_form_reaches_the_server(fake, host):
    outcome = _call(f"http://{host}:{_port(fake)}/v1", EgressPolicy(), key=SECRET)
    assert isinstance(outcome, CallFailed)
    assert outcome.reason.startswith("Refused"), outcome.reason
    assert outcome.attempts == 1  # a refusal is final, never retried
    assert fake.requests == []
    assert SECRET not in outcome.reason + outcome.raw


def _resolver_to(mapping: dict[str, list[str]], calls: list[str] | None = None):
    async def resolve(host: str, port: int) -> list[str]:
        if calls is not None:
            calls.append(host)
        return mapping[host]

    return resolve


def test_a_hostname_resolving_to_loopback_is_refused(fake, monkeypatch):
    real = socket.getaddrinfo

    def fake_dns(host, *args, **kwargs):
        if host == "llm.attacker.example":
            return real("127.0.0.1", *args, **kwargs)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    outcome = _call(f"http://llm.attacker.example:{_port(fake)}/v1", EgressPolicy(), key=SECRET)
    assert isinstance(outcome, CallFailed) and "loopback" in outcome.reason
    assert fake.requests == []


def test_a_name_with_one_private_address_among_public_ones_is_refused(fake):
    resolver = _resolver_to({"mixed.example": ["93.184.216.34", "127.0.0.1"]})
    outcome = _call(f"http://mixed.example:{_port(fake)}/v1", EgressPolicy(), resolver=resolver)
    assert isinstance(outcome, CallFailed) and "loopback" in outcome.reason
    assert fake.requests == []


def test_the_connection_goes_to_the_address_checked_no_rebinding(fake):
    # The operator allows one address, 127.0.0.2 (nothing listens there). A rebinding DNS
    # answers it for the check, then 127.0.0.1 (where the fake server listens). The guard
    # resolves once per connection and connects to what it checked: the server sees nothing.
    calls: list[str] = []
    answers = iter([["127.0.0.2"], ["127.0.0.1"], ["127.0.0.1"], ["127.0.0.1"]])

    async def rebinding(host: str, port: int) -> list[str]:
        calls.append(host)
        return next(answers)

    policy = EgressPolicy.from_entries(["127.0.0.2"])
    outcome = _call(f"http://rebind.example:{_port(fake)}/v1", policy, resolver=rebinding)
    assert isinstance(outcome, CallFailed)
    assert fake.requests == []
    # Each attempt resolved once and was refused or failed to connect to 127.0.0.2.
    assert 1 <= len(calls) <= 2


def test_an_allowed_host_is_reached_at_its_checked_address_with_its_own_host_header(fake):
    resolver = _resolver_to({"vllm.internal": ["127.0.0.1"]})
    policy = EgressPolicy.from_entries(["vllm.internal"])
    outcome = _call(
        f"http://vllm.internal:{_port(fake)}/v1", policy, resolver=resolver, key="k-allowed"
    )
    assert not isinstance(outcome, CallFailed), outcome
    assert outcome.content == "##final score: 2"
    [request] = fake.requests
    assert request["headers"]["Host"] == f"vllm.internal:{_port(fake)}"
    assert request["headers"]["Authorization"] == "Bearer k-allowed"


def test_a_redirect_to_a_private_address_is_not_followed(fake):
    target = FakeLLM()  # where the redirect points: must see nothing
    try:
        fake.script = lambda body, n: Reply(
            status=302, body="", headers={"Location": f"{target.url}/chat/completions"}
        )
        policy = EgressPolicy.from_entries(["127.0.0.1"])
        outcome = _call(fake.url, policy, key=SECRET)
        assert isinstance(outcome, CallFailed)
        assert "HTTP 302" in outcome.reason and "redirects are not followed" in outcome.reason
        assert len(fake.requests) == 1 and target.requests == []
        fake.script = lambda body, n: Reply(
            status=307, body="", headers={"Location": "http://169.254.169.254/latest/meta-data/"}
        )
        outcome = _call(fake.url, policy, key=SECRET)
        assert isinstance(outcome, CallFailed) and "HTTP 307" in outcome.reason
    finally:
        target.close()


def test_an_error_body_comes_back_as_status_and_a_short_excerpt(fake):
    internal = "internal-service-detail " * 1000
    fake.script = lambda body, n: Reply(status=404, body=internal)
    outcome = _call(fake.url, EgressPolicy.from_entries(["127.0.0.1"]))
    assert isinstance(outcome, CallFailed) and outcome.reason.startswith("HTTP 404")
    assert len(outcome.raw) <= llm_client.EXCERPT_LIMIT
    fake.script = lambda body, n: Reply(status=503, body=internal)
    outcome = _call(fake.url, EgressPolicy.from_entries(["127.0.0.1"]))
    assert isinstance(outcome, CallFailed) and len(outcome.raw) <= llm_client.EXCERPT_LIMIT
    fake.script = lambda body, n: Reply(status=200, body="<html>" + internal)
    outcome = _call(fake.url, EgressPolicy.from_entries(["127.0.0.1"]))
    assert isinstance(outcome, CallFailed) and "Malformed" in outcome.reason
    assert len(outcome.raw) <= llm_client.EXCERPT_LIMIT


def test_no_proxy_from_the_environment_is_used(fake, monkeypatch):
    # A proxy variable pointing at a listener would see the request if the client trusted
    # the environment.
    proxy = FakeLLM()
    try:
        monkeypatch.setenv("HTTP_PROXY", proxy.url.rsplit("/", 1)[0])
        monkeypatch.setenv("ALL_PROXY", proxy.url.rsplit("/", 1)[0])
        outcome = _call(fake.url, EgressPolicy.from_entries(["127.0.0.1"]))
        assert not isinstance(outcome, CallFailed), outcome
        assert proxy.requests == [] and len(fake.requests) == 1
    finally:
        proxy.close()


# --- key variables ---------------------------------------------------------------------------

SECRET_NAMES = [
    "SECRET_KEY",
    "DATABASE_URL",
    "CACHE_URL",
    "CELERY_BROKER_URL",
    "AWS_SECRET_ACCESS_KEY",
    "OPENAI_API_KEY",
    "PATH",
    "HOME",
    "graded_llm_key_lower",
    "GRADED_LLM_KEY_",
    "GRADED_LLM_KEYS",
    "XGRADED_LLM_KEY_A",
    "GRADED_LLM_KEY_A\n",
    "GRADED_LLM_KEY_A B",
]


@pytest.mark.django_db
@pytest.mark.parametrize("name", SECRET_NAMES)
def test_a_provider_cannot_name_any_other_variable(name, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", SECRET)
    provider = LLMProvider(name="p", base_url="https://llm.example/v1", api_key_env=name)
    with pytest.raises(ValidationError) as caught:
        provider.full_clean()
    assert "api_key_env" in caught.value.message_dict
    # The database refuses it too, whatever writes the row.
    with pytest.raises(IntegrityError), transaction.atomic():
        LLMProvider.objects.create(name="p", base_url="https://llm.example/v1", api_key_env=name)
    # And the key is looked up only under the prefix, whatever an object in memory says.
    judge = Judge(kind="llm", name="j", model="m", llm_provider=provider)
    with pytest.raises(ValidationError) as caught:
        services_llm.api_key_for(judge)
    assert SECRET not in str(caught.value)


@pytest.mark.django_db
def test_a_prefixed_variable_is_read_and_never_shown(monkeypatch):
    monkeypatch.setenv("GRADED_LLM_KEY_OPENAI", SECRET)
    provider = factories.llm_provider(
        "https://llm.example/v1", name="openai", api_key_env="GRADED_LLM_KEY_OPENAI"
    )
    judge = Judge.objects.create(kind="llm", name="j", model="m", llm_provider=provider)
    assert services_llm.api_key_for(judge) == SECRET
    monkeypatch.delenv("GRADED_LLM_KEY_OPENAI")
    with pytest.raises(ValidationError) as caught:
        services_llm.api_key_for(judge)
    assert "GRADED_LLM_KEY_OPENAI" in str(caught.value) and SECRET not in str(caught.value)


# --- who decides: the operator, not a coordinator ----------------------------------------


@pytest.fixture
def coordinated(db):
    coll = factories.collection("demo")
    cora = factories.user("cora", is_staff=True)  # staff, but not a superuser
    factories.member(coll, cora, Membership.Role.COORDINATOR)
    return coll, cora


def test_a_coordinator_cannot_set_a_url_or_a_key_variable(coordinated, fake, monkeypatch):
    coll, cora = coordinated
    monkeypatch.setenv("SECRET_KEY", SECRET)
    body = {"name": "evil", "model": "m", "collections": ["demo"]}
    response = client_for(cora).post(
        "/api/v1/judges/",
        {**body, "endpoint": fake.url, "api_key_env": "SECRET_KEY"},
        format="json",
    )
    # Fields a judge does not have are refused by name (issue 45), and nothing is made.
    assert response.status_code == 400
    assert {e["field"] for e in response.json()["errors"]} == {"endpoint", "api_key_env"}
    assert not Judge.objects.filter(name="evil").exists()
    response = client_for(cora).post("/api/v1/judges/", body, format="json")
    assert response.status_code == 201
    judge = Judge.objects.get(name="evil")
    assert judge.llm_provider is None  # free text is not a destination
    response = client_for(cora).post(
        f"/api/v1/collections/{coll.slug}/llm-jobs/", {"judge": judge.pk}, format="json"
    )
    assert response.status_code == 400
    assert not LLMJob.objects.exists() and fake.requests == []
    assert SECRET not in response.content.decode()


def test_providers_are_read_only_over_the_api(coordinated):
    _, cora = coordinated
    factories.llm_provider("https://llm.example/v1", name="openai", models=("gpt-4o",))
    api = client_for(cora)
    listing = api.get("/api/v1/llm-providers/")
    assert listing.status_code == 200
    assert listing.json() == [{"name": "openai", "allowed_models": ["gpt-4o"]}]
    for method in ("post", "put", "patch", "delete"):
        body = {"name": "x", "base_url": "http://127.0.0.1:1/v1"}
        assert getattr(api, method)("/api/v1/llm-providers/", body, format="json").status_code in (
            403,
            405,
        )
    assert LLMProvider.objects.count() == 1


def test_only_superusers_open_providers_in_the_admin(coordinated):
    _, cora = coordinated
    provider = factories.llm_provider("https://llm.example/v1", name="openai")
    staff = Client()
    staff.force_login(cora)
    for url in (
        "/admin/judging/llmprovider/",
        "/admin/judging/llmprovider/add/",
        f"/admin/judging/llmprovider/{provider.pk}/change/",
    ):
        assert staff.get(url).status_code in (302, 403), url
    assert staff.post("/admin/judging/llmprovider/add/", {"name": "x"}).status_code in (302, 403)
    root = Client()
    root.force_login(factories.user("root", is_staff=True, is_superuser=True))
    assert root.get("/admin/judging/llmprovider/").status_code == 200
    answer = root.post(
        "/admin/judging/llmprovider/add/",
        {
            "name": "bad",
            "base_url": "http://admin:pw@127.0.0.1/v1",
            "api_key_env": "SECRET_KEY",
            "allowed_models": '["m"]',
            "allowed_private_hosts": "[]",
        },
    )
    assert answer.status_code == 200  # the form again, with its errors
    html = answer.content.decode()
    assert "user info" in html and "GRADED_LLM_KEY_" in html
    assert not LLMProvider.objects.filter(name="bad").exists()


def test_a_job_through_a_provider_whose_name_resolves_to_loopback_sends_nothing(
    coordinated, fake, monkeypatch, django_capture_on_commit_callbacks
):
    coll, cora = coordinated
    monkeypatch.setenv("GRADED_LLM_KEY_X", SECRET)
    real = socket.getaddrinfo
    monkeypatch.setattr(
        socket,
        "getaddrinfo",
        lambda host, *a, **k: real("127.0.0.1" if host == "llm.rebound.example" else host, *a, **k),
    )
    provider = factories.llm_provider(
        f"http://llm.rebound.example:{_port(fake)}/v1",
        name="x",
        api_key_env="GRADED_LLM_KEY_X",
        private=(),
    )
    judge = Judge.objects.create(kind="llm", name="j", model="m", llm_provider=provider)
    judge.collections.add(coll)
    factories.pool(coll, 1, 2)
    with django_capture_on_commit_callbacks(execute=True):
        response = client_for(cora).post(
            f"/api/v1/collections/{coll.slug}/llm-jobs/", {"judge": judge.pk}, format="json"
        )
    assert response.status_code == 202, response.content
    detail = client_for(cora).get(
        f"/api/v1/collections/{coll.slug}/llm-jobs/{response.json()['id']}/"
    )
    body = detail.json()
    assert body["failed"] == 2 and body["done"] == 0
    assert [g["count"] for g in body["failure_groups"]] == [2]
    assert body["failure_groups"][0]["reason"].startswith("Refused")
    assert fake.requests == []
    assert SECRET not in detail.content.decode()
