"""Issue 32 items 5 and 7: exact throttles under concurrency, and a server that holds without Redis.

* 100 concurrent sign-in guesses from one address check exactly ``limit`` passwords;
  100 concurrent bad tokens get exactly ``limit`` 401s, the rest 429. Run against a real
  Redis (database 5), the local memory cache, and the per-process fallback of a Redis that
  is down.
* With ``CACHE_URL`` naming a Redis nobody listens on (or a real ``redis-server`` killed in
  the middle of the test), sign-in and the API keep working, throttles fall back to
  per-process limits and the fallback is logged once; ``/healthz`` names the degraded part.
* With the Celery broker down, a task queued by a request runs inline instead of a 500.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from django.contrib.auth.backends import ModelBackend
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.test import Client, RequestFactory, override_settings
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token
from rest_framework.request import Request

from config import cache as counting
from config import throttling
from config.celery import app as celery_app
from tests import factories
from tests.api_client import errors_of

RATES = {
    "anon": None,
    "user": None,
    "token_failure": "20/hour",
    "login": "10/hour",
    "login_account": "50/hour",
    "login_ip": "50/hour",
    "login_device": "10/hour",
}
TRIES = 100


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _redis_up(port: int = 6379) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


def _redis_cache(url: str) -> dict:
    return {"default": {"BACKEND": "config.cache.DegradingRedisCache", "LOCATION": url}}


LOCAL = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


def _redis_db() -> int:
    """Return this process's Redis database (5–12): ``cache.clear()`` flushes a whole one.

    The two CI legs run side by side, each with its xdist workers; each worker of each leg
    gets its own database while a leg has at most four workers.
    """
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    leg = (
        0
        if os.environ.get("DATABASE_URL", "").startswith("sqlite")
        or not os.environ.get("DATABASE_URL")
        else 1
    )
    return 5 + (2 * int(worker or 0) + leg) % 8


REAL_REDIS = _redis_cache(f"redis://127.0.0.1:6379/{_redis_db()}")
# A port bound but never listening, held for the whole run: connections to it are refused,
# and no other process (another test's redis-server) can take it in the meantime.
_HELD = socket.socket()
_HELD.bind(("127.0.0.1", 0))
DEAD_PORT = _HELD.getsockname()[1]
DEAD_REDIS = _redis_cache(f"redis://127.0.0.1:{DEAD_PORT}/0")
STORES = {
    "redis": pytest.param(
        REAL_REDIS,
        marks=pytest.mark.skipif(not _redis_up(), reason="needs Redis on 127.0.0.1:6379"),
    ),
    "local": LOCAL,
    "redis-down": DEAD_REDIS,
}


@pytest.fixture(autouse=True)
def fresh_state() -> Iterator[None]:
    """Start each test with Redis believed up and empty counters."""
    counting.HEALTH.down_since = None
    counting.HEALTH.retry_at = 0.0
    counting._LOCAL.clear()
    yield
    counting.HEALTH.down_since = None
    counting.HEALTH.retry_at = 0.0
    counting._LOCAL.clear()


def _all_at_once(action, tries: int = TRIES) -> list:
    """Run ``action(i)`` in ``tries`` threads released together; return the results."""
    barrier = threading.Barrier(tries)

    def run(i: int):
        barrier.wait()
        return action(i)

    with ThreadPoolExecutor(max_workers=tries) as pool:
        return list(pool.map(run, range(tries)))


# --- item 7: exact limits -----------------------------------------------------------------------


@pytest.mark.parametrize("store", STORES.values(), ids=STORES.keys())
def test_concurrent_guesses_check_exactly_the_limit(store, monkeypatch):
    checked = Counter()

    def slow_wrong_password(self, request, username=None, password=None, **kwargs):
        checked["passwords"] += 1
        time.sleep(0.005)  # a password hash takes time: the window the race used
        return None

    monkeypatch.setattr(ModelBackend, "authenticate", slow_wrong_password)
    with override_settings(CACHES=store, GRADED_THROTTLE_RATES=RATES):
        cache.clear()
        backend = throttling.ThrottledModelBackend()
        factory = RequestFactory()

        def guess(i: int) -> str:
            request = factory.post("/accounts/login/", REMOTE_ADDR="203.0.113.77")
            try:
                backend.authenticate(request, username="judge1", password=f"g{i}")
            except PermissionDenied as exc:
                return type(exc).__name__
            return "checked"

        answers = Counter(_all_at_once(guess))
        cache.clear()
    assert checked["passwords"] == 10, answers
    assert answers == {"checked": 10, "PermissionDenied": TRIES - 10}


@pytest.mark.parametrize("store", STORES.values(), ids=STORES.keys())
def test_concurrent_bad_tokens_get_exactly_the_limit_of_401s(store, monkeypatch):
    def slow_unknown_token(self, key):
        time.sleep(0.005)
        raise exceptions.AuthenticationFailed("Invalid token.")

    monkeypatch.setattr(TokenAuthentication, "authenticate_credentials", slow_unknown_token)
    with override_settings(CACHES=store, GRADED_THROTTLE_RATES=RATES):
        cache.clear()
        factory = RequestFactory()

        def try_token(i: int) -> int:
            request = Request(
                factory.get(
                    "/api/v1/collections/",
                    REMOTE_ADDR="198.51.100.77",
                    HTTP_AUTHORIZATION=f"Token {i:040d}",
                )
            )
            try:
                throttling.ThrottledTokenAuthentication().authenticate(request)
            except exceptions.Throttled:
                return 429
            except exceptions.AuthenticationFailed:
                return 401
            return 200

        answers = Counter(_all_at_once(try_token))
        cache.clear()
    assert answers == {401: 20, 429: TRIES - 20}


@pytest.mark.django_db
@pytest.mark.parametrize("store", STORES.values(), ids=STORES.keys())
def test_valid_sign_ins_and_tokens_are_never_counted_against_their_owner(store):
    """Reserved slots of good sign-ins are given back; valid tokens pass a full counter."""
    factories.user("judge1", password="judge1-pw")
    token = Token.objects.create(user=factories.user("judge2"))
    with override_settings(CACHES=store, GRADED_THROTTLE_RATES=RATES):
        cache.clear()
        for _ in range(3 * 50):  # three times login_account and login_ip
            client = Client(REMOTE_ADDR="192.0.2.80")
            assert (
                client.post(
                    "/accounts/login/", {"username": "judge1", "password": "judge1-pw"}
                ).status_code
                == 302
            )
        bad = Client(REMOTE_ADDR="192.0.2.81", HTTP_AUTHORIZATION="Token " + "0" * 40)
        assert [bad.get("/api/v1/collections/").status_code for _ in range(21)][-2:] == [401, 429]
        good = Client(REMOTE_ADDR="192.0.2.81", HTTP_AUTHORIZATION=f"Token {token.key}")
        assert good.get("/api/v1/collections/").status_code == 200
        cache.clear()


@pytest.mark.skipif(not _redis_up(), reason="needs Redis on 127.0.0.1:6379")
def test_a_redis_counter_always_expires():
    """The count and the window's expiry are one step: no counter is left without a TTL."""
    import redis

    with override_settings(CACHES=REAL_REDIS):
        cache.clear()
        for _ in range(5):
            counting.hit(cache, "graded-test:window", 60)
        counting.release(cache, "graded-test:window")
        name = cache.make_and_validate_key("graded-test:window")
        client = redis.Redis.from_url(REAL_REDIS["default"]["LOCATION"])
        assert int(client.get(name)) == 4
        assert 0 < client.pttl(name) <= 60_000
        counting.release(cache, "graded-test:gone")
        assert client.exists(cache.make_and_validate_key("graded-test:gone")) == 0
        cache.clear()


# --- item 5: Redis down -------------------------------------------------------------------------


@pytest.mark.django_db
def test_without_redis_sign_in_and_the_api_work_and_the_fallback_is_logged_once(caplog):
    factories.user("judge1", password="judge1-pw")
    token = Token.objects.create(user=factories.user("judge2"))
    rates = {**RATES, "user": "1000/min", "anon": "1000/min"}
    with override_settings(CACHES=DEAD_REDIS, GRADED_THROTTLE_RATES=rates):
        caplog.set_level(logging.WARNING, logger="graded.cache")
        client = Client(REMOTE_ADDR="192.0.2.90")
        response = client.post("/accounts/login/", {"username": "judge1", "password": "judge1-pw"})
        assert response.status_code == 302
        assert client.get("/").status_code in (200, 302)
        good = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
        for _ in range(30):
            assert good.get("/api/v1/collections/").status_code == 200
        # Throttles still hold, per process.
        bad = Client(REMOTE_ADDR="192.0.2.91", HTTP_AUTHORIZATION="Token " + "0" * 40)
        codes = [bad.get("/api/v1/collections/").status_code for _ in range(25)]
        assert codes == [401] * 20 + [429] * 5
        errors_of(bad.get("/api/v1/collections/"))
        guesser = Client(REMOTE_ADDR="203.0.113.91")
        codes = [
            guesser.post("/accounts/login/", {"username": "judge1", "password": "x"}).status_code
            for _ in range(12)
        ]
        assert codes == [200] * 10 + [429] * 2
        health = Client().get("/healthz")
        assert health.status_code == 200
        assert health.json() == {
            "status": "degraded",
            "checks": {"database": "ok", "cache": "unavailable", "broker": "inline"},
        }
    warnings = [r for r in caplog.records if r.name == "graded.cache"]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert "per-process" in warnings[0].getMessage()


@pytest.mark.django_db
def test_healthz_is_ok_when_every_part_answers():
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "cache": "local", "broker": "inline"},
    }
    if _redis_up():
        with override_settings(CACHES=REAL_REDIS):
            assert Client().get("/healthz").json()["checks"]["cache"] == "ok"


@pytest.mark.django_db
def test_healthz_names_a_broker_that_is_down():
    with override_settings(CELERY_BROKER_URL=f"redis://127.0.0.1:{DEAD_PORT}/0"):
        celery_app.conf.broker_url = f"redis://127.0.0.1:{DEAD_PORT}/0"
        try:
            body = Client().get("/healthz").json()
        finally:
            celery_app.conf.broker_url = None
    assert body == {
        "status": "degraded",
        "checks": {"database": "ok", "cache": "local", "broker": "unavailable"},
    }


@pytest.mark.django_db
@pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")
def test_a_redis_killed_mid_test_degrades_and_recovers(caplog):
    """A real redis-server counts sign-in failures; killed, the server carries on locally."""
    port = _free_port()
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--save", "", "--daemonize", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(100):
            if _redis_up(port):
                break
            time.sleep(0.05)
        factories.user("judge1", password="judge1-pw")
        token = Token.objects.create(user=factories.user("judge2"))
        caplog.set_level(logging.WARNING, logger="graded.cache")
        with override_settings(
            CACHES=_redis_cache(f"redis://127.0.0.1:{port}/0"), GRADED_THROTTLE_RATES=RATES
        ):
            guesser = Client(REMOTE_ADDR="203.0.113.92")
            for _ in range(4):
                guesser.post("/accounts/login/", {"username": "judge1", "password": "x"})
            assert Client().get("/healthz").json()["status"] == "ok"
            server.terminate()
            server.wait(timeout=10)
            # Redis is gone: the API and sign-in still answer.
            good = Client(HTTP_AUTHORIZATION=f"Token {token.key}")
            assert good.get("/api/v1/collections/").status_code == 200
            owner = Client(REMOTE_ADDR="192.0.2.93")
            login = {"username": "judge1", "password": "judge1-pw"}
            assert owner.post("/accounts/login/", login).status_code == 302
            codes = [
                guesser.post("/accounts/login/", {"username": "judge1", "password": "y"})
                for _ in range(11)
            ]
            # The local counters start afresh: ten more failures, then 429.
            assert [r.status_code for r in codes] == [200] * 10 + [429]
            assert Client().get("/healthz").json()["checks"]["cache"] == "unavailable"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait(timeout=10)
    assert len([r for r in caplog.records if "unreachable" in r.getMessage()]) == 1


# --- item 5: the broker down --------------------------------------------------------------------


@pytest.fixture
def broker_down() -> Iterator[None]:
    """Point Celery at a broker nobody listens on, with tasks really queued (not eager)."""
    conf = celery_app.conf
    saved = conf.broker_url, conf.task_always_eager
    # Connection and producer pools made earlier in this process would still reach their
    # broker (whatever conf says now): start from none.
    pools = celery_app._pool, celery_app.amqp._producer_pool
    celery_app._pool = celery_app.amqp._producer_pool = None
    conf.broker_url, conf.task_always_eager = f"redis://127.0.0.1:{DEAD_PORT}/0", False
    try:
        with override_settings(CELERY_BROKER_URL=conf.broker_url):
            yield
    finally:
        conf.broker_url, conf.task_always_eager = saved
        if celery_app._pool is not None:
            celery_app._pool.force_close_all()
        celery_app._pool, celery_app.amqp._producer_pool = pools


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_down_a_bulk_judgment_post_is_rescored_inline(
    broker_down, caplog, settings, tmp_path
):
    """A REST batch (rescored by a task after commit) answers 2xx and the scores move."""
    from celery.signals import task_prerun

    # Files of earlier tests' collections (the same ids, after a flush) are not this one's.
    settings.GRADED_DOCNO_INDEX_DIR = str(tmp_path)
    ran: list[tuple[str, tuple]] = []

    def record(sender=None, args=None, **_):
        ran.append((sender.name, tuple(args or ())))

    task_prerun.connect(record, weak=False)
    from judging.models import Collection
    from metrics.models import QueryScores
    from tests.api_client import client_for

    caplog.set_level(logging.WARNING, logger="graded.celery")
    coll = factories.collection("demo")
    cora = factories.user("cora")
    factories.member(coll, cora, "coordinator")
    q1 = factories.query(coll, "q1")
    docs = [factories.document(coll, f"d{i}") for i in range(3)]
    for doc in docs:
        factories.pool_entry(coll, q1, doc)
    from metrics import services as metrics_services

    team = metrics_services.team_create(collection=coll, name="t", members=[cora])
    run = metrics_services.run_submit(
        collection=coll,
        team=team,
        tag="r",
        content=b"q1 Q0 d0 1 3 r\nq1 Q0 d1 2 2 r\nq1 Q0 d2 3 1 r\n",
        filename="r.txt",
        user=cora,
    )
    items = [{"query": "q1", "document": f"d{i}", "grade": 2} for i in range(3)]
    response = client_for(cora).post(
        f"/api/v1/collections/{coll.slug}/judgments/", {"judgments": items}, format="json"
    )
    assert response.status_code in (200, 201), response.content[:500]
    coll = Collection.objects.get(pk=coll.pk)
    task_prerun.disconnect(record)
    # The bulk change's rescoring task ran inline: q1's scores are of the new list version.
    assert ("metrics.rescore_queries", (coll.pk, [q1.pk])) in ran, ran
    scores = QueryScores.objects.get(query=q1)
    assert scores.version == coll.judgments_version > 0
    assert run.pk in np.frombuffer(bytes(scores.run_ids), dtype="<i8")
    assert any("Broker unreachable" in r.getMessage() for r in caplog.records)


RESERVE_IN_ANOTHER_PROCESS = """
import sys, threading, time
import django
django.setup()
from config.throttling import FailureCounter
ident, start = sys.argv[1], float(sys.argv[2])
got = []
def attempt():
    while time.time() < start:
        time.sleep(0.001)
    got.append(FailureCounter("login", ident).reserve() is None)
threads = [threading.Thread(target=attempt) for _ in range(25)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(sum(got))
"""


@pytest.mark.skipif(not _redis_up(), reason="needs Redis on 127.0.0.1:6379")
def test_four_processes_share_one_exact_limit_through_redis():
    """4 processes × 25 threads reserve sign-in slots at once: exactly 10 get one in all."""
    import os
    import sys
    import uuid
    from pathlib import Path

    env = {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")},
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "CACHE_URL": "redis://127.0.0.1:6379/5",
        "GRADED_THROTTLE_LOGIN_FAILURES": "10/hour",
    }
    ident = f"192.0.2.99\njudge-{uuid.uuid4().hex}"
    start = time.time() + 4
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", RESERVE_IN_ANOTHER_PROCESS, ident, str(start)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=Path(__file__).resolve().parents[2],
            env=env,
        )
        for _ in range(4)
    ]
    granted = [int(p.communicate(timeout=60)[0].split()[-1]) for p in processes]
    assert sum(granted) == 10, granted


def _prod_setting(name: str):
    """Return the literal value the production settings assign to ``name``."""
    import ast
    from pathlib import Path

    tree = ast.parse((Path(__file__).resolve().parents[2] / "config/settings/prod.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError(f"{name} is not set in config/settings/prod.py")


@pytest.mark.django_db
def test_healthz_is_exempt_from_the_https_redirect_and_nothing_else_is():
    exempt = _prod_setting("SECURE_REDIRECT_EXEMPT")
    with override_settings(SECURE_SSL_REDIRECT=True, SECURE_REDIRECT_EXEMPT=exempt):
        assert Client().get("/healthz").status_code == 200
        assert Client().get("/accounts/login/").status_code == 301
        assert Client().get("/api/v1/collections/").status_code == 301
