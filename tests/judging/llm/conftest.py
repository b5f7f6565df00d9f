"""Fixtures of the LLM judge tests: a fake server and a pooled collection."""

from __future__ import annotations

import pytest

from judging.models import Judge
from tests import factories
from tests.judging.llm.fake_server import FakeLLM

KEY = "sk-test-SECRET-0123456789abcdef"
KEY_ENV = "GRADED_LLM_KEY_TEST"


@pytest.fixture
def fake():
    """Return a running fake server (stopped after the test)."""
    server = FakeLLM()
    yield server
    server.close()


@pytest.fixture
def api_key(monkeypatch):
    """Put the test key in its environment variable; return the key."""
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.fixture
def provider(db, fake):
    """Return the operator's provider for the fake server (loopback explicitly allowed)."""
    return factories.llm_provider(fake.url, name="fake", api_key_env=KEY_ENV)


@pytest.fixture
def llm(db, coll, fake, api_key, provider):
    """Return an LLM judge on the fake server with the UMBRELA-style 0–3 scale, in ``coll``."""
    judge = Judge.objects.create(
        kind=Judge.Kind.LLM,
        name="umbrela",
        provider="fake",
        model="fake-model",
        llm_provider=provider,
        native_scale=["0", "1", "2", "3"],
        scale_mapping={"0": 0, "1": 1, "2": 3, "3": 4},
        decoding={"temperature": 0, "seed": 7, "max_tokens": 300},
        max_attempts=3,
        timeout_seconds=5,
    )
    judge.collections.add(coll)
    return judge


@pytest.fixture
def pooled(coll):
    """Pool 3 queries × 4 documents in ``coll``; return the pool entries."""
    return factories.pool(coll, 3, 4)
