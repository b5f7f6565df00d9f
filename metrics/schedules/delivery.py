"""How an alert leaves Graded: an e-mail through Django's mail settings, a signed webhook.

The webhook is one the operator registered (:class:`~metrics.schedules.models.AlertWebhook`):
its URL, its signing secret's environment variable, the private hosts it may reach. The
post passes the egress guard of LLM providers and search endpoints (no redirect is
followed, no private address unless allowed, the audit's hostile-URL list refused) and
carries no credential but its signature:

``X-Graded-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>" under the
secret>`` (the scheme Stripe and GitHub receivers know: check the time to refuse
replays, then compare the digest in constant time). ``X-Graded-Delivery`` is the check's
id, the same on every retry, so a receiver can drop duplicates.

429, 5xx, timeouts and connection errors are retried with capped, jittered back-off
(``Retry-After`` honoured up to the cap); another answer is final.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import os
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx
from django.conf import settings
from django.core.mail import send_mail

from judging.llm.client import backoff_delay, retry_after_seconds
from judging.llm.egress import EgressPolicy, EgressRefused, check_base_url, guarded_client
from metrics.search.services import run_async

if TYPE_CHECKING:
    from metrics.schedules.models import AlertWebhook, ScheduleCheck

#: Attempts of one webhook post, and the back-off between them (seconds).
ATTEMPTS = 4
BACKOFF_BASE = 1.0
BACKOFF_CAP = 30.0
#: The receiver's answer read at most (bytes), for the error message.
ANSWER_EXCERPT = 300


@dataclass(frozen=True)
class Outcome:
    """How a webhook post went: ``ok`` on a 2xx, else the last error in one sentence."""

    ok: bool
    attempts: int
    error: str = ""


def alert_payload(check: ScheduleCheck) -> dict[str, Any]:
    """Return what an alert says, for the mail and the webhook (JSON-ready)."""
    snapshot, baseline = check.snapshot, check.baseline
    return {
        "event": "search.alert",
        "check": check.pk,
        "collection": snapshot.collection.slug,
        "configuration": snapshot.version.configuration.name,
        "snapshot": {"id": snapshot.pk, "tag": snapshot.tag},
        "baseline": {"id": baseline.pk, "tag": baseline.tag} if baseline else None,
        "measure": check.measure,
        "queries": check.queries,
        "mean_before": check.mean_before,
        "mean_after": check.mean_after,
        "mean_change": check.mean_change,
        "interval": [check.low, check.high],
        "p_value": check.p_value,
        "alpha": check.alpha,
        "reason": check.reason,
        "checked_at": check.checked_at.isoformat(),
    }


def send_email(payload: dict[str, Any], recipients: list[str]) -> bool:
    """Mail the alert to ``recipients``; return whether the backend took it."""
    subject = (
        f"[Graded] {payload['configuration']} on {payload['collection']}: "
        f"{payload['measure']} changed beyond noise"
    )
    body = "\n".join(
        [
            payload["reason"],
            "",
            f"Snapshot: {payload['snapshot']['tag']}",
            f"Compared with: {(payload['baseline'] or {}).get('tag', '-')}",
            f"Measure: {payload['measure']} over {payload['queries']} queries",
            f"Mean before: {payload['mean_before']:.4f}, after: {payload['mean_after']:.4f}",
            f"Paired t-test p = {payload['p_value']:.3g} (level {payload['alpha']:g})",
        ]
    )
    try:
        return bool(
            send_mail(
                subject[:200], body, settings.DEFAULT_FROM_EMAIL, recipients, fail_silently=False
            )
        )
    except Exception:
        return False


def signature(secret: str, timestamp: int, body: bytes) -> str:
    """Return the ``X-Graded-Signature`` value of ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


def post_webhook(
    webhook: AlertWebhook,
    payload: dict[str, Any],
    *,
    attempts: int = ATTEMPTS,
    backoff_base: float | None = None,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
) -> Outcome:
    """Post ``payload`` to the webhook, signed, retrying transient failures."""
    secret = os.environ.get(webhook.secret_env, "")
    if not secret:
        return Outcome(False, 0, f"The environment variable {webhook.secret_env} is not set.")
    try:
        url = check_base_url(webhook.url)
        policy = EgressPolicy.from_entries(webhook.allowed_private_hosts or [])
    except (EgressRefused, ValueError) as exc:
        return Outcome(False, 0, f"Refused: {exc}")
    base = getattr(settings, "GRADED_WEBHOOK_BACKOFF_BASE", BACKOFF_BASE)
    base = backoff_base if backoff_base is not None else base
    body = json.dumps(payload, sort_keys=True).encode()
    return run_async(
        _post(url, policy, body, secret, str(payload["check"]), webhook, attempts, base, sleep)
    )


async def _post(
    url: str,
    policy: EgressPolicy,
    body: bytes,
    secret: str,
    delivery_id: str,
    webhook: AlertWebhook,
    attempts: int,
    base: float,
    sleep: Callable[[float], Awaitable[Any]],
) -> Outcome:
    error = ""
    async with guarded_client(policy) as http:
        for attempt in range(1, attempts + 1):
            headers = {
                "Content-Type": "application/json",
                "User-Agent": "Graded-Alerts/1",
                "X-Graded-Event": "search.alert",
                "X-Graded-Delivery": delivery_id,
                "X-Graded-Signature": signature(secret, int(time.time()), body),
            }
            wait: float | None = None
            try:
                response = await http.post(
                    url, content=body, headers=headers, timeout=webhook.timeout_seconds
                )
            except EgressRefused as exc:
                return Outcome(False, attempt, f"Refused: {exc}")
            except httpx.TimeoutException:
                error = f"Timed out after {webhook.timeout_seconds:g} s."
            except httpx.TransportError as exc:
                error = f"Connection error ({exc.__class__.__name__})."
            else:
                status = response.status_code
                if 200 <= status < 300:
                    return Outcome(True, attempt)
                excerpt = response.text[:ANSWER_EXCERPT]
                error = f"HTTP {status}: {excerpt}".strip()
                if status != 429 and status < 500:
                    if response.is_redirect:
                        error = f"HTTP {status}: redirects are not followed."
                    return Outcome(False, attempt, error)
                wait = retry_after_seconds(response.headers.get("Retry-After"))
            if attempt == attempts:
                break
            delay = backoff_delay(attempt, base=base, cap=BACKOFF_CAP, rng=random.random)
            await sleep(min(wait, BACKOFF_CAP) if wait is not None else delay)
    return Outcome(False, attempts, f"{error} Gave up after {attempts} attempts.")
