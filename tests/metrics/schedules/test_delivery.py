"""Alerts' webhook: signed, retried on 429/5xx/timeouts, only where the operator allowed.

A local receiver speaks plain HTTP and answers from a script (500, 429 with
``Retry-After``, a redirect to loopback, a stall, 204); the sender is the app's own
(:func:`metrics.schedules.delivery.post_webhook`), through the egress guard.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ValidationError

from metrics.schedules import delivery, services
from metrics.schedules.models import AlertWebhook, ScheduleCheck
from tests.metrics.schedules.conftest import alerted
from tests.security.hostile_urls import BAD_BASE_URLS, LOOPBACK_FORMS, REFUSED

pytestmark = pytest.mark.django_db
SECRET_ENV = "GRADED_WEBHOOK_SECRET_TEST"
PAYLOAD = {"event": "search.alert", "check": 41, "reason": "A drop beyond noise."}


class Receiver:
    """A webhook receiver that answers each post from ``script`` (then 204)."""

    def __init__(self, script):
        self.script = list(script)
        self.posts: list[tuple[dict[str, str], bytes]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                receiver.posts.append((dict(self.headers), body))
                status, headers = receiver.script.pop(0) if receiver.script else (204, {})
                if status == "stall":
                    time.sleep(1.0)
                    status = 204
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/graded"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver(request):
    made = []

    def make(*script):
        made.append(Receiver(script))
        return made[-1]

    yield make
    for r in made:
        r.close()


@pytest.fixture(autouse=True)
def secret(monkeypatch):
    monkeypatch.setenv(SECRET_ENV, "s3cret")


def _webhook(url, **fields):
    return AlertWebhook.objects.create(
        name=fields.pop("name", "ops"),
        url=url,
        secret_env=SECRET_ENV,
        allowed_private_hosts=fields.pop("private", ["127.0.0.1"]),
        **fields,
    )


async def _no_sleep(seconds):
    _no_sleep.waits.append(seconds)


def _post(webhook, **kwargs):
    _no_sleep.waits = []
    return delivery.post_webhook(webhook, PAYLOAD, sleep=_no_sleep, **kwargs)


def test_a_post_is_signed_so_the_receiver_can_check_it(receiver):
    r = receiver()
    outcome = _post(_webhook(r.url))
    assert outcome == delivery.Outcome(ok=True, attempts=1)
    headers, body = r.posts[0]
    assert json.loads(body) == PAYLOAD
    assert headers["X-Graded-Event"] == "search.alert" and headers["X-Graded-Delivery"] == "41"
    stamp, digest = (part.split("=", 1)[1] for part in headers["X-Graded-Signature"].split(","))
    expected = hmac.new(b"s3cret", f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(digest, expected)
    assert abs(int(stamp) - time.time()) < 60
    assert "s3cret" not in json.dumps(headers)  # only the signature leaves, never the secret
    assert "Authorization" not in headers and "Cookie" not in headers


def test_429_and_5xx_are_retried_with_retry_after_then_delivered(receiver):
    r = receiver((500, {}), (429, {"Retry-After": "7"}), (503, {}))
    outcome = _post(_webhook(r.url))
    assert outcome.ok and outcome.attempts == 4
    assert len(r.posts) == 4
    assert len({h["X-Graded-Delivery"] for h, _ in r.posts}) == 1  # one id on every retry
    assert _no_sleep.waits[1] == 7.0  # Retry-After honoured


def test_a_receiver_that_keeps_failing_is_given_up_with_the_last_reason(receiver):
    r = receiver(*[(502, {})] * 4)
    outcome = _post(_webhook(r.url))
    assert not outcome.ok and outcome.attempts == 4
    assert outcome.error.startswith("HTTP 502") and "Gave up after 4 attempts" in outcome.error


def test_a_4xx_is_final_and_a_redirect_is_not_followed(receiver):
    r = receiver((404, {}))
    assert _post(_webhook(r.url)) == delivery.Outcome(False, 1, "HTTP 404:")
    elsewhere = receiver()
    r = receiver((307, {"Location": elsewhere.url}))
    outcome = _post(_webhook(r.url, name="moved"))
    assert not outcome.ok and "redirects are not followed" in outcome.error
    assert elsewhere.posts == []


def test_a_stalled_receiver_times_out_and_is_retried(receiver):
    r = receiver(("stall", {}))
    outcome = _post(_webhook(r.url, timeout_seconds=0.2))
    assert outcome.ok and outcome.attempts == 2


def test_a_private_host_the_operator_did_not_allow_is_refused(receiver):
    r = receiver()
    outcome = _post(_webhook(r.url, private=[]))
    assert not outcome.ok and outcome.error.startswith("Refused")
    assert r.posts == []


def test_no_secret_no_post(receiver, monkeypatch):
    r = receiver()
    monkeypatch.delenv(SECRET_ENV)
    outcome = _post(_webhook(r.url))
    assert outcome == delivery.Outcome(
        False, 0, f"The environment variable {SECRET_ENV} is not set."
    )
    assert r.posts == []


def _host(address):
    return f"[{address}]" if ":" in address else address


@pytest.mark.parametrize(
    "url",
    [f"http://{_host(address)}/hook" for address, _kind in REFUSED]
    + [f"http://{form}:9/hook" for form in LOOPBACK_FORMS]
    + [url for url, _why in BAD_BASE_URLS],
)
def test_the_audits_hostile_urls_are_refused_as_webhooks(url):
    # Whether or not the admin's form let it in, the sender refuses it before connecting.
    hook = AlertWebhook(name="h", url=url, secret_env=SECRET_ENV, allowed_private_hosts=[])
    outcome = delivery.post_webhook(hook, PAYLOAD, attempts=1)
    assert not outcome.ok
    assert outcome.error.startswith("Refused"), outcome.error


def test_the_secret_must_come_from_a_named_variable():
    hook = AlertWebhook(name="h", url="https://hooks.example.org/x", secret_env="SECRET_KEY")
    with pytest.raises(ValidationError, match="GRADED_WEBHOOK_SECRET_"):
        hook.full_clean()


@pytest.mark.parametrize("failing", [False, True], ids=["delivered", "receiver-down"])
def test_a_fired_check_is_posted_once_and_a_failing_receiver_is_recorded(
    receiver, watched, monkeypatch, failing
):
    coll, _boss, _configuration = watched
    hook_receiver = receiver(*([(500, {})] * 4 if failing else []))
    hook = _webhook(hook_receiver.url)
    hook.allowed_collections.add(coll)
    alert = alerted(watched, monkeypatch, webhook=hook)
    assert alert.email == ScheduleCheck.Delivery.SENT
    if failing:
        assert alert.webhook == ScheduleCheck.Delivery.FAILED and alert.webhook_attempts == 4
        assert alert.webhook_error.startswith("HTTP 500") and len(hook_receiver.posts) == 4
    else:
        assert alert.webhook == ScheduleCheck.Delivery.SENT and alert.webhook_attempts == 1
        assert json.loads(hook_receiver.posts[0][1])["check"] == alert.pk
    posts = len(hook_receiver.posts)
    services.schedules_tick(now=alert.checked_at + timedelta(hours=1))
    assert len(hook_receiver.posts) == posts  # nothing is sent twice
