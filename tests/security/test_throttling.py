"""Issue 17 items 2 and 3: every sign-in is limited, and only the guesser is slowed down.

The cases replay the report: 200 bad passwords for the superuser at /admin/login/; 200 bad
tokens from one address followed by a valid token from it; 30 failed sign-ins on judge1's
account followed by judge1's right password; counters per process; a spoofed
X-Forwarded-For. Rates are set per test (the test settings switch them off).
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.core.cache import cache
from django.test import Client, override_settings
from rest_framework.authtoken.models import Token

from config import throttling
from config.checks import shared_throttle_cache
from tests import factories
from tests.api_client import errors_of

ROOT = Path(__file__).resolve().parents[2]
RATES = {
    "anon": None,
    "user": None,
    "token_failure": "20/hour",
    "login": "10/hour",
    "login_account": "50/hour",
    "login_ip": "50/hour",
    "login_device": "10/hour",
}
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fresh_counters")]


@pytest.fixture
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def people(db):
    root = factories.user("root", password="root-pw", is_staff=True, is_superuser=True)
    judge1 = factories.user("judge1", password="judge1-pw")
    return {"root": root, "judge1": judge1}


def _from(address: str, **extra) -> Client:
    return Client(REMOTE_ADDR=address, **extra)


def _sign_out(client: Client) -> None:
    """Sign out as a browser does: the session goes, the device cookie stays."""
    device = client.cookies[throttling.DEVICE_COOKIE].value
    client.logout()
    client.cookies[throttling.DEVICE_COOKIE] = device


def _login(client: Client, path: str, username: str, password: str) -> int:
    return client.post(path, {"username": username, "password": password}).status_code


# --- item 2: the admin's login is limited like every other sign-in ----------------------------


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_the_admin_login_is_throttled(people):
    attacker = _from("203.0.113.7")
    codes = [_login(attacker, "/admin/login/", "root", f"guess{i}") for i in range(200)]
    assert codes[:10] == [200] * 10  # the form again, "enter a correct username…"
    assert set(codes[10:]) == {429}
    refused = attacker.post("/admin/login/", {"username": "root", "password": "root-pw"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    # The right password from the attacker's address is refused too: no oracle.
    assert b"Too many failed sign-ins" in refused.content


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_the_login_page_and_the_admin_share_one_lock(people):
    attacker = _from("203.0.113.8")
    for i in range(5):
        assert _login(attacker, "/accounts/login/", "root", f"a{i}") == 200
        assert _login(attacker, "/admin/login/", "root", f"b{i}") == 200
    assert _login(attacker, "/accounts/login/", "root", "root-pw") == 429
    assert _login(attacker, "/admin/login/", "root", "root-pw") == 429


# --- item 3: others' failures never block a valid credential ---------------------------------


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_bad_tokens_never_block_a_valid_token_from_the_same_address(people):
    token = Token.objects.create(user=people["judge1"])
    bad = _from("198.51.100.9", HTTP_AUTHORIZATION="Token " + "0" * 40)
    codes = [bad.get("/api/v1/collections/").status_code for _ in range(200)]
    assert codes[:20] == [401] * 20 and set(codes[20:]) == {429}
    errors_of(bad.get("/api/v1/collections/"))  # the API's error shape
    good = _from("198.51.100.9", HTTP_AUTHORIZATION=f"Token {token.key}")
    assert good.get("/api/v1/collections/").status_code == 200
    # Another address with a bad token is not locked by the first one's failures.
    other = _from("198.51.100.10", HTTP_AUTHORIZATION="Token " + "1" * 40)
    assert other.get("/api/v1/collections/").status_code == 401


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_failed_logins_elsewhere_do_not_lock_out_the_account_owner(people):
    attacker = _from("203.0.113.9")
    codes = [_login(attacker, "/accounts/login/", "judge1", f"guess{i}") for i in range(30)]
    assert codes[:10] == [200] * 10 and set(codes[10:]) == {429}
    # judge1, from their own address, signs in at once.
    assert _login(_from("192.0.2.50"), "/accounts/login/", "judge1", "judge1-pw") == 302


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_a_known_device_signs_in_through_a_distributed_attack(people):
    laptop = _from("192.0.2.51")
    assert _login(laptop, "/accounts/login/", "judge1", "judge1-pw") == 302
    assert throttling.DEVICE_COOKIE in laptop.cookies
    _sign_out(laptop)
    # 60 guesses from 60 addresses: the account is locked for every untrusted client…
    for i in range(60):
        _login(_from(f"203.0.113.{100 + i}"), "/accounts/login/", "judge1", f"g{i}")
    assert _login(_from("192.0.2.52"), "/accounts/login/", "judge1", "judge1-pw") == 429
    # …but the laptop that signed in before is judged only by its own failures.
    assert _login(laptop, "/accounts/login/", "judge1", "judge1-pw") == 302


@override_settings(GRADED_THROTTLE_RATES=RATES)
def test_a_device_cookie_is_bound_to_its_account_and_limited_by_its_own_failures(people):
    laptop = _from("192.0.2.53")
    assert _login(laptop, "/accounts/login/", "judge1", "judge1-pw") == 302
    _sign_out(laptop)
    # The cookie gives no pass for another account…
    for i in range(10):
        assert _login(laptop, "/accounts/login/", "root", f"g{i}") == 200
    assert _login(laptop, "/accounts/login/", "root", "root-pw") == 429
    # …and its own failures on its account lock it after the device rate.
    for i in range(10):
        assert _login(laptop, "/accounts/login/", "judge1", f"typo{i}") == 200
    assert _login(laptop, "/accounts/login/", "judge1", "judge1-pw") == 429
    # A forged cookie is just an untrusted client.
    forged = _from("192.0.2.54")
    forged.cookies[throttling.DEVICE_COOKIE] = "eyJ1IjoianVkZ2UxIn0:forged:sig"
    assert _login(forged, "/accounts/login/", "judge1", "judge1-pw") == 302


@override_settings(GRADED_THROTTLE_RATES={**RATES, "login": None, "login_account": None})
def test_a_spray_over_many_accounts_from_one_address_is_limited(people):
    sprayer = _from("203.0.113.200")
    for i in range(50):
        assert _login(sprayer, "/accounts/login/", f"user{i}", "password1") == 200
    assert _login(sprayer, "/accounts/login/", "judge1", "judge1-pw") == 429
    assert _login(_from("192.0.2.55"), "/accounts/login/", "judge1", "judge1-pw") == 302


# --- the client's address ------------------------------------------------------------------


@override_settings(GRADED_THROTTLE_RATES=RATES, GRADED_TRUSTED_PROXIES=0)
def test_without_trusted_proxies_x_forwarded_for_is_ignored(people):
    for i in range(10):
        client = _from("203.0.113.30", HTTP_X_FORWARDED_FOR=f"10.0.0.{i}")
        assert _login(client, "/accounts/login/", "judge1", f"g{i}") == 200
    spoofed = _from("203.0.113.30", HTTP_X_FORWARDED_FOR="10.9.9.9")
    assert _login(spoofed, "/accounts/login/", "judge1", "judge1-pw") == 429


@override_settings(GRADED_THROTTLE_RATES=RATES, GRADED_TRUSTED_PROXIES=1)
def test_behind_one_proxy_the_client_is_the_last_forwarded_address(people):
    proxy = "10.0.0.1"
    for i in range(10):
        # A client writing its own X-Forwarded-For only adds entries on the left.
        client = _from(proxy, HTTP_X_FORWARDED_FOR=f"1.2.3.{i}, 203.0.113.31")
        assert _login(client, "/accounts/login/", "judge1", f"g{i}") == 200
    attacker = _from(proxy, HTTP_X_FORWARDED_FOR="203.0.113.31")
    assert _login(attacker, "/accounts/login/", "judge1", "judge1-pw") == 429
    owner = _from(proxy, HTTP_X_FORWARDED_FOR="192.0.2.60")
    assert _login(owner, "/accounts/login/", "judge1", "judge1-pw") == 302


@pytest.mark.parametrize(
    ("trusted", "forwarded", "expected"),
    [
        (0, "1.1.1.1", "9.9.9.9"),
        (1, "1.1.1.1", "1.1.1.1"),
        (1, "5.5.5.5, 1.1.1.1", "1.1.1.1"),
        (2, "5.5.5.5, 1.1.1.1", "5.5.5.5"),
        (2, "1.1.1.1", "9.9.9.9"),  # fewer hops than proxies: not trusted
        (1, "not-an-address", "9.9.9.9"),
        (1, "", "9.9.9.9"),
    ],
)
def test_client_ip(rf, settings, trusted, forwarded, expected):
    settings.GRADED_TRUSTED_PROXIES = trusted
    request = rf.get("/", REMOTE_ADDR="9.9.9.9", HTTP_X_FORWARDED_FOR=forwarded)
    assert throttling.client_ip(request) == expected


# --- shared counters ---------------------------------------------------------------------


def test_the_deploy_check_warns_about_per_process_counters(settings):
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    [warning] = shared_throttle_cache()
    assert warning.id == "graded.W001" and "CACHE_URL" in warning.hint
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": "redis://127.0.0.1:6379/1",
        }
    }
    assert shared_throttle_cache() == []


COUNT_IN_ANOTHER_PROCESS = """
import django, sys
django.setup()
from config.throttling import FailureCounter
counter = FailureCounter("login", sys.argv[1])
for _ in range(int(sys.argv[2])):
    counter.add()
print(counter.wait() is not None)
"""


def _redis_up() -> bool:
    import socket

    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=1).close()
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _redis_up(), reason="needs Redis on 127.0.0.1:6379")
def test_counters_are_shared_by_worker_processes_through_redis():
    """Three processes, four failures each, against a limit of 10: the third is refused."""
    ident = f"192.0.2.70\njudge-{uuid.uuid4().hex}"
    env = {
        **{k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")},
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "CACHE_URL": "redis://127.0.0.1:6379/1",
        "GRADED_THROTTLE_LOGIN_FAILURES": "10/hour",
    }
    answers = [
        subprocess.run(
            [sys.executable, "-c", COUNT_IN_ANOTHER_PROCESS, ident, "4"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
            check=True,
        ).stdout.split()[-1]
        for _ in range(3)
    ]
    assert answers == ["False", "False", "True"]
