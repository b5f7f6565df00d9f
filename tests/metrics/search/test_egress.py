"""Search endpoints are held to the LLM providers' egress policy, with the audit's list.

The hostile destinations come from ``tests/security/hostile_urls.py``, the list the LLM
provider tests use: an endpoint refuses the same addresses, loopback spellings and base
URLs, names only ``GRADED_SEARCH_KEY_*`` variables, and a configuration adds a path, never
a host.
"""

from __future__ import annotations

import ipaddress
import socket

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from judging.llm.egress import address_kind
from metrics.search import presets, services
from metrics.search.models import SearchEndpoint
from tests.metrics.search.conftest import endpoint_for
from tests.metrics.search.test_engines import configure
from tests.security.hostile_urls import BAD_BASE_URLS, LOOPBACK_FORMS, REFUSED

SECRET = "s3cr3t-VALUE-that-must-never-leave-0123456789"


def _port(engine) -> int:
    return engine.server.server_address[1]


@pytest.mark.django_db
@pytest.mark.parametrize("host", LOOPBACK_FORMS)
def test_no_loopback_form_reaches_the_engine(engine, setup, host, monkeypatch):
    coll, team, boss = setup
    monkeypatch.setenv("GRADED_SEARCH_KEY_X", SECRET)
    endpoint = endpoint_for(
        f"http://{host}:{_port(engine)}",
        presets.ELASTICSEARCH,
        collection=coll,
        private=[],
        auth="bearer",
        credential_env="GRADED_SEARCH_KEY_X",
    )
    configuration = configure(coll, team, boss, endpoint)
    [tried] = services.try_configuration(
        version=configuration.current, queries=[coll.queries.first()], user=boss
    )
    assert tried["error"].startswith(("Refused", "Not a valid URL")), tried
    assert engine.requests == [] and SECRET not in str(tried)


@pytest.mark.django_db
def test_a_name_resolving_to_loopback_is_refused(engine, setup, monkeypatch):
    coll, team, boss = setup
    real = socket.getaddrinfo

    def fake_dns(host, *args, **kwargs):
        return real("127.0.0.1" if host == "search.attacker.example" else host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", fake_dns)
    endpoint = endpoint_for(
        f"http://search.attacker.example:{_port(engine)}", presets.SOLR, collection=coll, private=[]
    )
    configuration = configure(coll, team, boss, endpoint)
    [tried] = services.try_configuration(
        version=configuration.current, queries=[coll.queries.first()], user=boss
    )
    assert "loopback" in tried["error"] and engine.requests == []


@pytest.mark.django_db
@pytest.mark.parametrize(("address", "kind"), REFUSED)
def test_every_non_public_address_is_refused_for_endpoints(address, kind):
    endpoint = SearchEndpoint(name="e", kind="solr", base_url="https://search.example")
    assert address_kind(ipaddress.ip_address(address)) == kind
    assert endpoint.egress_policy().refusal("search.example", address) is not None


@pytest.mark.django_db
@pytest.mark.parametrize(("url", "message"), BAD_BASE_URLS)
def test_bad_base_urls_are_refused_for_endpoints(url, message):
    endpoint = SearchEndpoint(name="e", kind="solr", base_url=url)
    with pytest.raises(ValidationError) as caught:
        endpoint.full_clean()
    assert message in " ".join(caught.value.message_dict["base_url"])


@pytest.mark.django_db
@pytest.mark.parametrize(
    "name",
    ["SECRET_KEY", "DATABASE_URL", "GRADED_LLM_KEY_OPENAI", "GRADED_SEARCH_KEY_", "x\n", "PATH"],
)
def test_an_endpoint_names_no_other_variable(name, monkeypatch):
    monkeypatch.setenv("SECRET_KEY", SECRET)
    endpoint = SearchEndpoint(
        name="e", kind="solr", base_url="https://s.example", auth="bearer", credential_env=name
    )
    with pytest.raises(ValidationError) as caught:
        endpoint.full_clean()
    assert "credential_env" in caught.value.message_dict
    with pytest.raises(IntegrityError), transaction.atomic():
        SearchEndpoint.objects.create(
            name="e", kind="solr", base_url="https://s.example", credential_env=name
        )
    with pytest.raises(ValidationError) as caught:
        services.credential_for(endpoint)
    assert SECRET not in str(caught.value)


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "http://169.254.169.254/latest/meta-data/",
        "//127.0.0.1/x",
        "/x@evil.example",
        "\\\\evil\\x",
        "/a#frag",
    ],
)
def test_a_configuration_adds_a_path_never_a_host(engine, setup, path):
    coll, team, boss = setup
    endpoint = endpoint_for(engine.url, presets.ELASTICSEARCH, collection=coll)
    with pytest.raises(ValidationError) as caught:
        configure(coll, team, boss, endpoint, path=path)
    assert "path" in caught.value.message_dict and engine.requests == []
