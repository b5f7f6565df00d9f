"""Call an OpenAI-compatible Chat Completions endpoint, with retries (no Django).

Transient failures — HTTP 429 and 5xx, timeouts and connection errors — are retried up to
``max_attempts`` in all, waiting as the server's ``Retry-After`` says, else an exponential
backoff with full jitter (uniform in ``[0, min(cap, base · 2^(n-1))]``). Anything else, and
what is still failing after the last attempt, raises :class:`CallFailed` with the reason and
the raw answer. The API key only ever goes into the ``Authorization`` header.

What a failed call keeps of the server's answer is its HTTP status and a short excerpt
(:data:`EXCERPT_LIMIT` characters): a coordinator reads failures, and the body of an error
page is none of their business beyond that. A destination the outbound guard refuses
(:mod:`judging.llm.egress`) fails at once, never retried.
"""

from __future__ import annotations

import asyncio
import email.utils
import random
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from judging.llm.egress import EgressRefused

#: Longest wait a ``Retry-After`` header may impose, in seconds.
MAX_RETRY_AFTER = 120.0
#: Characters of a raw answer kept in failures.
RAW_LIMIT = 20_000
#: Characters of an HTTP error's body kept in failures (the status is always kept).
EXCERPT_LIMIT = 200


@dataclass(frozen=True)
class ClientConfig:
    """How to reach a judge's endpoint and how to retry."""

    endpoint: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    decoding: dict[str, Any] = field(default_factory=dict)
    json_mode: bool = False
    timeout: float = 60.0
    max_attempts: int = 5
    backoff_base: float = 0.5
    backoff_cap: float = 30.0

    @property
    def url(self) -> str:
        """Return the Chat Completions URL."""
        return self.endpoint.rstrip("/") + "/chat/completions"


@dataclass(frozen=True)
class Completion:
    """One successful answer."""

    content: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: float
    attempts: int


class CallFailed(Exception):
    """A request that did not produce an answer.

    ``status`` is the HTTP status of the last answer (None: no HTTP answer). ``fatal`` says
    that every other request of the job would fail the same way (a wrong key, model or
    base URL, a refused destination), so a job stops after a few of them in a row
    (:data:`judging.llm.runner.FAIL_FAST_AFTER`) instead of asking every pair.
    """

    def __init__(
        self,
        reason: str,
        *,
        raw: str = "",
        attempts: int = 1,
        status: int | None = None,
        fatal: bool = False,
    ) -> None:
        """Keep the reason, the raw answer (shortened) and how many attempts were made."""
        super().__init__(reason)
        self.reason = reason
        self.raw = raw[:RAW_LIMIT]
        self.attempts = attempts
        self.status = status
        self.fatal = fatal


#: Statuses no retry and no other pair can fix: the key, the model or the base URL is wrong.
FATAL_STATUSES = frozenset({401, 403, 404, 405, 407, 410})
#: A 400 answer whose body says this names a model the server does not know (OpenAI
#: answers ``model_not_found``; vLLM and Ollama "model … does not exist / not found").
_MODEL_MISSING = re.compile(
    r"model_not_found|model[^.\n]{0,120}(?:does not exist|not found|not exist|unknown|"
    r"not available|invalid)|(?:unknown|invalid|no such) model",
    re.IGNORECASE,
)


def is_fatal(status: int, body: str) -> bool:
    """Return whether an HTTP answer ``status`` with ``body`` would fail every request.

    401, 403, 404 (and 405, 407, 410), a redirect (never followed: the base URL is wrong),
    and a 400 that says the model does not exist. Other 4xx answers may be about one
    prompt (too long, refused content) and are not.
    """
    if status in FATAL_STATUSES or 300 <= status < 400:
        return True
    return status in (400, 422) and bool(_MODEL_MISSING.search(body or ""))


class _Transient(Exception):
    """A failure worth retrying, with the server's requested delay if any."""

    def __init__(
        self,
        reason: str,
        raw: str = "",
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(reason)
        self.reason, self.raw, self.retry_after = reason, raw, retry_after
        self.status = status


def retry_after_seconds(value: str | None, *, now: float | None = None) -> float | None:
    """Read a ``Retry-After`` header (seconds or an HTTP date); None if absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if when is None:
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    if seconds != seconds:  # NaN
        return None
    return min(max(seconds, 0.0), MAX_RETRY_AFTER)


def backoff_delay(attempt: int, *, base: float, cap: float, rng: Callable[[], float]) -> float:
    """Return the full-jitter delay after failed attempt number ``attempt`` (1-based)."""
    return rng() * min(cap, base * 2 ** (attempt - 1))


def request_body(config: ClientConfig, messages: list[dict[str, str]]) -> dict[str, Any]:
    """Return the JSON body of a Chat Completions request."""
    body: dict[str, Any] = dict(config.decoding)
    body["model"] = config.model
    body["messages"] = messages
    if config.json_mode:
        body["response_format"] = {"type": "json_object"}
    return body


def excerpt(text: str) -> str:
    """Return the start of an error body, at most :data:`EXCERPT_LIMIT` characters."""
    return text if len(text) <= EXCERPT_LIMIT else text[: EXCERPT_LIMIT - 1] + "…"


def _completion(response: httpx.Response, started: float, attempts: int) -> Completion:
    """Read a 200 answer; raise :class:`CallFailed` if it is not a Chat Completion."""
    raw = response.text
    try:
        data = response.json()
        content = data["choices"][0]["message"]["content"]
        if not isinstance(content, str):
            raise TypeError("content is not a string")
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise CallFailed(
            f"Malformed response (not a chat completion: {exc.__class__.__name__}).",
            raw=excerpt(raw),
            attempts=attempts,
        ) from None
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    tokens = {
        key: value if isinstance(value, int) and not isinstance(value, bool) else None
        for key, value in (
            ("prompt", usage.get("prompt_tokens")),
            ("completion", usage.get("completion_tokens")),
        )
    }
    model = data.get("model")
    return Completion(
        content=content,
        model=model if isinstance(model, str) else "",
        prompt_tokens=tokens["prompt"],
        completion_tokens=tokens["completion"],
        latency_ms=(time.perf_counter() - started) * 1000.0,
        attempts=attempts,
    )


async def complete(
    client: httpx.AsyncClient,
    config: ClientConfig,
    messages: list[dict[str, str]],
    *,
    sleep: Callable[[float], Awaitable[Any]] = asyncio.sleep,
    rng: Callable[[], float] = random.random,
) -> Completion:
    """Send one chat request, retrying transient failures; return the answer.

    Raises :class:`CallFailed` when the request cannot succeed or all attempts failed.
    """
    headers = {"Content-Type": "application/json"}
    if config.api_key:
        headers["Authorization"] = f"Bearer {config.api_key}"
    body = request_body(config, messages)
    attempts = max(1, int(config.max_attempts))
    last: _Transient | None = None
    for attempt in range(1, attempts + 1):
        started = time.perf_counter()
        try:
            try:
                response = await client.post(
                    config.url, json=body, headers=headers, timeout=config.timeout
                )
            except EgressRefused as exc:
                raise CallFailed(str(exc), attempts=attempt, fatal=True) from None
            except httpx.InvalidURL as exc:
                raise CallFailed(
                    f"Refused: not a valid URL ({exc}).", attempts=attempt, fatal=True
                ) from None
            except httpx.TimeoutException:
                raise _Transient(f"Timed out after {config.timeout:g} s.") from None
            except httpx.TransportError as exc:
                raise _Transient(f"Connection error ({exc.__class__.__name__}).") from None
            if response.status_code == 429 or response.status_code >= 500:
                raise _Transient(
                    f"HTTP {response.status_code}.",
                    raw=excerpt(response.text),
                    retry_after=retry_after_seconds(response.headers.get("Retry-After")),
                    status=response.status_code,
                )
            if response.status_code != 200:
                raise CallFailed(
                    f"HTTP {response.status_code} (not retried"
                    + (", redirects are not followed)." if response.is_redirect else ")."),
                    raw=excerpt(response.text),
                    attempts=attempt,
                    status=response.status_code,
                    fatal=is_fatal(response.status_code, response.text),
                )
            return _completion(response, started, attempt)
        except _Transient as exc:
            last = exc
            if attempt == attempts:
                break
            delay = exc.retry_after
            if delay is None:
                delay = backoff_delay(
                    attempt, base=config.backoff_base, cap=config.backoff_cap, rng=rng
                )
            await sleep(delay)
    assert last is not None
    raise CallFailed(
        f"{last.reason} Gave up after {attempts} attempt(s).",
        raw=last.raw,
        attempts=attempts,
        status=last.status,
    )
